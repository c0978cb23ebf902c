"""Source tracing on a case, on the real workbench: trace visits recorded at structures of the
town's map narrow the suspect reach and name the next structure to open (the network of
tests/support/town_network.py, worked by hand there)."""

from __future__ import annotations

import sqlite3

import pytest

from ms4watch.workbench.roles import Actor, Role, Via
from tests.support.town_network import main_st_network, store_network
from tests.workbench.routes.test_compliance import _case_from_incident as _case




def _folder(bench):
    return bench.workbench.settings.town_data_dir(bench.workbench.municipality)


def test_without_a_map_the_case_says_so_and_refuses_a_trace_visit(bench):
    case = _case(bench)
    s = bench.login("inspector")
    assert "No trace plan: no map imported" in s.get(f"/cases/{case['id']}").text
    r = s.post_form(f"/cases/{case['id']}/trace-visits", {"structure": "MH-2", "at": "2026-06-01T11:00",
                                                           "by": "J. Rivera", "flow": "present"})
    assert r.status_code == 409 and "no map imported" in r.text


def test_the_map_is_read_with_the_index_the_plans_use_once_per_import(bench):
    store_network(_folder(bench))
    m = bench.workbench.tracing.town_map()
    assert m.net._index is not None              # built with the map: a case's first plan does not pay for it
    assert bench.workbench.tracing.town_map() is m


def test_visits_narrow_the_suspect_reach_to_the_pipes_to_walk(bench):
    store_network(_folder(bench))
    case = _case(bench)
    s = bench.login("inspector")
    page = s.get(f"/cases/{case['id']}").text
    assert "Next: open <b class=\"next-structure\">MH-2</b>. It drains 400 ft of the 600 ft" in page
    r = s.post_form(f"/cases/{case['id']}/trace-visits", {
        "structure": "MH-2", "at": "2026-06-01T11:00", "by": "J. Rivera", "flow": "present", "odour": "sewage",
        "colour": "grey", "ammonia_mg_l": "1.2", "surfactants_mg_l": "0.1", "temperature": "19.5",
        "e_coli": "2400", "e_coli_unit": "MPN/100 mL", "notes": "steady trickle from the north"})
    assert r.status_code == 303, r.text
    page = s.get(f"/cases/{case['id']}").text
    assert "Next: open <b class=\"next-structure\">MH-3</b>. It drains 100 ft of the 400 ft" in page
    assert "ammonia 1.2 mg/L (exceeds ammonia &gt;= 0.5 mg/L)" in page
    assert "E. coli 2400 MPN/100 mL (exceeds E. coli &gt;= 235 CFU/100 mL)" in page     # MPN counted as CFU
    assert "surfactants 0.1 mg/L</span>" in page and "temperature 19.5 °C" in page
    r = s.post_form(f"/cases/{case['id']}/trace-visits", {"structure": "MH-3", "at": "2026-06-01T11:30",
                                                           "by": "J. Rivera", "flow": "absent"})
    assert r.status_code == 303, r.text
    page = s.get(f"/cases/{case['id']}").text
    assert "walk the pipes <b>P3, P5</b> (300 ft)" in page
    assert "Suspect reach: 2 pipe(s), 300 ft, between CB-1, MH-2, MH-3." in page
    # kept as the thread's tracing entries, with the visit's own rows, append-only
    got = bench.workbench.compliance.store.case(case["id"])
    assert [(e.kind, e.location, e.flow_observed) for e in got.entries] == [
        ("tracing", "manhole MH-2", True), ("tracing", "manhole MH-3", False)]
    visits = bench.workbench.compliance.store.trace_visits(case["id"], bench.workbench.compliance.thresholds)
    assert [(v.structure, v.flow.value, v.odour, [(t.indicator.value, t.value, t.unit, t.verdict) for t in v.tests])
            for v in visits] == [
        ("MH-2", "present", "sewage", [("ammonia", 1.2, "mg/L", "exceeds"), ("surfactants", 0.1, "mg/L", "below"),
                                       ("temperature", 19.5, "°C", "no_threshold"),
                                       ("E. coli", 2400.0, "MPN/100 mL", "exceeds")]),
        ("MH-3", "absent", None, [])]
    conn = sqlite3.connect(bench.workbench.compliance.store.path)
    with pytest.raises(sqlite3.IntegrityError, match="never changed"):
        conn.execute("UPDATE trace_visits SET flow = 'absent'")
    with pytest.raises(sqlite3.IntegrityError, match="kept"):
        conn.execute("DELETE FROM field_tests")
    conn.close()
    audit = [(a.action, a.detail) for a in bench.workbench.audit.entries(limit=50) if a.action == "case.trace_visit"]
    assert ("case.trace_visit", "trace visit at MH-2: flow present; 4 field test(s)") in audit


