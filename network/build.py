"""From what a reader found to a network: each drawn end snapped to the nearest structure
within the tolerance, each conveyance directed, its direction's source kept. Drawn ends that
touch no structure but meet each other (a bend or a wye with no point on the map) are
joined at a junction of their own (:data:`IMPLIED`), reported."""

from __future__ import annotations

import math
from collections import defaultdict

from .mapping import FlowDirection
from .model import Conveyance, DirectionSource, Finding, Network, Structure
from .raw import RawMap

EARTH_RADIUS_M = 6_371_008.8     # mean radius (IUGG); only for snapping distances of a few feet
FT_PER_M = 1 / 0.3048
NEAR_FT = 10.0                   # a miss names the nearest structure this close
IMPLIED = "implied: pipe ends meet here"     # the source of a junction the map does not draw


class _Snapper:
    """Nearest structure to a point within a tolerance, on a grid of cells at least
    :data:`NEAR_FT` wide (so a miss can say how far the nearest one is) in a local
    equirectangular frame (exact enough over a town for distances of feet)."""

    def __init__(self, structures: list[Structure], tolerance_ft: float):
        located = [(s.lon, s.lat, s.id) for s in structures if s.lat is not None and s.lon is not None]
        self.lat0 = math.radians(sum(lat for _, lat, _ in located) / len(located)) if located else 0.0
        self.tolerance_m = tolerance_ft / FT_PER_M
        self.cell_m = max(tolerance_ft, NEAR_FT) / FT_PER_M
        self.grid: dict[tuple[int, int], list[tuple[float, float, str]]] = defaultdict(list)
        for lon, lat, sid in located:
            x, y = self._xy(lon, lat)
            self.grid[self._cell(x, y)].append((x, y, sid))

    def _xy(self, lon: float, lat: float) -> tuple[float, float]:
        return (EARTH_RADIUS_M * math.radians(lon) * math.cos(self.lat0), EARTH_RADIUS_M * math.radians(lat))

    def _cell(self, x: float, y: float) -> tuple[int, int]:
        return (math.floor(x / self.cell_m), math.floor(y / self.cell_m))

    def nearest(self, lon: float, lat: float) -> tuple[str | None, float | None]:
        """The nearest structure within the tolerance, and the distance to the nearest found [ft]."""
        x, y = self._xy(lon, lat)
        cx, cy = self._cell(x, y)
        best, best_d = None, math.inf
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for sx, sy, sid in self.grid.get((cx + dx, cy + dy), ()):
                    d = math.hypot(sx - x, sy - y)
                    if d < best_d:
                        best, best_d = sid, d
        if best is None or best_d > self.tolerance_m:
            return None, None if best is None else best_d * FT_PER_M
        return best, best_d * FT_PER_M


