"""An incident's chart: on its page, SVG drawn by ``workbench/svgchart.py`` (as the station
page's: tens of milliseconds, crisp on a phone, no plotting library); for the email and the
evidence packet, the PNG the alert email attaches (``alerts/notifiers/email/chart.py``).
Both from the same readings and window: the store's readings port, the kind's series and
threshold (``alerts/kinds/*.py`` ``chart()``, read by ``ms4watch/evidence.py``)."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, cast

import numpy as np

from ...alerts.notifiers.email.chart import chart_png, evidence_window, normalise
from ...contract.registry import Registry
from ...evidence import StoreReadings
from ...ingest.stores.base import Bucket, ReadingsSource
from ...ingest.stores.summary import summarise_arrays
from .. import svgchart

if TYPE_CHECKING:
    import pandas as pd

    from .incidents import IncidentView

log = logging.getLogger(__name__)
RAIN_BARS = tuple(m * 60 * 10**9 for m in (5, 10, 15, 30, 60, 120, 180, 360))   # about 100 bars a window


class Charts:
    def __init__(self, readings: ReadingsSource, registry: Registry,
                 clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)):
        """``clock``: the pipeline's (the demo's is simulated): an open episode is drawn up to now."""
        self.lookup = StoreReadings(readings, registry)
        self.registry = registry
        self.clock = clock

    def png(self, view: "IncidentView") -> bytes | None:
        snap = view.incident.snapshot()
        start, end, since, until = evidence_window(snap, self.clock())
        frame = self.lookup(snap, since, until)
        if frame is None or len(frame) == 0:
            return None
        return chart_png(normalise(frame), title=f"{view.what} at {view.station_name}", start=start,
                         end=end, threshold=view.threshold, tz=self.registry.timezone)

    def svg(self, view: "IncidentView", pixels: int) -> svgchart.Chart | None:
        """The PNG's chart for ``svgchart.render``: the same readings and window, bucketed one
        bucket per pixel column (never finer than the readings' own interval); None when no
        reading is stored for the window."""
        snap = view.incident.snapshot()
        now = self.clock()
        start, end, since, until = evidence_window(snap, now)
        frame = self.lookup(snap, since, until)
        if frame is None or len(frame) == 0:
            return None
        a, b = _ns(since), _ns(until)
        cols = {str(c): _arrays(frame[c]) for c in frame.columns}
        rain = [c for c in cols if c.lower().startswith("rain")]
        limits = [c for c in cols if c.lower().startswith("threshold")]
        series = [c for c in cols if c not in rain and c not in limits]
        width = max((b - a) // max(pixels, 1), *(_interval(cols[c][0]) for c in series), 1)
        if rain:   # rain as depth per a few minutes at least (a tipping bucket's tips are seconds apart);
            # rain alone (a storm, an inspection item): about a hundred bars of a round width
            width = max(width, RAIN_BARS[0] if series else next((w for w in RAIN_BARS if (b - a) // w <= 120),
                                                                  RAIN_BARS[-1]))
        buckets = {c: summarise_arrays(t, v, a, width) for c, (t, v) in cols.items()}
        lines = [svgchart.Line(_label(c), buckets[c], svgchart.COLOURS[k % len(svgchart.COLOURS)])
                 for k, c in enumerate(series)]
        th = view.threshold or {}
        thresholds: list[svgchart.Threshold] = []
        if th.get("value") is not None:
            thresholds.append(svgchart.Threshold(f"{th.get('label', 'threshold')} {th['value']:g} {th.get('unit', '')}"
                                                 .strip(), float(th["value"])))
        else:
            thresholds += [svgchart.Threshold(f"threshold: {th.get('label', c)}",
                                              points=[(x.start_ns, x.max) for x in buckets[c] if x.max is not None])
                           for c in limits]
        unit = str(th.get("unit") or (series[0].rsplit("_", 1)[-1] if series else ""))
        notes = ("Values corrected for fouling and drift.",) if frame.attrs.get("values") == "corrected" else ()
        episode = svgchart.Band(_ns(start), _ns(end or now), "episode" if end else "episode (open)", "episode")
        return svgchart.Chart(f"{view.what} at {view.station_name}", a, b, unit, lines, _wettest(buckets, rain),
                              thresholds, (episode,), width, notes)


def _ns(t: datetime) -> int:
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


def _arrays(s: "pd.Series") -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd
    v = pd.to_numeric(s, errors="coerce").dropna()
    times = cast("pd.DatetimeIndex", v.index)
    return times.as_unit("ns").asi8.astype(np.int64), v.to_numpy(dtype=np.float64)


def _interval(t: np.ndarray) -> int:
    """The readings' usual interval [ns] (0 for fewer than two)."""
    return int(np.median(np.diff(t))) if t.size > 1 else 0


def _label(column: str) -> str:
    """``flow_gpm`` -> ``flow``, ``turbidity_down_ntu`` -> ``turbidity down``."""
    return column.rsplit("_", 1)[0].replace("_", " ")


def _wettest(buckets: dict[str, list[Bucket]], rain: list[str]) -> list[Bucket]:
    """Rain per bucket at the wettest gauge (depths of several gauges do not add up)."""
    out: dict[int, Bucket] = {}
    for c in rain:
        for x in buckets[c]:
            if x.start_ns not in out or (x.sum or 0.0) > (out[x.start_ns].sum or 0.0):
                out[x.start_ns] = x
    return [out[k] for k in sorted(out)]


__all__ = ["Charts"]
