"""Construction sites on the town's map: the inlets each drains to and the outfalls those
reach (``network.sites``), and the value kept current as the map is re-imported
(``network.current``). Hand-built networks: ``tests/support/town_network.py``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ms4watch.contract.registry import parse_registry
from ms4watch.network.current import TownReaches
from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Structure, StructureKind
from ms4watch.network.store import NetworkStore
from ms4watch.network.sites import Found, OutfallReached, site_reaches
from tests.support.town_network import PLACES, main_st_network, store_network

REGISTRY = """
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1}]
outfalls:
  - {id: OF-12, name: Main St, rain_gauges: [RG-1]}
  - {id: DS-3, name: Canal, rain_gauges: [RG-1], structure: OF-14}
construction_sites:
  - {id: CS-1, name: Hillcrest, rain_gauges: [RG-1], active_from: 2026-04-01, drains_to: [CB-1]}
  - {id: CS-2, name: Oak Ridge, rain_gauges: [RG-1], active_from: 2026-04-01, drains_to: [CB-9]}
  - {id: CS-3, name: Split, rain_gauges: [RG-1], active_from: 2026-04-01, drains_to: [CB-2]}
  - {id: CS-4, name: Nowhere, rain_gauges: [RG-1], active_from: 2026-04-01}
  - {id: CS-5, name: Near CB-1, rain_gauges: [RG-1], active_from: 2026-04-01, lat: 42.81645, lon: -73.94400}
"""


def _diverted():
    """Main St, plus CB-2 -> MH-5, which overflows both ways: to MH-1 (thence OF-12) and to
    OF-14 (Canal Creek), a diversion the map draws as two pipes out of one manhole."""
    net = main_st_network()
    net.structures["CB-2"] = Structure("CB-2", StructureKind.CATCH_BASIN, -73.9452, 42.8167)
    net.structures["MH-5"] = Structure("MH-5", StructureKind.MANHOLE, -73.9455, 42.8165)
    net.structures["OF-14"] = Structure("OF-14", StructureKind.OUTFALL, -73.9460, 42.8160,
                                        receiving_water="Canal Creek")
    for pid, up, down in (("P6", "CB-2", "MH-5"), ("P7", "MH-5", "MH-1"), ("P8", "MH-5", "OF-14")):
        net.conveyances[pid] = Conveyance(pid, ConveyanceKind.PIPE, up, down, DirectionSource.DRAWING, 100.0)
    return net


def _reaches(net, version="v1"):
    reg = parse_registry(REGISTRY)
    return site_reaches(net, reg.construction_sites, reg.outfalls, version=version)


def test_each_site_to_its_inlets_and_the_outfalls_they_reach_with_their_receiving_water():
    got = _reaches(_diverted())
    cs1 = got.of("CS-1")
    assert cs1 is not None
    assert (cs1.inlets, cs1.found, cs1.not_on_map) == (("CB-1",), Found.NAMED, ())
    assert cs1.outfalls == (OutfallReached("OF-12", "Mohawk River", ("OF-12",)),)


def test_a_site_named_to_an_inlet_not_on_the_map_reaches_nothing_and_says_which():
    cs2 = _reaches(_diverted()).of("CS-2")
    assert cs2 is not None
    assert (cs2.inlets, cs2.outfalls, cs2.not_on_map, cs2.found) == ((), (), ("CB-9",), Found.NAMED)


def test_a_site_whose_inlet_reaches_two_outfalls_names_both_and_the_station_at_each():
    cs3 = _reaches(_diverted()).of("CS-3")
    assert cs3 is not None
    assert cs3.outfalls == (OutfallReached("OF-12", "Mohawk River", ("OF-12",)),
                            OutfallReached("OF-14", "Canal Creek", ("DS-3",)))   # DS-3 sits at OF-14 (structure:)


def test_a_site_with_no_position_and_no_drains_to_is_found_nowhere():
    cs4 = _reaches(_diverted()).of("CS-4")
    assert cs4 is not None
    assert (cs4.inlets, cs4.outfalls, cs4.found, cs4.distance_ft) == ((), (), Found.NONE, None)


def test_a_located_site_without_drains_to_takes_the_nearest_inlet():
    cs5 = _reaches(_diverted()).of("CS-5")
    assert cs5 is not None and cs5.found is Found.NEAREST
    assert cs5.inlets == ("CB-1",) and cs5.distance_ft == pytest.approx(18.2, abs=0.5)   # 0.00005 deg of latitude
    assert [o.id for o in cs5.outfalls] == ["OF-12"]


def test_the_sites_reaching_a_monitored_outfall_by_its_registry_id():
    got = _reaches(_diverted())
    assert [s.site_id for s in got.reaching("OF-12")] == ["CS-1", "CS-3", "CS-5"]
    assert [s.site_id for s in got.reaching("DS-3")] == ["CS-3"]           # the registry's id, the map's OF-14
    assert got.reaching("OF-99") == ()


def test_the_value_cannot_be_changed_in_place():
    got = _reaches(_diverted())
    with pytest.raises(TypeError):
        got.sites["CS-1"] = got.sites["CS-2"]      # type: ignore[index]
    with pytest.raises(AttributeError):
        got.version = "v2"                         # type: ignore[misc]


def test_no_map_imported_is_no_value(tmp_path):
    reg = parse_registry(REGISTRY)
    assert TownReaches(tmp_path, reg).current() is None


def test_a_reimported_map_with_the_inlet_moved_is_read_again(tmp_path):
    """CS-5 sits by CB-1 (no drains_to: the nearest inlet). The town re-imports its map with
    CB-1 moved 0.01 deg north (over 3,000 ft) and a new CB-3 where it was, piped to OF-14:
    the next read says CB-3 and OF-14. An unchanged map is not read again."""
    reg = parse_registry(REGISTRY)
    store_network(tmp_path, _diverted())
    town = TownReaches(tmp_path, reg)
    first = town.current()
    assert first is not None and first.of("CS-5").inlets == ("CB-1",)    # type: ignore[union-attr]
    assert town.current() is first                                        # the same map: the same value
    with NetworkStore(tmp_path) as reader:                                # a page reading the map changes nothing
        reader.load()
        assert town.current() is first

    net = _diverted()
    lat, lon = PLACES["CB-1"]
    net.structures["CB-1"] = replace(net.structures["CB-1"], lat=lat + 0.01)
    net.structures["CB-3"] = Structure("CB-3", StructureKind.CATCH_BASIN, lon, lat)
    net.conveyances["P9"] = Conveyance("P9", ConveyanceKind.PIPE, "CB-3", "OF-14", DirectionSource.DRAWING, 300.0)
    store_network(tmp_path, net)
    again = town.current()
    assert again is not None and again is not first and again.version != first.version
    cs5 = again.of("CS-5")
    assert cs5 is not None and cs5.inlets == ("CB-3",)
    assert cs5.outfalls == (OutfallReached("OF-14", "Canal Creek", ("DS-3",)),)
