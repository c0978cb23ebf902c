"""Calibration applied by every real driver, in one place.

A sensor's ``calibration:`` block (:class:`~ms4watch.contract.firmware.Calibration`) says
when the instrument was last calibrated, when the next calibration is due, and the
correction in the sensor's own unit: ``corrected = slope * raw + offset``, or piecewise
linear through ``points`` (:meth:`Calibration.correct`). A reading taken
after the due date keeps its (corrected) value and carries the ``calibration_overdue``
quality flag, so the store and the dashboards can tell it apart; it is never dropped.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Iterable

from ...contract.firmware import Calibration, Sensor
from ...contract.wire import QualityFlag
from .base import RawReading

__all__ = ["reading_day", "calibrate", "make_reading"]


def reading_day(t_ns: int) -> date:
    """The UTC calendar day of ``t_ns`` [epoch ns] (calibration due dates are days)."""
    return datetime.fromtimestamp(t_ns / 1e9, tz=timezone.utc).date()


def calibrate(calibration: Calibration | None, raw: float, t_ns: int) -> tuple[float, tuple[str, ...]]:
    """Apply the correction (:meth:`Calibration.correct`) and return ``(value, flags)``.

    ``flags`` holds ``"calibration_overdue"`` when ``t_ns`` falls on a day after
    ``calibration.due``. Without a calibration block the value passes unchanged, unflagged.
    """
    if calibration is None:
        return raw, ()
    value = calibration.correct(raw)
    flags: tuple[str, ...] = ()
    if calibration.overdue(reading_day(t_ns)):
        flags = (QualityFlag.CALIBRATION_OVERDUE.value,)
    return value, flags


def make_reading(sensor: Sensor, t_ns: int, raw: float, extra_flags: Iterable[str] = ()) -> RawReading:
    """A :class:`RawReading` of ``sensor`` at ``t_ns`` with its calibration applied."""
    value, flags = calibrate(sensor.calibration, raw, t_ns)
    all_flags = tuple(dict.fromkeys((*flags, *extra_flags)))
    return RawReading(t_ns, sensor.id, sensor.quantity.value, value, sensor.unit, all_flags)
