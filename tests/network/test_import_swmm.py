"""EPA SWMM input files: the EPA's own Example 1 (testdata/README.md names its source) and
small hand-written models for what Example 1 does not have."""

from __future__ import annotations

from pathlib import Path

import pytest

from ms4watch.network.errors import NetworkError
from ms4watch.network.importer import import_map
from ms4watch.network.model import ConveyanceKind, DirectionSource, StructureKind
from ms4watch.network.trace import Way, walk

from .conftest import TESTDATA

EXAMPLE1 = TESTDATA / "Example1.inp"


def test_example1_nodes_links_and_units():
    got = import_map(EXAMPLE1)
    net = got.network
    assert len(net.structures) == 14 and len(net.conveyances) == 13          # 13 junctions + outfall 18
    assert net.structures["18"].kind is StructureKind.OUTFALL and net.structures["18"].invert_ft == 975
    assert not got.georeferenced and net.structures["9"].lon is None
    assert (net.structures["9"].x, net.structures["9"].y) == (4042.11, 9600.0)
    c6 = net.conveyances["6"]                  # 10 (995) -> 21 (990) with OutOffset 1 (LINK_OFFSETS DEPTH)
    assert (c6.upstream, c6.downstream, c6.direction) == ("10", "21", DirectionSource.DRAWING)
    assert (c6.upstream_invert_ft, c6.downstream_invert_ft) == (995, 991)
    assert c6.length_ft == 400 and c6.diameter_in == 12 and c6.kind is ConveyanceKind.PIPE
    assert net.conveyances["1"].diameter_in == 18


def test_example1_findings():
    got = import_map(EXAMPLE1)
    kinds = {(f.kind, f.feature) for f in got.findings}
    assert ("no_receiving_water", "18") in kinds                     # SWMM does not say
    assert ("not_imported", "[SUBAREAS]") in kinds                   # 8 rows, said, not dropped
    assert ("not_imported", "[SUBCATCHMENTS]") in kinds              # their hydrology; they are drainage areas
    assert not [f for f in got.findings if f.kind in ("unconnected_end", "loop", "uphill")]
    # Conduit 7 runs 21 (990, InOffset 1) -> 22 (987, OutOffset 1): downhill; nothing uphill in Example 1.


def test_example1_upstream_of_its_outfall_is_the_whole_model():
    steps = walk(import_map(EXAMPLE1).network, "18", Way.UP)
    assert [s.structure for s in steps[:4]] == ["18", "17", "24", "16"]
    assert len(steps) == 14
    assert sum(s.pipe_length_ft for s in steps[1:]) == 4300        # every conduit's length, ft


def test_example1_with_a_crs_is_placed():
    """Placed as if in State Plane feet: the ground distance between two nodes, measured on
    the ellipsoid, is their distance in the model's coordinates (within the grid's scale)."""
    from pyproj import Geod
    got = import_map(EXAMPLE1, crs="EPSG:2263")
    a, b = got.network.structures["17"], got.network.structures["18"]
    _, _, metres = Geod(ellps="WGS84").inv(a.lon, a.lat, b.lon, b.lat)
    grid_ft = ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5                  # 1,685.3 ftUS
    assert got.georeferenced and metres / 0.3048 == pytest.approx(grid_ft, rel=2e-3)


MINI = """\
[OPTIONS]
FLOW_UNITS  LPS
LINK_OFFSETS ELEVATION
[JUNCTIONS]
;;Name Elev
J1  10.0
J2  10.5   ; lower than the link says
[OUTFALLS]
O1  9.0  FREE
[CONDUITS]
C1  J1  J2  100  0.013  10.2  10.6
C2  J2  O1  50   0.013  *     *
C3  J2  NOWHERE 20 0.013 0 0
[WEIRS]
W1  J1  O1  TRANSVERSE 0
[XSECTIONS]
C1  CIRCULAR  0.3  0 0 0 1
C2  TRAPEZOIDAL  1.0 2 1 1 1
[COORDINATES]
J1 0 0
J2 100 0
O1 150 0
"""


