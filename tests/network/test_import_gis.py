"""Import of GIS layers (GeoJSON in NY State Plane feet; a GeoPackage written with pyogrio)
through a mapping file: what is read, what could not be connected, nothing dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.network.errors import NetworkError
from ms4watch.network.importer import import_map
from ms4watch.network.model import ConveyanceKind, DirectionSource, StructureKind


def by_kind(findings, kind):
    return sorted(f.feature for f in findings if f.kind == kind)


def test_every_feature_is_read_and_kinds_mapped(synthetic):
    got = import_map(synthetic)
    net = got.network
    assert len(net.structures) == 10 and len(net.conveyances) == 10
    assert net.structures["OF-1"].kind is StructureKind.OUTFALL
    assert net.structures["CB-1"].kind is StructureKind.CATCH_BASIN
    assert net.structures["OF-1"].receiving_water == "Hutchinson River"
    p1 = net.conveyances["P-1"]
    assert (p1.upstream, p1.downstream, p1.direction) == ("MH-1", "OF-1", DirectionSource.DRAWING)
    assert p1.kind is ConveyanceKind.PIPE and p1.material == "RCP" and p1.diameter_in == 18
    assert (p1.upstream_invert_ft, p1.downstream_invert_ft) == (12.0, 10.0)
    # 300 ftUS on the grid, measured on the ellipsoid (international feet, grid scale ~1.000002)
    assert p1.length_ft == pytest.approx(300.0, rel=1e-4)


def test_positions_are_wgs84(synthetic):
    s = import_map(synthetic).network.structures["OF-1"]
    assert s.lon == pytest.approx(-73.94318, abs=1e-4) and s.lat == pytest.approx(40.71562, abs=1e-4)


def test_an_end_drawn_within_the_tolerance_snaps(synthetic):
    assert import_map(synthetic).network.conveyances["P-2"].downstream == "MH-1"   # drawn 0.9 ft off


def test_a_pipe_ending_nowhere_is_reported_and_kept(synthetic):
    got = import_map(synthetic)
    assert by_kind(got.findings, "unconnected_end") == ["P-6"]
    p6 = got.network.conveyances["P-6"]
    assert p6.upstream is None and p6.downstream == "CB-1"


def test_a_smaller_tolerance_reports_the_end_drawn_off(synthetic):
    text = synthetic.read_text().replace("snap_tolerance_ft: 3", "snap_tolerance_ft: 0.5")
    synthetic.write_text(text)
    got = import_map(synthetic)
    assert by_kind(got.findings, "unconnected_end") == ["P-2", "P-6"]
    msg = next(f.message for f in got.findings if f.feature == "P-2")
    assert msg == "pipe P-2: its end touches no structure within 0.5 ft (nearest structure 0.9 ft away)"


def test_an_uphill_pipe_is_reported(synthetic):
    got = import_map(synthetic)
    assert by_kind(got.findings, "uphill") == ["P-5", "P-7"]
    msg = next(f.message for f in got.findings if f.feature == "P-5")
    assert "MH-3 14.00 ft -> MH-2 15.50 ft" in msg


def test_a_loop_is_reported(synthetic):
    got = import_map(synthetic)
    loops = [f for f in got.findings if f.kind == "loop"]
    assert len(loops) == 1 and "MH-4, MH-5" in loops[0].message


def test_an_outfall_without_receiving_water_is_reported(synthetic):
    assert by_kind(import_map(synthetic).findings, "no_receiving_water") == ["OF-2"]


def test_direction_by_inverts_turns_a_pipe_drawn_against_the_flow(synthetic):
    synthetic.write_text(synthetic.read_text() + "direction: inverts\n")
    got = import_map(synthetic)
    p5 = got.network.conveyances["P-5"]
    assert (p5.upstream, p5.downstream, p5.direction) == ("MH-2", "MH-3", DirectionSource.INVERTS)
    assert "P-5" not in by_kind(got.findings, "uphill")


def test_the_maps_own_direction_field_wins(synthetic):
    pipes = json.loads((synthetic.parent / "pipes.geojson").read_text())
    for f in pipes["features"]:
        f["properties"]["FLOWDIR"] = "AGAINST" if f["properties"]["FACILITYID"] == "P-5" else "WITH"
    (synthetic.parent / "pipes.geojson").write_text(json.dumps(pipes))
    synthetic.write_text(synthetic.read_text() + "  flow_direction: FLOWDIR\n"
                         "  flow_directions: {WITH: with, AGAINST: against}\n")
    p5 = import_map(synthetic).network.conveyances["P-5"]
    assert (p5.upstream, p5.downstream, p5.direction) == ("MH-2", "MH-3", DirectionSource.ATTRIBUTE)
    assert (p5.upstream_invert_ft, p5.downstream_invert_ft) == (15.5, 14.0)


def test_missing_and_repeated_ids_are_kept_and_reported(synthetic):
    structures = json.loads((synthetic.parent / "structures.geojson").read_text())
    structures["features"][2]["properties"]["FACILITYID"] = "MH-1"        # MH-2 now repeats MH-1
    structures["features"][3]["properties"]["FACILITYID"] = None          # CB-1 has none
    (synthetic.parent / "structures.geojson").write_text(json.dumps(structures))
    got = import_map(synthetic)
    assert len(got.network.structures) == 10
    assert "MH-1~2" in got.network.structures and "structures#3" in got.network.structures
    assert by_kind(got.findings, "duplicate_id") == ["MH-1~2"]
    assert by_kind(got.findings, "no_id") == ["structures#3"]


def test_an_unknown_type_value_is_reported(synthetic):
    structures = json.loads((synthetic.parent / "structures.geojson").read_text())
    structures["features"][1]["properties"]["TYPE"] = "DI"
    (synthetic.parent / "structures.geojson").write_text(json.dumps(structures))
    got = import_map(synthetic)
    assert got.network.structures["MH-1"].kind is StructureKind.JUNCTION
    assert by_kind(got.findings, "unknown_type") == ["MH-1"]


def test_a_field_the_layer_lacks_names_it(synthetic):
    synthetic.write_text(synthetic.read_text().replace("invert: INV", "invert: INVERT_ELEV"))
    with pytest.raises(NetworkError, match=r"structures.geojson: the mapping names field 'INVERT_ELEV'"):
        import_map(synthetic)


def test_a_bad_mapping_file_names_line_and_field(synthetic):
    synthetic.write_text(synthetic.read_text().replace("types: {OF: outfall", "types: {OF: outflow"))
    with pytest.raises(ConfigError, match=r"mapping.yaml:7: structures.types.OF"):
        import_map(synthetic)


def _write(path: Path, source: Path, driver: str, crs: str | None, layer: str | None = None) -> None:
    import pyogrio.raw
    meta, _, geoms, cols = pyogrio.raw.read(str(source))
    pyogrio.raw.write(str(path), geometry=geoms, field_data=cols, fields=meta["fields"], layer=layer, crs=crs,
                      geometry_type=meta["geometry_type"], driver=driver, append=path.exists())


@pytest.mark.filterwarnings("ignore:.crs. was not provided")
def test_a_shapefile_without_prj_needs_the_crs_in_the_mapping(synthetic):
    folder = synthetic.parent
    _write(folder / "structures.shp", folder / "structures.geojson", "ESRI Shapefile", None)
    _write(folder / "pipes.shp", folder / "pipes.geojson", "ESRI Shapefile", None)
    assert not (folder / "structures.prj").exists()
    synthetic.write_text(synthetic.read_text().replace(".geojson", ".shp"))
    with pytest.raises(NetworkError, match=r"structures.shp: the file names no coordinate system; give one with crs:"):
        import_map(synthetic)
    synthetic.write_text("crs: EPSG:2263\n" + synthetic.read_text())
    got = import_map(synthetic)
    assert got.network.structures["OF-1"].lat == pytest.approx(40.71562, abs=1e-4)
    assert by_kind(got.findings, "unconnected_end") == ["P-6"]


@pytest.mark.parametrize("driver, name", [("GPKG", "town.gpkg"), ("OpenFileGDB", "town.gdb")])
def test_a_geopackage_or_geodatabase_reads_like_the_geojson(synthetic, driver, name):
    """Write both layers to one GeoPackage / file geodatabase with pyogrio (State Plane,
    EPSG:2263) and map its layers."""
    target = synthetic.parent / name
    for layer, source in (("Structures", "structures.geojson"), ("Pipes", "pipes.geojson")):
        _write(target, synthetic.parent / source, driver, "EPSG:2263", layer)
    text = synthetic.read_text().replace("file: structures.geojson", f"file: {name}\n  layer: Structures") \
                                .replace("file: pipes.geojson", f"file: {name}\n  layer: Pipes")
    synthetic.write_text(text)
    got = import_map(synthetic)
    assert len(got.network.structures) == 10 and len(got.network.conveyances) == 10
    assert by_kind(got.findings, "uphill") == ["P-5", "P-7"]
    assert got.network.conveyances["P-2"].downstream == "MH-1"


def test_ends_named_by_the_maps_fields_win_over_snapping(synthetic):
    folder = synthetic.parent
    p = json.loads((folder / "pipes.geojson").read_text())
    ends = {"P-1": ("MH-1", "OF-1"), "P-2": ("MH-2", "MH-1"), "P-6": ("MH-9", "CB-1"), "P-3": (None, None)}
    for f in p["features"]:
        start, end = ends.get(f["properties"]["FACILITYID"], (None, None))
        f["properties"].update(FROM_ID=start, TO_ID=end)
    (folder / "pipes.geojson").write_text(json.dumps(p))
    synthetic.write_text(synthetic.read_text().replace("snap_tolerance_ft: 3", "snap_tolerance_ft: 0.5")
                         + "  start_structure: FROM_ID\n  end_structure: TO_ID\n")
    got = import_map(synthetic)
    net = got.network
    assert net.conveyances["P-2"].downstream == "MH-1"          # drawn 0.9 ft off, named: joined
    assert (net.conveyances["P-3"].upstream, net.conveyances["P-3"].downstream) == ("CB-1", "MH-1")  # snapped
    p6 = [f.message for f in got.findings if f.feature == "P-6"]
    assert p6 == ["pipe P-6: its start names structure MH-9, which the map does not have"]
    assert net.conveyances["P-6"].upstream is None and net.conveyances["P-6"].downstream == "CB-1"


def test_the_sample_mapping_file_is_valid():
    from ms4watch.network.mapping import load_mapping
    sample = Path(__file__).resolve().parents[2] / "network" / "sample-mapping.yaml"
    m = load_mapping(sample)
    assert m.structures.types["OF"] is StructureKind.OUTFALL and m.pipes.start_structure == "UPSTREAMID"


def test_numeric_codes_in_the_layer_and_the_mapping(synthetic):
    codes = {"OF": 3, "MH": 1, "CB": 2}
    s = json.loads((synthetic.parent / "structures.geojson").read_text())
    for f in s["features"]:
        f["properties"]["TYPE"] = codes[f["properties"]["TYPE"]]           # an integer field
    (synthetic.parent / "structures.geojson").write_text(json.dumps(s))
    synthetic.write_text(synthetic.read_text().replace("types: {OF: outfall, MH: manhole, CB: catch_basin}",
                                                       "types: {3: outfall, 1: manhole, 2: catch_basin}"))
    got = import_map(synthetic)
    assert got.network.structures["OF-1"].kind is StructureKind.OUTFALL
    assert not [f for f in got.findings if f.kind == "unknown_type"]


def test_structures_in_a_layer_per_kind_and_the_towns_no_data_values(synthetic: Path):
    """Outfalls in a layer of their own (as many towns keep them), ids unique across layers; an
    invert of 0 (the town's "not recorded") read as unknown."""
    folder = synthetic.parent
    s = json.loads((folder / "structures.geojson").read_text())
    outfalls = [f for f in s["features"] if f["properties"]["TYPE"] == "OF"]
    others = [f for f in s["features"] if f["properties"]["TYPE"] != "OF"]
    others[0]["properties"]["INV"] = 0                             # MH-1
    others[1]["properties"]["FACILITYID"] = "OF-1"                 # MH-2 given an outfall's id
    (folder / "outfalls.geojson").write_text(json.dumps({**s, "features": outfalls}))
    (folder / "structures.geojson").write_text(json.dumps({**s, "features": others}))
    text = synthetic.read_text().replace("structures:\n  file: structures.geojson\n", (
        "no_data: [0]\nstructure_layers:\n  - file: outfalls.geojson\n    id: FACILITYID\n    default_type: outfall\n"
        "    receiving_water: RECV\n  - file: structures.geojson\n"))
    text = text.replace("\n  id: FACILITYID\n  type: TYPE", "\n    id: FACILITYID\n    type: TYPE", 1)
    for key in ("types", "invert", "receiving_water"):
        text = text.replace(f"\n  {key}:", f"\n    {key}:", 1)
    synthetic.write_text(text)
    got = import_map(synthetic)
    net = got.network
    assert len(net.structures) == 10
    assert net.structures["OF-1"].kind is StructureKind.OUTFALL and net.structures["OF-1~2"].kind is StructureKind.MANHOLE
    assert by_kind(got.findings, "duplicate_id") == ["OF-1~2"]
    assert net.structures["MH-1"].invert_ft is None and net.structures["CB-1"].invert_ft == 14.0


def test_pipe_ends_meeting_where_the_map_has_no_structure_are_joined_at_a_junction(tmp_path: Path):
    """Real maps join pipes end to end at bends and wyes with no point drawn there: such ends
    (within the tolerance of each other, of no structure) meet at a junction, reported; an end
    meeting nothing is still unconnected. Feet in EPSG:2263."""
    crs = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::2263"}}

    def fc(features):
        return json.dumps({"type": "FeatureCollection", "crs": crs, "features": features})

    def pt(i, t, x, y):
        return {"type": "Feature", "properties": {"ID": i, "T": t}, "geometry": {"type": "Point", "coordinates": [x, y]}}

    def line(i, *xy):
        return {"type": "Feature", "properties": {"ID": i}, "geometry": {"type": "LineString", "coordinates": list(xy)}}

    (tmp_path / "s.geojson").write_text(fc([pt("OF-1", "OF", 0, 0), pt("CB-1", "CB", 0, 400), pt("CB-2", "CB", 300, 200)]))
    (tmp_path / "p.geojson").write_text(fc([
        line("A", [0, 400], [0, 200]),            # CB-1 to a wye at (0, 200): no point drawn there
        line("B", [300, 200], [1, 200.5]),        # CB-2 to the wye, its end 1.1 ft off A's
        line("C", [0, 200], [0, 0]),              # the wye to OF-1
        line("D", [500, 500], [400, 400])]))      # a stub meeting nothing
    (tmp_path / "m.yaml").write_text(
        "structures: {file: s.geojson, id: ID, type: T, types: {OF: outfall, CB: catch_basin}}\n"
        "pipes: {file: p.geojson, id: ID}\n")
    got = import_map(tmp_path / "m.yaml")
    net = got.network
    j = net.structures["J:A:end"]
    assert j.kind is StructureKind.JUNCTION and j.source == "implied: pipe ends meet here"
    assert [(c.id, c.upstream, c.downstream) for c in net.conveyances.values()] == [
        ("A", "CB-1", "J:A:end"), ("B", "CB-2", "J:A:end"), ("C", "J:A:end", "OF-1"), ("D", None, None)]
    assert [(f.kind, f.message) for f in got.findings if f.kind in ("implied_junction", "unconnected_end")] == [
        ("implied_junction", "pipes A (end), B (end), C (start) meet where the map has no structure; joined at "
                             "junction J:A:end"),
        ("unconnected_end", "pipe D: its start touches no structure within 3 ft"),
        ("unconnected_end", "pipe D: its end touches no structure within 3 ft")]
    from ms4watch.network.bisect import plan
    assert plan(net, "OF-1").next_structure is None        # a buried wye is not a structure to open


# How real layers look: numbers for ids, field names in another case, lines with Z or M,
# features without a geometry, several layers in one GeoPackage, a shapefile's .cpg.

def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    for f in data["features"]:
        change(f)
    path.write_text(json.dumps(data))


def test_ids_stored_as_numbers_read_as_the_towns_text(synthetic):
    """A structure id 12, "12" or 12.0 (a Real field, as shapefiles and Excel exports keep
    them) is the id "12", so a pipe's numeric FROM_ID 12 names structure 12."""
    folder = synthetic.parent
    number = {}

    def as_float(f):
        number[f["properties"]["FACILITYID"]] = len(number) + 1
        f["properties"]["FACILITYID"] = float(number[f["properties"]["FACILITYID"]])

    _edit(folder / "structures.geojson", as_float)
    _edit(folder / "pipes.geojson", lambda f: f["properties"].update(
        FROM_ID=number["MH-2"] if f["properties"]["FACILITYID"] == "P-2" else None, TO_ID=None))
    synthetic.write_text(synthetic.read_text().replace("snap_tolerance_ft: 3", "snap_tolerance_ft: 0.5")
                         + "  start_structure: FROM_ID\n  end_structure: TO_ID\n")
    got = import_map(synthetic)
    assert sorted(got.network.structures, key=int) == [str(n) for n in range(1, 11)]
    assert got.network.conveyances["P-2"].upstream == str(number["MH-2"]) == "3"


def test_field_names_in_another_case_than_the_mapping(synthetic):
    """GDAL matches field names without regard to case (a shapefile's are upper case): so does
    the mapping."""
    synthetic.write_text(synthetic.read_text().replace("id: FACILITYID", "id: FacilityID")
                         .replace("invert: INV\n", "invert: inv\n"))
    got = import_map(synthetic)
    assert "OF-1" in got.network.structures and got.network.structures["CB-1"].invert_ft == 14.0


def test_flow_direction_codes_stored_as_numbers(synthetic):
    _edit(synthetic.parent / "pipes.geojson", lambda f: f["properties"].update(
        FLOWDIR=2.0 if f["properties"]["FACILITYID"] == "P-5" else 1.0))
    synthetic.write_text(synthetic.read_text() + "  flow_direction: FLOWDIR\n"
                         "  flow_directions: {1.0: with, 2: against}\n")   # YAML reads 1.0 as a real
    got = import_map(synthetic)
    assert got.network.conveyances["P-5"].upstream == "MH-2"
    assert by_kind(got.findings, "unknown_direction") == []


def test_lines_with_z_and_m_values(synthetic):
    """3-D lines (as CAD-drawn layers are) and measured lines (LINESTRING M, route layers)."""
    import pyogrio.raw
    import shapely
    folder = synthetic.parent
    _edit(folder / "pipes.geojson", lambda f: f["geometry"].update(
        coordinates=[[x, y, 10.0] for x, y in f["geometry"]["coordinates"]]))
    assert import_map(synthetic).network.conveyances["P-1"].downstream == "OF-1"
    meta, _, geoms, cols = pyogrio.raw.read(str(folder / "pipes.geojson"))
    measured = [shapely.to_wkb(shapely.from_wkt(
        "LINESTRING M (" + ", ".join(f"{x} {y} {i}" for i, (x, y, _) in enumerate(shapely.from_wkb(g).coords)) + ")"),
        flavor="iso") for g in geoms]
    pyogrio.raw.write(str(folder / "pipes.gpkg"), geometry=measured, field_data=cols, fields=meta["fields"],
                      crs="EPSG:2263", geometry_type="Measured LineString", driver="GPKG")
    synthetic.write_text(synthetic.read_text().replace("pipes.geojson", "pipes.gpkg"))
    got = import_map(synthetic)
    assert got.network.conveyances["P-1"].downstream == "OF-1"
    assert by_kind(got.findings, "unconnected_end") == ["P-6"]


def test_features_without_a_geometry_are_kept_and_named(synthetic):
    """A null geometry, an empty one, and a pipe drawn as a point: each kept, each a finding
    naming the layer, the feature and what is wrong; the rest of the map imports."""
    folder = synthetic.parent

    def structures(f):
        if f["properties"]["FACILITYID"] == "CB-3":
            f["geometry"] = None

    def pipes(f):
        pid = f["properties"]["FACILITYID"]
        if pid == "P-3":
            f["geometry"] = None
        elif pid == "P-4":
            f["geometry"] = {"type": "LineString", "coordinates": []}
        elif pid == "P-9":
            f["geometry"] = {"type": "Point", "coordinates": f["geometry"]["coordinates"][0]}

    _edit(folder / "structures.geojson", structures)
    _edit(folder / "pipes.geojson", pipes)
    got = import_map(synthetic)
    net = got.network
    assert len(net.structures) == 10 and len(net.conveyances) == 10
    msgs = {f.feature: f.message for f in got.findings if f.kind == "no_geometry"}
    s, p = folder / "structures.geojson", folder / "pipes.geojson"
    assert msgs == {
        "CB-3": f"{s} feature 9: structure CB-3 has no location; kept, but no pipe can be connected to it",
        "P-3": f"{p} feature 2: pipe P-3 has no line; kept, unconnected",
        "P-4": f"{p} feature 3: pipe P-4 has no line; kept, unconnected",
        "P-9": f"{p} feature 8: pipe P-9 is a Point, not a line; kept, unconnected"}
    assert net.conveyances["P-9"].upstream is None and net.conveyances["P-1"].downstream == "OF-1"


def test_bad_numbers_name_the_layer_the_feature_and_the_field(synthetic):
    _edit(synthetic.parent / "structures.geojson", lambda f: f["properties"].update(
        INV="N/A" if f["properties"]["FACILITYID"] == "MH-1" else f["properties"]["INV"]))
    got = import_map(synthetic)
    assert [f.message for f in got.findings if f.kind == "bad_value"] == [
        f"{synthetic.parent / 'structures.geojson'} feature 1: structure MH-1: INV = 'N/A' is not a number; "
        "read as unknown"]
    assert got.network.structures["MH-1"].invert_ft is None


def test_a_pipe_in_several_parts(synthetic):
    """A MultiLineString whose parts join is one line; one whose parts do not is reported and
    its first part's start and last part's end taken as its ends."""
    def multi(f):
        pid, (a, b) = f["properties"]["FACILITYID"], f["geometry"]["coordinates"]
        mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]
        if pid == "P-1":
            f["geometry"] = {"type": "MultiLineString", "coordinates": [[mid, b], [a, mid]]}    # parts out of order
        elif pid == "P-4":
            f["geometry"] = {"type": "MultiLineString", "coordinates": [[a, mid], [[mid[0] + 50, mid[1]], b]]}

    _edit(synthetic.parent / "pipes.geojson", multi)
    got = import_map(synthetic)
    p1, p4 = got.network.conveyances["P-1"], got.network.conveyances["P-4"]
    assert (p1.upstream, p1.downstream) == ("MH-1", "OF-1") and len(p1.coords) == 3
    assert (p4.upstream, p4.downstream) == ("CB-2", "MH-2")
    assert by_kind(got.findings, "multipart") == ["P-4"]


