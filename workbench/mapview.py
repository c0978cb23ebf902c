"""The status board's map: the stations that have coordinates, placed by the Web Mercator
projection on an SVG (no network: a plain background and a scale bar), or over map tiles
when ``web.map_tiles`` names a tile server (the same projection, so points and tiles agree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

TILE = 256
EARTH_M_PER_PX_Z0 = 156_543.033_92     # Web Mercator metres per pixel at the equator, zoom 0


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    item: object


@dataclass(frozen=True)
class Tile:
    url: str
    x: float
    y: float


@dataclass(frozen=True)
class MapView:
    width: int
    height: int
    zoom: int
    points: list[Point]
    tiles: list[Tile]
    scale_px: float          # the scale bar's length [px]
    scale_label: str


def _world(lat: float, lon: float, z: int) -> tuple[float, float]:
    """Web Mercator pixel coordinates at zoom ``z``."""
    lat = max(min(lat, 85.0511), -85.0511)
    n = TILE * 2 ** z
    x = (lon + 180.0) / 360.0 * n
    s = math.sin(math.radians(lat))
    y = (0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * n
    return x, y


def build(located: Sequence[tuple[float, float, object]], *, width: int = 640, height: int = 360,
          tiles: str | None = None, max_zoom: int = 17) -> MapView | None:
    """``located``: (lat, lon, item). None when nothing has coordinates."""
    if not located:
        return None
    pad = 28
    zoom = 0
    for z in range(max_zoom, -1, -1):
        xs, ys = zip(*(_world(lat, lon, z) for lat, lon, _ in located))
        if max(xs) - min(xs) <= width - 2 * pad and max(ys) - min(ys) <= height - 2 * pad:
            zoom = z
            break
    xs, ys = zip(*(_world(lat, lon, zoom) for lat, lon, _ in located))
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    ox, oy = cx - width / 2, cy - height / 2
    points = []
    seen: dict[tuple[int, int], int] = {}
    for (x, y), (_, _, item) in zip(zip(xs, ys), located):
        key = (round(x), round(y))
        n = seen[key] = seen.get(key, -1) + 1      # stations at one place (a pair's two probes) side by side
        points.append(Point(round(x - ox + 20 * n, 1), round(y - oy + 18 * n, 1), item))
    out_tiles = []
    if tiles:
        n = 2 ** zoom
        for ty in range(int(oy // TILE), int((oy + height) // TILE) + 1):
            for tx in range(int(ox // TILE), int((ox + width) // TILE) + 1):
                if 0 <= ty < n:
                    url = tiles.replace("{z}", str(zoom)).replace("{x}", str(tx % n)).replace("{y}", str(ty))
                    out_tiles.append(Tile(url, tx * TILE - ox, ty * TILE - oy))
    mean_lat = sum(lat for lat, _, _ in located) / len(located)
    m_per_px = EARTH_M_PER_PX_Z0 * math.cos(math.radians(mean_lat)) / 2 ** zoom
    metres = _nice(m_per_px * width / 4)
    label = f"{metres / 1000:g} km" if metres >= 1000 else f"{metres:g} m"
    return MapView(width, height, zoom, points, out_tiles, metres / m_per_px, label)


def _nice(v: float) -> float:
    mag = 10 ** math.floor(math.log10(v))
    return max(m * mag for m in (1, 2, 5) if m * mag <= v)


__all__ = ["MapView", "Point", "Tile", "build"]
