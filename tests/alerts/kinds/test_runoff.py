"""Where a site's runoff goes, in the alerts' words (alerts/kinds/runoff.py): the turbidity
contrast and the inspection items name the site's inlets and the outfalls they reach; a
dry-weather flow names the construction sites upstream of its outfall (an IDDE lead). From
the town's map (network.sites), as typed values; no map, no words."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from ms4watch.alerts.kinds import describe, words_of
from ms4watch.alerts.kinds.runoff import of_site, site_words
from ms4watch.network.sites import Found, OutfallReached, SiteReach, SiteReaches, site_reaches
from tests.support.notify_peers import REGISTRY_YAML, registry
from tests.support.town_network import main_st_network

BRONX = OutfallReached("OF-12", "Bronx River", ("OF-12",))


def _site(*, inlets=("CB-7",), outfalls=(BRONX,), found=Found.NAMED, not_on_map=(), distance_ft=None):
    return SiteReach("CS-7", tuple(inlets), tuple(outfalls), found, tuple(not_on_map), distance_ft)


@pytest.mark.parametrize("reach, located, words", [
    (_site(), False, "drains to CB-7, reaching outfall OF-12 (Bronx River)"),
    (_site(inlets=("CB-1", "CB-3"), outfalls=(BRONX, OutfallReached("OF-14", None, ("DS-3",)))), False,
     "drains to CB-1 and CB-3, reaching outfalls OF-12 (Bronx River) and OF-14 (station DS-3)"),
    (_site(outfalls=(OutfallReached("OF-14", "Canal Creek", ("DS-3", "DS-4")),)), False,
     "drains to CB-7, reaching outfall OF-14 (Canal Creek; stations DS-3, DS-4)"),
    (_site(outfalls=()), False, "drains to CB-7, reaching no outfall on the town's map"),
    (_site(inlets=(), outfalls=(), not_on_map=("CB-9",)), False,
     "drains to CB-9 (not on the town's map): the outfall it reaches is not known"),
    (_site(not_on_map=("CB-9",)), False,
     "drains to CB-7 and CB-9 (CB-9 not on the town's map), reaching outfall OF-12 (Bronx River)"),
    (_site(found=Found.NEAREST, distance_ft=94.3), True,
     "nearest inlet CB-7 (94 ft away; no drains_to in the registry), reaching outfall OF-12 (Bronx River)"),
    (_site(inlets=(), outfalls=(), found=Found.NONE), False,
     "not known: the registry gives the site no drains_to and no position"),
    (_site(inlets=(), outfalls=(), found=Found.NONE), True,
     "not known: no drains_to in the registry and no catch basin or inlet within 500 ft on the town's map"),
])
def test_a_sites_runoff_in_words(reach, located, words):
    assert site_words(reach, located=located) == words


def test_the_sms_has_the_outfall_ids_and_the_webhook_typed_fields():
    r = of_site(_site(outfalls=(BRONX, OutfallReached("OF-14", None, ()))), located=False)
    assert r.sms == "to OF-12,OF-14"
    assert r.as_json() == {
        "label": "Runoff", "text": r.text, "sms": "to OF-12,OF-14", "site": "CS-7", "inlets": ["CB-7"],
        "found": "named", "not_on_map": [], "distance_ft": None,
        "outfalls": [{"id": "OF-12", "receiving_water": "Bronx River", "monitored": ["OF-12"]},
                     {"id": "OF-14", "receiving_water": None, "monitored": []}]}
    assert of_site(_site(outfalls=()), located=False).sms == ""


TOWN = REGISTRY_YAML.replace("active_from: 2026-01-01}", "active_from: 2026-01-01, drains_to: [CB-1]}")


def _town():
    reg = registry(TOWN)
    return reg, site_reaches(main_st_network(), reg.construction_sites, reg.outfalls, version="v1")


@pytest.mark.parametrize("kind, subject", [("turbidity_contrast", "TP-1"), ("inspection_due", "CS-7"),
                                           ("inspection_overdue", "CS-7")])
def test_the_site_kinds_say_where_the_sites_runoff_goes(kind, subject):
    reg, reaches = _town()
    w = describe(reg, kind, subject, reaches)
    assert w.runoff is not None and w.runoff.site is not None
    assert w.runoff.text == "drains to CB-1, reaching outfall OF-12 (Mohawk River)"
    assert words_of(reg, kind, subject, reaches)["runoff"]["outfalls"][0]["id"] == "OF-12"


def test_dry_weather_flow_names_the_construction_sites_upstream_only_if_any():
    reg, reaches = _town()
    w = describe(reg, "dry_weather_flow", "OF-12", reaches)
    assert w.runoff is not None
    assert (w.runoff.label, w.runoff.text, w.runoff.sms) == (
        "Construction sites upstream", "CS-7 (Elm St site, works from 2026-01-01), through CB-1", "sites CS-7")
    assert [s.site_id for s in w.runoff.sites] == ["CS-7"]
    assert describe(reg, "dry_weather_flow", "OF-14", reaches).runoff is None      # OF-14 is not on this map
    assert "runoff" not in words_of(reg, "dry_weather_flow", "OF-14", reaches)


def test_a_finished_site_upstream_is_still_a_lead_and_says_when_its_works_ended():
    """A site whose works ended is still named (a new building's wrong connection is a classic
    illicit discharge), with the dates the registry gives, so the reader sees which are finished."""
    reg = registry(TOWN.replace("active_from: 2026-01-01,", "active_from: 2026-01-01, active_to: 2026-05-31,"))
    reaches = site_reaches(main_st_network(), reg.construction_sites, reg.outfalls, version="v1")
    w = describe(reg, "dry_weather_flow", "OF-12", reaches)
    assert w.runoff is not None
    assert w.runoff.text == "CS-7 (Elm St site, works 2026-01-01 to 2026-05-31), through CB-1"


def test_no_map_no_site_or_another_kind_changes_nothing():
    reg, reaches = _town()
    for kind, subject in (("turbidity_contrast", "TP-1"), ("inspection_due", "CS-7"), ("dry_weather_flow", "OF-12")):
        assert describe(reg, kind, subject).runoff is None
        assert "runoff" not in words_of(reg, kind, subject)
        assert words_of(reg, kind, subject) == {k: v for k, v in words_of(reg, kind, subject, reaches).items()
                                                 if k != "runoff"}
    assert describe(reg, "storm", "RG-1", reaches).runoff is None
    no_site = registry(TOWN.replace(", construction_site: CS-7", ""))
    assert describe(no_site, "turbidity_contrast", "TP-1", reaches).runoff is None
    empty = SiteReaches("v0", MappingProxyType({}), MappingProxyType({}))
    assert describe(reg, "inspection_due", "CS-7", empty).runoff is None          # a site the value lacks
