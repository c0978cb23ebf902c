"""Compliance records on the real workbench (uvicorn, the town's alert pipeline, SQLite):
a case opened from a dry-weather-flow incident, a visit with a photo, a field sample with
its custody, lab results imported (a bad file refused whole, by line), a notice of
violation issued — its clocks on the deadline board and as a deadline incident that is
reminded and then overdue through the Dispatcher —, a release reported the Friday before
Columbus Day, and the evidence packet rebuilt byte-identical with its SHA-256 manifest."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from datetime import datetime, timezone

import pytest

from ms4watch.alerts.incidents import State
from ms4watch.compliance.packet import verify
from tests.support.notify_peers import dwf, utc
from tests.support.workbench import csrf_of

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _case_from_incident(bench) -> dict:
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    with bench.api("inspector") as c:
        r = c.post("/api/v1/cases", json={"origin": "incident", "incident_id": 1, "location": "Main St outfall",
                                          "description": "dry-weather flow, grey water", "observed_at":
                                          "2026-06-01T15:30:00Z"})
    assert r.status_code == 201, r.text
    return r.json()


def test_a_case_from_an_incident_with_a_visit_sample_custody_and_lab_results(bench, clock):
    case = _case_from_incident(bench)
    assert (case["number"], case["outfall"], case["incident_id"]) == ("IDDE-2026-001", "OF-12", 1)
    s = bench.login("inspector")
    page = s.get(f"/cases/{case['id']}")
    assert page.status_code == 200 and "IDDE-2026-001" in page.text
    r = s.client.post(f"/cases/{case['id']}/entries",
                      data={"csrf": csrf_of(page.text), "kind": "screening", "at": "2026-06-01T11:45", "by": "J. Rivera",
                            "notes": "grey water at the outfall, sudsy", "dry_weather": "yes", "flow_observed": "yes"},
                      files={"photos": ("outfall.png", PNG, "image/png")})
    assert r.status_code == 303, r.text
    got = bench.workbench.compliance.store.case(case["id"])
    e = got.entries[0]
    assert (e.kind, e.dry_weather, e.flow_observed, e.attachments[0].media_type) == ("screening", True, True,
                                                                                    "image/png")
    assert s.get(f"/cases/{case['id']}/files/{e.attachments[0].sha256}").content == PNG
    r = s.post_form(f"/cases/{case['id']}/samples", {"station": "OF-12", "taken_at": "2026-06-01T11:50",
                                                     "collected_by": "J. Rivera"})
    assert r.status_code == 303, r.text
    sample = bench.workbench.compliance.store.samples(case_id=case["id"])[0]
    r = s.post_form(f"/samples/{sample.id}/custody", {"at": "2026-06-01T11:55", "relinquished_by": "J. Rivera",
                                                      "received_by": "A. Chen", "lab": "Capital Lab"})
    assert r.status_code == 303, r.text
    r = s.post_form(f"/samples/{sample.id}/custody", {"at": "2026-06-01T11:58", "relinquished_by": "Somebody Else",
                                                      "received_by": "B. Lee"})
    assert r.status_code == 409 and "the sample is with A. Chen" in r.text, re.findall(r"alert\">([^<]*)", r.text)  # custody must chain
    header = "sample,parameter,value,unit,method,detection_limit,qualifier\n"
    bad = header + f"{sample.number},Ammonia-N,0.9,mg/L,EPA 350.1,0.05,\n{sample.number},E. coli,many,CFU/100 mL,SM 9223 B,1,\n"
    r = s.client.post(f"/cases/{case['id']}/labs", data={"csrf": s.csrf()},
                      files={"file": ("batch.csv", bad.encode(), "text/csv")})
    assert r.status_code == 409 and "batch.csv:3: value: &#39;many&#39; is not a number" in r.text
    assert bench.workbench.compliance.store.sample(sample.id).results == ()          # nothing half-imported
    good = header + f"{sample.number},Ammonia-N,900,ug/L,EPA 350.1,50,\n{sample.number},Surfactants,<0.05,mg/L,SM 5540 C,0.05,U\n"
    r = s.client.post(f"/cases/{case['id']}/labs", data={"csrf": s.csrf()},
                      files={"file": ("batch.csv", good.encode(), "text/csv")})
    assert r.status_code == 303, r.text
    results = bench.workbench.compliance.store.sample(sample.id).results
    assert [(x.parameter, x.verdict, x.value_std) for x in results] == [("Ammonia-N", "exceeds", 0.9),
                                                                        ("Surfactants", "not_detected", 0.05)]
    page = s.get(f"/cases/{case['id']}").text
    assert "A. Chen" in page and "Capital Lab" in page and "outside the limit" in page
    audit = [a.action for a in bench.workbench.audit.entries(limit=50)]
    for action in ("case.open", "case.screening", "sample.record", "sample.custody", "lab.import"):
        assert action in audit, action


def test_a_notice_of_violation_runs_its_clocks_through_the_dispatcher(bench, clock):
    case = _case_from_incident(bench)
    with bench.api("smo") as c:
        party = c.post("/api/v1/parties", json={"name": "Main St Laundromat", "address": "4 Main St\nSchenectady, NY",
                                                "place": "outfall", "place_id": "OF-12", "role": "operator"}).json()
        body = {"law": "schenectady-148-II", "case_id": case["id"], "outfall": "OF-12", "party_id": party["id"],
                "place": "4 Main St", "violation": "washer discharge to the storm drain",
                "provisions": ["illicit_discharge"], "requirements": ["eliminate", "cease"], "remedy": "plug the floor drain", "remediation_days": 10,
                "violation_since": "2026-06-01", "issued_at": "2026-06-01T15:50:00Z", "signatory": "Dana Ortiz"}
        r = c.post("/api/v1/notices", json=body)
        assert r.status_code == 201, r.text
        n = r.json()
        assert n["number"] == "NOV-2026-001"
        remediation = next(d for d in n["deadlines"] if d["key"].endswith("/remediation"))
        assert _t(remediation["due"]) == utc(2026, 6, 12, 4) and remediation["state"] == "running"
        assert c.get(f"/notices/{n['id']}/letter.pdf").content[:5] == b"%PDF-"
        r = c.post("/api/v1/notices", json={**body, "law": "schenectady-148-II", "remediation_days": None})
        assert r.status_code == 409 and "§ 148-32A(2)" in r.json()["detail"]
    with bench.api("inspector") as c:
        assert c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "mailed", "at": "2026-06-01T15:55:00Z",
                                                                 "reference": "9407"}).status_code == 403
    s = bench.login("viewer")
    assert s.get(f"/notices/{n['id']}/letter.pdf").content[:5] == b"%PDF-"
    board = s.get("/deadlines").text
    assert "remediation or restoration (NOV-2026-001)" in board
    # the clock is a deadline incident: open now, reminded before, overdue after
    items = bench.alerting.incidents.list(kind="compliance_deadline")
    assert len(items) == 1 and items[0].deadline == datetime(2026, 6, 12, 4, tzinfo=timezone.utc)
    assert items[0].subject == "OF-12" and items[0].event["provision"] == "Schenectady ch. 148 § 148-32A(2)"
    clock.set(utc(2026, 6, 11, 23))
    bench.pipeline.advance(int(clock().timestamp() * 1e9))
    bench.alerting.tick()
    clock.set(utc(2026, 6, 12, 5))
    bench.pipeline.advance(int(clock().timestamp() * 1e9))
    bench.alerting.tick()
    stages = {r.stage for r in bench.alerting.incidents.notifications(items[0].id)}
    assert {"open", "reminder", "overdue"} <= stages, stages
    # complied: the clock stops and its incident resolves
    with bench.api("smo") as c:
        r = c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "complied", "at": "2026-06-12T04:30:00Z"})
        assert r.status_code == 201, r.text
        assert next(d for d in r.json()["deadlines"] if d["key"].endswith("/remediation"))["state"] == "met late"
    assert bench.alerting.store.get(items[0].id).state is State.RESOLVED


def test_a_release_the_friday_before_columbus_day_is_due_tuesday(bench, clock):
    clock.set(utc(2026, 10, 9, 20))
    with bench.api("inspector") as c:
        r = c.post("/api/v1/releases", json={"law": "schenectady-148-II", "kind": "non_hazardous",
                                             "material": "paint wash water", "location": "Elm St catch basin",
                                             "known_at": "2026-10-09T19:30:00Z", "reported_by": "caller"})
        assert r.status_code == 201, r.text
        rel = r.json()
    notice = next(d for d in rel["deadlines"] if d["key"].endswith("/notice"))
    assert _t(notice["due"]) == utc(2026, 10, 14, 4)                   # the end of Tuesday 13 October, EDT
    clock.set(utc(2026, 10, 13, 14))
    s = bench.login("inspector")
    r = s.post_form(f"/releases/{rel['id']}/events", {"kind": "called", "at": "2026-10-13T09:30"})
    assert r.status_code == 303, r.text
    with bench.api("viewer") as c:
        rel = c.get("/api/v1/releases").json()[0]
    written = next(d for d in rel["deadlines"] if d["key"].endswith("/written"))
    assert _t(written["due"]) == utc(2026, 10, 17, 4)                  # Friday 16 October: three business days
    assert next(d for d in rel["deadlines"] if d["key"].endswith("/notice"))["state"] == "met"


def test_the_evidence_packet_is_byte_identical_when_rebuilt_and_verifies(bench, clock):
    case = _case_from_incident(bench)
    s = bench.login("viewer")
    first = s.get(f"/cases/{case['id']}/packet.zip")
    assert first.status_code == 200 and first.headers["content-type"] == "application/zip"
    second = s.get(f"/cases/{case['id']}/packet.zip")
    assert first.content == second.content
    assert verify(first.content) == []
    names = zipfile.ZipFile(io.BytesIO(first.content)).namelist()
    assert {"case-IDDE-2026-001/records.json", "case-IDDE-2026-001/SHA256SUMS", "case-IDDE-2026-001/packet.pdf",
            "case-IDDE-2026-001/incident-1/acknowledgements.csv"} <= set(names)
    tampered = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(first.content)) as z, zipfile.ZipFile(tampered, "w") as out:
        for n in z.namelist():
            data = z.read(n)
            out.writestr(n, data.replace(b"grey water", b"clean water") if n.endswith("records.json") else data)
    assert verify(tampered.getvalue()) == ["records.json"]
    pdf = s.get("/incidents/1/packet.pdf")
    assert pdf.status_code == 200 and pdf.content[:5] == b"%PDF-"


def _art_i_notice(bench, contractors: int = 0) -> dict:
    """A Schenectady Art. I notice issued Monday 1 June 2026 for missed inspections: remedial
    measures within 15 days of notification (§ 148-18B), to the developer and ``contractors``."""
    with bench.api("smo") as c:
        party = c.post("/api/v1/parties", json={"name": "Elm St Builders", "address": "9 Elm St\nSchenectady, NY",
                                                "place": "site", "place_id": "CS-7", "role": "developer"}).json()
        others = [c.post("/api/v1/parties", json={"name": f"Contractor {i}", "address": f"{i} Yard Rd"}).json()
                  for i in range(1, contractors + 1)]
        r = c.post("/api/v1/notices", json={
            "law": "schenectady-148-I", "site": "CS-7", "party_id": party["id"], "place": "Elm St site",
            "provisions": ["site_inspections", "schenectady-148-I:stabilization"],
            "recipients": [{"party_id": party["id"], "role": "operator", "reference": "9407 0001"}]
            + [{"party_id": o["id"], "role": "contractor"} for o in others],
            "violation": "no site inspection since 5 May; slopes left bare", "remedy": "reinstall the silt fence",
            "violation_since": "2026-05-13", "issued_at": "2026-06-01T15:50:00Z", "signatory": "Dana Ortiz"})
    assert r.status_code == 201, r.text
    return r.json()


def _tick(bench, clock, at: datetime) -> None:
    clock.set(at)
    bench.pipeline.advance(int(clock().timestamp() * 1e9))
    bench.alerting.tick()


def _deadline_rows(bench, iid: int) -> set[tuple[str, str]]:
    """(stage, the deadline the row was queued for) of the incident's notifications."""
    return {(r.stage, r.payload["incident"]["deadline"]) for r in bench.alerting.incidents.notifications(iid)
            if r.status != "cancelled"}


