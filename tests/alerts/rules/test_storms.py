"""Hand-computed storm boundaries."""

from datetime import timedelta

import numpy as np
import pandas as pd
import pytest

from ms4watch.alerts.rules.storms import StormParams, storm_events, storm_rows

T0 = pd.Timestamp("2026-06-01 12:00", tz="UTC")


def rain(minutes_and_depths):
    idx = pd.DatetimeIndex([T0 + pd.Timedelta(minutes=m) for m, _ in minutes_and_depths])
    return pd.Series([d for _, d in minutes_and_depths], index=idx)


@pytest.mark.parametrize("tips,qualifying", [(49, False), (50, True)])
def test_50_tips_of_001_in_is_exactly_050_and_qualifies(tips, qualifying):
    s = storm_events(rain([(m, 0.01) for m in range(tips)]))
    assert len(s) == 1
    assert s["depth_uin"].iat[0] == tips * 10_000
    assert bool(s["qualifying"].iat[0]) is qualifying


@pytest.mark.parametrize("gap_min,storms", [(5 * 60 + 59, 1), (6 * 60, 1), (6 * 60 + 1, 2)])
def test_inter_event_gap_longer_than_6h_splits(gap_min, storms):
    s = storm_events(rain([(0, 0.3), (gap_min, 0.3)]))
    assert len(s) == storms
    if storms == 1:
        assert s["depth_in"].iat[0] == 0.6 and bool(s["qualifying"].iat[0])
        assert s["end"].iat[0] == T0 + pd.Timedelta(minutes=gap_min)
    else:
        assert not s["qualifying"].any()


def test_start_is_first_rain_row_end_last_and_zero_rows_ignored():
    s = storm_events(rain([(0, 0.0), (10, 0.02), (20, 0.0), (30, 0.03), (40, 0.0)]))
    assert s["start"].iat[0] == T0 + pd.Timedelta(minutes=10)
    assert s["end"].iat[0] == T0 + pd.Timedelta(minutes=30)
    assert s["duration_h"].iat[0] == pytest.approx(20 / 60)


def test_double_tip_within_1s_is_discarded_but_not_at_1s():
    idx = pd.DatetimeIndex([T0, T0 + pd.Timedelta(milliseconds=400), T0 + pd.Timedelta(seconds=1.4),
                            T0 + pd.Timedelta(seconds=2.0)])
    s = storm_events(pd.Series([0.01] * 4, index=idx))
    # 0.4 s after the first: dropped; 1.4 s: kept (1.0 s after the kept one); 2.0 s: 0.6 s after → dropped
    assert s["depth_uin"].iat[0] == 20_000


def test_peak_intensities_in_inch_per_hour():
    # 0.10 in in 5 one-minute rows, then 0.01 in/min for the rest of an hour
    s = storm_events(rain([(m, 0.02) for m in range(5)] + [(m, 0.01) for m in range(5, 60)]))
    assert s["peak_i5_in_h"].iat[0] == pytest.approx(0.10 * 12)
    assert s["peak_i60_in_h"].iat[0] == pytest.approx(0.65)


def test_rainmaker_offset_and_filters():
    r = rain([(0, 0.01), (30, 0.01), (500, 0.005)])
    s = storm_events(r, StormParams(start_offset=timedelta(minutes=1), min_duration=timedelta(minutes=20)))
    assert len(s) == 1 and s["start"].iat[0] == T0 - pd.Timedelta(minutes=1)


def test_dst_fall_back_storm_duration_in_real_hours():
    # 2026-11-01 01:30 EDT -> 01:30 EST is one hour of real time (America/New_York fall back)
    a = pd.Timestamp("2026-11-01 01:30").tz_localize("America/New_York", ambiguous=True).tz_convert("UTC")
    b = pd.Timestamp("2026-11-01 01:30").tz_localize("America/New_York", ambiguous=False).tz_convert("UTC")
    s = storm_events(pd.Series([0.3, 0.3], index=pd.DatetimeIndex([a, b])))
    assert len(s) == 1 and s["duration_h"].iat[0] == pytest.approx(1.0)


# -- units: a metric gauge (Schenectady ch. 148 Art. I: "a storm event 0.5 inch or greater") ------
MM = 0.03937007874015749   # what the readings CSV's "mm" becomes in canonical inches (contract/units.py)


@pytest.mark.parametrize("tip_mm,tips,qualifying", [(0.1, 126, False), (0.1, 127, True), (0.2, 63, False),
                                                     (0.2, 64, True), (0.254, 50, True), (0.02, 635, True)])
