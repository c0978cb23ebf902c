"""The field form's API: what the form asks comes from the server's own lists (the law's six
items, the sites and their due items, open cases); each record the phone sends is made once
by its idempotency key (a resend, even concurrent, answers the first result); a conflict
(the item inspected meanwhile, the case closed, the site no longer active) is answered with
the reason and kept for that key; an ended session or a missing CSRF token is refused and
not kept, so the queued record goes through after the inspector logs in again."""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from ms4watch.alerts.incidents import State
from ms4watch.workbench.records import ITEMS, Credential
from tests.workbench.routes.test_inspections import JPEG, PNG, _storm_item

REPORT = {"site": "CS-7", "at": "2026-06-01T11:30:00-04:00", "inspector": "J. Rivera", "credential": "cpesc",
          "license_no": "CPESC 4711", "disturbed_areas": "north pad", "stabilized_areas": "west slope seeded",
          "idle_areas": "stockpile B", "sediment_pct": 35, "maintenance": "silt fence undercut at the outlet",
          "deficiencies": "inlet protection missing", "certified": True}
WHERE = {"lat": 42.8105, "lon": -73.932, "accuracy_m": 8}


def _key() -> str:
    return uuid.uuid4().hex


def _inspection(**kw) -> dict:
    return {"kind": "inspection", "report": REPORT, "drafted_at": "2026-06-01T11:40:00-04:00", "position": WHERE,
            "photos": [{"name": "fence.png", "taken_at": "2026-06-01T11:31:00-04:00", "position": WHERE}], **kw}


def _send(s, record: dict, key: str, *, photos=(("fence.png", PNG, "image/png"),), csrf: str | None = "page"):
    headers = {"Idempotency-Key": key}
    if csrf == "page":
        csrf = s.csrf()
    if csrf:
        headers["X-CSRF-Token"] = csrf
    return s.client.post("/api/v1/field/sends", data={"record": json.dumps(record)},
                         files=[("photos", p) for p in photos], headers=headers)


def _reports(bench) -> list:
    return bench.workbench.inspections.reports.list(bench.municipality)


def test_the_form_is_the_servers_list_of_items_sites_due_items_and_open_cases(bench):
    iid = _storm_item(bench)
    s = bench.login("inspector")
    form = s.get("/api/v1/field/form").json()
    assert [(i["field"], i["number"], i["label"], i["law"]) for i in form["inspection"]["items"]] == \
        [tuple(x) for x in ITEMS]
    assert [c["value"] for c in form["inspection"]["credentials"]] == [c.value for c in Credential]
    [site] = [x for x in form["inspection"]["sites"] if x["id"] == "CS-7"]
    assert site["active"] and [(d["incident"], d["reason"]) for d in site["due"]][0] == (iid, "storm")
    assert site["due"][0]["label"] == "after the storm at RG-1" and site["due"][1]["reason"] == "routine"
    assert {k["value"] for k in form["visit"]["kinds"]} == {"screening", "tracing", "sampling", "follow_up", "note"}
    assert "no_flow" in {f["value"] for f in form["visit"]["findings"]}
    assert {p["cite"] for p in form["visit"]["provisions"]} >= {"Ramapo ch. 218 § 218-42B"}
    assert form["csrf"] == s.csrf() and form["user"] == "Inspector User" and form["may"]["inspection"]
    with bench.api("viewer") as c:       # a token: no session, no CSRF token to give
        viewer = c.get("/api/v1/field/form").json()
    assert viewer["csrf"] is None and viewer["may"] == {"inspection": False, "visit": False}


def test_a_record_sent_twice_with_its_key_is_made_once_and_the_resend_answers_the_first_result(bench):
    iid = _storm_item(bench)
    s = bench.login("inspector")
    key = _key()
    first = _send(s, _inspection(item=iid), key)
    assert first.status_code == 201, first.text
    body = first.json()
    assert (body["kind"], body["replayed"]) == ("inspection", False) and iid in body["closed"]
    assert body["path"] == f"/inspections/{body['report']}" and first.headers["idempotency-replayed"] == "false"
    assert bench.alerting.store.get(iid).state is State.RESOLVED
    again = _send(s, _inspection(item=iid), key, photos=(("fence.png", PNG, "image/png"), ("x.jpg", JPEG, "image/jpeg")))
    assert again.status_code == 201 and again.json()["replayed"] is True
    assert again.json()["report"] == body["report"] and again.headers["idempotency-replayed"] == "true"
    [report] = _reports(bench)
    assert len(report.photos) == 1
    kept = bench.workbench.field.sends.get(bench.municipality, key)
    assert kept.photos[0]["taken_at"].startswith("2026-06-01T11:31") and kept.photos[0]["position"]["lat"] == 42.8105
    assert kept.photos[0]["sha256"] == report.photos[0].sha256
    assert [e.action for e in bench.workbench.audit.entries(target=f"field:{key}")] == ["field.resend", "field.send"]
    page = s.get(body["path"]).text        # the report's page says when and where the photo was taken
    assert 'class="muted taken">taken 2026-06-01 11:31 EDT, at 42.810500, -73.932000 (±8 m)</span>' in page