def test_an_art_i_notice_cites_what_was_violated_from_the_catalogue(bench, clock):
    n = _art_i_notice(bench)
    assert [(p["citation"], p["section_inferred"]) for p in n["provisions"]] == [
        ("Schenectady ch. 148 § 148-13B", True), ("Schenectady ch. 148 § 148-11B(5)", False)]
    assert n["provisions"][0]["text"].startswith("Following the commencement of construction, site inspections")
    page = bench.login("viewer").get(f"/notices/{n['id']}").text
    assert "This violates Schenectady ch. 148 § 148-13B (Site inspections every seven days and after storms)" in page
    assert "148-12A" not in page
    with bench.api("smo") as c:
        body = {"law": "schenectady-148-I", "site": "CS-7", "party_id": n["party"]["id"], "place": "Elm St site",
                "violation": "x", "violation_since": "2026-05-13", "issued_at": "2026-06-01T15:50:00Z",
                "signatory": "Dana Ortiz"}
        r = c.post("/api/v1/notices", json=body)
        assert r.status_code == 409 and "provisions: name the provision(s) violated" in r.json()["detail"]
        r = c.post("/api/v1/notices", json={**body, "provisions": ["failing_septic"]})
        assert r.status_code == 409 and "schenectady-148-I has no provision 'failing_septic'" in r.json()["detail"]
        r = c.post("/api/v1/notices", json={**body, "provisions": ["ramapo-218:access"]})
        assert r.status_code == 409 and "ramapo-218:access is a provision of ramapo-218" in r.json()["detail"]
        laws = c.get("/api/v1/laws").json()
        art_i = next(x for x in laws if x["key"] == "schenectady-148-I")
        assert {"site_inspections", "stop_work", "turbidity"} <= {p["key"] for p in art_i["provisions"]}