def test_si_units_elevation_offsets_and_other_links(tmp_path: Path):
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI)
    got = import_map(inp)
    net = got.network
    c1 = net.conveyances["C1"]
    assert c1.length_ft == pytest.approx(100 / 0.3048)
    assert c1.upstream_invert_ft == pytest.approx(10.2 / 0.3048)    # ELEVATION: offsets are elevations
    assert c1.diameter_in == pytest.approx(0.3 / 0.0254)
    assert net.conveyances["C2"].kind is ConveyanceKind.CHANNEL     # an open section
    assert net.conveyances["C2"].upstream_invert_ft == pytest.approx(10.5 / 0.3048)    # '*': the node's invert
    assert net.conveyances["W1"].kind is ConveyanceKind.WEIR
    kinds = {(f.kind, f.feature) for f in got.findings}
    assert ("uphill", "C1") in kinds
    assert ("unconnected_end", "C3") in kinds and net.conveyances["C3"].downstream is None


def test_a_bad_number_names_file_line_and_field(tmp_path: Path):
    inp = tmp_path / "bad.inp"
    inp.write_text(MINI.replace("C2  J2  O1  50 ", "C2  J2  O1  fifty "))
    with pytest.raises(NetworkError, match=r"bad.inp:12: \[CONDUITS\] C2: Length 'fifty' is not a number"):
        import_map(inp)


def test_a_mapping_file_gives_a_models_crs_and_receiving_waters(tmp_path: Path):
    import shutil
    shutil.copy(EXAMPLE1, tmp_path / "Example1.inp")
    (tmp_path / "model.yaml").write_text("swmm: Example1.inp\ncrs: EPSG:2263\nreceiving_waters: {'18': Bronx River}\n")
    got = import_map(tmp_path / "model.yaml")
    assert got.georeferenced and got.network.structures["18"].receiving_water == "Bronx River"
    assert not [f for f in got.findings if f.kind == "no_receiving_water"]


# Awkward but valid files, as the SWMM 5 User's Manual (EPA/600/R-17/111, Appendix D) and the
# engine's own reader (src/solver/input.c: getTokens, match) allow them.

AWKWARD = (
    "[TITLE]\r\n"
    ";;Project Title/Notes\r\n"
    "Town of Pelham [draft] ; storm model, rev 2\r\n"
    "[options]\r\n"
    "flow_units\tcms\r\n"
    "Link_Offsets\televation   ; keywords in any case\r\n"
    "[Junctions]\r\n"
    ";;Name\t\tElevation\tMaxDepth\r\n"
    ";;-------------- ----------\r\n"
    "\"MH 1\"\t10.0\t2.0\t; a name with a space, in quotes\r\n"
    "MH2\t9.5\r\n"
    "NOXY\t9.4           ; no [COORDINATES] row\r\n"
    "[OUTFALLS]\r\n"
    ";;Name Elev Type Stage Gated RouteTo\r\n"
    "OF1 8.0 FREE NO\r\n"
    "OF2 8.0 NORMAL YES\r\n"
    "OF3 8.0 FIXED 8.5 NO\r\n"
    "OF4 8.0 TIDAL Tide1 YES\r\n"
    "OF5 8.0 TIMESERIES TS1 NO S1\r\n"
    "[STORAGE]\r\n"
    "SU1 9.0 3 0 FUNCTIONAL 1000 0 0 0 0\r\n"
    "[DIVIDERS]\r\n"
    "DV1 9.2 C3 CUTOFF 0.5 0 0 0 0\r\n"
    "[CONDUITS]\r\n"
    "C1 \"MH 1\" MH2 100 0.013 * *\r\n"
    "C2 MH2 OF1 50 0.013 * *\r\n"
    "C3 DV1 OF2 20 0.013 * *\r\n"
    "C4 NOXY OF3 30 0.013 * *\r\n"
    "C5 SU1 OF4 30 0.013 * *\r\n"
    "[PUMPS]\r\n"
    "P1 MH2 SU1 * ON 0 0\r\n"
    "[ORIFICES]\r\n"
    "OR1 DV1 OF5 SIDE 9.2 0.65 NO 0\r\n"
    "[OUTLETS]\r\n"
    "OL1 SU1 DV1 9.0 TABULAR/HEAD Curve1 NO\r\n"
    "[XSECTIONS]\r\n"
    "C1 CIRCULAR 0.3 0 0 0 1\r\n"
    "C2 RECT_CLOSED 1.2 0.9 0 0 1\r\n"
    "C3 DUMMY 0 0 0 0 1\r\n"
    "C4 IRREGULAR Transect1 0 0 0 1\r\n"
    "C5 FORCE_MAIN 0.25 130 0 0 1\r\n"
    "OR1 CIRCULAR 0.2 0 0 0\r\n"
    "[VERTICES]\r\n"
    "C1 50 10\r\n"
    "C1 60 10\r\n"
    "[COORDINATES]\r\n"
    "\"MH 1\" 0 0\r\n"
    "MH2 100 0\r\n"
    "OF1 150 0\r\nOF2 150 10\r\nOF3 150 20\r\nOF4 150 30\r\nOF5 150 40\r\n"
    "SU1 120 30\r\nDV1 120 10\r\n"
)


