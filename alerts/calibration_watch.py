"""Calibration due and overdue notices on the engine's clock, from the stored calibration
state: a thin layer over :func:`~.rules.calibration.calibration_events`.

``advance(now_ns, sensors)`` returns the events that are new or changed since the last
call: a warning coming into force, a sensor falling overdue, and — when a sensor's
calibration changes (a run of ``ms4watch calibrate`` reached the server: its due day moved)
or it is no longer reported — the earlier notices closed (``end`` set, ``closed_by``
saying why), which resolves their incidents. What it has emitted is kept in ``state_path``
so a restart neither repeats nor forgets a notice.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Iterable

from .events import AlertEvent
from .open_events import OpenEvents
from .rules.calibration import SensorCalibration, calibration_events


class CalibrationWatch:
    def __init__(self, warn: timedelta, state_path: str | Path | None = None):
        self.warn = warn
        self._open = OpenEvents(state_path, "calibration watch")    # id -> the latest version emitted, not yet closed

    def advance(self, now_ns: int, sensors: Iterable[SensorCalibration]) -> list[AlertEvent]:
        sensors = list(sensors)
        current = {e.id: e for e in calibration_events(sensors, now_ns, self.warn)}
        calibrated = {(s.device, s.sensor): s.performed.isoformat() for s in sensors}
        changes: list[AlertEvent] = []
        for eid, e in current.items():
            if self._open.get(eid) is None or self._open[eid].fields != e.fields:
                self._open[eid] = e
                changes.append(e)
        for eid in [i for i in self._open if i not in current]:
            old = self._open.pop(eid)
            f = old.fields
            performed = calibrated.get((f["device"], f["sensor"]))
            why = (f"calibrated {performed}" if performed is not None and performed != f["performed"]
                   else "no longer reported by its logger")
            changes.append(AlertEvent(old.kind, old.id, {**f, "end": max(now_ns, f["start"]), "closed_by": why},
                                 old.params, old.provision, old.status))
        return changes

    def checkpoint(self) -> None:
        self._open.checkpoint()