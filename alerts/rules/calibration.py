"""Calibration due and overdue, and readings taken from an uncalibrated sensor.

References
----------
Both laws (Ramapo ch. 218; Schenectady ch. 148), access and monitoring: "All devices used to
measure stormwater flow and quality shall be calibrated to ensure their accuracy".
REGULATIONS.md: calibration records with due dates; readings from an out-of-calibration
sensor are flagged, never silently trusted.

What each rule does with readings that carry ``calibration_overdue`` (the logger flags every
reading of a sensor past its due day, whatever its quantity):

* turbidity contrast — *not evaluable*: a probe past its calibration fails QC
  (:data:`~.qc.BAD_WIRE_FLAGS`), the pair's notice says so (``uncalibrated: true``);
* dry-weather flow and storms — *still evaluated* (an illicit discharge or a storm is not
  less real for an old calibration, and the inspection deadline still runs), and the event
  says the data was uncalibrated: ``uncalibrated: true`` when any reading the episode rests
  on carries the flag.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from typing import Iterable, Protocol

import numpy as np

from ..events import AlertEvent, AlertKind

PROVISION = ("Ramapo ch. 218 / Schenectady ch. 148 (access and monitoring): devices measuring stormwater flow "
             "and quality shall be calibrated")
FLAG = "calibration_overdue"


class SensorCalibration(Protocol):
    """What the rule needs of a sensor's calibration (the stores'
    :class:`~ms4watch.contract.calibration.CalibrationState`)."""

    device: str
    station: str
    sensor: str
    performed: date
    due: date


def overdue_from_ns(due: date) -> int:
    """When a sensor due on ``due`` [UTC day] becomes overdue: the next UTC midnight [epoch ns]
    (the logger flags readings from that day on)."""
    t = datetime.combine(due + timedelta(days=1), time(0), tzinfo=timezone.utc)
    return int(t.timestamp()) * 1_000_000_000


def calibration_events(sensors: Iterable[SensorCalibration], now_ns: int, warn: timedelta) -> list[AlertEvent]:
    """The calibration notices in force at ``now_ns`` [epoch ns].

    For each sensor, from ``warn`` before it becomes overdue: a ``calibration_due`` event
    (start: the warning time, ``due``: the moment it becomes overdue); from that moment on,
    also a ``calibration_overdue`` event (start: that moment). Ids carry the device, sensor
    and due day, so a new calibration (a new due day) is a new item and the old ones close
    (:class:`~ms4watch.alerts.calibration_watch.CalibrationWatch`).
    """
    warn_ns = int(warn.total_seconds() * 1e9)
    params = {"warn_days": warn.total_seconds() / 86400}
    out = []
    for s in sensors:
        over = overdue_from_ns(s.due)
        fields = {"station": s.station, "device": s.device, "sensor": s.sensor, "performed": s.performed.isoformat(),
                  "due_day": s.due.isoformat(), "due": over}
        key = f"{s.device}/{s.sensor}/{s.due.isoformat()}"
        if now_ns >= over - warn_ns:
            out.append(AlertEvent(AlertKind.CALIBRATION_DUE, f"calibration_due/{key}",
                             {**fields, "start": over - warn_ns, "end": None}, params, PROVISION))
        if now_ns >= over:
            out.append(AlertEvent(AlertKind.CALIBRATION_OVERDUE, f"calibration_overdue/{key}",
                             {**fields, "start": over, "end": None}, params, PROVISION))
    return out


def uncalibrated(times_ns: np.ndarray, flags: np.ndarray, start_ns: int, end_ns: int) -> bool:
    """Whether any reading in [start_ns, end_ns] carries ``calibration_overdue``.

    times_ns : sorted reading times [epoch ns]; flags : comma-joined flags per reading."""
    a, b = np.searchsorted(times_ns, start_ns, side="left"), np.searchsorted(times_ns, end_ns, side="right")
    span = flags[a:b]
    # readings without flags ("") are the rule: look only at the others (a dry-weather flow
    # episode spans its 72 h of rain rows; 175 -> 40 us)
    return any(FLAG in (f or "") for f in span[span != ""])


def uncalibrated_field(*spans: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], int, int]) -> dict[str, bool]:
    """``{"uncalibrated": True}`` when a reading in any ``(arrays, start_ns, end_ns)`` span carries
    the flag (arrays: the engine's ``(times, values, flags)``), else ``{}`` — events whose data
    was calibrated are unchanged."""
    for (t, _v, f), a, b in spans:
        if f.size and uncalibrated(t, f, a, b):
            return {"uncalibrated": True}
    return {}
