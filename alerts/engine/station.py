"""The stations' subjects: station health (``rules/health``: stale, battery), judged on a
station's reading times and battery buffer, on the engine's clock."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import evaluate as ev
from ..events import AlertEvent

if TYPE_CHECKING:
    from .scheduler import StreamingEngine


class Stations:
    """Every station: the registry's and any that has reported."""

    def __init__(self, eng: "StreamingEngine") -> None:
        self.eng = eng

    def evaluate(self, st: str) -> list[AlertEvent]:
        eng = self.eng
        ser = eng.times.get(st)
        times = ser.times() if ser is not None else ev.EMPTY[0]
        battery = eng.get(st, "battery")
        computed = ev.station_health(eng.reg, st, times, battery, eng.now_ns,
                                     ev.report_interval(eng.reg, st, eng.status_intervals), since_ns=eng.since)
        key = ("station", st)
        horizon = eng.horizon(st)
        changes = eng.update(key, computed, 0, horizon, ((st, "battery"),) if battery[0].size else ())
        c = eng.cutoff(key, horizon, 0)
        # keep 2 readings before the cut-off: a span starts after the reading before it
        i = int(np.searchsorted(times, c)) - 2
        if i > 0:
            eng.times[st].trim(int(times[i]))
            eng.series[(st, "battery")].trim(int(times[i]))
        return changes