def test_a_layer_in_longitude_and_latitude(synthetic):
    """GeoJSON without a "crs" member is WGS 84 (RFC 7946): no crs: needed in the mapping."""
    from pyproj import Transformer
    tr = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True)
    for name in ("structures.geojson", "pipes.geojson"):
        data = json.loads((synthetic.parent / name).read_text())
        del data["crs"]
        for f in data["features"]:
            g = f["geometry"]
            g["coordinates"] = list(tr.transform(*g["coordinates"])) if g["type"] == "Point" else [
                list(tr.transform(*xy)) for xy in g["coordinates"]]
        (synthetic.parent / name).write_text(json.dumps(data))
    got = import_map(synthetic)
    assert got.network.conveyances["P-2"].downstream == "MH-1"
    assert got.network.conveyances["P-1"].length_ft == pytest.approx(300.0, rel=1e-4)
    assert by_kind(got.findings, "unconnected_end") == ["P-6"]


def test_a_geopackage_of_several_layers_needs_the_layer_named(synthetic):
    target = synthetic.parent / "town.gpkg"
    for layer, source in (("Pipes", "pipes.geojson"), ("Structures", "structures.geojson")):
        _write(target, synthetic.parent / source, "GPKG", "EPSG:2263", layer)
    synthetic.write_text(synthetic.read_text().replace("file: structures.geojson", "file: town.gpkg")
                         .replace("file: pipes.geojson", "file: town.gpkg\n  layer: Pipes"))
    with pytest.raises(NetworkError, match=r"town.gpkg: 2 layers \(Pipes, Structures\): name one with layer:"):
        import_map(synthetic)
    synthetic.write_text(synthetic.read_text().replace("file: town.gpkg\n  id", "file: town.gpkg\n  layer: Manholes\n  id"))
    with pytest.raises(NetworkError, match=r"town.gpkg: no layer 'Manholes' \(it has Pipes, Structures\)"):
        import_map(synthetic)
    synthetic.write_text(synthetic.read_text().replace("layer: Manholes", "layer: structures"))   # as GDAL: any case
    assert len(import_map(synthetic).network.structures) == 10


