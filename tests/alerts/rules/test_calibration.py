"""Calibration notices by the day, and what each rule does with uncalibrated readings."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import numpy as np

from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.rules.calibration import calibration_events, overdue_from_ns, uncalibrated
from ms4watch.contract.calibration import CalibrationState, DueState
from ms4watch.contract.timeutil import to_ns


def sensor(due: date, sensor: str = "turb", performed: date = date(2026, 3, 1)) -> CalibrationState:
    return CalibrationState("LOG-DS1", "DS-1", sensor, performed, due, 0, DueState.OK)


def utc(*a: int) -> int:
    return to_ns(datetime(*a, tzinfo=timezone.utc))


def test_overdue_from_the_next_utc_midnight():
    assert overdue_from_ns(date(2026, 6, 30)) == utc(2026, 7, 1)


def test_warned_fourteen_days_ahead_then_overdue():
    s = [sensor(date(2026, 6, 30))]
    warn = timedelta(days=14)
    assert calibration_events(s, utc(2026, 6, 16, 23, 59), warn) == []
    [due] = calibration_events(s, utc(2026, 6, 17), warn)                  # 14 days before 2026-07-01 00:00Z
    assert due.kind is AlertKind.CALIBRATION_DUE and due.id == "calibration_due/LOG-DS1/turb/2026-06-30"
    assert due["start"] == utc(2026, 6, 17) and due["due"] == utc(2026, 7, 1) and due["end"] is None
    assert due.subject == "DS-1" and due["sensor"] == "turb" and due["due_day"] == "2026-06-30"
    assert len(calibration_events(s, utc(2026, 6, 30, 23, 59), warn)) == 1   # the due day itself: not yet overdue
    kinds = [e.kind for e in calibration_events(s, utc(2026, 7, 1), warn)]
    assert kinds == [AlertKind.CALIBRATION_DUE, AlertKind.CALIBRATION_OVERDUE]


def test_uncalibrated_looks_only_inside_the_span():
    t = np.array([10, 20, 30, 40], dtype=np.int64)
    f = np.array(["", "calibration_overdue", "spike", ""], dtype=object)
    assert uncalibrated(t, f, 20, 20) and uncalibrated(t, f, 0, 100)
    assert not uncalibrated(t, f, 25, 40) and not uncalibrated(t, f, 0, 15)
    other = np.array(["", None, "spike", "spike,calibration_overdue"], dtype=object)
    assert [uncalibrated(t[:4], other, x, x) for x in t[:4]] == [False, False, False, True]
