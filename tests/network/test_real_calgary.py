"""Import of real public data no one here wrote: a clip of the City of Calgary's storm sewer
(testdata/real/calgary/README.md: source, commit, licence), through a mapping file of the
city's own attribute names. What it reads, what the checks find in it, and upstream traces
checked against the city's own record of which outfall each pipe drains to (its OUTFALL
field, which the import does not read)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ms4watch.network.importer import import_map
from ms4watch.network.model import DirectionSource, StructureKind
from ms4watch.network.trace import walk

from .conftest import TESTDATA

CALGARY = TESTDATA / "real" / "calgary"


@pytest.fixture(scope="module")
def got():
    return import_map(CALGARY / "mapping.yaml")


@pytest.fixture(scope="module")
def city_pipes() -> dict[str, dict]:
    return {str(f["properties"]["OBJECTID"]): f["properties"]
            for f in json.loads((CALGARY / "storm_pipes.geojson").read_text())["features"]}


def test_every_feature_of_the_citys_four_layers_is_read(got):
    net = got.network
    assert (got.structures_read, got.lines_read) == (40, 38)
    assert Counter(s.kind for s in net.structures.values()) == {
        StructureKind.OUTFALL: 4, StructureKind.MANHOLE: 20, StructureKind.CATCH_BASIN: 16,
        StructureKind.JUNCTION: 4}                                   # the four implied where pipes meet
    assert {s.id: s.receiving_water for s in net.structures.values() if s.kind is StructureKind.OUTFALL} == {
        "B49": "BOW RIVER", "B50": "BOW RIVER", "B51": "BOW RIVER", "B52": "BOW RIVER"}
    rims = {str(f["properties"]["MH_NUMBER"]): f["properties"]["RIM_ELEV"]
            for f in json.loads((CALGARY / "manholes.geojson").read_text())["features"]}
    assert all(net.structures[m].rim_ft == pytest.approx(rim / 0.3048) for m, rim in rims.items())   # m, kept in ft
    assert sum(1 for c in net.conveyances.values() if c.upstream and c.downstream) == 23


def test_directions_come_from_the_inverts_except_where_the_city_recorded_none(got, city_pipes):
    """direction: inverts; the city's 0 is 'not recorded' (no_data: [0]), so those pipes keep
    their drawn direction. Which pipes those are is read from the city's file here."""
    unrecorded = {pid for pid, p in city_pipes.items() if not p["UP_INVERT"] or not p["DN_INVERT"]}
    by = {c.id: c.direction for c in got.network.conveyances.values()}
    assert {pid for pid, d in by.items() if d is DirectionSource.DRAWING} == unrecorded
    assert sorted(unrecorded) == ["121426", "170592", "18382", "32637", "63754", "88002"]
    assert Counter(by.values()) == {DirectionSource.INVERTS: 32, DirectionSource.DRAWING: 6}
    for c in got.network.conveyances.values():                      # from the higher invert to the lower
        if c.id not in unrecorded:
            ends = (city_pipes[c.id]["UP_INVERT"], city_pipes[c.id]["DN_INVERT"])
            assert (c.upstream_invert_ft, c.downstream_invert_ft) == (pytest.approx(max(ends) / 0.3048),
                                                                      pytest.approx(min(ends) / 0.3048))


def test_the_real_defects_the_checks_find(got):
    """The clip cuts pipes at its edges, the catch basins' leads are not in the pipe layer, and
    pipes meet end to end at bends with no point drawn: all reported, none dropped. No pipe
    flows uphill by the city's inverts, no loop, every outfall has its receiving water."""
    kinds = Counter(f.kind for f in got.findings)
    assert kinds == {"unconnected_end": 19, "isolated": 19, "no_outfall_downstream": 5, "implied_junction": 4}
    assert sorted({f.feature for f in got.findings if f.kind == "unconnected_end"}) == [
        "121203", "121426", "122250", "170201", "18382", "40551", "59", "63746", "63753", "63785", "6381", "66960",
        "86473", "88000", "99062"]
    assert "pipe 122250: its start touches no structure within 3 ft (nearest structure 14.3 ft away)" in [
        f.message for f in got.findings]
    isolated = sorted(f.feature for f in got.findings if f.kind == "isolated")
    assert isolated[:3] == ["502", "504", "571"] and len(isolated) == 19
    assert all(got.network.structures[s].kind is StructureKind.CATCH_BASIN for s in isolated[3:])   # all 16
    assert sorted(f.feature for f in got.findings if f.kind == "no_outfall_downstream") == [
        "505", "506", "572", "574", "576"]
    assert [f.message for f in got.findings if f.kind == "implied_junction"] == [
        "pipes 24783 (end), 63751 (start), 66961 (end) meet where the map has no structure; joined at junction "
        "J:24783:end",
        "pipes 32637 (start), 63754 (end) meet where the map has no structure; joined at junction J:32637:start",
        "pipes 63786 (start), 63787 (end) meet where the map has no structure; joined at junction J:63786:start",
        "pipes 88002 (start), 121908 (start) meet where the map has no structure; joined at junction "
        "J:88002:start"]


def test_outfall_b50s_upstream_trace_is_the_citys_own_b50_system(got, city_pipes):
    steps = walk(got.network, "B50")
    assert [(s.structure, s.via, s.branch) for s in steps] == [
        ("B50", None, "1"), ("J:32637:start", "32637", "1"), ("501", "63754", "1"), ("J:24783:end", "63751", "1"),
        ("512", "66961", "1.1"), ("627", "24783", "1")]
    assert round(steps[-1].distance_ft) == 812
    assert {city_pipes[s.via]["OUTFALL"] for s in steps if s.via} == {"B50"}    # the city says the same


def test_outfall_b51s_trace_crosses_two_pipes_the_city_files_under_b53(got, city_pipes):
    """Connected by their ends (and, 170249, by its inverts) to B51's system, two pipes carry
    the city's OUTFALL B53, an outfall outside the clip: a discrepancy for the town to check,
    shown here as found."""
    steps = walk(got.network, "B51")
    assert [s.structure for s in steps] == ["B51", "578", "579", "619", "620", "575", "573", "570", "J:88002:start"]
    attributed = {s.via: city_pipes[s.via]["OUTFALL"] for s in steps if s.via}
    assert {pid for pid, of in attributed.items() if of != "B51"} == {"170249", "170592"}
    assert attributed["170249"] == attributed["170592"] == "B53"
