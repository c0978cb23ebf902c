"""The network out again: GeoJSON read back through a mapping file gives the same network;
GeoPackage and KML hold both layers."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pyogrio
import pyogrio.raw
import pytest

from ms4watch.compliance import traces
from ms4watch.compliance.labs import DEFAULT_THRESHOLDS
from ms4watch.compliance.store import ComplianceStore
from ms4watch.compliance.traces import FieldTest, Flow, Indicator

from ms4watch.network.errors import NetworkError
from ms4watch.network.export import export
from ms4watch.network.records import Records, export_records
from ms4watch.network.importer import import_map
from ms4watch.network.model import DirectionSource

from .conftest import TESTDATA

BACK = """\
structures: {file: out.structures.geojson, id: id, type: kind, invert: invert_ft, rim: rim_ft,
             receiving_water: receiving_water,
             types: {outfall: outfall, manhole: manhole, catch_basin: catch_basin}}
pipes: {file: out.conveyances.geojson, id: id, type: kind, types: {pipe: pipe}, start_invert: upstream_invert_ft,
        end_invert: downstream_invert_ft, diameter: diameter_in, material: material, length: length_ft}
"""


def test_geojson_round_trip(synthetic, tmp_path: Path):
    net = import_map(synthetic).network
    files = export(net, tmp_path / "out.geojson")
    assert [f.name for f in files] == ["out.structures.geojson", "out.conveyances.geojson"]
    (tmp_path / "back.yaml").write_text(BACK)
    back = import_map(tmp_path / "back.yaml").network
    assert back.structures.keys() == net.structures.keys()
    for sid, s in net.structures.items():
        b = back.structures[sid]
        assert (b.kind, b.invert_ft, b.receiving_water) == (s.kind, s.invert_ft, s.receiving_water)
        assert (b.lon, b.lat) == pytest.approx((s.lon, s.lat), abs=1e-9)
    for cid, c in net.conveyances.items():
        b = back.conveyances[cid]
        # lines are written from upstream to downstream, so the drawing now gives the direction
        assert (b.upstream, b.downstream) == (c.upstream, c.downstream) and b.direction is DirectionSource.DRAWING
        assert (b.diameter_in, b.material, b.upstream_invert_ft) == (c.diameter_in, c.material, c.upstream_invert_ft)
        assert b.length_ft == pytest.approx(c.length_ft)


@pytest.mark.parametrize("name", ["town.gpkg", "town.kml"])
def test_both_layers_in_one_file(synthetic, tmp_path: Path, name: str):
    path = export(import_map(synthetic).network, tmp_path / name)[0]
    assert sorted(pyogrio.list_layers(path)[:, 0]) == ["conveyances", "structures"]
    assert pyogrio.read_info(path, layer="structures")["features"] == 10
    assert pyogrio.read_info(path, layer="conveyances")["features"] == 10


def test_outfalls_only(synthetic, tmp_path: Path):
    files = export(import_map(synthetic).network, tmp_path / "of.geojson", outfalls_only=True)
    assert [f.name for f in files] == ["of.structures.geojson"]
    assert pyogrio.read_info(files[0])["features"] == 2


def test_a_model_without_positions_is_refused(tmp_path: Path):
    with pytest.raises(NetworkError, match=r"14 structures have no position \(e.g. 9\)"):
        export(import_map(TESTDATA / "Example1.inp").network, tmp_path / "x.geojson")


def test_an_existing_file_is_not_overwritten(synthetic, tmp_path: Path):
    net = import_map(synthetic).network
    export(net, tmp_path / "a.gpkg")
    with pytest.raises(NetworkError, match="a.gpkg: exists"):
        export(net, tmp_path / "a.gpkg")


# -- the town's records on the map: outfalls with their screenings, cases, trace visits, suspect reaches ------


T0 = datetime(2026, 6, 1, 14, 0, tzinfo=timezone.utc)


@pytest.fixture
def records(tmp_path: Path) -> Records:
    """A screening case at OF-1 (flow found on a dry day), two trace visits (flow at MH-1 with
    ammonia over its threshold, dry at MH-2), and a closed complaint at OF-2."""
    store = ComplianceStore(tmp_path / "compliance.db", clock=lambda: T0)
    try:
        case = store.open_case(origin="screening", incident_id=None, outfall="OF-1", location="OF-1",
                               description="dry-weather flow", reporter=None, reporter_contact=None,
                               observed_at=T0, by="smo")
        store.add_entry(case.id, kind="screening", at=T0, by="J. Rivera", notes="", dry_weather=True,
                        flow_observed=True, recorded_by="smo")
        for at, where, flow, tests in (
                (T0 + timedelta(days=1), "MH-1", Flow.PRESENT, (FieldTest(Indicator.AMMONIA, 0.8, "mg/L"),
                                                                  FieldTest(Indicator.TEMPERATURE, 18.5, "°C"))),
                (T0 + timedelta(days=1, hours=1), "MH-2", Flow.ABSENT, ())):
            store.add_entry(case.id, kind="tracing", at=at, by="J. Rivera", notes="", location=where,
                            flow_observed=flow is Flow.PRESENT, recorded_by="smo",
                            then=lambda conn, eid, w=where, f=flow, t=tests: traces.write(conn, eid, w, f, None, None, t))
        other = store.open_case(origin="complaint", incident_id=None, outfall="OF-2", location="OF-2",
                                description="oil sheen", reporter=None, reporter_contact=None, observed_at=T0, by="smo")
        store.add_entry(other.id, kind="screening", at=T0 - timedelta(days=30), by="A. Lee", notes="",
                        dry_weather=True, flow_observed=False, finding="no_flow", recorded_by="smo")
        store.add_entry(other.id, kind="closure", at=T0 + timedelta(days=2), by="A. Lee", notes="",
                        outcome="not_found", recorded_by="smo")
        cases = store.cases()
        return Records(cases, {c.id: store.trace_visits(c.id, DEFAULT_THRESHOLDS) for c in cases})
    finally:
        store.close()


def _features(path: Path, layer: str | None = None) -> list[dict]:
    meta, _fids, geometry, fields = pyogrio.raw.read(path, layer=layer, datetime_as_string=True)
    import shapely
    out = []
    for i, wkb in enumerate(geometry):
        row = {name: (None if v is None or (isinstance(v, float) and v != v) else v)
               for name, v in zip(meta["fields"], (col[i] for col in fields))}
        row["geometry"] = shapely.from_wkb(wkb)
        out.append(row)
    return out


def test_records_as_geojson(synthetic, records: Records, tmp_path: Path):
    net = import_map(synthetic).network
    got = export_records(net, records, tmp_path / "r.geojson", tz=ZoneInfo("America/New_York"))
    assert [f.name for f in got.written] == ["r.outfalls.geojson", "r.cases.geojson", "r.trace_visits.geojson",
                                             "r.suspect_reaches.geojson"]
    assert got.unplaced == []
    of = {f["id"]: f for f in _features(tmp_path / "r.outfalls.geojson")}
    assert of["OF-1"] | {"geometry": None} == {
        "id": "OF-1", "receiving_water": "Hutchinson River", "screenings": 1,
        "last_screening": "2026-06-01T10:00:00-04:00", "last_flow": "present", "last_finding": None,
        "open_case": "IDDE-2026-001", "geometry": None}
    assert of["OF-2"] | {"geometry": None} == {
        "id": "OF-2", "receiving_water": None, "screenings": 1, "last_screening": "2026-05-02T10:00:00-04:00",
        "last_flow": "absent", "last_finding": "no_flow", "open_case": None, "geometry": None}
    for sid in ("OF-1", "OF-2"):
        s = net.structures[sid]
        assert (of[sid]["geometry"].x, of[sid]["geometry"].y) == pytest.approx((s.lon, s.lat), abs=1e-9)
    cases = {f["case"]: f for f in _features(tmp_path / "r.cases.geojson")}
    assert {k: v for k, v in cases["IDDE-2026-001"].items() if k != "geometry"} == {
        "case": "IDDE-2026-001", "status": "open", "opened": "2026-06-01T10:00:00-04:00", "origin": "screening",
        "outfall": "OF-1", "structure": "OF-1", "finding": None}
    assert (cases["IDDE-2026-002"]["status"], cases["IDDE-2026-002"]["structure"]) == ("closed", "OF-2")
    visits = _features(tmp_path / "r.trace_visits.geojson")
    assert [(v["case"], v["structure"], v["at"], v["by"], v["flow"]) for v in visits] == [
        ("IDDE-2026-001", "MH-1", "2026-06-02T10:00:00-04:00", "J. Rivera", "present"),
        ("IDDE-2026-001", "MH-2", "2026-06-02T11:00:00-04:00", "J. Rivera", "absent")]
    assert (visits[0]["ammonia_mg_l"], visits[0]["temperature"], visits[0]["temperature_unit"],
            visits[0]["surfactants_mg_l"], visits[0]["exceeds"]) == (0.8, 18.5, "°C", None, "ammonia")
    assert (visits[1]["ammonia_mg_l"], visits[1]["exceeds"]) == (None, None)
    mh1 = net.structures["MH-1"]
    assert (visits[0]["geometry"].x, visits[0]["geometry"].y) == pytest.approx((mh1.lon, mh1.lat), abs=1e-9)
    reach = _features(tmp_path / "r.suspect_reaches.geojson")
    # flow at MH-1, dry at MH-2: the pipes into MH-1 (P-2 from MH-2 may take a connection on its way);
    # P-1 below MH-1 is cleared
    assert [(r["case"], r["pipe"], r["upstream"], r["downstream"]) for r in reach] == [
        ("IDDE-2026-001", "P-2", "MH-2", "MH-1"), ("IDDE-2026-001", "P-3", "CB-1", "MH-1")]
    p3 = next(r for r in reach if r["pipe"] == "P-3")
    assert [c for xy in p3["geometry"].coords for c in xy] == pytest.approx(
        [c for xy in net.conveyances["P-3"].coords for c in xy], abs=1e-9)


def test_records_as_kml(synthetic, records: Records, tmp_path: Path):
    got = export_records(import_map(synthetic).network, records, tmp_path / "r.kml")
    assert got.written == [tmp_path / "r.kml"]
    assert sorted(pyogrio.list_layers(tmp_path / "r.kml")[:, 0]) == ["cases", "outfalls", "suspect_reaches",
                                                                      "trace_visits"]
    visits = _features(tmp_path / "r.kml", layer="trace_visits")
    assert [(v["Name"], v["structure"], v["flow"], v["ammonia_mg_l"]) for v in visits] == [
        ("IDDE-2026-001", "MH-1", "present", 0.8), ("IDDE-2026-001", "MH-2", "absent", None)]
    assert [c["Name"] for c in _features(tmp_path / "r.kml", layer="cases")] == ["IDDE-2026-001", "IDDE-2026-002"]


def test_a_case_off_the_map_is_named_not_dropped(synthetic, records: Records, tmp_path: Path):
    moved = [replace(c, outfall="OF-99") if c.number == "IDDE-2026-002" else c for c in records.cases]
    got = export_records(import_map(synthetic).network, Records(moved, records.visits), tmp_path / "r.gpkg")
    assert got.unplaced == ["case IDDE-2026-002: its outfall OF-99 is not on the town's map"]
    assert pyogrio.read_info(tmp_path / "r.gpkg", layer="cases")["features"] == 1


def test_a_town_without_records_gets_empty_layers(synthetic, tmp_path: Path):
    got = export_records(import_map(synthetic).network, Records([], {}), tmp_path / "none.gpkg")
    assert [(layer, pyogrio.read_info(got.written[0], layer=layer)["features"])
            for layer in ("outfalls", "cases", "trace_visits", "suspect_reaches")] == [
        ("outfalls", 2), ("cases", 0), ("trace_visits", 0), ("suspect_reaches", 0)]
    assert [f["screenings"] for f in _features(got.written[0], layer="outfalls")] == [0, 0]