def test_before_delivery_the_art_i_remedy_clock_runs_from_receipt_not_from_a_day(bench, clock):
    """§ 148-18B: "Within 15 days of notification of violation": no day until the delivery is
    recorded — the letter and the board say "within 15 days of receipt of this notice"; then
    the day is counted from that delivery, and only then is it a deadline incident."""
    n = _art_i_notice(bench)
    remedy = next(d for d in n["deadlines"] if d["key"].endswith("/remediation"))
    assert (remedy["due"], remedy["awaiting"], remedy["state"]) == (None, "within 15 days of receipt of this notice",
                                                                    "awaiting delivery")
    assert bench.alerting.incidents.list(kind="compliance_deadline") == []
    board = bench.login("viewer").get("/deadlines").text
    assert "within 15 days of receipt of this notice" in board and "2026-06-16" not in board
    with bench.api("viewer") as c:
        csv_text = c.get("/api/v1/deadlines.csv").text
    assert "within 15 days of receipt of this notice,awaiting delivery" in csv_text, csv_text
    assert "within 15 days of receipt of this notice" in n["served"]["facts"]["deadline"]["text"]
    clock.set(utc(2026, 6, 5, 14))
    with bench.api("smo") as c:           # it reached the violator on 5 June
        r = c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "delivered", "at": "2026-06-05T13:00:00Z"})
        assert r.status_code == 201, r.text
        remedy = next(d for d in r.json()["deadlines"] if d["key"].endswith("/remediation"))
        assert _t(remedy["due"]) == utc(2026, 6, 23, 4)       # 20 June is a Saturday: Monday 22 (GCL § 25-a)
        r = c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "delivered", "at": "2026-06-05T14:00:00Z"})
        assert r.status_code == 409 and "delivered to that recipient already" in r.json()["detail"]
    inc = bench.alerting.incidents.list(kind="compliance_deadline")[0]
    assert inc.deadline == utc(2026, 6, 23, 4)
    _tick(bench, clock, utc(2026, 6, 22, 23))
    _tick(bench, clock, utc(2026, 6, 23, 5))
    assert {("reminder", "2026-06-23T04:00:00.000+00:00"), ("overdue", "2026-06-23T04:00:00.000+00:00")} <= \
        _deadline_rows(bench, inc.id)


