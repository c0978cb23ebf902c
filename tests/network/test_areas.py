"""Drainage areas and parcels: each area to the structure it drains to (named, or the one
inside it), each parcel to the inlet it drains to (by the area it lies in, else the nearest
catch basin or inlet within a tolerance), everything not placed reported. The synthetic
network's areas and parcels (testdata/make_synthetic.py lists them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ms4watch.network.areas import parcels_draining_to
from ms4watch.network.errors import NetworkError
from ms4watch.network.importer import import_map
from ms4watch.network.store import NetworkStore

from .conftest import TESTDATA

FT2_PER_USFT2 = (1200 / 3937 / 0.3048) ** 2       # the boxes are drawn in US survey feet


@pytest.fixture
def town(tmp_path: Path) -> Path:
    for name in ("structures.geojson", "pipes.geojson", "areas.geojson", "parcels.geojson", "mapping_areas.yaml"):
        shutil.copy(TESTDATA / name, tmp_path / name)
    return tmp_path / "mapping_areas.yaml"


def test_each_area_drains_to_the_structure_it_names_or_holds(town: Path):
    got = import_map(town)
    assert [(a.id, a.structure, a.how) for a in got.areas] == [
        ("DA-1", "CB-1", "attribute"), ("DA-2", "CB-2", "inside"), ("DA-3", None, None), ("DA-4", None, None),
        ("DA-5", None, None), ("DA-6", "OF-1", "inside")]
    assert got.areas[0].area_sqft == pytest.approx(200 * 200 * FT2_PER_USFT2, rel=1e-4)
    assert got.areas[5].area_sqft == pytest.approx(200 * 500 * FT2_PER_USFT2, rel=1e-4)
    assert [(f.feature, f.message) for f in got.findings if f.kind == "drainage_area_unattached"] == [
        ("DA-3", "drainage area DA-3 holds MH-4, MH-5, none of them downstream of the others; name the structure "
                 "it drains to in OUTLET"),
        ("DA-4", "drainage area DA-4 holds no structure and names none"),
        ("DA-5", "drainage area DA-5 names structure CB-9, which the map does not have")]


def test_each_parcel_drains_by_its_area_else_to_the_nearest_inlet(town: Path):
    got = import_map(town)
    placed = [(p.id, p.structure, p.drainage_area, p.how, None if p.distance_ft is None else round(p.distance_ft, 1))
              for p in got.parcels]
    assert placed == [("PA-1", "CB-1", "DA-1", "drainage_area", None), ("PA-2", "CB-2", "DA-2", "drainage_area", None),
                      ("PA-3", "CB-3", None, "nearest_inlet", 60.0), ("PA-4", None, None, None, None),
                      ("PA-5", None, "DA-3", None, None)]
    assert [(f.feature, f.message) for f in got.findings if f.kind == "parcel_unplaced"] == [
        ("PA-4", "parcel PA-4 lies in no drainage area and no catch basin or inlet is within 100 ft"),
        ("PA-5", "parcel PA-5 lies in drainage area DA-3, which drains to no known structure, and no catch basin "
                 "or inlet is within 100 ft")]


def test_the_parcels_draining_to_a_set_of_structures(town: Path):
    got = import_map(town)
    assert [p.id for p in parcels_draining_to(got.parcels, {"CB-1", "CB-2", "MH-1"})] == ["PA-1", "PA-2"]
    assert [p.id for p in parcels_draining_to(got.parcels, {"CB-3", "OF-2"})] == ["PA-3"]


def test_the_parcels_of_a_suspect_reach(town: Path):
    from ms4watch.network.areas import reach_entries
    from ms4watch.network.bisect import plan
    got = import_map(town)
    net = got.network
    p = plan(net, "OF-1")                            # every pipe upstream of OF-1; DA-6 drains to OF-1 itself
    entries = reach_entries(net, p.suspect_pipes, "OF-1")
    assert entries == {"OF-1", "MH-1", "MH-2", "MH-3", "MH-4", "MH-5", "CB-1", "CB-2"}
    assert [x.id for x in parcels_draining_to(got.parcels, entries)] == ["PA-1", "PA-2"]
    p = plan(net, "OF-1", flow=["MH-2"])             # the flow is above MH-2: CB-1's parcel is cleared
    assert [x.id for x in parcels_draining_to(got.parcels, reach_entries(net, p.suspect_pipes, "OF-1",
                                                                         ["MH-2"]))] == ["PA-2"]
    p = plan(net, "OF-1", no_flow=["MH-2"])          # dry at MH-2: left P-1 and P-3 (CB-1's), and P-2 from MH-2
    assert reach_entries(net, p.suspect_pipes, "OF-1", (), ["MH-2"]) == {"OF-1", "MH-1", "CB-1"}


def test_areas_and_parcels_are_kept_and_replaced(town: Path, tmp_path: Path):
    got = import_map(town)
    with NetworkStore(tmp_path / "data") as store:
        store.replace(got.network, got.findings, str(town))
        store.replace_areas(got.areas, got.parcels)
        assert [(a.id, a.structure, a.how) for a in store.drainage_areas()] == [
            (a.id, a.structure, a.how) for a in got.areas]
        assert store.parcels() == got.parcels
        unchanged = store.replace_areas(got.areas, got.parcels)
        assert not unchanged.any
        store.replace_areas([], [])
        assert store.drainage_areas() == [] and store.parcels() == []


def test_a_reimport_reports_what_changed_in_the_areas_and_parcels(town: Path, tmp_path: Path):
    import json
    got = import_map(town)
    with NetworkStore(tmp_path / "data") as store:
        store.replace_areas(got.areas, got.parcels)
        areas = json.loads((town.parent / "areas.geojson").read_text())
        areas["features"][0]["properties"]["OUTLET"] = "MH-1"          # DA-1 now drains to MH-1
        del areas["features"][3]                                       # DA-4 gone
        (town.parent / "areas.geojson").write_text(json.dumps(areas))
        again = import_map(town)
        ch = store.replace_areas(again.areas, again.parcels)
    assert ch.removed == ["drainage area DA-4"] and ch.added == []
    assert ch.changed == ["drainage area DA-1: structure CB-1 -> MH-1", "parcel PA-1: structure CB-1 -> MH-1"]


def test_a_mapping_naming_a_missing_field_of_the_area_layer_is_refused(town: Path):
    town.write_text(town.read_text().replace("structure: OUTLET", "structure: OUTFALL_ID"))
    with pytest.raises(NetworkError, match=r"areas.geojson: the mapping names field 'OUTFALL_ID', which the layer "
                                           r"does not have \(it has DA_ID, OUTLET\)"):
        import_map(town)


def test_a_parcel_layer_of_points_is_refused_naming_the_feature(town: Path):
    (town.parent / "parcels.geojson").write_text(
        '{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"SBL": "X-1"}, '
        '"geometry": {"type": "Point", "coordinates": [-73.8, 40.7]}}]}')
    with pytest.raises(NetworkError, match=r"parcels.geojson: parcel X-1: a Point, expected a polygon"):
        import_map(town)


def test_parcels_without_drainage_areas_go_to_the_nearest_inlet(town: Path):
    text = town.read_text()
    town.write_text(text[:text.index("drainage_areas:")] + text[text.index("parcels:"):])
    got = import_map(town)
    assert got.areas == []
    assert [(p.id, p.structure, p.how) for p in got.parcels] == [
        ("PA-1", "CB-1", "nearest_inlet"), ("PA-2", "CB-2", "nearest_inlet"), ("PA-3", "CB-3", "nearest_inlet"),
        ("PA-4", None, None), ("PA-5", None, None)]
