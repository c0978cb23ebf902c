"""Stale stations (nothing for more than 3 expected report intervals) and low battery with hysteresis."""

import numpy as np
import pandas as pd

from ms4watch.alerts.rules.health import low_battery, stale_spans

MIN = 60 * 10**9
T0 = 1_780_000_000 * 10**9


def test_stale_after_more_than_3_intervals_and_open_until_data_resumes():
    t = T0 + np.arange(20) * 5 * MIN
    resumed = t[-1] + 15 * MIN + 1
    t2 = np.concatenate((t, [resumed]))
    assert stale_spans(t2, resumed, 3, 5 * MIN) == [(int(t[-1] + 15 * MIN), int(resumed), 5 * MIN)]
    exactly = np.concatenate((t, [t[-1] + 15 * MIN]))
    assert stale_spans(exactly, int(exactly[-1]), 3, 5 * MIN) == []
    # still silent at "now": an open span (end None)
    assert stale_spans(t, int(t[-1] + 16 * MIN), 3, 5 * MIN) == [(int(t[-1] + 15 * MIN), None, 5 * MIN)]


def test_an_event_driven_gauge_is_judged_by_its_heartbeat_not_its_tips():
    """Tips 2 min apart for an hour, then only the 30-min heartbeat: the gaps of the storm say
    nothing about how often the logger promises to report."""
    beats = T0 + np.arange(0, 12 * 60 + 1, 30) * MIN
    tips = T0 + (5 * 60 + 7 + np.arange(30) * 2) * MIN
    t = np.sort(np.concatenate((beats, tips)))
    assert stale_spans(t, int(t[-1] + 90 * MIN), 3, 30 * MIN) == []
    assert stale_spans(t, int(t[-1] + 91 * MIN), 3, 30 * MIN) == [(int(t[-1] + 90 * MIN), None, 30 * MIN)]


def test_a_station_that_never_reported_is_stale_from_the_start_of_the_data():
    since = T0
    empty = np.empty(0, dtype=np.int64)
    assert stale_spans(empty, since + 45 * MIN, 3, 15 * MIN, since) == []              # exactly 3 intervals
    assert stale_spans(empty, since + 46 * MIN, 3, 15 * MIN, since) == [(since + 45 * MIN, None, 15 * MIN)]
    assert stale_spans(empty, since + 46 * MIN, 3, 15 * MIN) == []                     # no start given
    # its first readings came (a backlog, or a logger installed late): judged from them on
    late = np.array([since + 2 * 60 * MIN, since + 2 * 60 * MIN + 15 * MIN])
    assert stale_spans(late, int(late[-1]), 3, 15 * MIN, since) == []


def test_low_battery_hysteresis_one_episode():
    idx = pd.DatetimeIndex(pd.Timestamp(T0, tz="UTC") + pd.to_timedelta(np.arange(8) * 60, unit="min"))
    v = pd.Series([12.5, 11.7, 11.9, 11.7, 12.0, 12.1, 11.5, 11.4], index=idx)
    eps = low_battery(v, 11.8, 0.2)
    # 11.9 is not recovery (needs 12.0): one episode from reading 1 to 3, closed by 12.0;
    # a new one from reading 6, still open
    assert [(int((a - T0) // (60 * MIN)), int((b - T0) // (60 * MIN)), o) for a, b, o, _ in eps] == [
        (1, 3, False), (6, 7, True)]
    assert eps[1][3] == 11.4