def test_each_recipient_s_period_runs_from_their_own_delivery(bench, clock):
    """§ 148-18A: the notice goes to the operator/landowner, the applicant and all contractors;
    each one's 15 days (§ 148-18B) run from their own notification."""
    n = _art_i_notice(bench, contractors=2)
    assert [r["role"] for r in n["recipients"]] == ["operator", "contractor", "contractor"]
    first, second = n["recipients"][1]["id"], n["recipients"][2]["id"]
    clock.set(utc(2026, 6, 8, 14))
    with bench.api("smo") as c:
        assert c.post(f"/api/v1/notices/{n['id']}/events", json={
            "kind": "delivered", "at": "2026-06-03T13:00:00Z", "recipient_id": first}).status_code == 201
        r = c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "delivered", "at": "2026-06-05T13:00:00Z",
                                                               "recipient_id": 999999})
        assert r.status_code == 409 and "not a recipient of NOV-2026-001" in r.json()["detail"]
        got = c.get(f"/api/v1/notices/{n['id']}").json()
    clocks = {d["key"]: d for d in got["deadlines"] if "/remediation" in d["key"]}
    assert clocks[f"notice/{n['id']}/remediation"]["due"] is None                      # the operator: not yet
    assert _t(clocks[f"notice/{n['id']}/remediation/{first}"]["due"]) == utc(2026, 6, 19, 4)   # 3 June + 15
    assert clocks[f"notice/{n['id']}/remediation/{second}"]["awaiting"] == "within 15 days of receipt of this notice"
    assert [r["delivered_at"] is not None for r in got["recipients"]] == [False, True, False]
    text = bench.login("viewer").get(f"/notices/{n['id']}").text
    assert "Contractor 1 (contractor): by certified mail" in text and "Elm St Builders (operator)" in text


def test_a_hazardous_release_is_notified_immediately_met_by_the_call_not_late(bench, clock):
    """§ 218-43: "said person shall immediately notify ... via emergency dispatch services": due at
    once, met by the notification recorded (how long it took is shown), overdue only without one."""
    with bench.api("inspector") as c:
        r = c.post("/api/v1/releases", json={"law": "ramapo-218", "kind": "hazardous", "material": "diesel",
                                             "location": "Elm St catch basin", "known_at": "2026-06-01T15:00:00Z",
                                             "reported_by": "fire department", "called_at": "2026-06-01T15:25:00Z"})
        assert r.status_code == 201, r.text
        notice = next(d for d in r.json()["deadlines"] if d["key"].endswith("/notice"))
        assert (notice["state"], notice["immediately"], notice["met_after_seconds"]) == ("met", True, 1500)
        r = c.post("/api/v1/releases", json={"law": "ramapo-218", "kind": "hazardous", "material": "solvent",
                                             "location": "Main St", "known_at": "2026-06-01T15:40:00Z",
                                             "reported_by": "passer-by"})
        unnotified = next(d for d in r.json()["deadlines"] if d["key"].endswith("/notice"))
        assert unnotified["state"] == "overdue"
    items = bench.alerting.incidents.list(kind="compliance_deadline")
    assert sorted(i.event["id"] for i in items) == ["compliance/release/1/written", "compliance/release/2/notice"]
    page = bench.login("viewer").get("/releases").text
    assert "due immediately" in page and "25 min after it was known" in page and "met late" not in page


def test_repeat_offences_count_only_earlier_notices_under_the_same_article_and_await_conviction(bench, clock):
    """§ 148-32B: "for conviction of a second offense, both of which were committed within a period of
    five years" — offences against *this article*: an Art. I construction notice is not one."""
    with bench.api("smo") as c:
        party = c.post("/api/v1/parties", json={"name": "Elm St Builders", "address": "9 Elm St\nSchenectady, NY",
                                                "place": "site", "place_id": "CS-7", "role": "developer"}).json()
        common = {"party_id": party["id"], "place": "9 Elm St", "violation_since": "2026-05-01",
                  "signatory": "Dana Ortiz"}
        art_i = c.post("/api/v1/notices", json={**common, "law": "schenectady-148-I", "site": "CS-7",
                                                "violation": "silt fence down", "remedy": "reinstall it",
                                                "provisions": ["swppp_compliance"],
                                                "issued_at": "2026-05-20T14:00:00Z"})
        assert art_i.status_code == 201, art_i.text
        idde = {**common, "law": "schenectady-148-II", "outfall": "OF-12", "violation": "wash water to the drain",
                "provisions": ["illicit_discharge"], "requirements": ["cease"], "remedy": "stop it", "remediation_days": 10}
        first = c.post("/api/v1/notices", json={**idde, "issued_at": "2026-05-25T14:00:00Z"}).json()
        assert first["prior_violations"] == []                      # the Art. I notice is another article's
        second = c.post("/api/v1/notices", json={**idde, "issued_at": "2026-06-01T14:00:00Z"}).json()
        assert second["prior_violations"] == ["2026-05-25"]
    s = bench.login("viewer")
    page = s.get(f"/notices/{second['id']}").text
    assert "subject to conviction" in page and "Possible second offense" in page


