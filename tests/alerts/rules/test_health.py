"""Stale stations (no data for 3 intervals) and low battery with hysteresis."""

import numpy as np
import pandas as pd

from ms4watch.alerts.rules.health import low_battery, stale_spans

MIN = 60 * 10**9
T0 = 1_780_000_000 * 10**9


def test_stale_after_more_than_3_intervals_and_open_until_data_resumes():
    t = T0 + np.arange(20) * 5 * MIN
    resumed = t[-1] + 15 * MIN + 1
    t2 = np.concatenate((t, [resumed]))
    assert stale_spans(t2, resumed, 3) == [(int(t[-1] + 15 * MIN), int(resumed), 5 * MIN)]
    exactly = np.concatenate((t, [t[-1] + 15 * MIN]))
    assert stale_spans(exactly, int(exactly[-1]), 3) == []
    # still silent at "now": an open span (end None)
    assert stale_spans(t, int(t[-1] + 16 * MIN), 3) == [(int(t[-1] + 15 * MIN), None, 5 * MIN)]


def test_two_schedules_judged_by_the_slower_one():
    # a turbidity reading at :00 and a battery reading at :01 every 15 min: gaps 1 and 14 min
    t = np.sort(np.concatenate((T0 + np.arange(20) * 15 * MIN, T0 + np.arange(20) * 15 * MIN + MIN)))
    assert stale_spans(t, int(t[-1] + 30 * MIN), 3) == []
    assert len(stale_spans(t, int(t[-1] + 43 * MIN), 3)) == 1


def test_low_battery_hysteresis_one_episode():
    idx = pd.DatetimeIndex(pd.Timestamp(T0, tz="UTC") + pd.to_timedelta(np.arange(8) * 60, unit="min"))
    v = pd.Series([12.5, 11.7, 11.9, 11.7, 12.0, 12.1, 11.5, 11.4], index=idx)
    eps = low_battery(v, 11.8, 0.2)
    # 11.9 is not recovery (needs 12.0): one episode from reading 1 to 3, closed by 12.0;
    # a new one from reading 6, still open
    assert [(int((a - T0) // (60 * MIN)), int((b - T0) // (60 * MIN)), o) for a, b, o, _ in eps] == [
        (1, 3, False), (6, 7, True)]
    assert eps[1][3] == 11.4
