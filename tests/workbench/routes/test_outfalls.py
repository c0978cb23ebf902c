"""The outfall inventory and the approvals and exempt flows recorded on the workbench: the
registry's fields shown; a record made here reaches the alert engine at once (an open
dry-weather flow becomes suppressed, its incident says why) and goes when withdrawn; an
exempt flow without an end is refused; the CSV is what ``ms4watch replay --approvals``
reads, and replay then judges as the engine did."""

from __future__ import annotations

import csv
import html
import io
from datetime import timedelta

from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.incidents import State
from ms4watch.alerts.replay import read_suppressions
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading
from tests.support.notify_peers import utc

T0 = utc(2026, 6, 1, 16, 0)


def _reading(station: str, quantity: str, t, value: float) -> CanonicalReading:
    unit = {"rain": "in", "flow": "gpm"}[quantity]
    return CanonicalReading(to_ns(t), station, f"LOG-{station}", quantity, quantity, value, unit, "", 0)


def _dry_weather_flow(bench) -> int:
    """Four dry days at RG-1, then OF-12 flowing 2.5 gpm since 14:30 UTC (10:30 in the town): an open
    dry-weather flow."""
    start = T0 - timedelta(days=4)
    rain = [_reading("RG-1", "rain", start + timedelta(minutes=5 * i), 0.0) for i in range(4 * 288)]
    flow = [_reading("OF-12", "flow", start + timedelta(minutes=5 * i), 0.1 if i < 4 * 288 - 18 else 2.5)
            for i in range(4 * 288)]
    bench.feed(rain + flow)
    [inc] = [i for i in bench.alerting.store.list([State.OPEN]) if i.kind == "dry_weather_flow"]
    assert inc.suppressed is None
    return inc.id


def _episode(bench):
    return next(e for e in bench.pipeline.engine_events() if e.kind is AlertKind.DRY_WEATHER_FLOW)


def test_the_inventory_shows_the_registrys_outfalls(bench):
    s = bench.login("viewer")
    page = s.get("/outfalls").text
    assert "Mohawk River" in page and "36 in rcp" in page and "42.8161, -73.9452" in page
    assert '<a href="/stations/RG-1">DPW yard</a>' in page
    one = s.get("/outfalls/OF-12").text
    assert "Mohawk River" in one and "0.5 gpm" in one and "Record</button>" not in one     # a viewer records nothing
    assert s.get("/outfalls/OF-99").status_code == 404
    with bench.api("viewer") as c:
        of = c.get("/api/v1/outfalls/OF-12").json()
        assert (of["receiving_water"], of["pipe_diameter_in"], of["pipe_material"]) == ("Mohawk River", 36, "rcp")
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/outfalls.csv").text)))
        assert [x["id"] for x in rows] == ["OF-12", "OF-14"] and rows[0]["rain_gauges"] == "RG-1"


def test_an_approval_recorded_here_suppresses_the_open_episode_at_once_and_withdrawing_it_does_not(bench):
    iid = _dry_weather_flow(bench)
    s = bench.login("smo")
    r = s.post_form("/approvals", {"kind": "approved_discharge", "outfall": "OF-12", "start": "2026-06-01T10:00",
                                   "end": "2026-06-01T11:00", "reason": "dye test, over too early", "back": "/outfalls/OF-12"})
    assert r.status_code == 303 and r.headers["location"] == "/outfalls/OF-12"
    assert bench.alerting.store.get(iid).suppressed is None              # its window does not cover the episode
    r = s.post_form("/approvals", {"kind": "approved_discharge", "outfall": "OF-12", "start": "2026-06-01T10:00",
                                   "end": "2026-06-01T18:00", "reason": "hydrant flushing, DPW work order 2231"})
    assert r.status_code == 303 and r.headers["location"] == "/approvals"
    inc = bench.alerting.store.get(iid)
    assert inc.suppressed == "approved discharge: hydrant flushing, DPW work order 2231"
    assert _episode(bench)["suppressed"] == inc.suppressed                 # the engine's own judgement
    assert "suppression" in [a.action for a in bench.alerting.store.audit(iid)]
    page = s.get(f"/incidents/{iid}").text
    assert "hydrant flushing, DPW work order 2231" in page
    listed = s.get("/approvals").text
    assert 'id="suppression-2"' in listed and "#2 by Smo User" in listed and "<span>registry file</span>" not in listed
    # withdrawn: the episode is no longer suppressed
    r = s.post_form("/approvals/2/withdraw", {"note": "the flushing was called off"})
    assert r.status_code == 303
    assert bench.alerting.store.get(iid).suppressed is None and _episode(bench)["suppressed"] is None
    again = s.post_form("/approvals/2/withdraw", {"note": "twice"})
    assert again.status_code == 409 and "withdrawn already" in html.unescape(again.text)
    audit = [(a.action, a.target, a.outcome) for a in bench.workbench.audit.entries(limit=10)]
    assert ("suppression.withdraw", "suppression:2", "done") in audit
    assert ("approved_discharge.record", "outfall:OF-12", "done") in audit


