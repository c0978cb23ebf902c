"""Calibration notices on the clock: warned, overdue, closed when the sensor is calibrated
again; kept across a restart; and the rules' ``uncalibrated`` field (replay)."""

from __future__ import annotations

from datetime import date, timedelta

from ms4watch.alerts.calibration_watch import CalibrationWatch
from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.replay import replay
from tests.alerts.rules.test_calibration import sensor, utc

from .support import at, reading, registry, table

WARN = timedelta(days=14)


def test_warned_overdue_then_closed_by_the_new_calibration(tmp_path):
    w = CalibrationWatch(WARN, tmp_path / "watch.json")
    old = [sensor(date(2026, 6, 30))]
    assert w.advance(utc(2026, 6, 1), old) == []
    [due] = w.advance(utc(2026, 6, 20), old)
    assert due.kind is AlertKind.CALIBRATION_DUE
    assert w.advance(utc(2026, 6, 21), old) == []                       # nothing new: nothing said
    [over] = w.advance(utc(2026, 7, 2), old)
    assert over.kind is AlertKind.CALIBRATION_OVERDUE and over["start"] == utc(2026, 7, 1)
    w.checkpoint()
    w = CalibrationWatch(WARN, tmp_path / "watch.json")                  # a restart forgets nothing …
    assert w.advance(utc(2026, 7, 3), old) == []                        # … and repeats nothing
    new = [sensor(date(2026, 10, 1), performed=date(2026, 7, 3))]       # ms4watch calibrate reached the server
    closed = w.advance(utc(2026, 7, 3, 15), new)
    assert sorted((e.kind.value, e["end"], e["closed_by"]) for e in closed) == [
        ("calibration_due", utc(2026, 7, 3, 15), "calibrated 2026-07-03"),
        ("calibration_overdue", utc(2026, 7, 3, 15), "calibrated 2026-07-03")]
    assert w.advance(utc(2026, 7, 4), new) == []


def test_a_sensor_no_longer_reported_closes_its_notices(tmp_path):
    w = CalibrationWatch(WARN)
    w.advance(utc(2026, 6, 20), [sensor(date(2026, 6, 30))])
    [closed] = w.advance(utc(2026, 6, 21), [])
    assert closed["closed_by"] == "no longer reported by its logger"


def _rain(minute: float, inches: float, flags: str = ""):
    return reading(at(minute), "RG-1", "rain", inches, flags)


def test_storms_and_dry_weather_flow_from_overdue_sensors_still_count_and_say_so():
    reg = registry()
    storm = [_rain(m, 0.01 * (m % 3 == 0), "calibration_overdue" if m == 30 else "") for m in range(0, 300, 5)]
    [s] = [e for e in replay(reg, table(storm), now_ns=at(24 * 60)) if e.kind is AlertKind.STORM]
    assert s["uncalibrated"] is True and s["qualifying"] is False
    clean = [_rain(m, 0.01 * (m % 3 == 0)) for m in range(0, 300, 5)]
    [s] = [e for e in replay(reg, table(clean), now_ns=at(24 * 60)) if e.kind is AlertKind.STORM]
    assert "uncalibrated" not in s.fields                               # calibrated data: events as before
    dry_rain = [_rain(m, 0.0) for m in range(0, 4 * 24 * 60, 15)]
    flow = [reading(at(80 * 60 + k * 5), "OF-1", "flow", 3.0, "calibration_overdue") for k in range(10)]
    [d] = [e for e in replay(reg, table(dry_rain + flow)) if e.kind is AlertKind.DRY_WEATHER_FLOW]
    assert d["uncalibrated"] is True


def test_turbidity_from_an_overdue_probe_is_not_evaluable_and_says_why():
    reg = registry()
    up = [reading(at(m), "TU-1", "turbidity", 5.0 + 0.1 * (m % 2), "calibration_overdue") for m in range(0, 60, 5)]
    down = [reading(at(m), "TD-1", "turbidity", 30.0 + 0.1 * (m % 2)) for m in range(0, 60, 5)]
    events = replay(reg, table(up + down))
    assert not [e for e in events if e.kind is AlertKind.TURBIDITY_CONTRAST]
    [ne] = [e for e in events if e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE]
    assert ne["uncalibrated"] is True and ne["reason"].endswith("(calibration overdue)")