@pytest.mark.filterwarnings("ignore:.crs. was not provided")
def test_a_shapefile_with_a_code_page_file(synthetic):
    """A shapefile's attributes in Windows-1252, said by its .cpg, read as written."""
    import pyogrio.raw
    folder = synthetic.parent
    _edit(folder / "structures.geojson", lambda f: f["properties"].update(
        RECV="Río Chico" if f["properties"]["FACILITYID"] == "OF-2" else f["properties"]["RECV"]))
    for name in ("structures", "pipes"):
        meta, _, geoms, cols = pyogrio.raw.read(str(folder / f"{name}.geojson"))
        pyogrio.raw.write(str(folder / f"{name}.shp"), geometry=geoms, field_data=cols, fields=meta["fields"],
                          crs="EPSG:2263", geometry_type=meta["geometry_type"], driver="ESRI Shapefile",
                          encoding="cp1252")
    assert (folder / "structures.cpg").read_text().strip() in ("1252", "CP1252", "cp1252")
    assert "Río".encode("cp1252") in (folder / "structures.dbf").read_bytes()
    synthetic.write_text(synthetic.read_text().replace(".geojson", ".shp"))
    got = import_map(synthetic)
    assert got.network.structures["OF-2"].receiving_water == "Río Chico"


def test_no_data_markers_and_zero_sizes(synthetic):
    """-9999 (the GIS no-data marker) in an invert, a diameter or a length of 0: read as
    unknown and said, so a -9999 invert cannot turn a pipe by its inverts nor a zero length
    stand for the pipe's; a value the mapping lists in no_data is unknown without a word."""
    def mark(f):
        pid = f["properties"]["FACILITYID"]
        f["properties"]["LEN"] = 0 if pid == "P-3" else 250.0
        if pid == "P-1":
            f["properties"]["DIAM"] = 0
        if pid == "P-4":
            f["properties"]["INV_END"] = -9999
        if pid == "P-9":
            f["properties"]["INV_START"] = -99999.0

    _edit(synthetic.parent / "pipes.geojson", mark)
    synthetic.write_text(synthetic.read_text() + "  length: LEN\ndirection: inverts\n")
    got = import_map(synthetic)
    net = got.network
    assert net.conveyances["P-1"].diameter_in is None
    assert net.conveyances["P-3"].length_ft == pytest.approx(200.0, rel=1e-4)      # measured, not 0
    p4 = net.conveyances["P-4"]                                     # MH-2's own invert (15) instead
    assert (p4.upstream, p4.downstream, p4.downstream_invert_ft) == ("CB-2", "MH-2", 15.0)
    assert net.conveyances["P-9"].upstream == "MH-4"
    pipes = synthetic.parent / "pipes.geojson"
    assert sorted(f.message for f in got.findings if f.kind == "bad_value") == [
        f"{pipes} feature 0: pipe P-1: DIAM = 0 is not a size; read as unknown",
        f"{pipes} feature 2: pipe P-3: LEN = 0 is not a size; read as unknown",
        f"{pipes} feature 3: pipe P-4: INV_END = -9999 is a no-data marker; read as unknown",
        f"{pipes} feature 8: pipe P-9: INV_START = -99999 is a no-data marker; read as unknown"]
    synthetic.write_text(synthetic.read_text().replace("snap_tolerance_ft: 3", "snap_tolerance_ft: 3\nno_data: [-9999, -99999, 0]"))
    got = import_map(synthetic)
    assert [f.feature for f in got.findings if f.kind == "bad_value"] == []
    assert got.network.conveyances["P-4"].downstream_invert_ft == 15.0


