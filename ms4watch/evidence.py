"""Readings behind an incident, for the chart and CSV attached to its email.

``StoreReadings(path, registry)(incident, start, end)`` returns a DataFrame indexed by time
with one column per series, its unit in its name, as the email notifier expects:
``flow_gpm`` + ``rain_in`` + ``threshold_gpm`` for a dry-weather flow; ``turbidity_up_ntu``,
``turbidity_down_ntu`` + ``threshold_ntu`` (upstream + max(5 NTU, 10 %)) for a turbidity
contrast; ``rain_in`` for storms and inspections.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from .contract.registry import Registry
from .contract.timeutil import to_ns


class StoreReadings:
    def __init__(self, path: str | Path, registry: Registry):
        self.path = Path(path)
        self.registry = registry

    def _series(self, station: str, quantity: str, start: datetime, end: datetime) -> pd.Series:
        with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10) as db:
            rows = db.execute("SELECT time_ns, value FROM readings WHERE station=? AND quantity=? "
                              "AND time_ns BETWEEN ? AND ? AND value IS NOT NULL ORDER BY time_ns",
                              (station, quantity, to_ns(start), to_ns(end))).fetchall()
        if not rows:
            return pd.Series(dtype=float)
        t, v = zip(*rows)
        return pd.Series(v, index=pd.to_datetime(list(t), utc=True), dtype=float).groupby(level=0).last()

    def __call__(self, incident: dict[str, Any], start: datetime, end: datetime) -> pd.DataFrame:
        event = incident.get("event") or {}
        kind = incident.get("kind")
        reg, rules = self.registry, self.registry.rules
        cols: dict[str, pd.Series] = {}
        if kind == "dry_weather_flow":
            outfall = reg.outfall(event.get("outfall") or incident["subject"])
            cols["flow_gpm"] = self._series(outfall.id, "flow", start, end)
            cols["rain_in"] = self._series(outfall.rain_gauges[0], "rain", start, end)
            cols["threshold_gpm"] = pd.Series(outfall.flow_floor_gpm, index=cols["flow_gpm"].index)
        elif kind == "turbidity_contrast":
            pid = event.get("pair") or incident["subject"]
            pair = next(p for p in reg.turbidity_pairs if p.id == pid)
            up = self._series(pair.upstream, "turbidity", start, end)
            cols["turbidity_up_ntu"] = up
            cols["turbidity_down_ntu"] = self._series(pair.downstream, "turbidity", start, end)
            cols["threshold_ntu"] = up + (up * rules.turbidity_fraction).clip(lower=rules.turbidity_delta_ntu)
        else:
            gauge = event.get("gauge") or incident.get("subject")
            if gauge in {g.id for g in reg.rain_gauges}:
                cols["rain_in"] = self._series(gauge, "rain", start, end)
        frame = pd.DataFrame({k: v for k, v in cols.items() if len(v)})
        frame.index.name = "time"
        return frame