def test_a_later_visit_at_a_structure_corrects_an_earlier_one(bench):
    store_network(_folder(bench))
    case = _case(bench)
    s = bench.login("inspector")
    for at, flow in (("11:00", "absent"), ("11:20", "present")):
        r = s.post_form(f"/cases/{case['id']}/trace-visits", {"structure": "MH-2", "at": f"2026-06-01T{at}",
                                                               "by": "J. Rivera", "flow": flow})
        assert r.status_code == 303, r.text
    viewer = Actor("v", "Viewer", Role.VIEWER, bench.workbench.municipality, Via.WEB)
    trace = bench.workbench.tracing.of_case(viewer, case["id"])
    assert trace.plan.suspect_pipes == {"P3", "P4", "P5"} and trace.next_structure == "MH-3"


@pytest.mark.parametrize("form, status, says", [
    ({"structure": "NOPE", "flow": "present"}, 409, "structure: no structure &#39;NOPE&#39; on the town&#39;s map"),
    ({"structure": "MH-2"}, 400, "flow: Field required"),
    ({"structure": "MH-2", "flow": "maybe"}, 400, "flow: Input should be"),
    ({"structure": "MH-2", "flow": "present", "ammonia_mg_l": "-1"}, 400, "ammonia_mg_l: Input should be greater"),
    ({"structure": "MH-2", "flow": "present", "e_coli": "5", "e_coli_unit": "per cup"}, 400, "e_coli_unit"),
    ({"structure": "MH-2", "flow": "present", "at": "2026-06-09T11:00"}, 409, "is in the future"),
])
def test_a_bad_visit_is_refused_naming_the_field(bench, form, status, says):
    store_network(_folder(bench))
    case = _case(bench)
    s = bench.login("inspector")
    r = s.post_form(f"/cases/{case['id']}/trace-visits", {"at": "2026-06-01T11:00", "by": "J. Rivera", **form})
    assert r.status_code == status and says in r.text, r.text[-3000:]
    assert bench.workbench.compliance.store.case(case["id"]).entries == ()


def test_a_viewer_may_read_the_trace_but_not_record_a_visit(bench):
    store_network(_folder(bench))
    case = _case(bench)
    s = bench.login("viewer")
    page = s.get(f"/cases/{case['id']}").text
    assert "Next: open" in page and "Record a trace visit" not in page
    r = s.post_form(f"/cases/{case['id']}/trace-visits", {"structure": "MH-2", "at": "2026-06-01T11:00",
                                                           "by": "J. Rivera", "flow": "present"})
    assert r.status_code == 403


def _two_visits(bench) -> dict:
    store_network(_folder(bench))
    case = _case(bench)
    s = bench.login("inspector")
    for structure, at, flow, extra in (("MH-2", "11:00", "present", {"ammonia_mg_l": "1.2", "odour": "sewage"}),
                                       ("MH-3", "11:30", "absent", {})):
        r = s.post_form(f"/cases/{case['id']}/trace-visits", {"structure": structure, "at": f"2026-06-01T{at}",
                                                               "by": "J. Rivera", "flow": flow, **extra})
        assert r.status_code == 303, r.text
    return case


