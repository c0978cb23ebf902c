"""The drawn storm-sewer map's data: one GeoJSON FeatureCollection, in WGS 84 longitude and
latitude (the network is kept so: ``network.crs`` converted it at import), that
``static/networkmap.js`` draws with Leaflet. Every feature has ``layer`` (``pipe``,
``structure``, ``station``, ``site``) and what its colour and popup need; a case's trace
marks the suspect pipes, the structures visited (flow present or absent) and the next one
to open. A property not known (None) or not so (False) is left out; positions are rounded
to 6 decimals (0.1 m). Features without a position are counted, not drawn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..network.model import Network, StructureKind


@dataclass(frozen=True)
class Place:
    """A registry point on the map: a station or a construction site, with its status."""
    id: str
    name: str
    lat: float
    lon: float
    status: str              # a station's state css ("ok", "alerting"…); a site's "active" / "inactive"
    href: str


@dataclass(frozen=True)
class TraceMarks:
    suspect_pipes: frozenset[str] = frozenset()
    visits: dict[str, str] = field(default_factory=dict)      # structure -> "present" / "absent" (latest)
    next_structure: str | None = None
    outfall: str | None = None


@dataclass(frozen=True)
class MapData:
    geojson: dict[str, Any]
    drawn: int
    unplaced: int            # structures and pipes without a position
    bounds: tuple[float, float, float, float] | None      # south, west, north, east [degrees]


def build(net: Network | None, *, monitored: Iterable[str] = (), with_cases: Iterable[str] = (),
          stations: Iterable[Place] = (), sites: Iterable[Place] = (), trace: TraceMarks | None = None) -> MapData:
    """``monitored``: map outfalls with a station of the registry; ``with_cases``: map outfalls
    with an open case."""
    trace = trace or TraceMarks()
    monitored, with_cases = set(monitored), set(with_cases)
    feats: list[dict[str, Any]] = []
    unplaced = 0
    lats: list[float] = []
    lons: list[float] = []
    if net is not None:
        for c in net.conveyances.values():
            if len(c.coords) < 2:
                unplaced += 1
                continue
            coords = [[round(lon, 6), round(lat, 6)] for lon, lat in c.coords]      # 0.1 m
            feats.append({"type": "Feature", "geometry": {"type": "LineString", "coordinates": coords},
                          "properties": _set({"layer": "pipe", "id": c.id, "kind": c.kind.value,
                                              "diameter_in": c.diameter_in, "length_ft": c.length_ft,
                                              "from": c.upstream, "to": c.downstream,
                                              "suspect": c.id in trace.suspect_pipes})})
            if c.id in trace.suspect_pipes:
                lons += [p[0] for p in coords]
                lats += [p[1] for p in coords]
        for s in net.structures.values():
            if s.lon is None or s.lat is None:
                unplaced += 1
                continue
            status = s.kind.value
            if s.kind is StructureKind.OUTFALL:
                status = "case" if s.id in with_cases else "monitored" if s.id in monitored else "outfall"
            props = {"layer": "structure", "id": s.id, "kind": s.kind.value, "status": status,
                     "receiving_water": s.receiving_water, "visit": trace.visits.get(s.id),
                     "next": s.id == trace.next_structure}
            feats.append({"type": "Feature", "geometry": {"type": "Point",
                                                          "coordinates": [round(s.lon, 6), round(s.lat, 6)]},
                          "properties": _set(props)})
            if trace.suspect_pipes and (s.id in trace.visits or props["next"] or s.id == trace.outfall):
                lons.append(s.lon)
                lats.append(s.lat)
    for layer, places in (("station", stations), ("site", sites)):
        for p in places:
            feats.append({"type": "Feature", "geometry": {"type": "Point",
                                                          "coordinates": [round(p.lon, 6), round(p.lat, 6)]},
                          "properties": {"layer": layer, "id": p.id, "name": p.name, "status": p.status,
                                         "href": p.href}})
    if not lats:       # no trace to frame: the whole map
        for f in feats:
            g = f["geometry"]
            pts = g["coordinates"] if g["type"] == "LineString" else [g["coordinates"]]
            lons += [p[0] for p in pts]
            lats += [p[1] for p in pts]
    bounds = (min(lats), min(lons), max(lats), max(lons)) if lats else None
    return MapData({"type": "FeatureCollection", "features": feats}, len(feats), unplaced, bounds)


def _set(props: dict[str, Any]) -> dict[str, Any]:
    """Only what is said (no None, no False): the page carries every feature of the town."""
    return {k: v for k, v in props.items() if v is not None and v is not False}


__all__ = ["MapData", "Place", "TraceMarks", "build"]
