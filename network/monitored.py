"""The registry's monitored outfalls on the town's map: each attached to the map's outfall
of the same id, else to the nearest map outfall within a distance, else reported as not
on the map. The first step of "the outfall inventory is the map's" (issue 24)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .model import Network, StructureKind

NEAR_FT = 50.0     # a registry position and a map outfall this close are taken as one outfall


class How(str, Enum):
    ID = "id"
    POSITION = "position"
    MISSING = "missing"


@dataclass(frozen=True)
class Attachment:
    registry_id: str
    map_id: str | None
    how: How
    distance_ft: float | None = None


def attach(net: Network, registry_outfalls: list[tuple[str, float | None, float | None]],
           near_ft: float = NEAR_FT) -> list[Attachment]:
    """``registry_outfalls``: (id, lat, lon) of each monitored outfall."""
    from pyproj import Geod
    geod = Geod(ellps="WGS84")
    outfalls = [s for s in net.structures.values() if s.kind is StructureKind.OUTFALL]
    out = []
    for rid, lat, lon in registry_outfalls:
        s = net.structures.get(rid)
        if s is not None and s.kind is StructureKind.OUTFALL:
            out.append(Attachment(rid, rid, How.ID))
            continue
        best, best_ft = None, None
        if lat is not None and lon is not None:
            for o in outfalls:
                if o.lat is None or o.lon is None:
                    continue
                ft = geod.inv(lon, lat, o.lon, o.lat)[2] / 0.3048
                if ft <= near_ft and (best_ft is None or ft < best_ft):
                    best, best_ft = o.id, ft
        out.append(Attachment(rid, best, How.POSITION, best_ft) if best else Attachment(rid, None, How.MISSING))
    return out


INLET_NEAR_FT = 500.0    # a site farther than this from every inlet is reported as not placed
INLETS = (StructureKind.CATCH_BASIN, StructureKind.INLET)


@dataclass(frozen=True)
class SiteDrainage:
    site_id: str
    inlet: str | None            # the nearest catch basin or inlet (None: no position, or none near)
    distance_ft: float | None
    outfalls: tuple[str, ...]    # the outfalls that inlet drains to


def site_drainage(net: Network, sites: list[tuple[str, float | None, float | None]],
                  near_ft: float = INLET_NEAR_FT) -> list[SiteDrainage]:
    """Each construction site (id, lat, lon) to the nearest catch basin or inlet within
    ``near_ft`` and the outfalls downstream of it. A first reading: the nearest inlet is not
    always the one a site's runoff reaches (the town can correct it when it can say so)."""
    from pyproj import Geod
    from .trace import Way, walk
    geod = Geod(ellps="WGS84")
    inlets = [s for s in net.structures.values() if s.kind in INLETS and s.lat is not None and s.lon is not None]
    out = []
    for sid, lat, lon in sites:
        best, best_ft = None, None
        if lat is not None and lon is not None:
            for s in inlets:
                ft = geod.inv(lon, lat, s.lon, s.lat)[2] / 0.3048
                if ft <= near_ft and (best_ft is None or ft < best_ft):
                    best, best_ft = s.id, ft
        outfalls: tuple[str, ...] = ()
        if best is not None:
            outfalls = tuple(sorted(st.structure for st in walk(net, best, Way.DOWN)
                                    if st.kind is StructureKind.OUTFALL))
        out.append(SiteDrainage(sid, best, best_ft, outfalls))
    return out
