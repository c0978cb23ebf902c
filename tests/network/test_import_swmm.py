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
    assert ("not_imported", "[SUBCATCHMENTS]") in kinds              # 8 rows, said, not dropped
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
