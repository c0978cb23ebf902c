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

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Iterable

from .errors import AlertError
from .events import Event
from .rules.calibration import SensorCalibration, calibration_events

STATE_VERSION = 1


class CalibrationWatch:
    def __init__(self, warn: timedelta, state_path: str | Path | None = None):
        self.warn = warn
        self.state_path = Path(state_path) if state_path else None
        self._open: dict[str, Event] = {}    # id -> the latest version emitted, not yet closed
        if self.state_path and self.state_path.exists():
            self._load()

    def advance(self, now_ns: int, sensors: Iterable[SensorCalibration]) -> list[Event]:
        sensors = list(sensors)
        current = {e.id: e for e in calibration_events(sensors, now_ns, self.warn)}
        calibrated = {(s.device, s.sensor): s.performed.isoformat() for s in sensors}
        changes: list[Event] = []
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
            changes.append(Event(old.kind, old.id, {**f, "end": max(now_ns, f["start"]), "closed_by": why},
                                 old.params, old.provision, old.status))
        return changes

    def checkpoint(self) -> None:
        if self.state_path is None:
            return
        tmp = self.state_path.with_suffix(self.state_path.suffix + ".tmp")
        try:
            tmp.write_text(json.dumps({"version": STATE_VERSION, "open": [
                e.to_dict() | {"_fields": list(e.fields)} for e in self._open.values()]}), encoding="utf-8")
            os.replace(tmp, self.state_path)
        except OSError as e:
            raise AlertError(f"{self.state_path}: cannot write the calibration watch's state: {e.strerror}") from None

    def _load(self) -> None:
        assert self.state_path is not None
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("version") != STATE_VERSION:
                raise AlertError(f"{self.state_path}: state version {state.get('version')!r}, expected {STATE_VERSION}")
            for d in state["open"]:
                order = d.pop("_fields")
                e = Event.from_dict(d)
                self._open[e.id] = Event(e.kind, e.id, {f: e.fields[f] for f in order}, e.params, e.provision,
                                         e.status)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise AlertError(f"{self.state_path}: cannot read the calibration watch's state: {e}") from None