def test_a_layer_of_the_wrong_geometry_is_refused_and_a_stray_feature_reported(synthetic):
    """The pipes' layer named as the structures' (a slip in the mapping) is refused, naming it;
    one structure drawn as a line among points is placed at its centroid and said."""
    text = synthetic.read_text()
    synthetic.write_text(text.replace("file: structures.geojson", "file: pipes.geojson"))
    with pytest.raises(NetworkError, match=r"pipes.geojson: its features are LineString, not points or polygons: "
                                           r"check the structures' file and layer"):
        import_map(synthetic)
    synthetic.write_text(text.replace("file: pipes.geojson", "file: structures.geojson"))
    with pytest.raises(NetworkError, match=r"structures.geojson: its features are Point, not lines: "
                                           r"check the pipes' file and layer"):
        import_map(synthetic)
    synthetic.write_text(text)

    def stray(f):
        if f["properties"]["FACILITYID"] == "CB-3":
            x, y = f["geometry"]["coordinates"]
            f["geometry"] = {"type": "LineString", "coordinates": [[x - 2, y], [x + 2, y]]}

    _edit(synthetic.parent / "structures.geojson", stray)
    got = import_map(synthetic)
    assert [f.message for f in got.findings if f.kind == "no_geometry"] == [
        f"{synthetic.parent / 'structures.geojson'} feature 9: structure CB-3 is a LineString, not a point; "
        "placed at its centroid"]
    assert got.network.conveyances["P-10"].upstream == "CB-3"