def test_crlf_tabs_case_comments_and_quoted_names(tmp_path: Path):
    inp = tmp_path / "awkward.inp"
    inp.write_bytes(AWKWARD.encode())
    got = import_map(inp)
    net = got.network
    assert "MH 1" in net.structures and net.structures["MH 1"].invert_ft == pytest.approx(10 / 0.3048)
    c1 = net.conveyances["C1"]
    assert (c1.upstream, c1.downstream) == ("MH 1", "MH2")
    assert c1.length_ft == pytest.approx(100 / 0.3048)              # CMS: metres, keyword in lower case
    assert c1.upstream_invert_ft == pytest.approx(10 / 0.3048)      # '*' with LINK_OFFSETS elevation
    assert not [f for f in got.findings if f.kind in ("unconnected_end", "duplicate_id")]


def test_every_outfall_type_storage_dividers_and_links_that_are_not_conduits(tmp_path: Path):
    inp = tmp_path / "awkward.inp"
    inp.write_bytes(AWKWARD.encode())
    got = import_map(inp)
    net = got.network
    assert [s for s in net.structures if net.structures[s].kind is StructureKind.OUTFALL] == [
        "OF1", "OF2", "OF3", "OF4", "OF5"]
    assert all(net.structures[f"OF{i}"].invert_ft == pytest.approx(8 / 0.3048) for i in range(1, 6))
    assert net.structures["SU1"].kind is StructureKind.STORAGE and net.structures["DV1"].kind is StructureKind.JUNCTION
    kinds = {c.id: c.kind for c in net.conveyances.values()}
    assert (kinds["P1"], kinds["OR1"], kinds["OL1"]) == (ConveyanceKind.PUMP, ConveyanceKind.ORIFICE,
                                                         ConveyanceKind.OUTLET)
    assert (net.conveyances["OL1"].upstream, net.conveyances["OL1"].downstream) == ("SU1", "DV1")
    assert len(net.conveyances) == 8 == got.lines_read and len(net.structures) == 10 == got.structures_read


def test_cross_sections_other_than_circular(tmp_path: Path):
    """Geom1 is the full height of a closed shape (a force main's diameter); an IRREGULAR
    section names a transect (no size); a DUMMY link has no size."""
    inp = tmp_path / "awkward.inp"
    inp.write_bytes(AWKWARD.encode())
    net = import_map(inp).network
    size = {c.id: c.diameter_in for c in net.conveyances.values()}
    assert size["C1"] == pytest.approx(0.3 / 0.0254) and size["C2"] == pytest.approx(1.2 / 0.0254)
    assert size["C3"] is None and size["C4"] is None and size["C5"] == pytest.approx(0.25 / 0.0254)
    assert net.conveyances["C4"].kind is ConveyanceKind.CHANNEL    # a natural channel's transect


def test_a_node_without_coordinates_and_a_bent_conduit(tmp_path: Path):
    inp = tmp_path / "awkward.inp"
    inp.write_bytes(AWKWARD.encode())
    got = import_map(inp, crs="EPSG:32618")                 # UTM 18N, metres
    net = got.network
    msgs = [f.message for f in got.findings if f.kind == "no_geometry"]
    assert msgs == [f"node NOXY ({inp}:12) has no [COORDINATES]"]
    assert net.structures["NOXY"].lon is None and net.conveyances["C4"].upstream == "NOXY"
    assert len(net.conveyances["C1"].coords) == 4           # "MH 1", two [VERTICES], MH2
    assert len(net.conveyances["C4"].coords) == 1           # only OF3 is placed


