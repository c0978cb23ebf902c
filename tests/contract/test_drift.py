"""Fouling and drift corrections prorated over a service interval, checked point by point
against hand computation (USGS TM 1-D3)."""

from __future__ import annotations

import numpy as np
import pytest

from ms4watch.contract.drift import CorrectionKind, DriftCorrection, apply_correction, correct_arrays, prorate

H = 3600 * 10**9
MIN = 60 * 10**9


def test_prorate_by_hand():
    t = np.array([-H, 0, H, 2 * H, 5 * H, 6 * H])
    assert prorate(t, 0, 5 * H, -1.0).tolist() == pytest.approx([0.0, 0.0, -0.2, -0.4, -1.0, -1.0])


def test_fouling_absolute_and_drift_percent_point_by_point():
    # interval 0 → 5 h; at the visit: fouling correction −1.0 NTU (after − before cleaning),
    # drift correction +10 % (standard − reading, of the reading); raw readings hourly
    c = DriftCorrection(0, 5 * H, fouling=-1.0, drift=10.0, fouling_kind=CorrectionKind.ABSOLUTE,
                        drift_kind=CorrectionKind.PERCENT, max_allowable_pct=30.0)
    t = np.arange(0, 7) * H
    raw = np.array([20.0, 20.0, 40.0, 40.0, 10.0, 10.0, 10.0])
    out = apply_correction(t, raw, c)
    # hour k: fraction k/5; fouling −1.0·k/5; drift raw · 10·k/5 %
    #   0: 0                       → 20.0
    #   1: −0.2 + 20·0.02 = +0.2   → 20.2   (1 %)
    #   2: −0.4 + 40·0.04 = +1.2   → 41.2   (3 %)
    #   3: −0.6 + 40·0.06 = +1.8   → 41.8   (4.5 %)
    #   4: −0.8 + 10·0.08 =  0     → 10.0
    #   5: −1.0 + 10·0.10 =  0     → 10.0
    #   6: after the visit: not this interval's → 10.0, uncorrected
    assert out.values.tolist() == pytest.approx([20.0, 20.2, 41.2, 41.8, 10.0, 10.0, 10.0])
    assert out.correction.tolist() == pytest.approx([0.0, 0.2, 1.2, 1.8, 0.0, 0.0, 0.0])
    assert out.combined_pct.tolist() == pytest.approx([0.0, 1.0, 3.0, 4.5, 0.0, 0.0, 0.0])
    assert not out.not_reportable.any()


def test_not_reportable_past_thirty_percent_the_boundary_itself_reportable():
    c = DriftCorrection(0, 100 * MIN, drift=40.0, max_allowable_pct=30.0)       # +40 % by the visit
    t = np.array([70, 75, 80, 100]) * MIN
    out = apply_correction(t, np.full(4, 10.0), c)
    assert out.combined_pct.tolist() == pytest.approx([28.0, 30.0, 32.0, 40.0])
    assert out.values.tolist() == pytest.approx([12.8, 13.0, 13.2, 14.0])
    assert out.not_reportable.tolist() == [False, False, True, True]


def test_flags_say_corrected_and_not_reportable():
    c = DriftCorrection(0, 100 * MIN, drift=40.0, max_allowable_pct=30.0)
    t = np.array([-5, 50, 90]) * MIN
    v, f = correct_arrays(t, np.full(3, 10.0), np.array(["", "spike", ""], dtype=object), [c])
    assert v.tolist() == pytest.approx([10.0, 12.0, 13.6])
    assert f.tolist() == ["", "spike,drift_corrected", "drift_corrected,not_reportable"]


def test_an_interval_must_run_forward():
    with pytest.raises(ValueError, match="end after it starts"):
        DriftCorrection(5, 5)
