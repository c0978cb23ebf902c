"""Calibration acceptance (USGS TM 1-D3) exactly at its boundaries, and the record contract."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest
from pydantic import ValidationError

from ms4watch.contract.calibration import (MAX_ALLOWABLE_TURBIDITY_PCT, TURBIDITY_CRITERIA, CalibrationRecord,
                                           Criteria, DueState, Fit, FitKind, check_point, due_state,
                                           piecewise_linear)
from ms4watch.contract.firmware import Calibration


@pytest.mark.parametrize("reference, reading, ok", [
    # ±5 % governs above 10 NTU
    (100, 105, True), (100, 95, True), (100, 105.01, False), (100, 94.99, False),
    (800, 840, True), (800, 840.01, False), (20, 21, True), (20, 21.01, False),
    # ±0.5 NTU governs at and below 10 NTU (5 % of 10 is 0.5: both agree there)
    (10, 10.5, True), (10, 10.51, False), (5, 5.5, True), (5, 5.51, False), (5, 4.5, True),
    (0, 0.5, True), (0, -0.5, True), (0, 0.51, False),
    # exactly +0.5 on 3.65 NTU: binary floating point computes 4.15 - 3.65 = 0.5000000000000004
    (3.65, 4.15, True), (3.65, 4.16, False),
])
def test_turbidity_acceptance_at_the_boundary(reference, reading, ok):
    assert TURBIDITY_CRITERIA.accepts(reference, reading) is ok


def test_floating_point_alone_would_have_failed_the_boundary_case():
    assert not abs(4.15 - 3.65) <= max(0.5, 0.05 * 3.65)       # why the criteria compute in decimal


def test_limits_by_hand():
    assert TURBIDITY_CRITERIA.limit(0) == 0.5
    assert TURBIDITY_CRITERIA.limit(10) == 0.5
    assert TURBIDITY_CRITERIA.limit(20) == 1.0
    assert TURBIDITY_CRITERIA.limit(800) == 40.0
    assert MAX_ALLOWABLE_TURBIDITY_PCT == 30.0
    assert TURBIDITY_CRITERIA.describe() == "±0.5 or ±5 %, whichever is greater"


def test_criteria_refuse_nonsense():
    with pytest.raises(ValueError, match="absolute or a relative"):
        Criteria(0, 0)
    with pytest.raises(ValueError, match="pct_limit"):
        Criteria(0.1, float("nan"))


def test_check_point_by_hand():
    p = check_point("100 NTU stablcal", 100, 106.2, TURBIDITY_CRITERIA, raw=104.0)
    assert (p.error, p.error_pct, p.limit, p.ok, p.raw) == (6.2, 6.2, 5.0, False, 104.0)
    z = check_point("0 NTU", 0, 0.3, TURBIDITY_CRITERIA)
    assert z.error_pct is None and z.ok and z.error == 0.3


def test_piecewise_linear_interpolates_and_extends_the_end_segments():
    knots = [(0.3, 0.0), (21.0, 20.0), (98.0, 100.0)]
    assert piecewise_linear(0.3, knots) == 0.0
    assert piecewise_linear(21.0, knots) == 20.0
    assert piecewise_linear(59.5, knots) == pytest.approx(60.0)          # midway 21→98 is 20→100 midway
    assert piecewise_linear(175.0, knots) == pytest.approx(180.0)        # 100 + 77 · 80/77 beyond the last knot
    assert piecewise_linear(-20.4, knots) == pytest.approx(-20.0)        # below the first one
    assert Fit(kind=FitKind.PIECEWISE, points=tuple(knots)).correct(59.5) == pytest.approx(60.0)


def test_firmware_calibration_with_points():
    c = Calibration(performed=date(2026, 6, 1), due=date(2026, 9, 1), points=((0.3, 0.0), (21.0, 20.0)))
    assert c.correct(10.65) == pytest.approx(10.0)
    assert Calibration(performed=date(2026, 6, 1), due=date(2026, 9, 1), slope=2, offset=1).correct(3) == 7
    with pytest.raises(ValidationError, match="either points or slope/offset"):
        Calibration(performed=date(2026, 6, 1), due=date(2026, 9, 1), slope=1.1, points=((0, 0), (1, 1)))
    with pytest.raises(ValidationError, match="strictly increasing"):
        Calibration(performed=date(2026, 6, 1), due=date(2026, 9, 1), points=((1, 0), (1, 1)))


def test_due_state_by_days():
    today = date(2026, 6, 1)
    assert due_state(date(2026, 6, 30), today, 14) == (29, DueState.OK)
    assert due_state(date(2026, 6, 15), today, 14) == (14, DueState.DUE_SOON)
    assert due_state(date(2026, 6, 1), today, 14) == (0, DueState.DUE_SOON)       # the due day itself
    assert due_state(date(2026, 5, 31), today, 14) == (-1, DueState.OVERDUE)


def _record(**kw):
    t = datetime(2026, 6, 1, 14, 0, tzinfo=timezone.utc)
    base = dict(id="cal-1", device="LOG-1", station="DS-1", sensor="turb", quantity="turbidity", unit="FNU",
                procedure="turbidity", technician="Pat Doe", started=t, performed=t, fit=Fit(),
                result="pass", next_due=date(2026, 9, 1))
    return CalibrationRecord.model_validate({**base, **kw})


def test_record_round_trips_and_refuses_what_does_not_fit():
    r = _record()
    assert CalibrationRecord.model_validate(r.to_data()) == r
    assert r.to_data()["schema"] == "ms4watch.calibration/1"
    with pytest.raises(ValidationError, match="next_due"):
        _record(next_due=date(2026, 5, 1))
    with pytest.raises(ValidationError, match="technician"):
        _record(technician="  ")
    with pytest.raises(ValidationError, match="sensor"):
        _record(sensor="bad sensor")
    with pytest.raises(ValidationError, match="extra"):
        _record(surprise=1)