def test_the_trace_is_in_the_evidence_packet(bench):
    import io
    import json
    import zipfile

    from ms4watch.compliance.packet import verify
    case = _two_visits(bench)
    s = bench.login("viewer")
    first = s.get(f"/cases/{case['id']}/packet.zip")
    assert first.status_code == 200 and verify(first.content) == []
    assert s.get(f"/cases/{case['id']}/packet.zip").content == first.content          # rebuilt byte-identical
    z = zipfile.ZipFile(io.BytesIO(first.content))
    root = "case-IDDE-2026-001/"
    rows = z.read(root + "trace-visits.csv").decode().splitlines()
    assert rows[0] == "at,structure,flow,odour,colour,field_tests,by,notes"
    assert rows[1].startswith("2026-06-01T15:00:00+00:00,MH-2,present,sewage,,ammonia 1.2 mg/L (exceeds ammonia >= 0.5")
    assert rows[2].startswith("2026-06-01T15:30:00+00:00,MH-3,absent,")
    trace = json.loads(z.read(root + "records.json"))["trace"]
    assert (trace["outfall"], trace["suspect_pipes"], trace["suspect_length_ft"], trace["next_structure"]) == (
        "OF-12", ["P3", "P5"], 300.0, None)
    assert [(v["structure"], v["flow"]) for v in trace["visits"]] == [("MH-2", "present"), ("MH-3", "absent")]
    assert trace["visits"][0]["field_tests"][0] == {"indicator": "ammonia", "value": 1.2, "unit": "mg/L",
                                                    "verdict": "exceeds", "threshold": "ammonia >= 0.5 mg/L"}
    pdf = s.get(f"/cases/{case['id']}/packet.pdf")
    text = _pdf_text(pdf.content)
    assert "Source trace from outfall OF-12" in text and "walk the pipes P3, P5" in text


def _pdf_text(data: bytes) -> str:
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
        f.write(data)
        f.flush()
        return subprocess.run(["pdftotext", "-layout", f.name, "-"], capture_output=True, text=True, check=True).stdout


def test_the_annual_report_counts_the_traces_in_its_idde_section(bench):
    import csv
    import io
    case = _two_visits(bench)
    s = bench.login("viewer")
    page = s.get("/reports/annual/2026").text
    assert "Source traces (trace visits at structures)" in page
    r = s.get("/reports/annual/2026/traces.csv")
    assert r.status_code == 200, r.text
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [(x["case"], x["outfall"], x["visits"], x["structures"], x["flow_at"], x["dry_at"], x["first"])
            for x in rows] == [("IDDE-2026-001", "OF-12", "2", "MH-2 MH-3", "MH-2", "MH-3",
                                "2026-06-01T11:00:00-04:00")]
    assert case["number"] == "IDDE-2026-001"