def test_a_byte_order_mark_before_the_first_section(tmp_path: Path):
    """Notepad and many editors save UTF-8 with a BOM: [OPTIONS] must still be read."""
    inp = tmp_path / "bom.inp"
    inp.write_bytes(b"\xef\xbb\xbf" + MINI.encode())
    c1 = import_map(inp).network.conveyances["C1"]
    assert c1.length_ft == pytest.approx(100 / 0.3048)             # LPS: metres, not feet


def test_a_file_in_the_windows_code_page(tmp_path: Path):
    """The SWMM GUI on Windows writes the system's code page, not UTF-8: names are read as
    Windows-1252 and that is said."""
    inp = tmp_path / "cp1252.inp"
    inp.write_bytes(MINI.replace("J1", "Chênes-1").encode("cp1252"))
    got = import_map(inp)
    assert "Chênes-1" in got.network.structures
    assert [f.message for f in got.findings if f.kind == "encoding"] == [
        f"{inp}: not UTF-8; read as Windows-1252 (the SWMM program's encoding on Windows)"]


def test_subcatchments_are_drainage_areas(tmp_path: Path):
    """EPA Example 1's eight subcatchments drain to its nodes: drainage areas of the size the
    model gives (acres in US units), placed with their [POLYGONS] when the model is."""
    got = import_map(EXAMPLE1)
    areas = {a.id: a for a in got.areas}
    assert len(areas) == 8 and (areas["1"].structure, areas["1"].how) == ("9", "attribute")
    assert areas["1"].area_sqft == pytest.approx(10 * 43_560)               # 10 acres
    assert sum(a.area_sqft for a in areas.values()) == pytest.approx(71 * 43_560)
    assert not [f for f in got.findings if f.kind == "drainage_area_unattached"]
    assert [f.message for f in got.findings if f.feature == "[SUBCATCHMENTS]"] == [
        "[SUBCATCHMENTS]: 8 rows read as drainage areas (name, outlet, area); their rain gage, imperviousness, "
        "width, slope and curb length not imported (not part of the pipe network)"]


def test_subcatchments_in_si_units_draining_through_another_or_nowhere(tmp_path: Path):
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI + "[SUBCATCHMENTS]\n;;Name Gage Outlet Area\nS1 RG1 J1 2.5 50 100 1 0\n"
                          "S2 RG1 S1 1 50 100 1 0   ; onto S1, so to J1\nS3 RG1 GONE 1 50 100 1 0\n"
                          "[POLYGONS]\nS1 0 0\nS1 10 0\nS1 10 10\n")
    got = import_map(inp, crs="EPSG:32618")
    areas = {a.id: a for a in got.areas}
    assert areas["S1"].area_sqft == pytest.approx(2.5 * 10_000 / 0.3048 ** 2)    # hectares (LPS: SI)
    assert (areas["S2"].structure, areas["S3"].structure) == ("J1", None)
    assert [f.message for f in got.findings if f.kind == "drainage_area_unattached"] == [
        f"drainage area S3 ({inp}:27): its outlet GONE is no node or subcatchment of the model"]


def test_a_model_drawn_in_degrees_is_placed_without_a_crs(tmp_path: Path):
    """[MAP] Units Degrees: the coordinates are longitude and latitude."""
    inp = tmp_path / "deg.inp"
    inp.write_text(MINI.replace("J1 0 0\nJ2 100 0\nO1 150 0", "J1 -73.80 40.90\nJ2 -73.801 40.90\nO1 -73.802 40.90")
                   + "[MAP]\nDIMENSIONS -73.9 40.8 -73.7 41.0\nUnits Degrees\n")
    got = import_map(inp)
    assert got.georeferenced and got.network.structures["J2"].lon == pytest.approx(-73.801)


def test_a_file_with_no_network_is_refused(tmp_path: Path):
    inp = tmp_path / "notes.inp"
    inp.write_text("These are not SWMM input data.\n[TITLE]\nonly a title\n")
    with pytest.raises(NetworkError, match=r"notes.inp: no \[JUNCTIONS\], \[OUTFALLS\], \[STORAGE\], \[DIVIDERS\] "
                                           r"or \[CONDUITS\] rows: not a SWMM model of a network"):
        import_map(inp)