def test_concurrent_sends_of_one_key_make_one_record(bench):
    s = bench.login("inspector")
    key, csrf = _key(), s.csrf()
    answers: list[int] = []

    def go() -> None:
        answers.append(_send(s, _inspection(), key, csrf=csrf).status_code)
    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [201] * 4 and len(_reports(bench)) == 1


def test_an_item_inspected_meanwhile_by_someone_else_is_a_conflict_kept_for_its_key(bench):
    iid = _storm_item(bench)
    smo = bench.login("smo")
    assert _send(smo, _inspection(item=iid), _key()).status_code == 201        # the SMO was quicker
    s = bench.login("inspector")
    key = _key()
    r = _send(s, _inspection(item=iid), key)
    assert r.status_code == 409
    assert f"the inspection item {iid} at " in r.json()["detail"] and "closed meanwhile" in r.json()["detail"]
    assert "by Smo User" in r.json()["detail"] and "this report was not recorded" in r.json()["detail"]
    assert len(_reports(bench)) == 1
    again = _send(s, _inspection(item=iid), key)
    assert (again.status_code, again.json()["detail"], again.json()["replayed"]) == (409, r.json()["detail"], True)
    # the inspector records it anyway, as an inspection of its own (a new key, no item)
    assert _send(s, _inspection(), _key()).status_code == 201 and len(_reports(bench)) == 2


def test_a_site_no_longer_active_is_a_conflict(tmp_path, clock):
    from tests.support.notify_peers import registry
    from tests.support.workbench import WORKBENCH_YAML, start_bench
    ended = registry(WORKBENCH_YAML.replace("active_from: 2026-05-29", "active_from: 2026-05-29, active_to: 2026-05-31"))
    bench = start_bench(tmp_path, clock, reg=ended)
    try:
        r = _send(bench.login("inspector"), _inspection(), _key())
        assert r.status_code == 409 and "no longer active: its work ended on 2026-05-31" in r.json()["detail"]
        assert _reports(bench) == []
    finally:
        bench.close()


def _case(bench) -> dict:
    with bench.api("smo") as c:
        r = c.post("/api/v1/cases", json={"origin": "complaint", "location": "Main St outfall", "reporter": "a neighbour",
                                          "description": "grey water", "observed_at": "2026-06-01T09:00:00-04:00"})
        assert r.status_code == 201, r.text
        return r.json()


def _visit(case: int) -> dict:
    return {"kind": "visit", "case": case, "position": WHERE,
            "entry": {"kind": "screening", "at": "2026-06-01T10:00:00-04:00", "by": "J. Rivera",
                      "notes": "grey water, sudsy", "dry_weather": True, "flow_observed": True},
            "photos": [{"name": "outfall.png", "taken_at": "2026-06-01T10:01:00-04:00", "position": WHERE}]}


def test_an_outfall_visit_is_recorded_where_the_phone_was_and_a_closed_case_is_a_conflict(bench):
    case = _case(bench)
    s = bench.login("inspector")
    r = _send(s, _visit(case["id"]), _key())
    assert r.status_code == 201, r.text
    assert r.json()["path"] == f"/cases/{case['id']}" and r.json()["number"] == case["number"]
    [entry] = bench.workbench.compliance.store.case(case["id"]).entries
    assert entry.location == "42.810500, -73.932000 (±8 m)" and len(entry.attachments) == 1
    with bench.api("smo") as c:      # someone closes the case while the phone is offline
        assert c.post(f"/api/v1/cases/{case['id']}/entries", json={
            "kind": "closure", "at": "2026-06-01T11:00:00-04:00", "by": "Dana Ortiz", "notes": "plugged",
            "outcome": "eliminated", "verification": "no flow on follow-up"}).status_code == 201
    key = _key()
    r = _send(s, _visit(case["id"]), key)
    assert r.status_code == 409 and f"case {case['number']} is closed" in r.json()["detail"]
    assert len(bench.workbench.compliance.store.case(case["id"]).entries) == 2
    assert bench.workbench.field.sends.get(bench.municipality, key).status == 409