def test_a_metric_gauge_qualifies_at_exactly_12_7_mm(tip_mm, tips, qualifying):
    """12.7 mm is 0.5 in exactly: 127 tips of a 0.1 mm bucket are a storm of 0.5 inch (were
    summed as 127 x 3,937 micro-inches = 0.499999 in: not qualifying)."""
    s = storm_events(rain([(m, tip_mm * MM) for m in range(tips)]))
    assert len(s) == 1
    assert bool(s["qualifying"].iat[0]) is qualifying
    assert s["depth_in"].iat[0] == pytest.approx(tip_mm * tips / 25.4, abs=1e-6)


def test_exact_depths_of_missing_absurd_and_infinite_values_never_wrap_around():
    """A NaN is no rain; 1e300 in or infinity counts as MAX_DEPTH_IN (a qualifying storm, as
    any absurdly large reading would be), never as a negative int64 that the rule skips."""
    import warnings

    from ms4watch.alerts.rules.storms import EXACT, MAX_DEPTH_IN, to_exact
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = to_exact(np.array([np.nan, np.inf, 1e300, -np.inf, 0.01, 1e20]))
    top = int(MAX_DEPTH_IN) * EXACT
    assert got.tolist() == [0, top, top, -top, EXACT // 100, top]
    t = np.array([0, 60, 120], dtype=np.int64) * 10**9
    [storm] = storm_rows(t, np.array([0.01, 1e20, 0.01]))
    assert storm[-1]   # qualifying


def test_rows_out_of_order_or_sent_twice_make_the_same_storm():
    """5 rows of 0.1 in: a storm of 0.5 in whatever order they come; a row sent twice (an
    interval total retransmitted) is one row, not 0.25 + 0.25 = 0.5 in."""
    r = rain([(5 * m, 0.1) for m in range(5)])
    ref = storm_events(r)
    assert ref["depth_in"].iat[0] == 0.5 and bool(ref["qualifying"].iat[0])
    pd.testing.assert_frame_equal(storm_events(r.iloc[::-1]), ref)
    pd.testing.assert_frame_equal(storm_events(pd.concat([r, r.iloc[:2]])), ref)
    twice = pd.Series([0.25, 0.25], index=pd.DatetimeIndex([T0, T0]))
    assert storm_events(twice)["depth_in"].tolist() == [0.25] and not storm_events(twice)["qualifying"].any()


def test_dst_spring_forward_storm_duration_in_real_hours():
    # 2026-03-08 01:30 EST -> 03:30 EDT is one hour of real time (America/New_York spring forward)
    a = pd.Timestamp("2026-03-08 01:30", tz="America/New_York").tz_convert("UTC")
    b = pd.Timestamp("2026-03-08 03:30", tz="America/New_York").tz_convert("UTC")
    s = storm_events(pd.Series([0.25, 0.25], index=pd.DatetimeIndex([a, b])))
    assert len(s) == 1 and s["duration_h"].iat[0] == pytest.approx(1.0) and bool(s["qualifying"].iat[0])


def test_empty_record_is_no_storm():
    s = storm_events(pd.Series([], index=pd.DatetimeIndex([], tz="UTC"), dtype=float))
    assert s.empty and list(s.columns)[:3] == ["start", "end", "first_rain"]


def test_a_gauge_silent_between_two_bursts_splits_them_and_the_silence_is_a_stale_span():
    """0.30 in, then the gauge sends nothing for 8 h, then 0.30 in: the storm rule sees two
    storms of 0.30 in, neither qualifying (rain it never received is not rain); what it could
    not see is said by the station-health rule, a stale span over the silence (REGULATIONS.md
    *Edge loggers*: "a station that stops reporting cannot show a violation"). With zero rows
    every 15 min through the 8 h the storms are the same, and no span is stale."""
    from ms4watch.alerts.rules.health import stale_spans
    from ms4watch.alerts.rules._common import ns_index

    bursts = [(m, 0.01) for m in range(30)] + [(m, 0.01) for m in range(30 + 8 * 60, 60 + 8 * 60)]
    for heartbeat in (False, True):
        rows = bursts + ([(m, 0.0) for m in range(30, 30 + 8 * 60, 15)] if heartbeat else [])
        r = rain(sorted(rows))
        s = storm_events(r)
        assert s["depth_in"].tolist() == [0.3, 0.3] and not s["qualifying"].any()
        t = ns_index(r)
        stale = stale_spans(t, int(t[-1]), 3, 15 * 60 * 10**9)
        assert len(stale) == (0 if heartbeat else 1)
