"""Compliance records in headless Chromium against the demo's server (real loggers, broker,
ingest, engine, incidents): open a case from an alert's page, add a visit with a photo,
record a field sample, import its lab results from a CSV file, add the responsible party,
issue a notice of violation, and see its deadlines on the deadline board (and as a deadline
incident). Phone-width pages must not scroll sideways; no console errors; screenshots in
``test-artefacts/workbench/`` (unless BROWSER_SHOTS=0; and of the page a failing test was on)."""

from __future__ import annotations

import pytest

from tests.support.browser import Browser, chromium_binary
from tests.workbench.test_in_a_browser import (ALL_LOADED, ARTEFACTS, _photo, api_client, demo_server,  # noqa: F401
                                                log_in)


def _submit(browser: Browser, form: str) -> None:
    browser.js(f"document.querySelector('{form} button[type=submit]').click()")


def _wait_page(browser: Browser, path_prefix: str) -> None:
    browser.wait_for(f"location.pathname.startsWith('{path_prefix}') && document.readyState === 'complete'", 30)


def test_open_a_case_from_an_alert_visit_lab_results_notice_and_its_deadlines(demo_server, tmp_path):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    demo = demo_server
    url = demo.web_url
    user, password = demo.web_login
    api = api_client(demo)
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
        api.close()
