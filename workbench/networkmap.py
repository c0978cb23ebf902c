"""The drawn storm-sewer map's data, in two parts that ``static/networkmap.js`` draws with
Leaflet, in WGS 84 longitude and latitude (the network is kept so: ``network.crs``
converted it at import):

- the **network** (``encode_network``): every placed structure and pipe as parallel arrays
  (ids, kinds as indices into a small table, positions rounded to 6 decimals: 0.1 m), made
  once per import, kept as JSON and gzip bytes with a tag, and fetched by the page
  (``/network/map/network.json``, revalidated by its ETag). About a fifth of the size of one
  GeoJSON feature per structure and pipe, and no per-feature objects for Leaflet to build.
- the **overlay** (``overlay``) in the page, per request: which outfalls are monitored or
  have an open case, a case's trace (the suspect pipes, the structures visited, flow present
  or absent, the next one to open), the registry's stations and construction sites, and the
  bounds to frame.

Features without a position are counted, not drawn."""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..network.model import Network

DECIMALS = 6        # degrees: 0.1 m


@dataclass(frozen=True)
class Place:
    """A registry point on the map: a station or a construction site, with its status."""
    id: str
    name: str
    lat: float
    lon: float
    status: str              # a station's state css ("ok", "alerting"…); a site's "active" / "inactive"
    href: str
    note: str | None = None  # where it is on the network: "on the map at MH-1", "drains to CB-1, reaching OF-12"


@dataclass(frozen=True)
class TraceMarks:
    suspect_pipes: frozenset[str] = frozenset()
    visits: dict[str, str] = field(default_factory=dict)      # structure -> "present" / "absent" (latest)
    next_structure: str | None = None
    outfall: str | None = None


Bounds = tuple[float, float, float, float]          # south, west, north, east [degrees]


@dataclass(frozen=True)
class EncodedNetwork:
    json: bytes              # UTF-8
    gzip: bytes
    etag: str                # quoted, as the header carries it
    drawn: int               # structures and pipes with a position
    unplaced: int            # structures and pipes without one
    bounds: Bounds | None


def _r(v: float) -> float:
    return round(v, DECIMALS)


def _num(v: float | None) -> float | None:
    return None if v is None else round(v, 2)


def encode_network(net: Network) -> EncodedNetwork:
    kinds: dict[str, int] = {}
    s_id: list[str] = []
    s_kind: list[int] = []
    s_lon: list[float] = []
    s_lat: list[float] = []
    water: dict[str, str] = {}
    unplaced = 0
    for s in net.structures.values():
        if s.lon is None or s.lat is None:
            unplaced += 1
            continue
        s_id.append(s.id)
        s_kind.append(kinds.setdefault(s.kind.value, len(kinds)))
        s_lon.append(_r(s.lon))
        s_lat.append(_r(s.lat))
        if s.receiving_water:
            water[s.id] = s.receiving_water
    pkinds: dict[str, int] = {}
    p: dict[str, list[Any]] = {k: [] for k in ("id", "kind", "from", "to", "diameter_in", "length_ft", "coords")}
    for c in net.conveyances.values():
        if len(c.coords) < 2:
            unplaced += 1
            continue
        p["id"].append(c.id)
        p["kind"].append(pkinds.setdefault(c.kind.value, len(pkinds)))
        p["from"].append(c.upstream)
        p["to"].append(c.downstream)
        p["diameter_in"].append(_num(c.diameter_in))
        p["length_ft"].append(_num(c.length_ft))
        p["coords"].append([_r(v) for pt in c.coords for v in pt])
    lons = s_lon + [v for xy in p["coords"] for v in xy[0::2]]
    lats = s_lat + [v for xy in p["coords"] for v in xy[1::2]]
    bounds = (min(lats), min(lons), max(lats), max(lons)) if lats else None
    doc = {"structures": {"id": s_id, "kinds": list(kinds), "kind": s_kind, "lon": s_lon, "lat": s_lat,
                          "receiving_water": water},
           "pipes": {"kinds": list(pkinds), **p}, "unplaced": unplaced, "bounds": bounds}
    raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    return EncodedNetwork(raw, gzip.compress(raw, compresslevel=6, mtime=0),
                          '"' + hashlib.sha256(raw).hexdigest()[:32] + '"', len(s_id) + len(p["id"]), unplaced,
                          bounds)


def overlay(net: Network | None, network_bounds: Bounds | None, *, network_url: str | None,
            monitored: Iterable[str] = (), with_cases: Iterable[str] = (), stations: Iterable[Place] = (),
            sites: Iterable[Place] = (), trace: TraceMarks | None = None) -> dict[str, Any]:
    """The page's part: ``monitored``: map outfalls with a station of the registry;
    ``with_cases``: map outfalls with an open case. Framed on the case's trace where there
    is one (its suspect pipes, the structures visited and next, the outfall), else on the
    whole network and the places."""
    trace = trace or TraceMarks()
    places = [{"layer": layer, "id": p.id, "name": p.name, "lat": _r(p.lat), "lon": _r(p.lon), "status": p.status,
               "href": p.href, **({"note": p.note} if p.note else {})}
              for layer, group in (("station", stations), ("site", sites)) for p in group]
    lats: list[float] = []
    lons: list[float] = []
    if net is not None and trace.suspect_pipes:
        for pid in trace.suspect_pipes:
            c = net.conveyances.get(pid)
            for lon, lat in (c.coords if c is not None else ()):
                lons.append(_r(lon))
                lats.append(_r(lat))
        for sid in {*trace.visits, trace.next_structure, trace.outfall} - {None}:
            s = net.structures.get(sid)       # type: ignore[arg-type]
            if s is not None and s.lat is not None and s.lon is not None:
                lons.append(_r(s.lon))
                lats.append(_r(s.lat))
    if not lats:           # no trace to frame: the whole map
        lats = [_r(p.lat) for group in (stations, sites) for p in group]
        lons = [_r(p.lon) for group in (stations, sites) for p in group]
        if network_bounds is not None:
            lats += [network_bounds[0], network_bounds[2]]
            lons += [network_bounds[1], network_bounds[3]]
    return {"network": network_url, "bounds": [min(lats), min(lons), max(lats), max(lons)] if lats else None,
            "outfalls": {"monitored": sorted(monitored), "case": sorted(with_cases)},
            "trace": {"suspect": sorted(trace.suspect_pipes), "visits": dict(sorted(trace.visits.items())),
                      "next": trace.next_structure},
            "places": places}


__all__ = ["Bounds", "EncodedNetwork", "Place", "TraceMarks", "encode_network", "overlay"]
