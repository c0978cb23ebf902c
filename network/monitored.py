"""The registry's monitored outfalls on the town's map: each attached to the structure the
registry names (``structure:``), else to the map's outfall of the same id, else to the
nearest map outfall within a distance, else reported as not on the map; and each
construction site to the inlets it drains to (``drains_to:``, else the nearest) and the
outfalls those reach by the downstream trace. "The outfall inventory is the map's"
(issue 24)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from typing import TYPE_CHECKING

from .model import Conveyance, Network, StructureKind

if TYPE_CHECKING:
    from ..compliance.report import MapOutfall

NEAR_FT = 50.0     # a registry position and a map outfall this close are taken as one outfall


class How(str, Enum):
    NAMED = "named"                         # the registry's structure:
    UNKNOWN_STRUCTURE = "unknown_structure"  # the registry names a structure the map lacks
    ID = "id"
    POSITION = "position"
    MISSING = "missing"


@dataclass(frozen=True)
class Attachment:
    registry_id: str
    map_id: str | None
    how: How
    distance_ft: float | None = None
    named: str | None = None        # the structure the registry names


def attach(net: Network, registry_outfalls: list[tuple[str, float | None, float | None]],
           near_ft: float = NEAR_FT, named: dict[str, str] | None = None) -> list[Attachment]:
    """``registry_outfalls``: (id, lat, lon) of each monitored outfall; ``named``: registry
    id -> the map structure the registry names for it (any kind: a meter may sit in a manhole)."""
    from pyproj import Geod
    geod = Geod(ellps="WGS84")
    outfalls = [s for s in net.structures.values() if s.kind is StructureKind.OUTFALL]
    out = []
    named = named or {}
    for rid, lat, lon in registry_outfalls:
        if named.get(rid):
            sid = named[rid]
            out.append(Attachment(rid, sid, How.NAMED, named=sid) if sid in net.structures
                       else Attachment(rid, None, How.UNKNOWN_STRUCTURE, named=sid))
            continue
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
    inlets: tuple[str, ...]      # named in the registry (those on the map), else the nearest catch basin or inlet
    how: str                     # "named", "nearest" or "none" (no position, or no inlet near)
    distance_ft: float | None    # to the nearest inlet
    outfalls: tuple[str, ...]    # the outfalls those inlets drain to, by the downstream trace
    unknown: tuple[str, ...] = ()    # named inlets the map lacks

    @property
    def inlet(self) -> str | None:
        return self.inlets[0] if self.inlets else None


def site_drainage(net: Network, sites: list[tuple[str, float | None, float | None]],
                  near_ft: float = INLET_NEAR_FT,
                  named: dict[str, tuple[str, ...]] | None = None) -> list[SiteDrainage]:
    """Each construction site (id, lat, lon) to the inlets the registry names for it
    (``named``: site id -> structure ids, ``drains_to:``), else to the nearest catch basin or
    inlet within ``near_ft``, and the outfalls downstream of them. The nearest inlet is a
    first reading, not always the one a site's runoff reaches: the town says so with
    ``drains_to``."""
    from pyproj import Geod
    from .trace import Way, walk
    geod = Geod(ellps="WGS84")
    named = named or {}
    inlets = [s for s in net.structures.values() if s.kind in INLETS and s.lat is not None and s.lon is not None]
    out = []
    for sid, lat, lon in sites:
        best, best_ft = None, None
        how = "none"
        unknown: tuple[str, ...] = ()
        chosen: tuple[str, ...] = ()
        if named.get(sid):
            how = "named"
            chosen = tuple(i for i in named[sid] if i in net.structures)
            unknown = tuple(i for i in named[sid] if i not in net.structures)
        elif lat is not None and lon is not None and inlets:
            # every inlet in one call (pyproj takes sequences): a town's 10,000 in milliseconds
            dists = geod.inv([lon] * len(inlets), [lat] * len(inlets), [s.lon for s in inlets],
                             [s.lat for s in inlets])[2]
            for s, m in zip(inlets, dists):
                ft = m / 0.3048
                if ft <= near_ft and (best_ft is None or ft < best_ft):
                    best, best_ft = s.id, ft
            if best is not None:
                how, chosen = "nearest", (best,)
        outfalls = sorted({st.structure for i in chosen for st in walk(net, i, Way.DOWN)
                           if st.kind is StructureKind.OUTFALL})
        out.append(SiteDrainage(sid, chosen, how, best_ft, tuple(outfalls), unknown))
    return out


def inventory(net: Network, registry_outfalls: list[tuple[str, float | None, float | None]],
              named: dict[str, str] | None = None) -> list["MapOutfall"]:
    """Every outfall of the map, for the annual report's inventory: its receiving water,
    position (to 6 decimals: 0.1 m), the widest pipe into it, and the registry stations (id, lat, lon; ``named``
    as for :func:`attach`) attached to it."""
    from ..compliance.report import MapOutfall
    stations: dict[str, list[str]] = {}
    for a in attach(net, registry_outfalls, named=named):
        if a.map_id is not None:
            stations.setdefault(a.map_id, []).append(a.registry_id)
    into: dict[str, Conveyance] = {}
    for c in net.conveyances.values():
        if c.downstream is not None and (c.downstream not in into
                                         or (c.diameter_in or 0) > (into[c.downstream].diameter_in or 0)):
            into[c.downstream] = c
    out = []
    for s in net.structures.values():
        if s.kind is StructureKind.OUTFALL:
            pipe = into.get(s.id)
            lat, lon = (round(s.lat, 6), round(s.lon, 6)) if s.lat is not None and s.lon is not None else (None, None)
            out.append(MapOutfall(s.id, s.receiving_water, lat, lon, pipe.diameter_in if pipe else None,
                                  pipe.material if pipe else None, tuple(sorted(stations.get(s.id, ())))))
    return out
