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
