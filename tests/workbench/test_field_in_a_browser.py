"""The offline field form in headless Chromium at a phone's width (390 px), on the real
workbench (uvicorn, the town's alert pipeline, SQLite): the form loads online and its
service worker installs (127.0.0.1 is a secure context); the network is switched off
through the DevTools protocol (``Network.emulateNetworkConditions``, in the page and in
the service worker); the page reloads from the service worker's copy; an inspection with a
camera photo (its time and position) and an outfall visit are queued on the phone (nothing
reaches the server); meanwhile the SMO closes the visit's case; back online, the inspection
is sent once (a forced resend of its key makes no second report) and the visit comes back
as a conflict with the server's reason, kept on the phone after a reload; an inspection
answering an item the SMO resolved meanwhile is a conflict too, then recorded as an
inspection of its own at the inspector's word; an ended session
stops the sending visibly and keeps the queue until the inspector logs in again.
Screenshots in ``test-artefacts/workbench/`` (unless BROWSER_SHOTS=0; and of the page a failing
test was on)."""

from __future__ import annotations


import pytest

from ms4watch.alerts.incidents import State
from tests.support.browser import Browser, chromium_binary
from tests.support.notify_peers import inspection
from tests.support.workbench import PASSWORD
from tests.workbench.routes.test_inspections import _storm_item
from tests.workbench.test_in_a_browser import ARTEFACTS, _photo, log_in

WIDTH = 390
WHERE = {"latitude": 42.8105, "longitude": -73.932, "accuracy": 8}


