"""The workbench in headless Chromium at a phone's size (375 x 812), against a server the
demo pipeline filled (real edge agents, broker, ingest, engine, incidents): log in, see the
open incidents, acknowledge one in the page, see its state change through the API; open
an incident's page (its chart) and an emailed acknowledge link; record an inspection with
a photo and see the due item close (in the incidents and the alert engine); walk every
page. Then the compliance records: open a case from an alert's page, add a visit with a
photo, record a field sample, import its lab results from a CSV file, add the responsible
party, issue a notice of violation, and see its deadlines on the deadline board (and as a
deadline incident). Phone-width pages must not scroll sideways; no console errors; a
screenshot of each page at phone and laptop width in ``test-artefacts/workbench/`` (unless
BROWSER_SHOTS=0; and of the page a failing test was on).

The three tests share one demo (~5 s of CPU to fill: the compliance test had a demo of its
own in a file of its own); none looks at what another changed, and the compliance test,
whose deadline incident would be open, comes last."""

from __future__ import annotations

import re
import shutil
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ms4watch.demo import Demo, DemoOptions
from ms4watch.settings import Settings
from ms4watch.workbench.services import open_users
from tests.support.browser import Browser, chromium_binary
from tests.support.waiting import wait_for

ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts" / "workbench"


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory):
    """A simulated day: a 0.85 inch storm at RG-1 and 0.68 at RG-2 make both sites due. One
    demo for the module's tests (each simulated day is ~1.5 s of CPU): the first acknowledges
    an incident, the second records an inspection, the third opens a case and issues a
    notice; none looks at what another changed."""
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    workdir = tmp_path_factory.mktemp("browser") / "demo"
    demo = Demo(DemoOptions(days=1.0, speed=0, workdir=workdir, serve=True), report=lambda line: None)
    runner = threading.Thread(target=demo.run, name="demo", daemon=True)
    runner.start()
    try:
        assert wait_for(demo.serving.is_set, timeout_s=120), "the demo never reached --serve"
        yield demo
    finally:
        demo.stop_serving()
        runner.join(60)