def test_a_town_issues_only_under_the_local_laws_its_registry_says_it_adopted(tmp_path, clock):
    from tests.support.notify_peers import registry
    from tests.support.workbench import WORKBENCH_YAML, start_bench
    yaml = WORKBENCH_YAML.replace("municipality: schenectady", "municipality: brookhollow\nlocal_laws: [ramapo-218]")
    bench = start_bench(tmp_path, clock, reg=registry(yaml))
    try:
        with bench.api("smo") as c:
            party = c.post("/api/v1/parties", json={"name": "Elm St Builders", "address": "9 Elm St"}).json()
            body = {"party_id": party["id"], "place": "9 Elm St", "violation_since": "2026-05-01",
                    "signatory": "Dana Ortiz", "outfall": "OF-12", "violation": "wash water", "requirements": ["cease"],
                    "provisions": ["illicit_discharge"],
                    "remedy": "stop", "remediation_days": 10, "issued_at": "2026-06-01T14:00:00Z"}
            r = c.post("/api/v1/notices", json={**body, "law": "schenectady-148-II"})
            assert r.status_code == 409 and "not a local law brookhollow has adopted" in r.json()["detail"]
            assert "local_laws" in r.json()["detail"]
            assert c.post("/api/v1/notices", json={**body, "law": "ramapo-218"}).status_code == 201
        s = bench.login("smo")
        page = s.get("/notices").text
        assert "ramapo-218" in page and "schenectady-148-II" not in page
        r = s.post_form("/swppp", {"site": "CS-7", "title": "Elm St SWPPP", "received_at": "2026-06-01T10:00"})
        assert r.status_code == 409 and "§ 148-6" in r.text
    finally:
        bench.close()


def test_the_registry_refuses_an_unknown_local_law():
    import pytest
    from tests.support.notify_peers import registry
    from tests.support.workbench import WORKBENCH_YAML
    with pytest.raises(Exception, match="unknown local law 'ramapo-219'"):
        registry(WORKBENCH_YAML.replace("timezone: America/New_York", "timezone: America/New_York\nlocal_laws: [ramapo-219]"))


def test_an_evidence_packet_of_corrected_values_says_so_and_the_raw_one_stays_raw(bench, clock):
    """The incident's readings with the drift correction in force (USGS TM 1-D3) on request:
    the CSV's first line, the records and the PDF say corrected; the default packet is raw;
    asking for corrected values where no correction is in force gives raw values, said so."""
    from datetime import timedelta

    from ms4watch.contract.drift import DriftCorrection
    from ms4watch.contract.timeutil import to_ns
    from ms4watch.contract.wire import CanonicalReading
    start = utc(2026, 6, 1, 15, 30)
    readings = [CanonicalReading(to_ns(start + timedelta(minutes=m)), "OF-12", "LOG-OF-12", "flow", "flow", 4.0,
                                 "gpm", "", 0) for m in range(0, 30, 5)]
    bench.feed(readings)
    iid = bench.alerting.handle(dwf("2026-06-01T15:30:00Z")).incident.id
    s = bench.login("viewer")
    asked = s.get(f"/incidents/{iid}/packet.zip", params={"values": "corrected"})   # nothing in force yet
    assert asked.status_code == 200 and f"incident-{iid}-corrected.zip" in asked.headers["content-disposition"]
    records = _zip_text(asked.content, "records.json")
    assert '"readings_values": "raw"' in records
    bench.workbench.corrections.store.add("OF-12", "flow", DriftCorrection(
        to_ns(start), to_ns(start + timedelta(minutes=25)), 0.0, 0.5, drift_kind="absolute"), by="Lee Tech",
        why="visit: the level offset had drifted 0.5")
    raw = s.get(f"/incidents/{iid}/packet.zip")
    fixed = s.get(f"/incidents/{iid}/packet.zip", params={"values": "corrected"})
    assert verify(fixed.content) == [] and fixed.content != raw.content
    assert fixed.content == s.get(f"/incidents/{iid}/packet.zip", params={"values": "corrected"}).content
    assert '"readings_values": "raw"' in _zip_text(raw.content, "records.json")
    assert '"readings_values": "corrected"' in _zip_text(fixed.content, "records.json")
    csv_fixed = _zip_text(fixed.content, f"incident-{iid}/readings.csv").splitlines()
    assert csv_fixed[0].startswith("# values: corrected for fouling and drift (USGS TM 1-D3)")
    assert [ln.split(",")[1] for ln in csv_fixed[2:]] == ["4.0", "4.1", "4.2", "4.3", "4.4", "4.5"]   # prorated
    assert [ln.split(",")[1] for ln in _zip_text(raw.content, f"incident-{iid}/readings.csv").splitlines()[1:]] == \
        ["4.0"] * 6
    page = s.get(f"/incidents/{iid}").text
    assert f"/incidents/{iid}/packet.zip?values=corrected" in page


def _zip_text(data: bytes, name: str) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(next(n for n in z.namelist() if n.endswith("/" + name))).decode()