ESRI_2263 = (   # the .prj ArcGIS writes for NAD 1983 StatePlane New York Long Island FIPS 3104 (US Feet)
    'PROJCS["NAD_1983_StatePlane_New_York_Long_Island_FIPS_3104_Feet",GEOGCS["GCS_North_American_1983",'
    'DATUM["D_North_American_1983",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],'
    'UNIT["Degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic"],PARAMETER["False_Easting",984250.0],'
    'PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",-74.0],'
    'PARAMETER["Standard_Parallel_1",40.66666666666666],PARAMETER["Standard_Parallel_2",41.03333333333333],'
    'PARAMETER["Latitude_Of_Origin",40.16666666666666],UNIT["Foot_US",0.3048006096012192]]')


@pytest.mark.parametrize("unit, shift_ft", [("Foot_US", 0.0), ("Foot", 0.4)])
def test_a_shapefile_prj_in_esri_wkt_us_or_international_feet(synthetic, unit, shift_ft):
    """A .prj as ArcGIS writes it (ESRI WKT) is honoured, with its unit: the same numbers in
    international feet (0.3048 m) lie 2 ppm of their distance from the false origin closer to
    it than in US survey feet (EPSG:2263): 0.4 ft at a northing of 200,000 ft (the false
    easting, in the same feet, moves with the easting)."""
    import pyogrio.raw
    from pyproj import Geod, Transformer
    folder = synthetic.parent
    esri = ESRI_2263
    if unit == "Foot":
        esri = esri.replace('UNIT["Foot_US",0.3048006096012192]', 'UNIT["Foot",0.3048]').replace("_Feet", "_Feet_Intl")
    for name in ("structures", "pipes"):
        meta, _, geoms, cols = pyogrio.raw.read(str(folder / f"{name}.geojson"))
        pyogrio.raw.write(str(folder / f"{name}.shp"), geometry=geoms, field_data=cols, fields=meta["fields"],
                          crs="EPSG:2263", geometry_type=meta["geometry_type"], driver="ESRI Shapefile")
        (folder / f"{name}.prj").write_text(esri)
    synthetic.write_text(synthetic.read_text().replace(".geojson", ".shp"))
    of1 = import_map(synthetic).network.structures["OF-1"]
    lon, lat = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True).transform(1_000_000, 200_000)
    _, _, metres = Geod(ellps="WGS84").inv(lon, lat, of1.lon, of1.lat)
    assert metres / 0.3048 == pytest.approx(shift_ft, abs=0.02)