@pytest.fixture
def api(demo_server) -> Iterator[httpx.Client]:
    """An API client with a fresh token of the demo's login (made in its users' database)."""
    users, _, conn = open_users(Settings.model_validate({"data_dir": demo_server.o.workdir}))
    token = users.create_token(demo_server.web_login[0], "browser test")[1]
    conn.close()
    with httpx.Client(base_url=demo_server.web_url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        yield client


def _wait_page(browser: Browser, path_prefix: str) -> None:
    browser.wait_for(f"location.pathname.startsWith('{path_prefix}') && document.readyState === 'complete'", 30)


def log_in(browser: Browser, user: str, password: str, then: str = "/") -> None:
    """Fill in and send the login form of the page the browser is on; wait for the page it
    leads to (``then``) to have loaded."""
    browser.js(f"document.querySelector('input[name=username]').value = {user!r};"
               f"document.querySelector('input[name=password]').value = {password!r};"
               "document.querySelector('form.stack button[type=submit]').click()")
    browser.wait_for(f"location.pathname === {then!r} && document.readyState === 'complete'")


def test_log_in_see_open_incidents_acknowledge_one(demo_server, api):
    demo = demo_server
    url = demo.web_url
    user, password = demo.web_login
    open_before = api.get("/api/v1/incidents", params={"state": "open"}).json()
    assert open_before, "the demo's half day left nothing open"
    notices = (demo.o.workdir / "notifications.txt").read_text()
    link = re.search(rf"Acknowledge: ({re.escape(url)}/ack/\S+)", notices).group(1)

    browser = Browser()
    try:
        browser.viewport(375, 812, mobile=True, scale=2)
        browser.goto(f"{url}/incidents")
        browser.wait_for("location.pathname === '/login'")
        browser.picture(ARTEFACTS / "phone-login.png")
        log_in(browser, user, password, then="/incidents")
        text = browser.js("document.body.innerText")
        for inc in open_before:
            assert inc["station_name"] in text      # pictured by the next test (phone-incidents.png)

        first = open_before[0]["id"]
        browser.js(f"document.querySelector('#incident-{first} button[name=ack]').click()")
        browser.wait_for(f"document.readyState === 'complete' && !!document.querySelector('#incident-{first} .badge.acknowledged')")
        assert api.get(f"/api/v1/incidents/{first}").json()["incident"]["state"] == "acknowledged"
        assert api.get(f"/api/v1/incidents/{first}").json()["incident"]["acknowledged_by"] == "Demo SMO"
        browser.picture(ARTEFACTS / "phone-incidents-acknowledged.png")

        with_chart = next(i["id"] for i in api.get("/api/v1/incidents", params={"state": ["open", "acknowledged",
                                                                                           "resolved"]}).json()
                          if i["kind"] in ("turbidity_contrast", "dry_weather_flow", "storm"))
        browser.goto(f"{url}/incidents/{with_chart}")
        browser.wait_for("document.querySelector('.chart img').complete && document.querySelector('.chart img').naturalWidth > 0")
        drawn = browser.js("fetch(document.querySelector('.chart img').currentSrc).then(r => r.text())")
        assert 'class="series"' in drawn or 'class="rain"' in drawn, drawn[:300]   # the episode's readings (SVG)
        browser.picture(ARTEFACTS / "phone-incident.png")
        browser.goto(f"{url}/")                 # pictured by the next test (phone-status.png)
        browser.goto(link)
        assert "Acknowledge" in browser.js("document.body.innerText")
        browser.picture(ARTEFACTS / "phone-ack-link.png")

        browser.viewport(1280, 800)
        for path in ("/incidents?state=all", f"/incidents/{with_chart}"):
            browser.goto(url + path)
            browser.wait_for("Array.from(document.images).every(i => i.complete)")
        browser.picture(ARTEFACTS / "laptop-incident.png")  # the list: the next test's laptop-incidents.png
        assert browser.console_errors() == []
    finally:
        browser.close()


PAGES = [("status", "/"), ("stations", "/stations"), ("station", "/stations/OF-1?days=1"),
         ("station-turbidity", "/stations/DS-1?days=1"), ("inspections", "/inspections"), ("outfalls", "/outfalls"),
         ("outfall", "/outfalls/OF-3"), ("approvals", "/approvals"), ("storms", "/storms"),
         ("calibrations", "/calibrations"), ("incidents", "/incidents")]
ALL_LOADED = "document.readyState === 'complete' && Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"


PHOTO = Path(__file__).with_name("testdata") / "silt-fence.png"


def _photo(path: Path) -> Path:
    """A real photo-sized PNG (320 x 240) at ``path``: a silt fence on a north slope, drawn
    once with matplotlib (a brown slope under a black fence, titled "silt fence, north slope";
    ``Figure(figsize=(4, 3), dpi=80)``) and kept in ``testdata/``."""
    shutil.copyfile(PHOTO, path)
    return path


def test_the_photo_is_the_silt_fence_drawn_once_not_drawn_again(tmp_path, monkeypatch):
    """``_photo`` copies the picture kept beside these tests (drawn once with matplotlib):
    drawing it in each test process imported matplotlib for it, ~0.6 s of CPU."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)           # an import of it fails
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    got = _photo(tmp_path / "fence.png")
    assert got == tmp_path / "fence.png" and got.read_bytes().startswith(b"\x89PNG")
    assert struct.unpack(">II", got.read_bytes()[16:24]) == (320, 240)         # its width, as the pages show it


def test_record_an_inspection_with_a_photo_and_walk_every_page(demo_server, api, tmp_path):
    demo = demo_server
    url = demo.web_url
    user, password = demo.web_login
    due = [d for d in api.get("/api/v1/inspections/due").json() if d["site"] == "CS-2" and d["reason"] == "storm"]
    assert len(due) == 1, "the demo's day left no storm inspection due at CS-2"
    item = due[0]["incident"]
    photo = _photo(tmp_path / "silt-fence.png")

    browser = Browser()
    try:
        browser.viewport(375, 812, mobile=True, scale=2)
        browser.goto(f"{url}/login")
        log_in(browser, user, password)
        for name, path in PAGES:
            browser.goto(url + path)
            browser.wait_for(ALL_LOADED)
            browser.picture(ARTEFACTS / f"phone-{name}.png")
            width = browser.js("document.documentElement.scrollWidth")
            assert width <= 375 + 1, f"{path} is {width} px wide at 375 px"      # charts scroll in their own box

        # the due item, its countdown; record the inspection with a photo in the form
        browser.goto(f"{url}/inspections?site=CS-2")
        assert browser.js(f"!!document.querySelector('#due-{item} .countdown')")
        assert browser.js(f"document.querySelector('#due-{item} .countdown').textContent").startswith("in ")
        fields = {"inspector": "J. Rivera", "license_no": "CPESC 4711", "disturbed_areas": "pad sites 3-6; lot 7 next week",
                  "stabilized_areas": "west slope hydroseeded", "idle_areas": "stockpile B", "sediment_pct": "35",
                  "maintenance": "silt fence undercut at the outlet", "deficiencies": "inlet protection missing"}
        for name, value in fields.items():
            browser.js(f"document.querySelector('[name={name}]').value = {value!r}")
        browser.js("document.querySelector('[name=credential]').value = 'cpesc';"
                   "document.querySelector('[name=certified]').checked = true")
        browser.set_files("input[name=photos]", [photo])
        browser.picture(ARTEFACTS / "phone-inspection-form.png")
        browser.js("document.querySelector('form.report-form button[type=submit]').click()")
        _wait_page(browser, "/inspections/")
        browser.wait_for(ALL_LOADED)
        text = browser.js("document.body.innerText")
        assert "Recorded. It resolved" in text and "inlet protection missing" in text
        assert browser.js(f"document.querySelector('#closed-{item} .engine').textContent").startswith("closed at")
        assert browser.js("document.querySelector('.photos img').naturalWidth") == 320
        browser.picture(ARTEFACTS / "phone-inspection-report.png")
        report = browser.js("location.pathname")
        browser.goto(f"{url}/inspections")
        assert not browser.js(f"!!document.querySelector('#due-{item}')")               # no longer due
        assert browser.js(f"document.querySelector('#closed-{item} .engine').textContent").startswith("closed at")
        browser.picture(ARTEFACTS / "phone-inspections-after.png")
        inc = api.get(f"/api/v1/incidents/{item}").json()["incident"]
        assert (inc["state"], inc["resolution"]) == ("resolved", "inspection")

        browser.viewport(1280, 800)
        for name, path in PAGES + [("inspection-report", report)]:
            browser.goto(url + path)
            browser.wait_for(ALL_LOADED)
            browser.picture(ARTEFACTS / f"laptop-{name}.png")
        assert browser.console_errors() == []
    finally:
        browser.close()


# -- compliance records ------------------------------------------------------------------------
def _submit(browser: Browser, form: str) -> None:
    browser.js(f"document.querySelector('{form} button[type=submit]').click()")


def test_open_a_case_from_an_alert_visit_lab_results_notice_and_its_deadlines(demo_server, api, tmp_path):
    demo = demo_server
    url = demo.web_url
    user, password = demo.web_login
    incidents = api.get("/api/v1/incidents", params={"state": ["open", "acknowledged", "resolved"]}).json()
    alert = next((i for i in incidents if i["kind"] == "dry_weather_flow"), None) or \
        next(i for i in incidents if i["kind"] in ("turbidity_contrast", "storm"))
    photo = _photo(tmp_path / "outfall.png")

    browser = Browser()
    try:
        browser.viewport(375, 812, mobile=True, scale=2)
        browser.goto(f"{url}/login")
        log_in(browser, user, password)

        # the alert's page: open a case from it
        browser.goto(f"{url}/incidents/{alert['id']}")
        browser.js("document.querySelector('a.open-case').click()")
        browser.wait_for("location.pathname === '/cases' && !!document.querySelector('form.case-form')")
        assert f"From incident {alert['id']}" in browser.js("document.body.innerText")
        browser.js("document.querySelector('form.case-form [name=location]').value = 'Mill Street outfall, east bank'")
        browser.picture(ARTEFACTS / "phone-case-open.png")
        _submit(browser, "form.case-form")
        _wait_page(browser, "/cases/")
        case_path = browser.js("location.pathname")
        case = api.get(f"/api/v1{case_path}").json()
        assert case["incident_id"] == alert["id"] and case["origin"] == "incident"

        # a visit with a photo
        for name, value in {"notes": "grey water at the outfall, sudsy; no rain for three days",
                            "location": "outfall pipe", "by": "J. Rivera"}.items():
            browser.js(f"document.querySelector('form.visit-form [name={name}]').value = {value!r}")
        browser.js("document.querySelector('form.visit-form [name=kind]').value = 'screening';"
                   "document.querySelector('form.visit-form [name=dry_weather]').value = 'yes';"
                   "document.querySelector('form.visit-form [name=flow_observed]').value = 'yes'")
        browser.set_files("form.visit-form input[name=photos]", [photo])
        _submit(browser, "form.visit-form")
        browser.wait_for("!!document.querySelector('.thread .photos img')", 30)
        browser.wait_for(ALL_LOADED)
        assert browser.js("document.querySelector('.thread .photos img').naturalWidth") == 320

        # a field sample, then its lab results from the lab's CSV
        browser.js("document.querySelector('form.sample-form').closest('details').open = true;"
                   "document.querySelector('form.sample-form [name=station]').value = 'OF-1'")
        _submit(browser, "form.sample-form")
        browser.wait_for("!!document.querySelector('section.sample')", 30)
        number = browser.js("document.querySelector('section.sample h3').firstChild.textContent.trim()")
        assert number.startswith("S-2026-")
        lab = tmp_path / "capital-lab-batch-17.csv"
        lab.write_text("sample,parameter,value,unit,method,detection_limit,qualifier,lab\n"
                       f"{number},Ammonia-N,1.2,mg/L,EPA 350.1,0.05,,Capital Lab\n"
                       f"{number},Surfactants (MBAS),0.6,mg/L,SM 5540 C,0.05,,Capital Lab\n"
                       f"{number},E. coli,<1,MPN/100 mL,SM 9223 B,1,U,Capital Lab\n")
        browser.set_files("form.lab-form input[name=file]", [lab])
        _submit(browser, "form.lab-form")
        browser.wait_for("document.body.innerText.includes('Imported 3 lab result(s)')", 30)
        verdicts = browser.js("Array.from(document.querySelectorAll('table.results td.verdict')).map(t => t.textContent)")
        assert verdicts == ["outside the limit", "outside the limit", "not detected"]   # phone-case.png below

        # the responsible party, then the notice of violation
        browser.js("document.querySelector('a[href$=\"#issue\"]').click()")
        _wait_page(browser, "/notices")
        browser.js("document.querySelector('form.party-form [name=name]').value = 'Mill Street Laundromat LLC';"
                   "document.querySelector('form.party-form [name=address]').value = '1 Mill Street\\nBrookhollow, NY';"
                   "document.querySelector('form.party-form [name=place]').value = 'outfall';"
                   "document.querySelector('form.party-form [name=place_id]').value = 'OF-1';"
                   "document.querySelector('form.party-form [name=role]').value = 'operator'")
        _submit(browser, "form.party-form")
        browser.wait_for("location.search.startsWith('?party=') && document.readyState === 'complete'", 30)
        case_id = case_path.rsplit("/", 1)[1]
        fields = {"place": "1 Mill Street (the laundromat's floor drain)",
                  "violation": "Washer discharge from the floor drain reaches the storm sewer at OF-1.",
                  "remedy": "Disconnect the floor drain from the storm sewer.", "remediation_days": "14"}
        for name, value in fields.items():
            browser.js(f"document.querySelector('form.notice-form [name={name}]').value = {value!r}")
        browser.js(f"document.querySelector('form.notice-form [name=case_id]').value = {case_id!r};"
                   "document.querySelector('form.notice-form [name=outfall]').value = 'OF-1';"
                   "document.querySelector('form.notice-form [name=requirements][value=eliminate]').checked = true;"
                   "document.querySelector('form.notice-form [name=requirements][value=cease]').checked = true;"
                   # the provision violated, from the catalogue of the law the form has chosen
                   "const law = document.querySelector('form.notice-form [name=law]').value;"
                   "document.querySelector(`form.notice-form [name=provisions][value='${law}:illicit_discharge']`)"
                   ".checked = true")
        browser.picture(ARTEFACTS / "phone-notice-form.png")
        _submit(browser, "form.notice-form")
        _wait_page(browser, "/notices/")
        text = browser.js("document.body.innerText")
        assert "Notice of violation NOV-" in text and "Mill Street Laundromat LLC" in text
        assert "(Prohibition of illegal discharges)" in text                  # the provision ticked, quoted
        assert "remediation or restoration" in browser.js("document.querySelector('#notice-deadlines').innerText")   # phone-notice.png below
        number = text.split("Notice of violation ", 1)[1].split()[0]
        notice_path = browser.js("location.pathname")

        # its deadlines on the board, and as a deadline incident
        browser.goto(f"{url}/deadlines")
        running = browser.js("document.querySelector('#running').innerText")
        assert f"remediation or restoration ({number})" in running and "running" in running
        assert browser.js("!!document.querySelector('#running .countdown')")      # phone-deadlines.png below
        deadline = api.get("/api/v1/incidents", params={"kind": "compliance_deadline"}).json()
        assert [d["subject"] for d in deadline] == ["OF-1"]

        for name, path in (("cases", "/cases"), ("case", case_path), ("deadlines", "/deadlines"),
                           ("notices", "/notices"), ("notice", notice_path), ("releases", "/releases"), ("swppp", "/swppp"),
                           ("annual-report", "/reports/annual/2026")):
            browser.goto(url + path)
            browser.wait_for(ALL_LOADED)
            width = browser.js("document.documentElement.scrollWidth")
            assert width <= 375 + 1, f"{path} is {width} px wide at 375 px"
            browser.picture(ARTEFACTS / f"phone-{name}.png")
        browser.viewport(1280, 800)
        for name, path in (("case", case_path), ("deadlines", "/deadlines"), ("annual-report", "/reports/annual/2026")):
            browser.goto(url + path)
            browser.wait_for(ALL_LOADED)
            browser.picture(ARTEFACTS / f"laptop-{name}.png")
        assert browser.console_errors() == []
    finally:
        browser.close()
