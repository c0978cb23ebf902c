"""Fits against hand-computed values."""

from __future__ import annotations

import pytest

from ms4watch.contract.calibration import TURBIDITY_CRITERIA, FitKind
from ms4watch.edge.calibration.fits import FitError, choose_fit, linear_fit, offset_fit, piecewise_fit, slope_fit


def test_two_points_give_the_line_through_them():
    f = linear_fit([(0.4, 0.0), (22.4, 20.0)])
    # slope = 20 / 22 = 0.909090…, offset = -0.4 * 20/22 = -0.363636…
    assert f.slope == pytest.approx(20 / 22) and f.offset == pytest.approx(-8 / 22)


def test_least_squares_by_hand():
    # raw 1, 2, 3 for references 2, 4, 7: mean raw 2, mean ref 13/3; Sxx 2, Sxy (-1)(-7/3)+0+(1)(8/3) = 5
    f = linear_fit([(1, 2), (2, 4), (3, 7)])
    assert f.slope == pytest.approx(2.5) and f.offset == pytest.approx(13 / 3 - 5)


def test_a_sensor_that_reads_the_same_in_every_standard_is_refused():
    with pytest.raises(FitError, match="does not respond"):
        linear_fit([(5, 0), (5, 20)])


def test_piecewise_through_every_standard_in_order_of_value():
    f = piecewise_fit([(98.0, 100), (0.3, 0), (21.0, 20)])
    assert f.kind is FitKind.PIECEWISE and f.points == ((0.3, 0.0), (21.0, 20.0), (98.0, 100.0))
    with pytest.raises(FitError, match="not monotonic"):
        piecewise_fit([(10, 0), (5, 20)])


def test_offset_and_slope_fits():
    assert offset_fit(0.48, 0.52, slope=1.0).offset == pytest.approx(0.04)
    assert slope_fit([(90.0, 100.0)]).slope == pytest.approx(100 / 90)
    # through the origin, least squares: (10·11 + 20·21) / (100 + 400) = 530 / 500
    assert slope_fit([(10, 11), (20, 21)]).slope == pytest.approx(1.06)


def test_auto_is_linear_when_the_line_meets_the_criteria_everywhere():
    linear_sensor = [(0.4, 0), (22.4, 20), (110.4, 100), (880.4, 800)]      # raw = 1.1 ref + 0.4
    assert choose_fit(linear_sensor, TURBIDITY_CRITERIA).kind is FitKind.LINEAR


def test_auto_is_piecewise_when_no_line_meets_the_criteria():
    # saturating at the top: raw 0, 20, 100, 700 for 0, 20, 100, 800 — no straight line fits 20 within ±1 NTU
    curved = [(0.0, 0), (20.0, 20), (100.0, 100), (700.0, 800)]
    line = linear_fit(curved)
    assert not all(TURBIDITY_CRITERIA.accepts(t, line.correct(r)) for r, t in curved)
    f = choose_fit(curved, TURBIDITY_CRITERIA)
    assert f.kind is FitKind.PIECEWISE and all(f.correct(r) == pytest.approx(t) for r, t in curved)