def test_an_ended_session_or_a_missing_csrf_token_is_refused_and_the_key_stays_free(bench):
    s = bench.login("inspector")
    key = _key()
    assert _send(s, _inspection(), key, csrf=None).status_code == 403          # no CSRF token
    csrf = s.csrf()
    assert s.client.post("/logout", data={"csrf": csrf}).status_code == 303
    r = _send(s, _inspection(), key, csrf=csrf)                               # the session has ended
    assert r.status_code == 401 and _reports(bench) == []
    assert bench.workbench.field.sends.get(bench.municipality, key) is None
    s = bench.login("inspector")                                              # logged in again: sent
    r = _send(s, _inspection(), key)
    assert r.status_code == 201 and r.json()["replayed"] is False and len(_reports(bench)) == 1


def test_a_send_without_a_key_or_with_a_malformed_record_is_refused_with_the_field_named(bench):
    s = bench.login("inspector")
    r = s.client.post("/api/v1/field/sends", data={"record": json.dumps(_inspection())},
                      headers={"X-CSRF-Token": s.csrf()})
    assert r.status_code == 422 and "Idempotency-Key" in r.json()["detail"]
    bad = _inspection()
    bad["report"] = {**REPORT, "sediment_pct": 140}
    r = _send(s, bad, _key())
    assert r.status_code == 409 and "report.sediment_pct" in r.json()["detail"]      # refused as given
    assert bench.workbench.field.sends.count(bench.municipality) == 0                  # and not kept
    assert _reports(bench) == []
    with bench.api("viewer") as c:
        r = c.post("/api/v1/field/sends", data={"record": json.dumps(_inspection())}, headers={"Idempotency-Key": _key()})
    assert r.status_code == 403 and "needs the role inspector" in r.text


def test_the_manifest_and_the_worker_are_the_towns_and_readable_without_a_session(bench):
    with bench.api() as anonymous:
        manifest = anonymous.get("/field/manifest.webmanifest")
        worker = anonymous.get("/field/sw.js")
    assert manifest.status_code == 200 and manifest.headers["content-type"] == "application/manifest+json"
    m = manifest.json()
    assert (m["start_url"], m["scope"], m["display"]) == ("/field/", "/field/", "standalone")
    assert {i["sizes"] for i in m["icons"]} >= {"192x192", "512x512"}
    assert worker.status_code == 200 and worker.headers["content-type"].startswith("text/javascript")
    assert '"/api/v1/field/form"' in worker.text and "registration.scope" in worker.text
    with bench.api() as anonymous:           # the icons the manifest names are served
        assert all(anonymous.get(i["src"]).status_code == 200 for i in m["icons"])
    from starlette.requests import Request     # a town of a coalition: its routes under /t/<town>

    from ms4watch.workbench.routes.field import manifest
    asked = Request({"type": "http", "method": "GET", "root_path": "/t/schenectady", "query_string": b"",
                     "path": "/t/schenectady/field/manifest.webmanifest", "headers": []})
    town = json.loads(manifest(asked, bench.workbench).body)
    assert (town["start_url"], town["scope"]) == ("/t/schenectady/field/", "/t/schenectady/field/")


def test_a_send_interrupted_after_its_record_was_made_is_not_made_twice(bench, monkeypatch):
    """The server stops between making the record and keeping its result (here: keeping it
    fails): the key stays claimed, so the phone's resend is answered with a conflict that
    says so (and the SMO looks), never with a second report."""
    s = bench.login("inspector")
    key = _key()
    sends = bench.workbench.field.sends

    def stops(*a, **kw):
        raise RuntimeError("the server stopped")
    monkeypatch.setattr(sends, "add", stops)
    from ms4watch.workbench.roles import Actor, Role, Via
    from ms4watch.workbench.services.field import FIELD_RECORD
    inspector = Actor("inspector", "Inspector User", Role.INSPECTOR, bench.municipality, Via.API)
    with pytest.raises(RuntimeError, match="the server stopped"):     # no answer reaches the phone
        bench.workbench.field.send(inspector, key, FIELD_RECORD.validate_python(_inspection()),
                                   [("fence.png", PNG)])
    assert len(_reports(bench)) == 1
    monkeypatch.undo()
    again = _send(s, _inspection(), key)
    assert again.status_code == 409 and len(_reports(bench)) == 1
    assert "this record's first send did not finish" in again.json()["detail"]
    assert "sent by inspector at 2026-06-01 12:00 EDT" in again.json()["detail"]
    assert _send(s, _inspection(), _key(), csrf=None).status_code == 403
    r = _send(s, _inspection(), _key())          # a send refused (here: no CSRF token) is not claimed for ever
    assert r.status_code == 201 and len(_reports(bench)) == 2
