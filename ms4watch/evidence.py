"""Readings behind an incident, for the chart and CSV attached to its email.

``StoreReadings(source, registry)(incident, start, end)`` returns a DataFrame indexed by
time with one column per series, its unit in its name, as the email notifier expects:
``flow_gpm`` + ``rain_in`` + ``threshold_gpm`` for a dry-weather flow (one ``rain_<gauge>_in``
column per gauge when the outfall has several); ``turbidity_up_ntu``,
``turbidity_down_ntu`` + ``threshold_ntu`` (upstream + the town's max(delta, fraction of
upstream)) for a turbidity contrast; ``rain_in`` for storms and inspections. Each kind's
series are its ``KindSpec.chart`` (alerts/kinds/).

``source`` is the store's readings port (:class:`~ms4watch.ingest.stores.base.ReadingsSource`),
so an InfluxDB deployment gets the same chart as the embedded SQLite store. The frame says
which values it holds in ``frame.attrs["values"]``: ``raw``, or ``corrected`` when the source
applies drift corrections (:class:`~ms4watch.ingest.corrections.CorrectedReadings`); a CSV of
corrected values says so in its first line.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from .alerts.kinds import spec_for
from .contract.registry import Registry
from .ingest.stores.base import ReadingsSource


class StoreReadings:
    def __init__(self, source: ReadingsSource, registry: Registry):
        self.source = source
        self.registry = registry

    def _series(self, station: str, quantity: str, start: datetime, end: datetime) -> pd.Series:
        import pandas as pd     # an email's chart and CSV: imported then, not with the server
        rows = [r for r in self.source.readings(station, quantity, start, end) if r.value is not None]
        if not rows:
            return pd.Series(dtype=float)
        return pd.Series([r.value for r in rows], index=pd.to_datetime([r.time_ns for r in rows], utc=True),
                         dtype=float).groupby(level=0).last()

    def __call__(self, incident: dict[str, Any], start: datetime, end: datetime) -> pd.DataFrame:
        import pandas as pd
        chart = spec_for(incident.get("kind", "")).chart(self.registry, incident)   # alerts/kinds/
        cols: dict[str, pd.Series] = {s.column: self._series(s.station, s.quantity, start, end) for s in chart.series}
        if chart.threshold is not None and chart.threshold_column:
            cols[chart.threshold_column] = chart.threshold(cols)
        frame = pd.DataFrame({k: v for k, v in cols.items() if len(v)})
        frame.index.name = "time"
        values = str(getattr(getattr(self.source, "basis", None), "value", "raw"))
        if not getattr(self.source, "applied", True):
            values = "raw"          # asked for corrected values, but no correction was in force for these readings
        frame.attrs["values"] = values
        return frame
