"""Small builders for alert tests: a registry, readings as a table or CanonicalReadings."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from ms4watch.alerts.replay import ReadingTable
from ms4watch.contract.registry import parse_registry
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
MIN = 60 * 10**9
UNITS = {"rain": "in", "flow": "gpm", "turbidity": "NTU", "battery": "V"}

REGISTRY = """
municipality: testtown
timezone: America/New_York
rain_gauges:
  - {id: RG-1}
outfalls:
  - {id: OF-1, name: Outfall 1, rain_gauges: [RG-1], flow_floor_gpm: 0.5}
turbidity_pairs:
  - {id: TP-1, upstream: TU-1, downstream: TD-1, construction_site: CS-1}
construction_sites:
  - {id: CS-1, name: Site 1, rain_gauges: [RG-1], active_from: 2026-05-01}
"""


def registry(text: str = REGISTRY, rules: str = ""):
    return parse_registry(text + (("rules:\n" + rules) if rules else ""))


def ns(dt: datetime) -> int:
    return to_ns(dt)


def at(minutes: float) -> int:
    """UTC ns ``minutes`` after T0."""
    return to_ns(T0) + int(round(minutes * MIN))


def reading(t_ns: int, station: str, quantity: str, value: float, flags: str = "") -> CanonicalReading:
    return CanonicalReading(t_ns, station, "LOG-" + station, quantity, quantity, value, UNITS[quantity], flags, 0)


def table(readings: list[CanonicalReading]) -> ReadingTable:
    return ReadingTable(np.array([r.time_ns for r in readings], dtype=np.int64),
                        np.array([r.station for r in readings], dtype=object),
                        np.array([r.quantity for r in readings], dtype=object),
                        np.array([r.value for r in readings], dtype=float),
                        np.array([r.flags for r in readings], dtype=object))


def series_readings(station: str, quantity: str, start_min: float, values, step_min: float = 1.0):
    return [reading(at(start_min + i * step_min), station, quantity, float(v)) for i, v in enumerate(values)]


def minutes(td: timedelta) -> float:
    return td.total_seconds() / 60