def test_an_exempt_flow_needs_an_end_a_reason_and_a_bounded_window(bench):
    s = bench.login("smo")
    base = {"kind": "exempt_flow", "outfall": "OF-12", "start": "2026-06-01T10:00", "end": "2026-06-05T10:00",
            "flow": "landscape irrigation", "reason": "new lawn at 12 Elm St, watered nightly"}
    r = s.post_form("/approvals", {**base, "end": ""})
    assert r.status_code == 409 and "needs an end" in r.text
    assert 'value="new lawn at 12 Elm St, watered nightly"' in r.text                  # the form comes back filled
    assert s.post_form("/approvals", {**base, "end": "2027-07-01T10:00"}).status_code == 409
    assert s.post_form("/approvals", {**base, "end": "2026-05-01T10:00"}).status_code == 409
    assert s.post_form("/approvals", {**base, "flow": ""}).status_code == 409
    assert s.post_form("/approvals", {**base, "outfall": "OF-99"}).status_code == 404
    assert s.post_form("/approvals", {**base, "start": "yesterday"}).status_code == 409
    with bench.api("smo") as c:
        body = {**base, "start": "2026-06-01T10:00:00-04:00", "end": None}
        r = c.post("/api/v1/approvals", json=body)
        assert r.status_code == 409 and "needs an end" in r.json()["detail"]
        assert bench.workbench.inventory.store.list(bench.municipality) == []
        r = c.post("/api/v1/approvals", json={**body, "end": "2026-06-05T10:00:00-04:00"})
        assert r.status_code == 201 and r.json()["source"] == "recorded" and r.json()["flow"] == "landscape irrigation"
        assert c.post("/api/v1/approvals/1/withdraw", json={"note": ""}).status_code == 422
        assert c.post("/api/v1/approvals/9/withdraw", json={"note": "x"}).status_code == 404
        listed = c.get("/api/v1/approvals").json()
        assert [(x["kind"], x["id"]) for x in listed] == [("exempt_flow", 1)]
        assert c.get("/api/v1/approvals", params={"outfall": "OF-14"}).json() == []
        assert 'href="/api/v1/approvals.csv?outfall=OF-12"' in bench.login("viewer").get("/outfalls/OF-12").text


def test_the_approvals_csv_is_what_replay_reads(bench, tmp_path):
    _dry_weather_flow(bench)
    s = bench.login("smo")
    s.post_form("/approvals", {"kind": "approved_discharge", "outfall": "OF-12", "start": "2026-06-01T10:00",
                               "end": "2026-06-01T18:00", "reason": "hydrant flushing"})
    s.post_form("/approvals", {"kind": "exempt_flow", "outfall": "OF-14", "start": "2026-06-01T10:00",
                               "end": "2026-06-03T10:00", "flow": "lawn watering", "reason": "new sod, watered nightly"})
    s.post_form("/approvals", {"kind": "approved_discharge", "outfall": "OF-12", "start": "2026-06-02T10:00",
                               "end": "2026-06-02T18:00", "reason": "withdrawn later"})
    s.post_form("/approvals/3/withdraw", {"note": "cancelled"})
    with bench.api("viewer") as c:
        text = c.get("/api/v1/approvals.csv").text
    (tmp_path / "approvals.csv").write_text(text)
    replayed = read_suppressions(tmp_path / "approvals.csv", bench.workbench.registry)
    assert replayed == bench.workbench.inventory.effective_registry()
    assert [d.reason for d in replayed.approved_discharges] == ["hydrant flushing"]
    assert replayed.outfall("OF-14").exempt_flows[0].kind == "lawn watering"
