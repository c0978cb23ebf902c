"""``ms4watch map import|show|trace`` on the synthetic network and EPA's SWMM Example 1
(tests/network/testdata): in process (tests/support/cli.py), the first test as a separate
process through the console script."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import env_without_settings, run_cli, run_process

TESTDATA = Path(__file__).resolve().parents[1] / "network" / "testdata"


def run(*args: str, data: Path, ok: bool = True, process: bool = False,
        **extra_env: str) -> subprocess.CompletedProcess:
    proc = (run_process if process else run_cli)("map", *args, "--data-dir", str(data),
                                                  env=env_without_settings(**extra_env))
    assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
    return proc


@pytest.fixture
def town(tmp_path: Path) -> Path:
    for name in ("structures.geojson", "pipes.geojson", "mapping.yaml"):
        shutil.copy(TESTDATA / name, tmp_path / name)
    return tmp_path


def test_import_prints_what_it_read_and_could_not_connect(town: Path):
    out = run("import", str(town / "mapping.yaml"), data=town / "data", process=True).stdout
    assert "read 10 structures (3 catch_basin, 5 manhole, 2 outfall) and 10 conveyances" in out
    assert "connected 9 of 10 conveyances at both ends" in out
    assert "unconnected_end: pipe P-6: its start touches no structure within 3 ft" in out
    assert "uphill: pipe P-5 flows uphill by its inverts" in out
    assert "loop: flow can circle through MH-4, MH-5" in out
    assert "no_receiving_water: outfall OF-2 has no receiving water" in out
    assert "5 findings (1 loop, 1 no_receiving_water, 1 unconnected_end, 2 uphill)" in out
    assert "20 added, 0 removed, 0 changes" in out
    assert (town / "data" / "network.db").exists()


def test_import_says_what_it_kept_and_why_pipes_did_not_connect(town: Path):
    pipes = json.loads((town / "pipes.geojson").read_text())
    pipes["features"][2]["geometry"] = None                       # P-3: no line
    (town / "pipes.geojson").write_text(json.dumps(pipes))
    out = run("import", str(town / "mapping.yaml"), "--dry-run", data=town / "data").stdout
    assert "kept every feature read: 10 structures and 10 conveyances" in out
    assert "connected 8 of 10 conveyances at both ends; not: 1 drawn with no line, 1 with an end at no structure" \
        in out
    assert f"no_geometry: {town / 'pipes.geojson'} feature 2: pipe P-3 has no line; kept, unconnected" in out


def test_dry_run_keeps_nothing(town: Path):
    run("import", str(town / "mapping.yaml"), "--dry-run", data=town / "data")
    assert not (town / "data" / "network.db").exists()


def test_reimport_lists_the_changes(town: Path):
    run("import", str(town / "mapping.yaml"), data=town / "data")
    p = json.loads((town / "pipes.geojson").read_text())
    p["features"][0]["properties"]["MATERIAL"] = "HDPE"
    (town / "pipes.geojson").write_text(json.dumps(p))
    out = run("import", str(town / "mapping.yaml"), data=town / "data").stdout
    assert "changed: pipe P-1: material RCP -> HDPE" in out
    assert "0 added, 0 removed, 1 changes" in out


def test_trace_up_and_down(town: Path):
    assert "no map imported yet" in run("trace", "OF-1", data=town / "data", ok=False).stdout
    run("import", str(town / "mapping.yaml"), data=town / "data")
    lines = run("trace", "OF-1", data=town / "data").stdout.splitlines()
    assert lines[0] == "upstream of OF-1: 7 structures, 2,000 ft of pipe"
    assert [line.split()[2] for line in lines[2:]] == ["OF-1", "MH-1", "CB-1", "MH-2", "CB-2", "MH-3", "MH-4", "MH-5"]
    assert lines[4].split()[:6] == ["3", "1.1", "CB-1", "catch_basin", "P-3", "MH-1"]
    down = run("trace", "CB-2", "--down", data=town / "data").stdout.splitlines()
    assert [line.split()[2] for line in down[2:]] == ["CB-2", "MH-2", "MH-1", "OF-1"]
    err = run("trace", "MH-99", data=town / "data", ok=False).stderr
    assert "error: no structure 'MH-99'" in err


def test_show_lists_outfalls_and_findings(town: Path):
    assert "no map imported yet" in run("show", data=town / "data", ok=False).stdout
    run("import", str(town / "mapping.yaml"), data=town / "data")
    out = run("show", data=town / "data").stdout
    assert "outfall OF-1 to Hutchinson River: 7 structures upstream, 2,000 ft of pipe" in out
    assert "outfall OF-2 to (no receiving water): 1 structures upstream, 150 ft of pipe" in out


def test_a_swmm_model_says_what_its_links_are(tmp_path: Path):
    out = run("import", str(TESTDATA / "Example3.inp"), "--dry-run", data=tmp_path / "data").stdout
    assert "read 34 structures (31 junction, 2 outfall, 1 storage) and 33 conveyances from" in out
    assert "conveyances by kind: 32 pipe, 1 pump\n" in out
    assert "not_imported: [CURVES]: 3 rows not imported" in out
    out = run("import", str(TESTDATA / "Example1.inp"), "--dry-run", data=tmp_path / "data").stdout
    assert "read 8 drainage areas (8 drain to a structure)\n" in out          # its subcatchments; no parcel layer


def test_swmm_model_and_a_bad_file(tmp_path: Path):
    out = run("import", str(TESTDATA / "Example1.inp"), data=tmp_path).stdout
    assert "read 14 structures (13 junction, 1 outfall) and 13 conveyances" in out
    assert "no coordinate system" in out
    bad = tmp_path / "bad.inp"
    bad.write_text("[JUNCTIONS]\nJ1 high\n")
    assert "bad.inp:2: [JUNCTIONS] J1: Elevation 'high' is not a number" in run("import", str(bad), data=tmp_path, ok=False).stderr


def test_export_the_outfalls_as_kml(town: Path):
    run("import", str(town / "mapping.yaml"), data=town / "data")
    out = run("export", str(town / "of.kml"), "--outfalls", data=town / "data").stdout
    assert out.strip() == f"wrote {town / 'of.kml'}"
    kml = (town / "of.kml").read_text()
    assert "<name>OF-1</name>" in kml and "<name>OF-2</name>" in kml and "MH-1" not in kml
    assert "exists" in run("export", str(town / "of.kml"), data=town / "data", ok=False).stderr


def test_bisect_names_the_next_structure(town: Path):
    run("import", str(town / "mapping.yaml"), data=town / "data")
    # upstream of OF-1: P-1 300, P-3 200, P-2 400, P-4 300, P-5 200, P-9 400, P-7 200, P-8 200 = 2,200 ft;
    # draining to MH-2: P-4, P-5, P-9, P-7, P-8 = 1,300 (|1300-1100| = 200); to MH-4: P-7, P-8 = 400;
    # to MH-1: 1,900. MH-2 is nearest half.
    out = run("bisect", "OF-1", data=town / "data").stdout
    assert "suspect: 8 pipes, 2,200 ft" in out and "open next: MH-2 (1,300 ft" in out
    out = run("bisect", "OF-1", "--no-flow", "MH-2", data=town / "data").stdout
    assert "suspect: 3 pipes, 900 ft: P-1, P-2, P-3" in out and "open next: MH-1 (600 ft" in out


def test_show_attaches_the_registrys_monitored_outfalls(town: Path):
    registry = town / "sites.yaml"
    registry.write_text("municipality: town\nrain_gauges:\n  - {id: RG-1}\noutfalls:\n"
                        "  - {id: OF-1, name: Main St, rain_gauges: [RG-1]}\n"
                        "  - {id: DS-7, name: Creek Rd, rain_gauges: [RG-1], lat: 40.7156, lon: -73.9396}\n"
                        "  - {id: DS-8, name: Elm St, rain_gauges: [RG-1]}\n"
                        "construction_sites:\n"
                        "  - {id: CS-7, name: Mill Lofts, rain_gauges: [RG-1], active_from: 2026-05-01,"
                        " lat: 40.71738, lon: -73.94318}\n")
    run("import", str(town / "mapping.yaml"), data=town / "data")
    out = run("show", data=town / "data", MS4WATCH_REGISTRY=str(registry)).stdout
    assert "monitored outfall OF-1: on the map as OF-1" in out
    assert "monitored outfall DS-7: on the map as OF-2 (" in out and "ids differ" in out
    assert "monitored outfall DS-8: not on the map" in out
    # in the alerts' words (alerts/kinds/runoff.py): one sentence for a site's runoff everywhere
    assert re.search(r"^construction site CS-7: nearest inlet CB-2 \(\d+ ft away; no drains_to in the registry\), "
                     r"reaching outfall OF-1 \(Hutchinson River\)$", out, re.M), out


@pytest.fixture
def town_with_areas(town: Path) -> Path:
    for name in ("areas.geojson", "parcels.geojson", "mapping_areas.yaml"):
        shutil.copy(TESTDATA / name, town / name)
    return town


def test_import_places_drainage_areas_and_parcels(town_with_areas: Path):
    town = town_with_areas
    out = run("import", str(town / "mapping_areas.yaml"), data=town / "data").stdout
    assert "read 6 drainage areas (3 drain to a structure) and 5 parcels (3 placed: 2 by drainage area, " \
           "1 by the nearest inlet)" in out
    assert "drainage_area_unattached: drainage area DA-4 holds no structure and names none" in out
    assert "parcel_unplaced: parcel PA-4 lies in no drainage area" in out
    # imported again without them: they are cleared, and said so
    out = run("import", str(town / "mapping.yaml"), data=town / "data").stdout
    assert "removed: drainage area DA-1" in out and "removed: parcel PA-5" in out
    assert "0 added, 11 removed, 0 changes" in out
    assert "parcels draining" not in run("trace", "OF-1", data=town / "data").stdout


def test_trace_and_bisect_name_the_parcels_draining_to_the_reach(town_with_areas: Path):
    town = town_with_areas
    run("import", str(town / "mapping_areas.yaml"), data=town / "data")
    out = run("trace", "OF-1", data=town / "data").stdout
    assert "parcels draining to it: 2: PA-1 (CB-1), PA-2 (CB-2)" in out
    assert "parcels draining" not in run("trace", "CB-2", "--down", data=town / "data").stdout
    out = run("bisect", "OF-1", "--flow", "MH-2", data=town / "data").stdout
    assert "parcels draining to the suspect reach: 1: PA-2 (CB-2)" in out


def test_bisect_by_drainage_area_and_by_inlets(town_with_areas: Path):
    town = town_with_areas
    run("import", str(town / "mapping_areas.yaml"), data=town / "data")
    # by area: DA-1 (CB-1, on P-3) and DA-2 (CB-2, on P-4), 40,000 sq ft each (0.92 acres); DA-6 drains
    # to OF-1 itself, on no pipe. MH-2 drains P-4's 0.92 of the 1.84 acres: exactly half.
    out = run("bisect", "OF-1", "--by", "area", data=town / "data").stdout
    assert "open next: MH-2 (1,300 ft of the suspect pipe drains to it; 0.92 of the 1.84 acres of drainage area)" \
        in out
    # by inlets: CB-1 and CB-2 (CB-3 drains to OF-2): MH-2 drains CB-2, 1 of 2
    out = run("bisect", "OF-1", "--by", "inlets", data=town / "data").stdout
    assert "open next: MH-2 (1,300 ft of the suspect pipe drains to it; 1 of the 2 catch basins and inlets)" in out
    assert "'volume' is not one of" in run("bisect", "OF-1", "--by", "volume", data=town / "data", ok=False).stderr


def test_import_the_city_of_calgarys_real_layers(tmp_path: Path):
    """The real clip of tests/network/testdata/real/calgary through the command."""
    out = run("import", str(TESTDATA / "real" / "calgary" / "mapping.yaml"), data=tmp_path / "data").stdout
    assert "read 40 structures (16 catch_basin, 20 manhole, 4 outfall) and 38 conveyances" in out
    assert "joined pipe ends at 4 implied junctions (no structure drawn where they meet)" in out
    assert "connected 23 of 38 conveyances at both ends" in out
    assert "47 findings (4 implied_junction, 19 isolated, 5 no_outfall_downstream, 19 unconnected_end)" in out
    out = run("trace", "B50", data=tmp_path / "data").stdout
    assert out.splitlines()[0] == "upstream of B50: 5 structures, 861 ft of pipe"


def test_show_attaches_stations_and_sites_where_the_registry_names_the_structure(town: Path):
    registry = town / "sites.yaml"
    registry.write_text("municipality: town\nrain_gauges:\n  - {id: RG-1}\noutfalls:\n"
                        "  - {id: DS-5, name: Main St manhole meter, rain_gauges: [RG-1], structure: MH-2}\n"
                        "  - {id: DS-6, name: Lost, rain_gauges: [RG-1], structure: MH-99}\n"
                        "construction_sites:\n"
                        "  - {id: CS-7, name: Mill Lofts, rain_gauges: [RG-1], active_from: 2026-05-01,"
                        " lat: 40.71738, lon: -73.94318, drains_to: [CB-1, CB-3]}\n")
    run("import", str(town / "mapping.yaml"), data=town / "data")
    out = run("show", data=town / "data", MS4WATCH_REGISTRY=str(registry)).stdout
    assert "monitored outfall DS-5: on the map at MH-2 (named in the registry)" in out
    assert "monitored outfall DS-6: the registry names MH-99, not on the map" in out
    assert "construction site CS-7: drains to CB-1 and CB-3, reaching outfalls OF-1 (Hutchinson River) and OF-2\n" in out


def test_export_the_records(town: Path):
    """Cases, trace visits and screenings from the town's compliance.db, placed through the registry."""
    from datetime import datetime, timezone

    from ms4watch.compliance import traces
    from ms4watch.compliance.store import ComplianceStore
    from ms4watch.compliance.traces import FieldTest, Flow, Indicator
    registry = town / "sites.yaml"
    registry.write_text("municipality: town\ntimezone: America/New_York\nrain_gauges:\n  - {id: RG-1}\noutfalls:\n"
                        "  - {id: OF-1, name: Main St, rain_gauges: [RG-1]}\n"
                        "  - {id: DS-7, name: Creek Rd, rain_gauges: [RG-1], lat: 40.7156, lon: -73.9396}\n")
    run("import", str(town / "mapping.yaml"), data=town / "data")
    assert "error: no incidents.db or compliance.db in" in run(
        "export", str(town / "r.geojson"), "--records", data=town / "data", MS4WATCH_REGISTRY=str(registry),
        ok=False).stderr
    t0 = datetime(2026, 6, 1, 14, tzinfo=timezone.utc)
    store = ComplianceStore(town / "data" / "compliance.db", clock=lambda: t0)
    try:
        a = store.open_case(origin="incident", incident_id=None, outfall="OF-1", location="OF-1", description="flow",
                            reporter=None, reporter_contact=None, observed_at=t0, by="smo")
        store.add_entry(a.id, kind="tracing", at=t0, by="J. Rivera", notes="", recorded_by="smo",
                        then=lambda conn, eid: traces.write(conn, eid, "MH-1", Flow.PRESENT, "sewage", None,
                                                            (FieldTest(Indicator.SURFACTANTS, 0.3, "mg/L"),)))
        b = store.open_case(origin="screening", incident_id=None, outfall="DS-7", location="Creek Rd",
                            description="screening", reporter=None, reporter_contact=None, observed_at=t0, by="smo")
        store.add_entry(b.id, kind="screening", at=t0, by="A. Lee", notes="", dry_weather=True, flow_observed=False,
                        finding="no_flow", recorded_by="smo")
    finally:
        store.close()
    out = run("export", str(town / "r.geojson"), "--records", data=town / "data",
              MS4WATCH_REGISTRY=str(registry)).stdout.splitlines()
    assert out == [f"wrote {town / f'r.{layer}.geojson'}" for layer in
                   ("structures", "conveyances", "outfalls", "cases", "trace_visits", "suspect_reaches")]
    cases = json.loads((town / "r.cases.geojson").read_text())["features"]
    assert [(c["properties"]["case"], c["properties"]["outfall"], c["properties"]["structure"],
             c["properties"]["opened"]) for c in cases] == [
        ("IDDE-2026-001", "OF-1", "OF-1", "2026-06-01T10:00:00-04:00"),
        ("IDDE-2026-002", "DS-7", "OF-2", "2026-06-01T10:00:00-04:00")]     # DS-7 by its position
    visit = json.loads((town / "r.trace_visits.geojson").read_text())["features"][0]["properties"]
    assert (visit["structure"], visit["flow"], visit["odour"], visit["surfactants_mg_l"], visit["exceeds"]) == \
        ("MH-1", "present", "sewage", 0.3, "surfactants")
    outfalls = {f["properties"]["id"]: f["properties"] for f in
                json.loads((town / "r.outfalls.geojson").read_text())["features"]}
    assert (outfalls["OF-2"]["screenings"], outfalls["OF-2"]["last_finding"], outfalls["OF-1"]["open_case"]) == \
        (1, "no_flow", "IDDE-2026-001")
    reach = json.loads((town / "r.suspect_reaches.geojson").read_text())["features"]
    # flow at MH-1, nothing found dry yet: all above MH-1 (P-5 and P-7, doubted uphill, taken both ways);
    # nothing opened on the second case: all above OF-2
    assert [(f["properties"]["case"], f["properties"]["pipe"]) for f in reach] == [
        *(("IDDE-2026-001", p) for p in ("P-2", "P-3", "P-4", "P-5", "P-7", "P-8", "P-9")), ("IDDE-2026-002", "P-10")]


def test_export_records_needs_the_towns_registry(town: Path):
    run("import", str(town / "mapping.yaml"), data=town / "data")
    err = run("export", str(town / "r.kml"), "--records", data=town / "data", ok=False).stderr
    assert err.strip().startswith("error: ") and len(err.strip().splitlines()) == 1
