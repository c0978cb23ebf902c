"""The network out again: GeoJSON read back through a mapping file gives the same network;
GeoPackage and KML hold both layers."""

from __future__ import annotations

from pathlib import Path

import pyogrio
import pytest

from ms4watch.network.errors import NetworkError
from ms4watch.network.export import export
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