def test_epa_example1_in_si_units():
    """EPA's own metric Example 1 (CMS: the same numbers read as metres and hectares; see
    testdata/README.md): the same network as Example 1, every length and size in metres."""
    got = import_map(TESTDATA / "test_ex1_metric.inp")
    net, us = got.network, import_map(EXAMPLE1).network
    assert {(c.id, c.upstream, c.downstream) for c in net.conveyances.values()} == {
        (c.id, c.upstream, c.downstream) for c in us.conveyances.values()}
    assert net.structures["18"].invert_ft == pytest.approx(975 / 0.3048)
    c1 = net.conveyances["1"]
    assert c1.length_ft == pytest.approx(400 / 0.3048) and c1.diameter_in == pytest.approx(1.5 / 0.0254)
    assert net.conveyances["6"].downstream_invert_ft == pytest.approx(991 / 0.3048)       # OutOffset 1 m
    assert sum(a.area_sqft for a in got.areas) == pytest.approx(71 * 10_000 / 0.3048 ** 2)   # 71 ha
    assert not [f for f in got.findings if f.kind in ("unconnected_end", "uphill", "loop")]


def test_epa_example3_a_pump_station():
    """EPA Example 3: a wet well (storage SU1) and a pump lifting its water to KRO1014; a pump
    lifts by design, so it is not reported as flowing uphill; pipes still are checked."""
    got = import_map(TESTDATA / "Example3.inp")
    net = got.network
    assert net.structures["SU1"].kind is StructureKind.STORAGE and net.structures["SU1"].invert_ft == 544.74
    pump = net.conveyances["PUMP1"]
    assert (pump.kind, pump.upstream, pump.downstream) == (ConveyanceKind.PUMP, "SU1", "KRO1014")
    assert net.conveyances["KRO3001-KRO3002"].downstream_invert_ft == pytest.approx(549.74)   # SU1 + 5 ft
    assert len(net.structures) == 34 and len(net.conveyances) == 33
    assert not [f for f in got.findings if f.kind in ("uphill", "unconnected_end", "loop")]
    assert sorted(f.feature for f in got.findings if f.kind == "not_imported") == [
        "[CONTROLS]", "[CURVES]", "[DWF]", "[PATTERNS]"]


@pytest.mark.parametrize("units, ft", [("CFS", 1.0), ("GPM", 1.0), ("MGD", 1.0), ("cms", 1 / 0.3048),
                                       ("LPS", 1 / 0.3048), ("MLD", 1 / 0.3048)])
def test_flow_units_say_feet_or_metres(tmp_path: Path, units: str, ft: float):
    """SWMM 5 manual, [OPTIONS] FLOW_UNITS: US units (CFS, GPM, MGD) give lengths and
    elevations in feet, SI units (CMS, LPS, MLD) in metres."""
    inp = tmp_path / "units.inp"
    inp.write_text(MINI.replace("FLOW_UNITS  LPS", f"FLOW_UNITS  {units}"))
    net = import_map(inp).network
    assert net.conveyances["C2"].length_ft == pytest.approx(50 * ft)
    assert net.structures["O1"].invert_ft == pytest.approx(9 * ft)


def test_a_link_naming_an_unknown_node_names_its_line(tmp_path: Path):
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI)
    got = import_map(inp)
    assert [f.message for f in got.findings if f.feature == "C3" and f.kind == "unconnected_end"] == [
        f"link C3 ({inp}:13) names node NOWHERE, which no node section defines"]


def test_an_option_without_its_value_is_refused(tmp_path: Path):
    """FLOW_UNITS with no value would silently mean CFS (feet) for a model in metres."""
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI.replace("FLOW_UNITS  LPS", "FLOW_UNITS"))
    with pytest.raises(NetworkError, match=r"mini.inp:2: \[OPTIONS\] FLOW_UNITS: no value"):
        import_map(inp)


def test_link_offsets_of_an_unknown_kind_is_refused(tmp_path: Path):
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI.replace("LINK_OFFSETS ELEVATION", "LINK_OFFSETS ELEV"))
    with pytest.raises(NetworkError, match=r"mini.inp: \[OPTIONS\] LINK_OFFSETS 'ELEV': expected DEPTH or ELEVATION"):
        import_map(inp)