def test_a_mapping_crs_differing_from_the_layers_own_is_said(synthetic):
    synthetic.write_text("crs: EPSG:2262\n" + synthetic.read_text())       # NY West; the layers say Long Island
    got = import_map(synthetic)
    msgs = [f.message for f in got.findings if f.kind == "crs_differs"]
    assert msgs == [f"{synthetic.parent / n}: the layer states EPSG:2263; crs: EPSG:2262 in the mapping is not used "
                    "for it" for n in ("structures.geojson", "pipes.geojson")]
    synthetic.write_text(synthetic.read_text().replace("crs: EPSG:2262", "crs: EPSG:2263"))
    assert not [f for f in import_map(synthetic).findings if f.kind == "crs_differs"]


def test_a_pipe_whose_ends_join_one_structure_is_reported(synthetic):
    """A stub drawn shorter than the tolerance at a manhole (a lateral's first feet, a
    digitising slip): both ends snap to MH-1; said, not kept as a loop on itself."""
    def stub(f):
        if f["properties"]["FACILITYID"] == "P-6":
            f["geometry"]["coordinates"] = [[1000000.5, 200300.5], [1000001, 200301]]

    _edit(synthetic.parent / "pipes.geojson", stub)
    got = import_map(synthetic)
    p6 = got.network.conveyances["P-6"]
    assert (p6.upstream, p6.downstream) == ("MH-1", None)
    assert [f.message for f in got.findings if f.feature == "P-6"] == [
        "pipe P-6: both its ends join structure MH-1; its end is left unconnected"]
    assert not got.network.graph().has_edge("MH-1", "MH-1")