def _idde_notice(bench, case_id: int | None = None, **over) -> dict:
    with bench.api("smo") as c:
        party = c.post("/api/v1/parties", json={"name": "Main St Laundromat", "address": "4 Main St\nSchenectady, NY",
                                                "place": "outfall", "place_id": "OF-12", "role": "operator"}).json()
        body = {"law": "schenectady-148-II", "case_id": case_id, "outfall": "OF-12", "party_id": party["id"],
                "place": "4 Main St", "violation": "washer discharge to the storm drain",
                "provisions": ["illicit_discharge", "illicit_connection"], "requirements": ["eliminate", "cease"],
                "remedy": "", "remediation_days": 10, "violation_since": "2026-05-20",
                "issued_at": "2026-06-01T15:50:00Z", "signatory": "Dana Ortiz", **over}
        r = c.post("/api/v1/notices", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_a_reprint_is_the_notice_served_and_a_correction_is_a_new_notice(bench, clock):
    """At issue the letter is frozen: months later, with more offences to count, a reprint and
    the evidence packet give the same bytes, whose SHA-256 was stored at issue."""
    import hashlib
    case = _case_from_incident(bench)
    n = _idde_notice(bench, case_id=case["id"])
    served = n["served"]
    assert served["facts"]["offences"] == {"count": 2, "per": "week", "to": "2026-06-01"}
    assert [p["citation"] for p in served["facts"]["provisions"]] == ["Schenectady ch. 148 § 148-24A",
                                                                       "Schenectady ch. 148 § 148-24B(1)"]
    assert served["facts"]["deadline"]["last_day"] == "2026-06-11"
    s = bench.login("viewer")
    first = s.get(f"/notices/{n['id']}/letter.pdf").content
    assert hashlib.sha256(first).hexdigest() == served["pdf_sha256"]
    clock.set(utc(2026, 10, 20, 14))          # 22 weeks on: the violation continues, the records grow
    with bench.api("smo") as c:
        assert c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "mailed", "at": "2026-06-01T17:00:00Z",
                                                                 "reference": "9407 55"}).status_code == 201
        assert c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "delivered",
                                                                 "at": "2026-06-03T15:00:00Z"}).status_code == 201
        again = c.get(f"/api/v1/notices/{n['id']}").json()["served"]
    reprint = s.get(f"/notices/{n['id']}/letter.pdf").content
    assert reprint == first and again["pdf_sha256"] == served["pdf_sha256"]
    penalties = next(x for x in served["facts"]["letter"] if x["key"] == "penalties")
    assert "to June 1, 2026 that makes 2 offense(s)" in " ".join(penalties["paragraphs"])
    assert "to June 1, 2026 that makes 2 offense(s)" in s.get(f"/notices/{n['id']}").text   # the page: as served
    assert again["facts"] == served["facts"] and again["facts_sha256"] == served["facts_sha256"]
    with zipfile.ZipFile(io.BytesIO(s.get(f"/cases/{case['id']}/packet.zip").content)) as z:
        assert z.read(f"case-IDDE-2026-001/letters/{n['number']}.pdf") == first
        record = json.loads(z.read("case-IDDE-2026-001/records.json"))
    assert record["notices"][0]["letter_sha256"] == served["pdf_sha256"]
    # a correction: a new notice that references the old one, which stays as served
    fixed = _idde_notice(bench, case_id=case["id"], corrects=n["id"], issued_at="2026-10-20T13:00:00Z",
                         violation="washer discharge from the floor drain at 4 Main St (corrected address)")
    assert fixed["corrects"] == n["id"] and fixed["number"] == "NOV-2026-002"
    assert fixed["served"]["facts"]["corrects"] == n["number"]
    assert fixed["prior_violations"] == []                    # the notice it corrects is not an earlier violation
    with bench.api("viewer") as c:
        old = c.get(f"/api/v1/notices/{n['id']}").json()
    assert old["corrected_by"] == fixed["id"] and old["status"] == "corrected by NOV-2026-002"
    assert next(d for d in old["deadlines"] if d["key"].endswith("/remediation"))["closed"] == \
        "corrected by NOV-2026-002"
    assert s.get(f"/notices/{n['id']}/letter.pdf").content == first
    assert "This notice corrects and replaces notice NOV-2026-001" in s.get(f"/notices/{fixed['id']}").text
    form = bench.login("smo").get(f"/notices?correct={fixed['id']}").text      # the form, filled in from it
    assert "Correcting NOV-2026-002" in form and "(corrected address)</textarea>" in form
    assert 'value="schenectady-148-II:illicit_connection" checked' in form
    assert 'value="schenectady-148-II:illicit_discharge" checked' in form
    assert 'value="schenectady-148-II:sewage_connection" checked' not in form
    assert f'<option value="{fixed["id"]}" selected>NOV-2026-002</option>' in form
    with bench.api("smo") as c:
        r = c.post("/api/v1/notices", json={**{k: fixed[k] for k in ("law", "place", "violation", "remedy",
                                                                     "remediation_days", "requirements")},
                                            "party_id": fixed["party"]["id"], "provisions": ["illicit_discharge"],
                                            "violation_since": "2026-05-20", "issued_at": "2026-10-20T13:30:00Z",
                                            "signatory": "Dana Ortiz", "corrects": n["id"]})
        assert r.status_code == 409 and "corrected already by NOV-2026-002" in r.json()["detail"]


