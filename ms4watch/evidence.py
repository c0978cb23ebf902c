"""Readings behind an incident, for the chart and CSV attached to its email.

``StoreReadings(source, registry)(incident, start, end)`` returns a DataFrame indexed by
time with one column per series, its unit in its name, as the email notifier expects:
``flow_gpm`` + ``rain_in`` + ``threshold_gpm`` for a dry-weather flow (one ``rain_<gauge>_in``
column per gauge when the outfall has several); ``turbidity_up_ntu``,
``turbidity_down_ntu`` + ``threshold_ntu`` (upstream + max(5 NTU, 10 %)) for a turbidity
contrast; ``rain_in`` for storms and inspections.

``source`` is the store's readings port (:class:`~ms4watch.ingest.sinks.base.ReadingsSource`),
so an InfluxDB deployment gets the same chart as the embedded SQLite store. The frame says
which values it holds in ``frame.attrs["values"]``: ``raw``, or ``corrected`` when the source
applies drift corrections (:class:`~ms4watch.ingest.corrections.CorrectedReadings`); a CSV of
corrected values says so in its first line.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd

from .contract.registry import Registry
from .ingest.sinks.base import ReadingsSource


class StoreReadings:
    def __init__(self, source: ReadingsSource, registry: Registry):
        self.source = source
        self.registry = registry

    def _series(self, station: str, quantity: str, start: datetime, end: datetime) -> pd.Series:
        rows = [r for r in self.source.readings(station, quantity, start, end) if r.value is not None]
        if not rows:
            return pd.Series(dtype=float)
        return pd.Series([r.value for r in rows], index=pd.to_datetime([r.time_ns for r in rows], utc=True),
                         dtype=float).groupby(level=0).last()

    def __call__(self, incident: dict[str, Any], start: datetime, end: datetime) -> pd.DataFrame:
        event = incident.get("event") or {}
        kind = incident.get("kind")
        reg, rules = self.registry, self.registry.rules
        cols: dict[str, pd.Series] = {}
        if kind == "dry_weather_flow":
            outfall = reg.outfall(event.get("outfall") or incident["subject"])
            cols["flow_gpm"] = self._series(outfall.id, "flow", start, end)
            gauges = event.get("rain_gauges_used") or list(outfall.rain_gauges)   # the gauges the rule judged by
            for g in gauges:
                name = "rain_in" if len(gauges) == 1 else f"rain_{g}_in"
                cols[name] = self._series(g, "rain", start, end)
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
        values = str(getattr(getattr(self.source, "basis", None), "value", "raw"))
        if not getattr(self.source, "applied", True):
            values = "raw"          # asked for corrected values, but no correction was in force for these readings
        frame.attrs["values"] = values
        return frame