def test_geojson_in_feet_without_a_crs_member(synthetic):
    """GeoJSON without a "crs" member is WGS 84 (RFC 7946), but many exports drop the member
    and keep State Plane feet: coordinates that cannot be degrees are refused, naming the
    file and a feature, unless the mapping gives the system (then read in it, and said)."""
    for name in ("structures.geojson", "pipes.geojson"):
        data = json.loads((synthetic.parent / name).read_text())
        del data["crs"]
        (synthetic.parent / name).write_text(json.dumps(data))
    with pytest.raises(NetworkError, match=r"structures.geojson: feature 0 lies at \(1000000, 200000\), not a "
                                           r"longitude and latitude as the layer's EPSG:4326 says; give the "
                                           r"layers' coordinate system with crs: in the mapping"):
        import_map(synthetic)
    synthetic.write_text("crs: EPSG:2263\n" + synthetic.read_text())
    got = import_map(synthetic)
    assert got.network.structures["OF-1"].lat == pytest.approx(40.71562, abs=1e-4)
    assert by_kind(got.findings, "unconnected_end") == ["P-6"]
    assert [f.message for f in got.findings if f.kind == "crs_differs"][0] == (
        f"{synthetic.parent / 'structures.geojson'}: the layer states EPSG:4326 but its coordinates are not "
        "degrees; read in crs: EPSG:2263 from the mapping")


def test_an_empty_layer_is_said(synthetic):
    pipes = json.loads((synthetic.parent / "pipes.geojson").read_text())
    (synthetic.parent / "pipes.geojson").write_text(json.dumps({**pipes, "features": []}))
    got = import_map(synthetic)
    assert len(got.network.structures) == 10 and not got.network.conveyances
    assert [f.message for f in got.findings if f.kind == "empty_layer"] == [
        f"{synthetic.parent / 'pipes.geojson'}: the layer has no features"]


def test_codes_in_another_case_or_padded(synthetic):
    """Hand-kept attribute tables mix "MH", "mh " and "Mh": a code matches the mapping's
    without regard to case or surrounding spaces (an exact match wins where two differ only
    in case)."""
    spelled = {"MH-1": "mh ", "MH-2": " Mh", "CB-1": "cb"}
    _edit(synthetic.parent / "structures.geojson", lambda f: f["properties"].update(
        TYPE=spelled.get(f["properties"]["FACILITYID"], f["properties"]["TYPE"])))
    _edit(synthetic.parent / "pipes.geojson", lambda f: f["properties"].update(
        FLOWDIR="against" if f["properties"]["FACILITYID"] == "P-5" else "With"))
    synthetic.write_text(synthetic.read_text() + "  flow_direction: FLOWDIR\n"
                         "  flow_directions: {WITH: with, AGAINST: against}\n")
    got = import_map(synthetic)
    net = got.network
    assert net.structures["MH-1"].kind is StructureKind.MANHOLE and net.structures["CB-1"].kind is StructureKind.CATCH_BASIN
    assert net.conveyances["P-5"].upstream == "MH-2"
    assert by_kind(got.findings, "unknown_type") == [] and by_kind(got.findings, "unknown_direction") == []


@pytest.mark.filterwarnings("ignore:Normalized/laundered field name")
def test_a_field_name_a_shapefile_cut_to_ten_characters(synthetic):
    """A shapefile keeps 10 characters of a field name (GDAL cuts INVERT_ELEVATION to
    INVERT_ELE on export): the refusal names the field it may be."""
    import pyogrio.raw
    folder = synthetic.parent
    meta, _, geoms, cols = pyogrio.raw.read(str(folder / "structures.geojson"))
    fields = ["INVERT_ELEVATION" if f == "INV" else f for f in meta["fields"]]
    pyogrio.raw.write(str(folder / "structures.shp"), geometry=geoms, field_data=cols, fields=fields,
                      crs="EPSG:2263", geometry_type="Point", driver="ESRI Shapefile")
    synthetic.write_text(synthetic.read_text().replace("structures.geojson", "structures.shp")
                         .replace("invert: INV\n", "invert: INVERT_ELEVATION\n"))
    with pytest.raises(NetworkError, match=r"structures.shp: the mapping names field 'INVERT_ELEVATION', which the "
                                           r"layer does not have \(it has FACILITYID, TYPE, INVERT_ELE, RECV; a "
                                           r"shapefile keeps 10 characters of a name: INVERT_ELE\?\)"):
        import_map(synthetic)


def test_a_line_of_one_point_is_kept_and_named(synthetic):
    """GEOS cannot build a line of one point (a digitising slip GDAL reads as it is)."""
    def one_point(f):
        if f["properties"]["FACILITYID"] == "P-6":
            f["geometry"]["coordinates"] = f["geometry"]["coordinates"][:1]

    _edit(synthetic.parent / "pipes.geojson", one_point)
    got = import_map(synthetic)
    assert len(got.network.conveyances) == 10 and got.network.conveyances["P-6"].upstream is None
    assert [f.message for f in got.findings if f.kind == "no_geometry"] == [
        f"{synthetic.parent / 'pipes.geojson'} feature 5: pipe P-6 has a shape that cannot be read "
        "(point array must contain 0 or >1 elements); kept, unconnected"]