def test_withdrawing_takes_a_reason_and_a_confirmation_and_is_audited(bench, clock):
    n = _idde_notice(bench)
    s = bench.login("smo")
    page = s.get(f"/notices/{n['id']}").text
    assert 'class="stack withdraw-form"' in page and 'value="withdrawn"' not in page   # not one click among events
    r = s.post_form(f"/notices/{n['id']}/withdraw", {"reason": "  "})
    assert r.status_code == 400 and "reason: why the notice is withdrawn" in r.text
    r = s.post_form(f"/notices/{n['id']}/withdraw", {"reason": "wrong property: the drain is at 6 Main St"})
    assert r.status_code == 200 and f"Withdraw {n['number']}?" in r.text and "cannot be undone" in r.text
    assert 'name="confirm" value="yes"' in r.text and "wrong property: the drain is at 6 Main St" in r.text
    assert bench.workbench.compliance.store.notice(n["id"]).first("withdrawn") is None      # asked, not done
    r = s.post_form(f"/notices/{n['id']}/events", {"kind": "withdrawn", "at": "2026-06-01T12:00",
                                                   "note": "one click"})
    assert r.status_code == 409 and "withdraw a notice with its own form" in r.text
    r = s.post_form(f"/notices/{n['id']}/withdraw", {"reason": "wrong property: the drain is at 6 Main St",
                                                     "confirm": "yes"})
    assert r.status_code == 303, r.text
    got = bench.workbench.compliance.store.notice(n["id"])
    assert got.status == "withdrawn" and got.first("withdrawn").note == "wrong property: the drain is at 6 Main St"
    audit = [a for a in bench.workbench.audit.entries(limit=50) if a.action == "notice.withdrawn"]
    assert len(audit) == 1 and "reason: wrong property" in audit[0].detail and audit[0].who == "smo"
    page = s.get(f"/notices/{n['id']}").text
    assert "Withdrawn" in page and "withdraw-form" not in page
    with bench.api("smo") as c:
        other = _idde_notice(bench, issued_at="2026-06-01T16:00:00Z")
        r = c.post(f"/api/v1/notices/{other['id']}/events", json={"kind": "withdrawn", "at": "2026-06-01T16:10:00Z"})
        assert r.status_code == 409 and "note: the reason the notice is withdrawn" in r.json()["detail"]
        r = c.post(f"/api/v1/notices/{n['id']}/events", json={"kind": "complied", "at": "2026-06-01T16:10:00Z"})
        assert r.status_code == 409 and "was withdrawn" in r.json()["detail"]


def test_the_issue_form_takes_provisions_recipients_and_remedies(bench, clock):
    with bench.api("smo") as c:
        dev = c.post("/api/v1/parties", json={"name": "Elm St Builders", "address": "9 Elm St"}).json()
        sub = c.post("/api/v1/parties", json={"name": "Dig-It Excavating", "address": "1 Yard Rd"}).json()
    s = bench.login("smo")
    page = s.get("/notices").text
    assert 'value="schenectady-148-I:site_inspections"' in page and "number inferred" in page
    form = {"law": "schenectady-148-I", "kind": "nov", "party_id": str(dev["id"]), "role": "operator",
            "method": "certified_mail", "reference": "9407 77", f"also_role:{sub['id']}": "contractor",
            "site": "CS-7", "place": "Elm St site", "violation": "no inspections since 5 May",
            "violation_since": "2026-05-12", "issued_at": "2026-06-01T10:00", "signatory": "Dana Ortiz",
            "remedy:schenectady-148-I:site_inspections": "Inspect weekly and after every storm; send the reports."}
    r = s.client.post("/notices", data={**form, "csrf": s.csrf(), "provisions": ["schenectady-148-I:site_inspections",
                                                                                 "schenectady-148-I:stockpiles"]})
    assert r.status_code == 303, r.text
    n = bench.workbench.compliance.store.notices()[0]
    assert n.provisions == ("site_inspections", "stockpiles")
    assert dict(n.remedies) == {"site_inspections": "Inspect weekly and after every storm; send the reports."}
    assert [(r.party_id, r.role, r.reference) for r in n.recipients] == [(dev["id"], "operator", "9407 77"),
                                                                        (sub["id"], "contractor", None)]
    text = s.get(f"/notices/{n.id}").text
    assert "Schenectady ch. 148 § 148-13B: Inspect weekly and after every storm" in text
    r = s.client.post("/notices", data={**form, "csrf": s.csrf(), "provisions": ["ramapo-218:access"]})
    assert r.status_code == 409 and "ramapo-218:access is a provision of ramapo-218" in r.text


FORMULAS = ['=HYPERLINK("http://evil.test","x")', "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd",
            "\t=1+1", "\r=1+1"]


def test_formulas_typed_into_a_case_or_an_ack_link_are_not_live_in_any_csv(bench, clock):
    """The ack link's ``by``, a case's location, an entry's people and notes: in the packet's
    acknowledgements.csv and thread.csv and the annual report's illicit_found.csv every cell
    starting with = + - @ TAB CR is written with a leading ' (OWASP), plain numbers stay numbers."""
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    link = bench.workbench.links.url(bench.alerting.store.get(1))
    with bench.api() as c:
        assert c.post(link, data={"by": FORMULAS[0], "note": FORMULAS[1]}).status_code == 200
    with bench.api("inspector") as c:
        case = c.post("/api/v1/cases", json={"origin": "incident", "incident_id": 1, "location": FORMULAS[2],
                                             "description": "grey water", "observed_at": "2026-06-01T15:30:00Z"}).json()
    s = bench.login("inspector")
    for i, payload in enumerate(FORMULAS):
        r = s.post_form(f"/cases/{case['id']}/entries", {"kind": "tracing", "at": f"2026-05-31T1{i}:45", "by": payload,
                                                        "notes": payload, "finding": "illicit_discharge"})
        assert r.status_code == 303, r.text
    z = zipfile.ZipFile(io.BytesIO(s.get(f"/cases/{case['id']}/packet.zip").content))
    acks = list(csv.DictReader(io.StringIO(z.read("case-IDDE-2026-001/incident-1/acknowledgements.csv").decode())))
    assert (acks[-1]["who"], acks[-1]["note"]) == ("'" + FORMULAS[0], "'" + FORMULAS[1])
    thread = list(csv.DictReader(io.StringIO(z.read("case-IDDE-2026-001/thread.csv").decode(), newline="")))
    stored = [e.by for e in bench.workbench.compliance.store.case(case["id"]).entries]   # the form trims TAB, CR
    assert len(stored) == len(FORMULAS) and all(b.startswith(("=", "+", "-", "@")) for b in stored)
    assert sorted(e["by"] for e in thread) == sorted("'" + b for b in stored)
    assert sorted(e["notes"] for e in thread) == sorted("'" + b for b in stored)
    found = s.get("/reports/annual/2026/illicit_found.csv")
    assert found.status_code == 200, found.text
    [row] = csv.DictReader(io.StringIO(found.text, newline=""))
    assert row["location"] == "'" + FORMULAS[2] and row["case"] == "IDDE-2026-001"


