"""Turbidity contrast: delta > max(5 NTU, 10 % of upstream) sustained 15 min; QC; backstop."""

import numpy as np
import pandas as pd
import pytest

from ms4watch.alerts.rules.qc import QcParams, qartod_fail
from ms4watch.alerts.rules.turbidity import ContrastParams, exceeds, turbidity_contrast

T0 = pd.Timestamp("2026-06-01 00:00", tz="UTC")


def ser(values, step_min=5, offset_s=0):
    idx = pd.DatetimeIndex([T0 + pd.Timedelta(minutes=i * step_min, seconds=offset_s) for i in range(len(values))])
    return pd.Series(values, index=idx, dtype=float)


@pytest.mark.parametrize("up,down,hit", [
    (100.0, 110.0, False),   # exactly 10 %: allowed
    (100.0, 110.5, True),
    (20.0, 25.0, False),     # 5 NTU floor (10 % would be 2 NTU)
    (20.0, 25.1, True),
    (300.0, 300.0, True),    # backstop 250 NTU downstream
])
def test_allowance(up, down, hit):
    assert bool(exceeds(np.array([up]), np.array([down]), ContrastParams())[0]) is hit


@pytest.mark.parametrize("n_exceeding,episodes", [(3, 0), (4, 1)])  # 5-min data: 3 readings = 10 min, 4 = 15 min
def test_sustained_15_min(n_exceeding, episodes):
    up = ser([10.0] * 20)
    down = ser([11.0] * 5 + [40.0] * n_exceeding + [11.0] * (20 - 5 - n_exceeding), offset_s=30)
    eps, nev = turbidity_contrast(up, down, params=ContrastParams())
    assert len(eps) == episodes and nev.empty
    if episodes:
        assert eps["max_delta_ntu"].iat[0] == 30.0


def test_single_spike_never_opens_an_episode_and_qc_failure_is_not_evaluable():
    up = ser(list(np.linspace(10, 12, 30)))
    down_vals = list(np.linspace(11, 13, 30))
    down_vals[10] = 900.0  # one spike
    down = ser(down_vals)
    bad = qartod_fail(down, QcParams())
    assert bad.iat[10]
    eps, nev = turbidity_contrast(up, down, downstream_bad=bad)
    assert eps.empty
    # a probe failing QC for 20 min makes the pair "not evaluable", never "fine"
    bad2 = pd.Series(False, index=down.index)
    bad2.iloc[12:17] = True
    eps, nev = turbidity_contrast(up, ser(list(np.linspace(11, 13, 30))), downstream_bad=bad2)
    assert eps.empty and len(nev) == 1
    assert nev["start"].iat[0] == down.index[12] and nev["end"].iat[0] == down.index[16]


def test_unaligned_readings_are_not_compared():
    up = ser([10.0] * 10, step_min=5)
    down = ser([60.0] * 10, step_min=5, offset_s=6 * 60)  # 6 min apart > 5 min tolerance... but nearest is 1 min
    eps, _ = turbidity_contrast(up, down)
    assert len(eps) == 1
    far = ser([60.0] * 10, step_min=5, offset_s=-3600 * 5)
    eps, _ = turbidity_contrast(up, far)
    assert eps.empty


def test_logger_flags_make_a_reading_unusable():
    from ms4watch.alerts.rules.qc import wire_flag_fail
    flags = pd.Series(["", "calibration_overdue", "clock_unsynced", "spike,estimated", "sensor_error"])
    assert wire_flag_fail(flags).tolist() == [False, True, False, True, True]