def _map_data(page: str) -> dict:
    import html
    import json
    import re
    raw = re.search(r'<script type="application/json" id="netmap-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(html.unescape(raw))


def test_the_map_page_carries_the_case_s_suspect_reach_and_the_registry_s_places(bench):
    case = _two_visits(bench)
    s = bench.login("viewer")
    page = s.get(f"/network/map?case={case['id']}")
    assert page.status_code == 200
    assert '<script src="/static/vendor/leaflet/leaflet.js" defer></script>' in page.text
    assert "suspect reach 2 pipe(s), 300 ft; walk the pipes P3, P5." in page.text
    data = _map_data(page.text)
    assert data["network"] == "/network/map/network.json"     # the network itself: fetched, cached per import
    assert '<link rel="preload" href="/network/map/network.json" as="fetch" crossorigin>' in page.text
    assert (data["trace"]["suspect"], data["trace"]["visits"], data["trace"]["next"]) == (
        ["P3", "P5"], {"MH-2": "present", "MH-3": "absent"}, None)
    assert data["outfalls"] == {"case": ["OF-12"], "monitored": ["OF-12"]}     # the case is open at it
    stations = {p["id"]: p for p in data["places"] if p["layer"] == "station"}
    assert "OF-12" in stations and set(stations["OF-12"]) == {"layer", "id", "name", "lat", "lon", "status", "href",
                                                              "note"}
    assert stations["OF-12"]["note"] == "on the map at OF-12"
    # framed on the suspect reach (P3, P5), the structures visited and the outfall; MH-4 (42.8173) left out
    assert data["bounds"] == [42.8161, -73.9452, 42.817, -73.944]
    plain = _map_data(s.get("/network/map").text)
    assert plain["trace"] == {"suspect": [], "visits": {}, "next": None}
    assert plain["bounds"][2] == 42.8173              # without a case: the whole network and the places
    assert s.get("/network/map?case=999").status_code == 404


def test_the_network_is_sent_once_per_import_as_compact_arrays_gzipped(bench):
    store_network(_folder(bench))
    s = bench.login("viewer")
    r = s.get("/network/map/network.json", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    assert r.headers["content-encoding"] == "gzip" and r.headers["content-type"] == "application/json"
    net = r.json()
    st = net["structures"]
    of12 = st["id"].index("OF-12")
    assert (st["lon"][of12], st["lat"][of12]) == (-73.9452, 42.8161)    # longitude, latitude (WGS 84)
    assert st["kinds"][st["kind"][of12]] == "outfall" and st["receiving_water"] == {"OF-12": "Mohawk River"}
    assert sorted(st["id"]) == ["CB-1", "MH-1", "MH-2", "MH-3", "MH-4", "OF-12"]
    pipes = net["pipes"]
    p3 = pipes["id"].index("P3")
    assert (pipes["kinds"][pipes["kind"][p3]], pipes["from"][p3], pipes["to"][p3], pipes["length_ft"][p3],
            pipes["diameter_in"][p3]) == ("pipe", "MH-3", "MH-2", 100, 12)
    assert pipes["coords"][p3] == [-73.9443, 42.817, -73.9446, 42.8167]      # upstream to downstream, flat
    assert (net["unplaced"], net["bounds"]) == (0, [42.8161, -73.9452, 42.8173, -73.944])
    # unchanged since the last fetch: not sent again
    again = s.get("/network/map/network.json", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    plain = s.get("/network/map/network.json", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.json() == net
    # a new import: a new tag
    net2 = main_st_network()
    del net2.conveyances["P5"]
    store_network(_folder(bench), net2)
    r2 = s.get("/network/map/network.json", headers={"If-None-Match": r.headers["etag"]})
    assert r2.status_code == 200 and "P5" not in r2.json()["pipes"]["id"]


def test_without_a_map_the_network_is_not_found(bench):
    assert bench.login("viewer").get("/network/map/network.json").status_code == 404
    data = _map_data(bench.login("viewer").get("/network/map").text)
    assert data["network"] is None


def test_the_map_has_no_tile_server_unless_the_settings_name_one(bench):
    store_network(_folder(bench))
    page = bench.login("viewer").get("/network/map").text
    assert 'data-tiles=""' in page and "http" not in page.split('id="netmap"')[1].split(">")[0]


def test_the_api_records_a_visit_and_gives_the_trace(bench):
    store_network(_folder(bench))
    case = _case(bench)
    with bench.api("inspector") as c:
        r = c.get(f"/api/v1/cases/{case['id']}/trace")
        assert r.status_code == 200, r.text
        assert (r.json()["outfall"], r.json()["next_structure"], r.json()["suspect_length_ft"]) == ("OF-12", "MH-2", 600)
        r = c.post(f"/api/v1/cases/{case['id']}/trace-visits", json={
            "structure": "MH-2", "at": "2026-06-01T15:00:00Z", "by": "J. Rivera", "flow": "present",
            "potassium_mg_l": 25})
        assert r.status_code == 201, r.text
        got = r.json()
        assert (got["next_structure"], got["suspect_pipes"]) == ("MH-3", ["P3", "P4", "P5"])
        assert got["visits"][0]["field_tests"] == [{"indicator": "potassium", "value": 25.0, "unit": "mg/L",
                                                    "verdict": "exceeds", "threshold": "potassium >= 20 mg/L"}]
        r = c.post(f"/api/v1/cases/{case['id']}/trace-visits", json={
            "structure": "MH-9", "at": "2026-06-01T15:00:00Z", "by": "J. Rivera", "flow": "present"})
        assert r.status_code == 409 and "no structure 'MH-9'" in r.text
    with bench.api("viewer") as c:
        r = c.post(f"/api/v1/cases/{case['id']}/trace-visits", json={
            "structure": "MH-3", "at": "2026-06-01T15:00:00Z", "by": "J. Rivera", "flow": "absent"})
        assert r.status_code == 403


def _store_areas_and_parcels(folder) -> None:
    """Drainage areas on the Main St network: 6 acres drain to MH-4, 1 to CB-1, 1 to MH-3 (8 in
    all, half 4). Pipes carry their upstream structure's acres: P4 6, P5 1, P3 1. MH-1 and MH-2
    each drain all 8 (4 off half), MH-3 drains P4's 6 (2 off): MH-3 first, where by length it is
    MH-2. Parcels: two in CB-1's area, one nearest MH-4, one on no inlet."""
    from ms4watch.network.areas import DrainageArea, Parcel
    from ms4watch.network.store import NetworkStore
    acre = 43_560.0
    with NetworkStore(folder) as store:
        store.replace_areas(
            [DrainageArea("SW-4", "MH-4", "inside", 6 * acre), DrainageArea("SW-CB1", "CB-1", "attribute", acre),
             DrainageArea("SW-3", "MH-3", "inside", acre)],
            [Parcel("101.-1-2", "CB-1", "SW-CB1", "drainage_area"), Parcel("101.-1-1", "CB-1", "SW-CB1",
                                                                              "drainage_area"),
             Parcel("102.-3-7", "MH-4", None, "nearest_inlet", 42.0), Parcel("9.-9-9", None, None, None)])


def test_with_drainage_areas_the_next_structure_halves_the_area_and_the_parcels_are_named(bench):
    folder = _folder(bench)
    store_network(folder)
    _store_areas_and_parcels(folder)
    case = _case(bench)
    s = bench.login("inspector")
    page = s.get(f"/cases/{case['id']}").text
    assert ("Next: open <b class=\"next-structure\">MH-3</b>. It drains 100 ft of the 600 ft still suspect "
            "(6.00 of the 8.00 acres of drainage area)") in page
    assert "Parcels draining to the suspect reach: 101.-1-1 (CB-1), 101.-1-2 (CB-1), 102.-3-7 (MH-4)." in page
    with bench.api("viewer") as c:
        got = c.get(f"/api/v1/cases/{case['id']}/trace").json()
    assert got["next_structure"] == "MH-3"
    assert got["suspect_parcels"] == [{"id": "101.-1-1", "structure": "CB-1", "drainage_area": "SW-CB1"},
                                      {"id": "101.-1-2", "structure": "CB-1", "drainage_area": "SW-CB1"},
                                      {"id": "102.-3-7", "structure": "MH-4", "drainage_area": None}]
    # flow at MH-3: the source is up P4, above MH-3: only MH-4's parcel is left
    r = s.post_form(f"/cases/{case['id']}/trace-visits", {"structure": "MH-3", "at": "2026-06-01T11:00",
                                                           "by": "J. Rivera", "flow": "present"})
    assert r.status_code == 303, r.text
    page = s.get(f"/cases/{case['id']}").text
    assert "Parcels draining to the suspect reach: 102.-3-7 (MH-4)." in page


def test_without_parcels_the_trace_names_none(bench):
    store_network(_folder(bench))
    case = _case(bench)
    page = bench.login("viewer").get(f"/cases/{case['id']}").text
    assert "Parcels draining" not in page
    with bench.api("viewer") as c:
        assert c.get(f"/api/v1/cases/{case['id']}/trace").json()["suspect_parcels"] == []


def test_the_map_says_where_stations_sit_and_which_outfall_a_site_reaches(tmp_path, clock):
    """The registry's ``structure:`` (the outfall meter in MH-1) and ``drains_to:`` (CS-7 into CB-1):
    the station's popup names the structure, the site's the inlet and the outfall the
    downstream trace reaches; a case at the station traces from MH-1."""
    from tests.support.notify_peers import registry
    from tests.support.workbench import WORKBENCH_YAML, start_bench
    yaml = (WORKBENCH_YAML.replace("pipe_material: rcp}", "pipe_material: rcp, structure: MH-1}")
            .replace('{id: CS-7, name: "Elm St site", rain_gauges: [RG-1], active_from: 2026-05-29}',
                     '{id: CS-7, name: "Elm St site", rain_gauges: [RG-1], active_from: 2026-05-29, '
                     'lat: 42.8165, lon: -73.9438, drains_to: [CB-1]}'))
    assert "structure: MH-1" in yaml and "drains_to: [CB-1]" in yaml
    b = start_bench(tmp_path, clock, reg=registry(yaml))
    try:
        store_network(_folder(b))
        data = _map_data(b.login("viewer").get("/network/map").text)
        places = {(p["layer"], p["id"]): p for p in data["places"]}
        assert places[("station", "OF-12")]["note"] == "on the map at MH-1"
        assert places[("site", "CS-7")]["note"] == "drains to CB-1, reaching outfall OF-12 (Mohawk River)"  # the alerts' words
        assert "note" not in places[("station", "RG-1")]
        assert data["outfalls"]["monitored"] == ["MH-1"]
        case = _case(b)
        with b.api("inspector") as c:
            r = c.get(f"/api/v1/cases/{case['id']}/trace")
        assert (r.json()["outfall"], r.json()["suspect_length_ft"]) == ("MH-1", 500)
    finally:
        b.close()


def test_the_annual_report_counts_the_towns_outfalls_from_the_map_when_one_is_imported(bench):
    """Every outfall of the map, monitored or not, with its receiving water; a registry outfall
    the map lacks is kept (never dropped) and marked; the report says where the count is from."""
    import csv
    import html
    import io

    from ms4watch.network.model import Structure, StructureKind
    s = bench.login("viewer")
    before = list(csv.DictReader(io.StringIO(s.get("/reports/annual/2026/outfalls.csv").text)))
    assert [(r["outfall"], r["source"]) for r in before] == [("OF-12", "registry"), ("OF-14", "registry")]
    assert "counted from the registry: no storm-sewer map imported" in s.get("/reports/annual/2026").text
    net = main_st_network()
    net.structures["OF-99"] = Structure("OF-99", StructureKind.OUTFALL, -73.95, 42.82, receiving_water="Alplaus Kill")
    store_network(_folder(bench), net)
    rows = list(csv.DictReader(io.StringIO(s.get("/reports/annual/2026/outfalls.csv").text)))
    assert [(r["outfall"], r["station"], r["receiving_water"], r["pipe_diameter_in"], r["source"]) for r in rows] == [
        ("OF-12", "OF-12", "Mohawk River", "12", "map"),          # the map's; its pipe P1's 12 in
        ("OF-99", "", "Alplaus Kill", "", "map"),                 # not monitored: counted all the same
        ("OF-14", "OF-14", "", "", "registry (not on the map)")]
    assert rows[0]["name"] == "Main St outfall" and rows[1]["monitored"] == "False"
    page = html.unescape(s.get("/reports/annual/2026").text)
    assert "counted from the town's storm-sewer map: every outfall, monitored or not" in page


def test_the_map_offers_its_records_as_one_geojson(bench):
    """Outfalls with their screenings, cases, trace visits and suspect reaches, one
    FeatureCollection, each feature's ``layer`` saying which (as ``ms4watch map export --records``)."""
    assert bench.login("viewer").get("/network/map/records.geojson").status_code == 404      # no map yet
    case = _two_visits(bench)
    s = bench.login("viewer")
    assert '<a href="/network/map/records.geojson" download>' in s.get("/network/map").text
    r = s.get("/network/map/records.geojson")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/geo+json"
    by: dict[str, list] = {}
    for f in r.json()["features"]:
        by.setdefault(f["properties"].pop("layer"), []).append(f)
    assert sorted(by) == ["cases", "outfalls", "suspect_reaches", "trace_visits"]
    [of12] = by["outfalls"]
    assert of12["geometry"] == {"type": "Point", "coordinates": [-73.9452, 42.8161]}
    assert (of12["properties"]["id"], of12["properties"]["screenings"], of12["properties"]["open_case"]) == (
        "OF-12", 0, case["number"])
    assert [(c["properties"]["case"], c["properties"]["status"], c["properties"]["structure"]) for c in by["cases"]] \
        == [(case["number"], "open", "OF-12")]
    visits = [v["properties"] for v in by["trace_visits"]]
    assert [(v["structure"], v["flow"], v["odour"], v["ammonia_mg_l"], v["exceeds"]) for v in visits] == [
        ("MH-2", "present", "sewage", 1.2, "ammonia"), ("MH-3", "absent", None, None, None)]
    assert visits[0]["at"] == "2026-06-01T11:00:00-04:00"                         # the town's time
    assert [(p["properties"]["pipe"], p["geometry"]["type"]) for p in by["suspect_reaches"]] == [
        ("P3", "LineString"), ("P5", "LineString")]