@pytest.mark.timeout(60)
def test_a_lab_file_whose_unit_is_an_expression_is_refused_at_once(bench, clock):
    """pint would compute 10**10**7 holding the GIL (10-25 s, every page and ingest stopped);
    the upload is refused naming line and field, and the server answers meanwhile."""
    case = _case_from_incident(bench)
    s = bench.login("inspector")
    r = s.post_form(f"/cases/{case['id']}/samples", {"station": "OF-12", "taken_at": "2026-06-01T11:50",
                                                     "collected_by": "J. Rivera"})
    assert r.status_code == 303, r.text
    sample = bench.workbench.compliance.store.samples(case_id=case["id"])[0]
    body = ("sample,parameter,value,unit,method\n"
            f"{sample.number},Ammonia-N,0.9,10**10**7 mg/L,EPA 350.1\n"
            f"{sample.number},Fluoride,0.1,(mg/L)**99,EPA 300.0\n")
    r = s.client.post(f"/cases/{case['id']}/labs", data={"csrf": s.csrf()},
                      files={"file": ("batch.csv", body.encode(), "text/csv")})
    assert r.status_code == 409
    assert "batch.csv:2: unit: &#39;10**10**7 mg/L&#39; is not a unit the lab import knows" in r.text
    assert "batch.csv:3: unit: &#39;(mg/L)**99&#39; is not a unit the lab import knows" in r.text
    assert bench.workbench.compliance.store.sample(sample.id).results == ()


def test_a_lab_files_errors_each_on_its_own_line_and_turbidity_ph_counts_read_right(bench, clock):
    """Issue 23: four errors of a bad file ran together on one line; "'NTU' is not a unit pint
    knows"; pH 7.4 shown "below" beside "pH (low) < 6.5 s.u.". Each error is its own item
    naming line and column; NTU, FNU, s.u., CFU and MPN are known; a result inside its
    thresholds reads "within the limit"."""
    case = _case_from_incident(bench)
    s = bench.login("inspector")
    r = s.post_form(f"/cases/{case['id']}/samples", {"station": "OF-12", "taken_at": "2026-06-01T11:50",
                                                     "collected_by": "J. Rivera"})
    assert r.status_code == 303, r.text
    sample = bench.workbench.compliance.store.samples(case_id=case["id"])[0]
    header = "sample,parameter,value,unit,method,detection_limit,qualifier\n"
    bad = header + (f"{sample.number},Ammonia-N,lots,mg/L,EPA 350.1,0.05,\n"
                    f"NOPE,Fluoride,0.1,mg/L,EPA 300.0,0.05,\n"
                    f"{sample.number},Turbidity,12,NTUish,EPA 180.1,0.1,\n"
                    f"{sample.number},pH,7.4,s.u.,SM 4500-H B,,Q\n")
    r = s.client.post(f"/cases/{case['id']}/labs", data={"csrf": s.csrf()},
                      files={"file": ("batch.csv", bad.encode(), "text/csv")})
    assert r.status_code == 409
    alert = re.search(r'role="alert">(.*?)</div>', r.text, re.S).group(1)
    items = re.findall(r"<li>(.*?)</li>", alert, re.S)
    assert len(items) == 4, alert
    assert [i.split(":")[1] for i in items] == ["2", "3", "4", "5"], items
    good = header + (f"{sample.number},Turbidity,12,NTU,EPA 180.1,0.1,\n"
                     f"{sample.number},Turbidity (field),11,FNU,ISO 7027,0.1,\n"
                     f"{sample.number},pH,7.4,s.u.,SM 4500-H B,,\n"
                     f"{sample.number},E. coli,30,MPN/100 mL,SM 9223 B,1,\n"
                     f"{sample.number},Enterococci,10,CFU/100 mL,EPA 1600,1,\n")
    r = s.client.post(f"/cases/{case['id']}/labs", data={"csrf": s.csrf()},
                      files={"file": ("batch.csv", good.encode(), "text/csv")})
    assert r.status_code == 303, r.text
    page = s.get(f"/cases/{case['id']}").text
    ph_row = next(row for row in re.findall(r"<tr[^>]*>.*?</tr>", page, re.S) if ">pH<" in row)
    assert "within the limit" in ph_row and ">below<" not in ph_row, ph_row