class FieldBrowser(Browser):
    """The shared driver, and what this test needs besides: the network switched off and on in
    the page *and* in its service worker (a worker fetches on its own), and geolocation."""

    def __init__(self) -> None:
        super().__init__(own_chromium=True)   # installable: a real profile, not a fresh (incognito) context
        self.workers: list[str] = []        # DevTools sessions of the service workers attached

    def grant_geolocation(self, origin: str) -> None:
        """Allowed, at the test's place (an override given by a DevTools session lasts as long as it)."""
        self.call("Browser.grantPermissions", permissions=["geolocation"], origin=origin)
        self.call("Emulation.setGeolocationOverride", **WHERE)

    def attach_workers(self) -> None:
        for t in self.call("Target.getTargets")["targetInfos"]:
            if t["type"] == "service_worker" and t["targetId"] not in self.workers:
                session = self.call("Target.attachToTarget", targetId=t["targetId"], flatten=True)["sessionId"]
                self.call_in(session, "Network.enable")
                self.workers.append(session)

    def network(self, *, online: bool) -> None:
        conditions = {"offline": not online, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        self.call("Network.emulateNetworkConditions", **conditions)
        for session in self.workers:
            self.call_in(session, "Network.emulateNetworkConditions", **conditions)

    def state_of(self, summary: str) -> str | None:
        return self.js(f"(function () {{ var li = Array.from(document.querySelectorAll('#outbox li')).find("
                       f"function (l) {{ return l.textContent.indexOf({summary!r}) >= 0; }});"
                       f" return li ? li.getAttribute('data-state') : null; }})()")

    def fits(self) -> None:
        width = self.js("document.documentElement.scrollWidth")
        assert width <= WIDTH, f"{self.js('location.pathname')} is {width} px wide at {WIDTH} px"


def _fill_inspection(b: FieldBrowser, item: int | None) -> None:
    values = {"site": "CS-7", "item": str(item or ""), "at": "2026-06-01T11:30", "inspector": "J. Rivera",
              "credential": "cpesc", "license_no": "CPESC 4711", "disturbed_areas": "north pad; east lot next week",
              "stabilized_areas": "west slope hydroseeded", "idle_areas": "stockpile B", "sediment_pct": "35",
              "maintenance": "silt fence undercut at the outlet", "deficiencies": "inlet protection missing"}
    for name, value in values.items():
        b.js(f"(function (e) {{ e.value = {value!r}; e.dispatchEvent(new Event('change', {{bubbles: true}})); }})"
             f"(document.querySelector('#field-form [name={name}]'))")
        if name == "site" and item:   # the site's due items are its own
            b.wait_for(f"!!document.querySelector('#field-form [name=item] option[value=\"{item}\"]')")
    b.js("document.querySelector('#field-form [name=certified]').checked = true")


def _fill_visit(b: FieldBrowser, case: int) -> None:
    b.js("document.querySelector('#field-form input[name=what][value=visit]').click()")
    b.wait_for("!document.getElementById('visit-part').hidden")
    for name, value in {"case": str(case), "kind": "screening", "visit_at": "2026-06-01T10:00",
                        "notes": "grey water at the outfall, sudsy", "dry_weather": "yes", "flow_observed": "yes"}.items():
        b.js(f"document.querySelector('#field-form [name={name}]').value = {value!r}")


def _submit(b: FieldBrowser, summary: str) -> None:
    b.js("document.querySelector('#field-form button[type=submit]').click()")
    b.wait_for(f"Array.from(document.querySelectorAll('#outbox li')).some(function (l) {{"
               f" return l.textContent.indexOf({summary!r}) >= 0; }})", 20)


def test_offline_inspection_and_visit_are_queued_then_sent_once_and_a_conflict_is_kept(bench, tmp_path):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    item = _storm_item(bench)
    with bench.api("smo") as smo:
        case = smo.post("/api/v1/cases", json={"origin": "complaint", "location": "Main St outfall",
                                               "reporter": "a neighbour", "description": "grey water",
                                               "observed_at": "2026-06-01T09:00:00-04:00"}).json()
    photo = _photo(tmp_path / "silt-fence.png")
    wb, town = bench.workbench, bench.municipality
    url = bench.url

    b = FieldBrowser()
    try:
        b.viewport(WIDTH, 844, mobile=True, scale=2)
        b.call("Emulation.setTimezoneOverride", timezoneId="America/New_York")
        b.grant_geolocation(url)
        b.call("Network.enable")
        b.goto(f"{url}/login?next=/field/")
        log_in(b, "inspector", PASSWORD, then="/field/")

        # online: the form is the server's list; the service worker installs and takes the page
        b.wait_for("!document.getElementById('field-form').hidden", 20)
        b.wait_for("!!navigator.serviceWorker.controller", 20)
        assert b.js("document.querySelectorAll('#inspection-part fieldset.item').length") == 6
        assert "(4) Sediment accumulation" in b.js("document.getElementById('inspection-part').innerText")
        assert b.js("document.querySelector('link[rel=manifest]').href").endswith("/field/manifest.webmanifest")
        manifest = b.call("Page.getAppManifest")
        assert manifest["errors"] == [] and manifest["url"].endswith("/field/manifest.webmanifest"), manifest
        assert b.call("Page.getInstallabilityErrors")["installabilityErrors"] == []      # Chromium would install it
        b.fits()
        b.picture(ARTEFACTS / "phone-field-online.png")

        # offline: the page and the form come from the service worker's copy
        b.attach_workers()
        assert b.workers, "no service worker to switch off"
        b.network(online=False)
        b.wait_for("navigator.onLine === false")
        b.events.clear()
        b.call("Page.reload")
        b.wait_for("document.readyState === 'complete' && !document.getElementById('field-form').hidden", 20)
        docs = [e["params"]["response"] for e in b.events if e["method"] == "Network.responseReceived"
                and e["params"].get("type") == "Document"]
        assert docs and all(r["fromServiceWorker"] for r in docs), docs
        assert b.js("document.getElementById('net').textContent").startswith("Offline")

        # an inspection with a camera photo (time and position), and a visit: queued
        _fill_inspection(b, item)
        b.set_files("#field-form input[name=photos]", [photo])
        b.wait_for("document.querySelector('#photo-list li') && "
                   "document.querySelector('#photo-list li').textContent.indexOf('42.81050, -73.93200 ±8 m') >= 0")
        b.fits()
        b.picture(ARTEFACTS / "phone-field-offline-form.png")
        _submit(b, "Inspection at ")
        _fill_visit(b, case["id"])
        _submit(b, "screening visit in case")
        assert b.state_of("Inspection at ") == "queued" and b.state_of("screening visit") == "queued"
        assert "Waiting to be sent" in b.js("document.getElementById('outbox').innerText")
        assert wb.field.sends.count(town) == 0 and wb.inspections.reports.list(town) == []
        b.fits()
        b.picture(ARTEFACTS / "phone-field-queued.png")

        # meanwhile the SMO closes the case the visit belongs to
        with bench.api("smo") as smo:
            assert smo.post(f"/api/v1/cases/{case['id']}/entries", json={
                "kind": "closure", "at": "2026-06-01T11:00:00-04:00", "by": "Dana Ortiz", "notes": "plugged",
                "outcome": "eliminated", "verification": "no flow on follow-up"}).status_code == 201

        # back online: sent once; the visit is a conflict with the server's reason
        b.network(online=True)
        b.wait_for("navigator.onLine === true")
        b.wait_for("document.querySelector('#outbox li[data-state=sent]') && "
                   "document.querySelector('#outbox li[data-state=conflict]')", 30)
        [report] = wb.inspections.reports.list(town)
        assert len(report.photos) == 1 and bench.alerting.store.get(item).state is State.RESOLVED
        assert wb.field.sends.count(town) == 2
        [kept] = [s for s in (wb.field.sends.get(town, k) for k in b.js(
            "Array.from(document.querySelectorAll('#outbox li')).map(function (l) { return l.dataset.key; })"))
                  if s.kind == "inspection"]
        assert kept.photos[0]["position"]["lat"] == 42.8105 and kept.photos[0]["taken_at"]
        conflict = b.js("document.querySelector('#outbox li[data-state=conflict]').innerText")
        assert f"case {case['number']} is closed" in conflict and "Kept on this phone" in conflict
        b.js("document.querySelector('#outbox li[data-state=conflict] details').open = true")
        assert "notes: grey water at the outfall, sudsy" in b.js(
            "document.querySelector('#outbox li[data-state=conflict] details').innerText")   # word for word
        assert b.js("document.querySelector('#outbox li[data-state=sent] a').getAttribute('href')") == \
            f"/inspections/{report.id}"
        b.fits()
        b.picture(ARTEFACTS / "phone-field-sent.png")

        stored = b.js("new Promise(function (ok) { indexedDB.open('ms4watch-field').onsuccess = function (e) {"
                      " e.target.result.transaction('records').objectStore('records').getAll().onsuccess ="
                      " function (g) { ok(g.target.result.map(function (r) { return [r.state, r.files.map("
                      " function (f) { return f.blob === null; })]; })); }; }; })")
        assert sorted(stored) == [["conflict", []], ["sent", [True]]]      # a sent record's photo is freed
        # a forced resend of the sent record's key: the first result, no second report
        again = b.js(f"""fetch('/api/v1/field/form').then(function (r) {{ return r.json(); }}).then(function (f) {{
            var body = new FormData();
            body.append('record', JSON.stringify({{kind: 'inspection', item: {item}, report: {{site: 'CS-7',
              at: '2026-06-01T11:30:00-04:00', inspector: 'J. Rivera', credential: 'cpesc', license_no: 'CPESC 4711',
              disturbed_areas: 'x', stabilized_areas: 'x', idle_areas: 'x', sediment_pct: 1, maintenance: 'x',
              deficiencies: 'x', certified: true}}}}));
            return fetch('/api/v1/field/sends', {{method: 'POST', body: body, headers: {{
              'Idempotency-Key': {kept.key!r}, 'X-CSRF-Token': f.csrf}}}});
          }}).then(function (r) {{ return r.json().then(function (j) {{ return [r.status, j]; }}); }})""")
        assert again[0] == 201 and again[1]["replayed"] is True and again[1]["report"] == report.id
        assert len(wb.inspections.reports.list(town)) == 1 and wb.field.sends.count(town) == 2

        # the conflict is kept on the phone across a reload
        b.call("Page.reload")
        b.wait_for("document.readyState === 'complete' && !!document.querySelector('#outbox li[data-state=conflict]')", 20)
        assert f"case {case['number']} is closed" in b.js("document.getElementById('outbox').innerText")

        # a new item due; the phone answers it offline while the SMO resolves it: a conflict,
        # then recorded as an inspection of its own (a new key), nothing lost
        bench.alerting.handle(inspection("2026-06-02T17:59:00Z", "2026-06-01T17:59:00Z"))
        second = next(i.id for i in bench.alerting.store.list([State.OPEN]) if i.kind == "inspection_due")
        b.call("Page.reload")
        b.wait_for(f"!!document.querySelector('#field-form [name=item] option[value=\"{second}\"]')", 20)
        b.network(online=False)
        b.wait_for("navigator.onLine === false")
        _fill_inspection(b, second)
        _submit(b, "Inspection at ")
        b.wait_for("document.querySelectorAll('#outbox li[data-state=queued]').length === 1")
        with bench.api("smo") as smo:
            assert smo.post(f"/api/v1/incidents/{second}/resolve",
                            json={"note": "inspected by the town engineer"}).status_code == 200
        b.network(online=True)
        # the outbox is drawn again after each record's change (from IndexedDB, asynchronously):
        # waited for until it shows the second conflict first, with the server's reason
        b.wait_for("document.querySelectorAll('#outbox li[data-state=conflict]').length === 2 && "
                   f"document.querySelector('#outbox li[data-state=conflict]').innerText.indexOf('item {second} ') >= 0",
                   30)
        text = b.js("document.querySelector('#outbox li[data-state=conflict]').innerText")
        assert f"the inspection item {second} at Elm St site was closed meanwhile" in text and "Smo User" in text
        assert len(wb.inspections.reports.list(town)) == 1
        b.fits()
        b.picture(ARTEFACTS / "phone-field-item-conflict.png")
        b.js("document.querySelector('#outbox li[data-state=conflict] button.again').click()")
        b.wait_for("document.querySelectorAll('#outbox li[data-state=sent]').length === 2", 30)
        assert len(wb.inspections.reports.list(town)) == 2
        assert not b.js("!!document.querySelector('#outbox button.again')")      # offered once
        assert "Recorded again as an inspection of its own" in b.js("document.getElementById('outbox').innerText")

        # the session ends while a record waits: the sending stops, visibly; the queue is kept
        b.network(online=False)
        b.wait_for("navigator.onLine === false")
        _fill_inspection(b, None)                           # the items are closed: an inspection of its own
        _submit(b, "Inspection at ")
        b.wait_for("document.querySelectorAll('#outbox li[data-state=queued]').length === 1")
        wb.users.sessions.end_all(wb.users.find("inspector").id, "expired")
        b.network(online=True)
        b.wait_for("!document.getElementById('session').hidden", 30)
        # the outbox is drawn again from IndexedDB after the failed send (asynchronously): the
        # record waits there, queued (a fresh-clone CI run read it mid-redraw: 0 items)
        b.wait_for("document.querySelectorAll('#outbox li[data-state=queued]').length === 1", 10)
        assert len(wb.inspections.reports.list(town)) == 2
        b.fits()
        b.picture(ARTEFACTS / "phone-field-session-ended.png")
        b.js("document.querySelector('#session a').click()")
        b.wait_for("location.pathname === '/login' && document.readyState === 'complete'", 20)
        log_in(b, "inspector", PASSWORD, then="/field/")
        b.wait_for("document.querySelectorAll('#outbox li[data-state=sent]').length === 3", 30)
        assert len(wb.inspections.reports.list(town)) == 3 and wb.field.sends.count(town) == 5
        expected = ("/api/v1/field/sends: Failed to load resource: the server responded with a status of 409",
                    "/api/v1/field/sends: Failed to load resource: the server responded with a status of 401",
                    "/api/v1/field/form: Failed to load resource: the server responded with a status of 401")
        assert [e for e in b.console_errors() if not any(x in e for x in expected)] == []
    finally:
        b.close()
