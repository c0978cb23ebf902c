"""Stations: the status board (states from the engine's incidents and the store's status),
a station's page, its chart of any window (SVG, buckets summarised by the store, thresholds,
storms and episodes marked), its readings as JSON and CSV, calibrations due."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, datetime, timedelta

import pytest

from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading, SensorCalibration
from ms4watch.contract.calibration import CalibrationRecord, CheckPoint, Fit, Standard
from ms4watch.ingest.stores.base import DeviceEvent, DeviceStatus
from tests.support.notify_peers import dwf, event, utc

MIN = 60 * 10**9
T0 = utc(2026, 6, 1, 16, 0)
UNITS = {"rain": "in", "flow": "gpm", "turbidity": "NTU", "battery": "V"}


def r(station: str, quantity: str, t, value: float, flags: str = "") -> CanonicalReading:
    return CanonicalReading(to_ns(t), station, f"LOG-{station}", quantity, quantity, value, UNITS[quantity], flags, 0)


def _status(bench) -> None:
    """Loggers' statuses as ingest stores them: OF-12's flow sensor overdue for calibration."""
    now = to_ns(T0)
    bench.store.write_status(DeviceStatus("LOG-OF-12", "OF-12", now, "online", 12.4, -83.0, 0, 0, "c1", "0.1", "synced", (
        SensorCalibration(sensor="flow", performed=date(2025, 11, 1), due=date(2026, 5, 1)),)))
    bench.store.write_status(DeviceStatus("LOG-TD-1", "TD-1", now, "online", 11.9, -95.0, 0, 0, "c1", "0.1", "synced", (
        SensorCalibration(sensor="turbidity", performed=date(2026, 5, 20), due=date(2026, 6, 10)),)))


def test_the_board_colours_every_station_by_its_state(bench):
    bench.feed([r("OF-12", "flow", T0 - timedelta(minutes=5), 0.1), r("RG-1", "rain", T0 - timedelta(minutes=2), 0.0),
                r("OF-14", "flow", T0 - timedelta(minutes=3), 0.2), r("TD-1", "turbidity", T0 - timedelta(minutes=1), 4.0)])
    _status(bench)
    with bench.api("viewer") as c:      # a station the store has nothing of is not "reporting", even before the engine says
        before = {s["id"]: s for s in c.get("/api/v1/stations").json()}
    assert (before["TU-1"]["state"], before["TU-1"]["reasons"]) == ("stale", ["no reading stored in the last 400 days"])
    dwf_id = bench.alerting.handle(dwf("2026-06-01T15:30:00Z", outfall="OF-14")).incident.id   # alerting
    bench.alerting.handle(event("stale_station", station="TU-1", start="2026-06-01T12:00:00Z", end=None,
                                reason="no reading for more than 3 x 15 min"))                 # stale
    bench.alerting.handle(event("turbidity_not_evaluable", pair="TP-1", start="2026-06-01T13:00:00Z", end=None,
                                reason="the downstream probe failed QC", causes=["downstream_qc"]))
    with bench.api("viewer") as c:
        board = {s["id"]: s for s in c.get("/api/v1/stations").json()}
    assert set(board) == {"RG-1", "OF-12", "OF-14", "TU-1", "TD-1"}
    assert board["OF-14"]["state"] == "alerting" and dwf_id in board["OF-14"]["open_incidents"]
    assert board["TU-1"]["state"] == "stale" and "3 x 15 min" in board["TU-1"]["reasons"][0]
    assert board["TD-1"]["state"] == "not evaluable"
    assert board["OF-12"]["state"] == "calibration overdue" and "2026-05-01 (flow)" in board["OF-12"]["reasons"][0]
    assert board["RG-1"]["state"] == "reporting" and board["RG-1"]["latest_at"].startswith("2026-06-01T15:58")
    assert (board["OF-12"]["battery_v"], board["OF-12"]["signal_dbm"]) == (12.4, -83.0)
    assert (board["OF-12"]["lat"], board["OF-12"]["lon"]) == (42.8161, -73.9452)

    page = bench.login("viewer").get("/").text
    assert re.search(r'class="tile alerting"><a href="/stations/OF-14">', page)
    assert re.search(r'class="tile stale"><a href="/stations/TU-1">', page)
    assert 'class="pin calibration-overdue"' in page and "<svg viewBox" in page     # a map: OF-12 has coordinates
    assert '<circle' in page and "OF-14</text>" not in page                           # OF-14 has none
    stations = bench.login("viewer").get("/stations").text
    assert "12.4 V" in stations and "-83 dBm" in stations and "2026-05-01" in stations
    with bench.api("viewer") as c:
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/stations.csv").text)))
    assert {x["id"]: x["state"] for x in rows}["TU-1"] == "stale"


def test_map_tiles_only_when_a_tile_server_is_configured(tmp_path, clock):
    from tests.support.workbench import start_bench
    b = start_bench(tmp_path, clock, web={"map_tiles": "https://tiles.town.example/{z}/{x}/{y}.png",
                                          "map_attribution": "© the town's GIS"})
    try:
        s = b.login("viewer")
        r_ = s.get("/")
        assert re.search(r'<image href="https://tiles\.town\.example/1[0-7]/\d+/\d+\.png"', r_.text)
        assert "© the town" in r_.text
        assert "img-src 'self' data: https://tiles.town.example;" in r_.headers["content-security-policy"]
    finally:
        b.close()
    with_none = bench_home_csp(tmp_path / "plain", clock)
    assert "img-src 'self' data:;" in with_none


def bench_home_csp(tmp_path, clock) -> str:
    from tests.support.workbench import start_bench
    b = start_bench(tmp_path, clock)
    try:
        r_ = b.login("viewer").get("/")
        assert "<image" not in r_.text
        return r_.headers["content-security-policy"]
    finally:
        b.close()


def _year_of_flow(bench, days: int = 30):
    t0 = T0 - timedelta(days=days)
    flow = [r("OF-12", "flow", t0 + timedelta(minutes=5 * i), 0.1 + (i % 12) * 0.05) for i in range(days * 288)]
    flow[4000] = r("OF-12", "flow", t0 + timedelta(minutes=5 * 4000), 9.75)            # one spike
    rain = [r("RG-1", "rain", t0 + timedelta(days=3, minutes=2 * i), 0.01) for i in range(70)]   # 0.70 in
    bench.feed(flow + rain)
    bench.pipeline.advance(to_ns(T0))
    return t0, flow


def test_a_stations_chart_of_any_window(bench):
    t0, flow = _year_of_flow(bench)
    s = bench.login("viewer")
    page = s.get("/stations/OF-12?days=30").text
    assert 'src="/stations/OF-12/chart.svg?start=2026-05-02T12:00&amp;end=2026-06-01T12:00&amp;w=900"' in page
    svg = s.get("/stations/OF-12/chart.svg?days=30&w=900")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    text = svg.text
    assert text.startswith("<svg") and "<title id=\"chart-title\">Main St outfall (OF-12), outfall</title>" in text
    assert 'class="threshold"' in text and "flow floor 0.5 gpm" in text                 # the threshold, dashed
    assert 'class="band storm"' in text and "storm 0.70 in ≥ 0.5" in text               # the storm, shaded
    assert 'class="rain"' in text                                                       # rain from the top
    assert "flow: from 0.1 to 9.75 gpm" in text                                        # the spike survives
    # the data: one bucket per pixel column of the plot, each the least and greatest of its time
    with bench.api("viewer") as c:
        d = c.get("/api/v1/stations/OF-12/readings", params={"start": "2026-05-02T12:00:00-04:00",
                                                             "end": "2026-06-01T12:00:00-04:00",
                                                             "buckets": 720}).json()
    [series] = d["series"]
    assert series["label"] == "flow" and len(series["buckets"]) == 720
    assert sum(b["count"] for b in series["buckets"]) == len(flow)
    assert max(b["max"] for b in series["buckets"]) == 9.75
    assert d["bucket_s"] == pytest.approx(30 * 86400 / 720, abs=1)
    assert [t["value"] for t in d["thresholds"]] == [0.5]
    assert [b["kind"] for b in d["bands"]] == ["storm"] and round(sum(b["sum"] for b in d["rain"]), 2) == 0.70
    # a window given by dates, the chart's data as CSV
    csv_text = s.get("/stations/OF-12/readings.csv?start=2026-05-10&end=2026-05-10").text
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert rows[0]["series"] == "flow" and rows[0]["bucket_start"].startswith("2026-05-10T00:0")
    assert sum(int(x["readings"]) for x in rows if x["series"] == "flow") == 288
    # bad windows are named, on the page; the API takes any two instants, in order
    assert s.get("/stations/OF-12?start=2026-06-10&end=2026-06-01").status_code == 400
    assert "at most 1100 days" in s.get("/stations/OF-12/chart.svg?start=2020-01-01&end=2026-01-01").text
    assert s.get("/stations/OF-99").status_code == 404
    with bench.api("viewer") as c:
        swapped = c.get("/api/v1/stations/OF-12/readings", params={"start": "2026-06-01T00:00:00Z",
                                                                   "end": "2026-05-31T00:00:00Z"}).json()
        assert swapped["start"] < swapped["end"]
        assert c.get("/api/v1/stations/OF-99/readings").status_code == 404


def test_a_turbidity_chart_draws_both_probes_the_contrast_line_and_the_backstop(bench):
    t0 = T0 - timedelta(hours=6)
    up = [r("TU-1", "turbidity", t0 + timedelta(minutes=i), 10.0) for i in range(360)]
    down = [r("TD-1", "turbidity", t0 + timedelta(minutes=i), 10.0 if i < 200 else 40.0) for i in range(360)]
    bench.feed(up + down)
    text = bench.login("viewer").get("/stations/TD-1/chart.svg?days=1").text
    assert "upstream TU-1" in text and "downstream TD-1" in text
    assert "contrast: upstream + max(5 NTU, 10%)" in text and "backstop 250 NTU" in text
    assert 'class="band episode"' in text        # the turbidity contrast the engine found, from its incident


def test_calibrations_due(bench):
    _status(bench)
    page = bench.login("viewer").get("/calibrations").text
    assert page.index("2026-05-01") < page.index("2026-06-10")                          # soonest first
    assert "overdue 31 d" in page
    with bench.api("viewer") as c:
        got = c.get("/api/v1/calibrations").json()
        assert [(x["station"], x["sensor"], x["overdue"], x["days_left"]) for x in got] == \
            [("OF-12", "flow", True, -31), ("TD-1", "turbidity", False, 9)]
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/calibrations.csv").text)))
        assert rows[0]["due"] == "2026-05-01" and rows[0]["overdue"] == "True"


def _run(rid: str, station: str, sensor: str, performed: datetime, result: str = "pass",
         as_found: tuple[CheckPoint, ...] = ()) -> CalibrationRecord:
    return CalibrationRecord(id=rid, device=f"LOG-{station}", station=station, sensor=sensor, quantity="turbidity",
                             unit="NTU", procedure="turbidity", technician="J. Rivera",
                             started=performed - timedelta(minutes=30), performed=performed,
                             standards=(Standard(value=20.0, unit="NTU", kind="stablcal", lot="A123"),),
                             as_found=as_found, fit=Fit(slope=1.04, offset=-0.3), result=result,
                             problems=("20 NTU: error +9.5 % exceeds 5 %",) if result == "fail" else (),
                             next_due=date(2026, 9, 1))


def test_calibration_history_on_its_page_the_station_page_and_the_api(bench):
    """Every run the store holds, newest first, for three years; the station page its own;
    nothing of a station the town does not have (a coalition's shared store)."""
    out = CheckPoint(label="20 NTU", reference=20.0, reading=21.9, error=1.9, error_pct=9.5, limit=1.0, ok=False)
    runs = [_run("cal-old", "TD-1", "turbidity", T0 - timedelta(days=3 * 366 + 2)),      # past the three years
            _run("cal-fail", "TD-1", "turbidity", T0 - timedelta(days=20), "fail", (out,)),
            _run("cal-pass", "TD-1", "turbidity", T0 - timedelta(days=19, hours=22)),
            _run("cal-up", "TU-1", "turbidity", T0 - timedelta(days=10)),
            _run("cal-other-town", "ZZ-9", "turbidity", T0 - timedelta(days=5))]
    bench.store.write_events([DeviceEvent(r.device, r.station, to_ns(r.performed), "calibration", r.to_data(), i,
                                          to_ns(T0), r) for i, r in enumerate(runs)])
    with bench.api("viewer") as c:
        assert [x["id"] for x in c.get("/api/v1/calibrations/history").json()] == ["cal-up", "cal-pass", "cal-fail"]
        mine = c.get("/api/v1/calibrations/history", params={"station": "TD-1"}).json()
        assert [x["id"] for x in mine] == ["cal-pass", "cal-fail"] and mine[1]["as_found"][0]["ok"] is False
        assert c.get("/api/v1/calibrations/history", params={"station": "ZZ-9"}).status_code == 404
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/calibrations/history.csv").text)))
    assert [(x["id"], x["result"], x["technician"]) for x in rows] == [
        ("cal-up", "pass", "J. Rivera"), ("cal-pass", "pass", "J. Rivera"), ("cal-fail", "fail", "J. Rivera")]
    assert rows[2]["as_found"] == "20 NTU: 21.9 vs 20 (FAIL)" and rows[2]["standards"] == "20 NTU stablcal lot A123"
    assert rows[2]["fit"] == "slope 1.04 offset -0.3"
    s = bench.login("viewer")
    page = s.get("/calibrations").text
    assert page.count("<details>") == 3 and "cal-other" not in page and "ZZ-9" not in page
    assert '<b class="result-fail">fail</b>' in page and "20 NTU: error +9.5 % exceeds 5 %" in page
    assert "20 NTU stablcal lot A123" in page and "slope 1.04, offset -0.3" in page
    station = s.get("/stations/TD-1").text
    assert station.count("<details>") == 2 and "next due 2026-09-01" in station


def test_calibration_history_says_why_there_is_none(bench):
    s = bench.login("viewer")
    assert "No calibration recorded in the last three years." in s.get("/stations/TD-1").text
    with bench.api() as c:
        assert c.get("/api/v1/calibrations/history").status_code == 401


def test_a_stations_drift_corrections_and_the_smo_reverting_one(bench):
    """Listed on the station's page and in the API with their audit trail; the SMO reverts one
    with a reason (both audit logs); an inspector may not; another town's is not there."""
    from ms4watch.contract.drift import DriftCorrection
    store = bench.workbench.corrections.store
    t0, t1 = to_ns(T0 - timedelta(days=30)), to_ns(T0 - timedelta(days=2))
    mine = store.add("TD-1", "turbidity", DriftCorrection(t0, t1, -1.5, 4.0, max_allowable_pct=30.0), by="Lee Tech",
                     why="visit of 30 May: sonde fouled", sensor="turbidity", record="cal-pass")
    store.add("ZZ-9", "turbidity", DriftCorrection(t0, t1, 0.0, 2.0), by="Other Town", why="theirs")
    viewer = bench.login("viewer")
    page = viewer.get("/stations/TD-1").text
    assert f'id="correction-{mine.id}"' in page and "visit of 30 May: sonde fouled" in page and "in force" in page
    assert "not reportable past ± 30 %" in page and "calibration record cal-pass" in page
    assert "/revert" not in page                                            # a viewer gets no form
    with bench.api("viewer") as c:
        listed = c.get("/api/v1/stations/TD-1/corrections").json()
        assert [(x["id"], x["in_force"], x["drift"], x["created_by"]) for x in listed] == [(mine.id, True, 4.0,
                                                                                            "Lee Tech")]
        assert c.get("/api/v1/stations/ZZ-9/corrections").status_code == 404
    with bench.api("inspector") as c:
        r = c.post(f"/api/v1/corrections/{mine.id}/revert", json={"why": "looks wrong"})
        assert r.status_code == 403 and "needs the role smo" in r.text
    with bench.api("smo") as c:
        assert c.post("/api/v1/corrections/2/revert", json={"why": "not ours"}).status_code == 404   # ZZ-9's
    smo = bench.login("smo")
    page = smo.get("/stations/TD-1").text
    assert f'action="/stations/TD-1/corrections/{mine.id}/revert"' in page
    r = smo.post_form(f"/stations/TD-1/corrections/{mine.id}/revert", {"why": "the 20 NTU standard had expired"})
    assert r.status_code == 303 and r.headers["location"] == "/stations/TD-1#corrections"
    after = store.get(mine.id)
    assert (after.active, after.reverted_by, after.reverted_why) == (False, "Smo User", "the 20 NTU standard had expired")
    assert [a.action for a in store.audit(mine.id)] == ["added", "reverted"]
    audit = bench.workbench.audit.entries(target=f"correction:{mine.id}")
    assert [(a.who, a.action, a.outcome) for a in audit][:2] == [("smo", "correction.revert", "done"),
                                                                 ("inspector", "correction.revert", audit[1].outcome)]
    assert audit[1].outcome.startswith("refused:")
    page = smo.get("/stations/TD-1").text
    assert "reverted" in page and "/revert" not in page
    with bench.api("smo") as c:
        r = c.post(f"/api/v1/corrections/{mine.id}/revert", json={"why": "again"})
        assert r.status_code == 409 and "reverted already" in r.text


def test_a_chart_of_corrected_values_says_which_series_are_corrected(bench):
    """Raw by default; with values=corrected the downstream probe's drift correction (10 %
    over the interval, prorated: 0 at its start, half midway, all at the visit) is applied,
    the upstream probe stays raw, and the chart, its CSV and the API say which is which."""
    from ms4watch.contract.drift import DriftCorrection
    bench.feed([r("TD-1", "turbidity", T0 - timedelta(hours=h), 100.0) for h in (4, 2, 0)]
               + [r("TU-1", "turbidity", T0 - timedelta(hours=h), 50.0) for h in (4, 2, 0)])
    bench.workbench.corrections.store.add("TD-1", "turbidity", DriftCorrection(
        to_ns(T0 - timedelta(hours=4)), to_ns(T0), 0.0, 10.0, drift_kind="percent"), by="Lee Tech", why="visit")
    window = {"start": (T0 - timedelta(hours=5)).isoformat(), "end": (T0 + timedelta(minutes=1)).isoformat(),
              "buckets": 61}
    with bench.api("viewer") as c:
        raw = c.get("/api/v1/stations/TD-1/readings", params=window).json()
        fixed = c.get("/api/v1/stations/TD-1/readings", params={**window, "values": "corrected"}).json()
    series = {s["label"]: s for s in fixed["series"]}
    assert [x["max"] for x in series["downstream TD-1"]["buckets"]] == pytest.approx([100.0, 105.0, 110.0])
    assert series["downstream TD-1"]["values"] == "corrected" and series["upstream TU-1"]["values"] == "raw"
    assert [x["max"] for x in series["upstream TU-1"]["buckets"]] == [50.0, 50.0, 50.0]
    assert [x["max"] for s in raw["series"] for x in s["buckets"] if s["label"] == "downstream TD-1"] == [100.0] * 3
    assert all(s["values"] == "raw" for s in raw["series"]) and raw["notes"] == []
    assert fixed["notes"] == ["Values corrected for drift (USGS TM 1-D3): TD-1 turbidity; any other series raw."]
    s = bench.login("viewer")
    page = s.get("/stations/TD-1", params={"values": "corrected"}).text
    assert "<b>corrected for drift</b>" in page and "values=corrected" in page
    q = {"start": "2026-06-01T07:00", "end": "2026-06-01T12:01"}
    svg = s.get("/stations/TD-1/chart.svg", params={**q, "values": "corrected"}).text
    assert "corrected values" in svg and "TD-1 turbidity" in svg
    assert "corrected values" not in s.get("/stations/TD-1/chart.svg", params=q).text
    rows = list(csv.DictReader(io.StringIO(s.get("/stations/TD-1/readings.csv",
                                                 params={**q, "values": "corrected"}).text)))
    assert {(x["series"], x["values"]) for x in rows} == {("downstream TD-1", "corrected"), ("upstream TU-1", "raw")}
    assert "values=corrected" not in s.get("/stations/OF-12").text      # no correction: no choice offered
