"""The drawn map's network encoding (workbench/networkmap.py): what has no position is
counted, not drawn; the gzip bytes are the JSON; the tag follows the content."""

from __future__ import annotations

import gzip
import json

from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Structure, StructureKind
from ms4watch.workbench.networkmap import encode_network, overlay
from tests.support.town_network import main_st_network


def test_features_without_a_position_are_counted_not_drawn():
    net = main_st_network()
    net.structures["J-1"] = Structure("J-1", StructureKind.JUNCTION, None, None)      # a SWMM node without --crs
    net.conveyances["C-1"] = Conveyance("C-1", ConveyanceKind.PIPE, "J-1", "MH-4", DirectionSource.DRAWING, 50)
    got = encode_network(net)
    doc = json.loads(got.json)
    assert (got.drawn, got.unplaced, doc["unplaced"]) == (11, 2, 2)
    assert "J-1" not in doc["structures"]["id"] and "C-1" not in doc["pipes"]["id"]
    assert json.loads(gzip.decompress(got.gzip)) == doc


def test_the_tag_changes_with_the_network_and_only_with_it():
    a, b = encode_network(main_st_network()), encode_network(main_st_network())
    assert a.etag == b.etag and a.etag.startswith('"') and a.etag.endswith('"')
    moved = main_st_network()
    s = moved.structures["MH-4"]
    moved.structures["MH-4"] = Structure(s.id, s.kind, s.lon + 0.001, s.lat)
    assert encode_network(moved).etag != a.etag


def test_without_a_network_or_places_there_is_nothing_to_frame():
    page = overlay(None, None, network_url=None)
    assert (page["network"], page["bounds"], page["places"]) == (None, None, [])
