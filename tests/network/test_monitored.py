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
