"""The registry's monitored outfalls attached to the map's."""

from __future__ import annotations

import pytest
from pyproj import Transformer

from ms4watch.network.importer import import_map
from ms4watch.network.monitored import How, attach


def test_by_id_by_position_or_missing(synthetic):
    net = import_map(synthetic).network
    to_ll = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True)
    lon, lat = to_ll.transform(1001000 + 30, 200000)          # 30 ftUS east of OF-2
    far_lon, far_lat = to_ll.transform(1005000, 200000)
    got = attach(net, [("OF-1", None, None), ("DS-2", lat, lon), ("DS-9", far_lat, far_lon), ("DS-8", None, None)])
    assert [(a.registry_id, a.map_id, a.how) for a in got] == [
        ("OF-1", "OF-1", How.ID), ("DS-2", "OF-2", How.POSITION), ("DS-9", None, How.MISSING),
        ("DS-8", None, How.MISSING)]
    assert got[1].distance_ft == pytest.approx(30, abs=0.1)


def test_a_manhole_of_the_same_id_is_not_an_outfall(synthetic):
    got = attach(import_map(synthetic).network, [("MH-1", None, None)])
    assert got[0].how is How.MISSING


def test_a_site_drains_through_its_nearest_inlet_to_the_outfall(synthetic):
    from ms4watch.network.monitored import site_drainage
    net = import_map(synthetic).network
    to_ll = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True)
    lon, lat = to_ll.transform(1000050, 201080)               # 94 ftUS from CB-2 (1000000, 201000)
    far_lon, far_lat = to_ll.transform(1003000, 205000)
    got = site_drainage(net, [("CS-1", lat, lon), ("CS-2", far_lat, far_lon), ("CS-3", None, None)])
    assert [(g.site_id, g.inlet, g.outfalls) for g in got] == [
        ("CS-1", "CB-2", ("OF-1",)), ("CS-2", None, ()), ("CS-3", None, ())]
    assert got[0].distance_ft == pytest.approx((50 ** 2 + 80 ** 2) ** 0.5, rel=1e-3)


def test_a_station_named_at_a_structure_attaches_there_before_id_or_position(synthetic):
    """The registry's ``structure:`` wins: a meter in a manhole upstream of the outfall, or an
    outfall the map spells differently; a name the map lacks is said, not guessed around."""
    net = import_map(synthetic).network
    got = attach(net, [("DS-5", None, None), ("OF-1", None, None), ("DS-6", None, None)],
                 named={"DS-5": "MH-2", "OF-1": "OF-2", "DS-6": "MH-99"})
    assert [(a.registry_id, a.map_id, a.how) for a in got] == [
        ("DS-5", "MH-2", How.NAMED), ("OF-1", "OF-2", How.NAMED), ("DS-6", None, How.UNKNOWN_STRUCTURE)]
    assert got[2].named == "MH-99"


def test_a_site_named_draining_to_inlets_reaches_their_outfalls_by_the_downstream_trace(synthetic):
    from ms4watch.network.monitored import site_drainage
    net = import_map(synthetic).network
    to_ll = Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True)
    lon, lat = to_ll.transform(1000050, 201080)               # nearest CB-2, but the town says CB-1 and CB-3
    got = site_drainage(net, [("CS-1", lat, lon), ("CS-2", None, None), ("CS-3", None, None)],
                        named={"CS-1": ("CB-1", "CB-3"), "CS-2": ("CB-3",), "CS-3": ("CB-9", "CB-3")})
    assert [(g.site_id, g.inlets, g.how, g.outfalls, g.unknown) for g in got] == [
        ("CS-1", ("CB-1", "CB-3"), "named", ("OF-1", "OF-2"), ()),
        ("CS-2", ("CB-3",), "named", ("OF-2",), ()),
        ("CS-3", ("CB-3",), "named", ("OF-2",), ("CB-9",))]
    assert got[0].distance_ft is None