def build(raw: RawMap, tolerance_ft: float, direction: str = "drawing") -> tuple[Network, list[Finding]]:
    """The network and what could not be connected. ``direction``: ``drawing`` (the map's
    drawn order, the flow-direction field where mapped, inverts only checked) or
    ``inverts`` (from the higher invert to the lower where both are known)."""
    from pyproj import Geod
    geod = Geod(ellps="WGS84")
    findings = list(raw.findings)
    net = Network(structures={s.id: s for s in raw.structures})
    snapper = _Snapper(raw.structures, tolerance_ft)
    ends: dict[str, list[str | None]] = {}
    loose: list[tuple[str, int, float, float, float | None]] = []   # pipe, 0/-1, lon, lat, nearest structure ft
    for line in raw.lines:
        start, end = line.start_node, line.end_node
        for which, named in (("start", start), ("end", end)):
            if named is not None and named not in net.structures:
                findings.append(Finding("unconnected_end", line.id, f"pipe {line.id}: its {which} names structure "
                                        f"{named}, which the map does not have"))
        start = start if start in net.structures else None
        end = end if end in net.structures else None
        if line.snap_ends and line.coords:
            for i, named in ((0, line.start_node), (-1, line.end_node)):
                if named is None:
                    sid, dist = snapper.nearest(*line.coords[i])
                    if sid is None:
                        loose.append((line.id, i, *line.coords[i], dist))
                    elif i == 0:
                        start = sid
                    else:
                        end = sid
        if start is not None and start == end:      # a stub shorter than the tolerance: not a loop on itself
            findings.append(Finding("unconnected_end", line.id, f"pipe {line.id}: both its ends join structure "
                                    f"{start}; its end is left unconnected"))
            end = None
        ends[line.id] = [start, end]
    _join_loose_ends(net, loose, ends, tolerance_ft, findings)
    for line in raw.lines:
        start, end = ends[line.id]
        s_inv = line.start_invert_ft if line.start_invert_ft is not None else _invert(net, start)
        e_inv = line.end_invert_ft if line.end_invert_ft is not None else _invert(net, end)
        reverse, source = False, DirectionSource.DRAWING
        if line.flow in (FlowDirection.WITH, FlowDirection.AGAINST):
            reverse, source = line.flow is FlowDirection.AGAINST, DirectionSource.ATTRIBUTE
        elif direction == "inverts" and s_inv is not None and e_inv is not None and s_inv != e_inv:
            reverse, source = s_inv < e_inv, DirectionSource.INVERTS
        length = line.length_ft
        if length is None and len(line.coords) > 1:
            lons, lats = zip(*line.coords)
            length = geod.line_length(lons, lats) * FT_PER_M
        coords = tuple(reversed(line.coords)) if reverse else line.coords
        up, down, up_inv, down_inv = (end, start, e_inv, s_inv) if reverse else (start, end, s_inv, e_inv)
        net.conveyances[line.id] = Conveyance(
            id=line.id, kind=line.kind, upstream=up, downstream=down, direction=source, length_ft=length,
            diameter_in=line.diameter_in, material=line.material, upstream_invert_ft=up_inv,
            downstream_invert_ft=down_inv, coords=coords, source=line.source)
    return net, findings


def _invert(net: Network, sid: str | None) -> float | None:
    return net.structures[sid].invert_ft if sid is not None and sid in net.structures else None


def _join_loose_ends(net: Network, loose: list[tuple[str, int, float, float, float | None]],
                     ends: dict[str, list[str | None]], tolerance_ft: float, findings: list[Finding]) -> None:
    """Ends of two or more pipes within the tolerance of each other (and of no structure)
    meet at a junction ``J:<pipe>:<start|end>`` (named after the first of them, so an
    unchanged map keeps the id); an end meeting no other is reported unconnected."""
    from .model import StructureKind
    points = [Structure(str(k), StructureKind.JUNCTION, lon, lat) for k, (_, _, lon, lat, _) in enumerate(loose)]
    grid = _Snapper(points, tolerance_ft)
    parent = list(range(len(loose)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k, (_, _, lon, lat, _) in enumerate(loose):
        x, y = grid._xy(lon, lat)
        cx, cy = grid._cell(x, y)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for ox, oy, other in grid.grid.get((cx + dx, cy + dy), ()):
                    if math.hypot(ox - x, oy - y) <= grid.tolerance_m:
                        parent[root(int(other))] = root(k)
    groups: dict[int, list[int]] = defaultdict(list)
    for k in range(len(loose)):
        groups[root(k)].append(k)
    which = {0: "start", -1: "end"}
    order = {line_id: n for n, line_id in enumerate(ends)}
    for k in range(len(loose)):
        members = groups.get(k)
        if members is None:
            continue
        members.sort(key=lambda m: (order[loose[m][0]], -loose[m][1]))
        if len({loose[m][0] for m in members}) < 2:
            for m in members:
                pid, i, _, _, dist = loose[m]
                near = f" (nearest structure {dist:.1f} ft away)" if dist is not None else ""
                findings.append(Finding("unconnected_end", pid, f"pipe {pid}: its {which[i]} touches no structure "
                                        f"within {tolerance_ft:g} ft{near}"))
            continue
        first = loose[members[0]]
        jid = f"J:{first[0]}:{which[first[1]]}"
        lon = sum(loose[m][2] for m in members) / len(members)
        lat = sum(loose[m][3] for m in members) / len(members)
        net.structures[jid] = Structure(jid, StructureKind.JUNCTION, lon, lat, source=IMPLIED)
        for m in members:
            ends[loose[m][0]][0 if loose[m][1] == 0 else 1] = jid
        findings.append(Finding("implied_junction", jid, "pipes " + ", ".join(
            f"{loose[m][0]} ({which[loose[m][1]]})" for m in members) + f" meet where the map has no structure; "
            f"joined at junction {jid}"))
