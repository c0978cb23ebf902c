"""Where each construction site's runoff goes on the town's map: the inlets it drains to
(the registry's ``drains_to:``, else the nearest catch basin or inlet: ``monitored.site_drainage``),
the outfalls those reach by the downstream trace, each with its receiving water and the
registry's stations attached to it. One immutable value per map import, which the alerts'
words read (alerts/kinds/runoff.py): "drains to CB-7, reaching outfall OF-12 (Bronx River)".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping, Sequence

from .model import Network

if TYPE_CHECKING:
    from ..contract.registry import ConstructionSite, Outfall


class Found(str, Enum):
    """How a site's inlets were found."""
    NAMED = "named"        # the registry's drains_to:
    NEAREST = "nearest"    # the nearest catch basin or inlet within monitored.INLET_NEAR_FT
    NONE = "none"          # no drains_to, and no position or no inlet near it


@dataclass(frozen=True)
class OutfallReached:
    id: str                              # the map's outfall
    receiving_water: str | None          # as the map states it
    monitored: tuple[str, ...] = ()      # the registry's outfalls (stations) attached to it


@dataclass(frozen=True)
class SiteReach:
    site_id: str
    inlets: tuple[str, ...]              # on the map
    outfalls: tuple[OutfallReached, ...]
    found: Found
    not_on_map: tuple[str, ...] = ()     # inlets drains_to names that the map lacks
    distance_ft: float | None = None     # to the nearest inlet (Found.NEAREST) [ft]


@dataclass(frozen=True)
class SiteReaches:
    """Every construction site of one town on one import of its map (``version``)."""
    version: str
    sites: Mapping[str, SiteReach]           # site id -> its reach (read-only)
    monitored: Mapping[str, str]             # registry outfall id -> the map outfall it is attached to

    def of(self, site_id: str) -> SiteReach | None:
        return self.sites.get(site_id)

    def reaching(self, outfall_id: str) -> tuple[SiteReach, ...]:
        """The sites whose runoff reaches the registry's outfall ``outfall_id`` (through the map
        outfall it is attached to), in site-id order; none when it is not on the map."""
        map_id = self.monitored.get(outfall_id)
        if map_id is None:
            return ()
        return tuple(s for _, s in sorted(self.sites.items()) if any(o.id == map_id for o in s.outfalls))


def site_reaches(net: Network, sites: Sequence["ConstructionSite"], outfalls: Sequence["Outfall"], *,
                 version: str) -> SiteReaches:
    """The town's construction sites on ``net`` (pure: no I/O). ``outfalls``: the registry's,
    attached to the map as ``monitored.attach`` does (``structure:``, the same id, the position)."""
    from .monitored import attach, site_drainage
    attached = {a.registry_id: a.map_id for a in attach(net, [(o.id, o.lat, o.lon) for o in outfalls],
                                                        named={o.id: o.structure for o in outfalls if o.structure})
                if a.map_id is not None}
    stations: dict[str, list[str]] = {}
    for rid, mid in attached.items():
        stations.setdefault(mid, []).append(rid)
    out: dict[str, SiteReach] = {}
    for d in site_drainage(net, [(s.id, s.lat, s.lon) for s in sites],
                           named={s.id: tuple(s.drains_to) for s in sites if s.drains_to}):
        reached = tuple(OutfallReached(o, net.structures[o].receiving_water, tuple(sorted(stations.get(o, ()))))
                        for o in d.outfalls)
        out[d.site_id] = SiteReach(d.site_id, d.inlets, reached, Found(d.how), d.unknown,
                                   d.distance_ft if d.how == Found.NEAREST.value else None)
    return SiteReaches(version, MappingProxyType(out), MappingProxyType(attached))


__all__ = ["Found", "OutfallReached", "SiteReach", "SiteReaches", "site_reaches"]