def test_ids_of_mixed_types_in_one_column(synthetic):
    """A GeoJSON column holding 12, "12" and 12.0 (hand-edited files do) is text to GDAL, the
    real one written "12.0": all read as "12"-style ids; a zero-padded id keeps its zeros."""
    folder = synthetic.parent
    spelled = {"OF-1": 1, "MH-1": "2", "MH-2": 3.0, "CB-1": "004.0"}
    _edit(folder / "structures.geojson", lambda f: f["properties"].update(
        FACILITYID=spelled.get(f["properties"]["FACILITYID"], f["properties"]["FACILITYID"])))
    got = import_map(synthetic)
    assert {"1", "2", "3", "004"} <= set(got.network.structures)
    assert (got.network.conveyances["P-2"].upstream, got.network.conveyances["P-2"].downstream) == ("3", "2")


@pytest.mark.parametrize("field, scale, unit, hint", [
    ("DIAM", 1 / 12, "in", "DIAM: median 1.0 in, smaller than any storm pipe; is it in ft? (diameter_unit: ft)"),
    ("DIAM", 25.4, "in", "DIAM: median 304.8 in, larger than most storm pipes; is it in mm? (diameter_unit: mm)"),
    ("LEN", 0.3048, "ft", "LEN: the recorded lengths are 0.30 times the drawn ones; are they in m? (length_unit: m)"),
])
def test_a_unit_that_does_not_fit_the_numbers_is_said(synthetic, field, scale, unit, hint):
    """Diameters kept in feet or millimetres, lengths in metres, with the mapping's unit left
    at its default: read as mapped, and the likely unit said."""
    def scaled(f):
        f["properties"]["DIAM"] = f["properties"]["DIAM"] * (scale if field == "DIAM" else 1)
        if field == "LEN":
            (x0, y0), (x1, y1) = f["geometry"]["coordinates"]
            f["properties"]["LEN"] = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 * scale

    _edit(synthetic.parent / "pipes.geojson", scaled)
    if field == "LEN":
        synthetic.write_text(synthetic.read_text() + "  length: LEN\n")
    got = import_map(synthetic)
    assert [f.message for f in got.findings if f.kind == "units"] == [f"{synthetic.parent / 'pipes.geojson'}: {hint}"]


def test_units_that_fit_are_not_questioned(synthetic):
    assert not [f for f in import_map(synthetic).findings if f.kind == "units"]


@pytest.mark.parametrize("driver, name, fid", [("OpenFileGDB", "town.gdb", "OBJECTID"), ("GPKG", "town.gpkg", "fid")])
def test_the_object_id_of_a_geodatabase_or_geopackage_as_the_id(synthetic, driver, name, fid):
    """A file geodatabase's OBJECTID (a GeoPackage's fid) is its key column, not a field GDAL
    lists; a town whose FACILITYID is empty maps id: OBJECTID, and the pipes are keyed so."""
    target = synthetic.parent / name
    for layer, source in (("Structures", "structures.geojson"), ("Pipes", "pipes.geojson")):
        _write(target, synthetic.parent / source, driver, "EPSG:2263", layer)
    text = synthetic.read_text().replace("file: structures.geojson", f"file: {name}\n  layer: Structures") \
                                .replace("file: pipes.geojson", f"file: {name}\n  layer: Pipes")
    synthetic.write_text(text.replace("layer: Pipes\n  id: FACILITYID", f"layer: Pipes\n  id: {fid}"))
    got = import_map(synthetic)
    assert sorted(got.network.conveyances, key=int) == [str(n) for n in range(1, 11)]
    assert got.network.conveyances["1"].downstream == "OF-1"


@pytest.mark.filterwarnings("ignore:.crs. was not provided")
def test_degrees_under_a_projected_prj(synthetic):
    """The mirror slip: a shapefile of longitudes and latitudes with a State Plane .prj
    (copied from another layer). Every position would lie within feet of the projection's
    origin and every pipe end snap to one structure: refused, unless the mapping says degrees
    (read so, and said) or confirms the layer's system."""
    import pyogrio.raw
    import shapely
    from pyproj import Transformer
    folder = synthetic.parent
    tr = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True)
    for name in ("structures", "pipes"):
        meta, _, geoms, cols = pyogrio.raw.read(str(folder / f"{name}.geojson"))
        lonlat = [shapely.to_wkb(shapely.transform(shapely.from_wkb(g), lambda xy: __import__("numpy").column_stack(
            tr.transform(xy[:, 0], xy[:, 1])))) for g in geoms]
        pyogrio.raw.write(str(folder / f"{name}.shp"), geometry=lonlat, field_data=cols, fields=meta["fields"],
                          crs="EPSG:2263", geometry_type=meta["geometry_type"], driver="ESRI Shapefile")
    synthetic.write_text(synthetic.read_text().replace(".geojson", ".shp"))
    with pytest.raises(NetworkError, match=r"structures.shp: every feature lies within ±180, ±90 \(feature 0 at "
                                           r"\(-73.9\d+, 40.7\d+\)\): degrees, not the layer's EPSG:2263\? give crs: "
                                           r"EPSG:4326 in the mapping if so"):
        import_map(synthetic)
    text = synthetic.read_text()
    synthetic.write_text("crs: EPSG:4326\n" + text)
    got = import_map(synthetic)
    assert got.network.structures["OF-1"].lat == pytest.approx(40.71562, abs=1e-4)
    assert by_kind(got.findings, "unconnected_end") == ["P-6"]
    assert "read in crs: EPSG:4326 from the mapping" in [f.message for f in got.findings if f.kind == "crs_differs"][0]
    synthetic.write_text("crs: EPSG:2263\n" + text)                  # the town confirms the .prj: read as it says
    assert import_map(synthetic).network.structures["OF-1"].lat == pytest.approx(40.11, abs=0.01)   # 300 km off