def test_receiving_waters_keyed_by_numeric_node_names(tmp_path: Path):
    """SWMM node names are often numbers: YAML reads {18: …} with an integer key."""
    import shutil
    shutil.copy(EXAMPLE1, tmp_path / "Example1.inp")
    (tmp_path / "model.yaml").write_text("swmm: Example1.inp\nreceiving_waters: {18: Bronx River}\n")
    assert import_map(tmp_path / "model.yaml").network.structures["18"].receiving_water == "Bronx River"
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI)
    (tmp_path / "mini.yaml").write_text("swmm: mini.inp\nreceiving_waters: {o1: Hutchinson River}\n")   # any case
    assert import_map(tmp_path / "mini.yaml").network.structures["O1"].receiving_water == "Hutchinson River"


def test_names_are_matched_without_regard_to_case(tmp_path: Path):
    """The SWMM engine finds objects by name without regard to case (src/solver/hash.c:
    samestr and hash compare upper-cased letters): a conduit naming j1 joins node J1, and its
    cross-section and the nodes' coordinates are found the same way."""
    inp = tmp_path / "case.inp"
    inp.write_text(MINI.replace("C1  J1  J2  100", "C1  j1  j2  100").replace("C1  CIRCULAR", "c1  CIRCULAR")
                   .replace("J2 100 0", "j2 100 0") + "[SUBCATCHMENTS]\nS1 RG1 o1 1 50 100 1 0\n")
    got = import_map(inp, crs="EPSG:32618")
    net = got.network
    c1 = net.conveyances["C1"]
    assert (c1.upstream, c1.downstream) == ("J1", "J2") and c1.diameter_in == pytest.approx(0.3 / 0.0254)
    assert net.structures["J2"].lon is not None and got.areas[0].structure == "O1"
    assert not [f for f in got.findings if f.feature in ("C1", "J2", "S1") and f.kind != "uphill"]   # C1 rises, by MINI's design


def test_parcels_drain_by_the_models_subcatchments(tmp_path: Path):
    """A parcel layer with a placed SWMM model: a parcel inside subcatchment 1 drains to its
    outlet, node 9."""
    import json
    import shutil

    from pyproj import Transformer
    shutil.copy(EXAMPLE1, tmp_path / "Example1.inp")
    t = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True)
    ring = [list(t.transform(x, y)) for x, y in ((1000, 8000), (1200, 8000), (1200, 8200), (1000, 8200), (1000, 8000))]
    (tmp_path / "parcels.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"PID": "P1"}, "geometry": {"type": "Polygon", "coordinates": [ring]}}]}))
    (tmp_path / "m.yaml").write_text("swmm: Example1.inp\ncrs: EPSG:2263\nparcels: {file: parcels.geojson, id: PID}\n")
    got = import_map(tmp_path / "m.yaml")
    assert [(p.id, p.structure, p.drainage_area, p.how) for p in got.parcels] == [("P1", "9", "1", "drainage_area")]


def test_coordinates_that_cannot_be_degrees_are_refused_with_their_line(tmp_path: Path):
    """--crs EPSG:4326 (or [MAP] Units Degrees) for a model drawn in feet: refused at the first
    node that cannot be placed, not drawn at longitude 4,042."""
    with pytest.raises(NetworkError, match=r"Example1.inp:225: \[COORDINATES\] 9: \(4042.110, 9600.000\) is not a "
                                           r"longitude and latitude, as EPSG:4326 says"):
        import_map(EXAMPLE1, crs="EPSG:4326")
    inp = tmp_path / "deg.inp"
    inp.write_text(EXAMPLE1.read_text().replace("Units      None", "Units      Degrees"))
    with pytest.raises(NetworkError, match=r"deg.inp:225: \[COORDINATES\] 9: \(4042.110, 9600.000\) is not a longitude"):
        import_map(inp)


def test_an_empty_quoted_name_is_refused_with_its_line(tmp_path: Path):
    inp = tmp_path / "mini.inp"
    inp.write_text(MINI.replace("J2  10.5", '""  10.5'))
    with pytest.raises(NetworkError, match=r"mini.inp:7: \[JUNCTIONS\]: the name is empty"):
        import_map(inp)
