"""Dry-weather flow: above the floor in every reading for >= 30 min while dry."""

from datetime import timedelta

import pandas as pd
import pytest

from ms4watch.alerts.rules.dry_weather import DryState
from ms4watch.alerts.rules.dry_weather_flow import dry_weather_flow, unknown_dry_flow

T0 = pd.Timestamp("2026-06-01 00:00", tz="UTC")


def flow(values, step_min=1):
    idx = pd.DatetimeIndex([T0 + pd.Timedelta(minutes=i * step_min) for i in range(len(values))])
    return pd.Series(values, index=idx, dtype=float)


def dry_like(s, state=DryState.DRY):
    return pd.Series(int(state), index=s.index)


@pytest.mark.parametrize("minutes_above,episodes", [(29, 0), (30, 1)])
def test_29_vs_30_minutes(minutes_above, episodes):
    # readings at 0..minutes_above are above the floor: first to last spans minutes_above min
    s = flow([0.1] * 5 + [2.0] * (minutes_above + 1) + [0.1] * 5)
    e = dry_weather_flow(s, dry_like(s), floor_gpm=0.5)
    assert len(e) == episodes
    if episodes:
        assert e["start"].iat[0] == T0 + pd.Timedelta(minutes=5)
        assert e["end"].iat[0] == T0 + pd.Timedelta(minutes=35)
        assert not e["open"].iat[0] and e["peak_gpm"].iat[0] == 2.0


def test_flow_at_the_floor_does_not_count_and_one_dip_breaks_the_run():
    s = flow([0.5] * 40)
    assert dry_weather_flow(s, dry_like(s), floor_gpm=0.5).empty
    s = flow([1.0] * 20 + [0.4] + [1.0] * 20)
    assert dry_weather_flow(s, dry_like(s), floor_gpm=0.5).empty


def test_hysteresis_one_event_per_episode_and_open_at_end():
    s = flow([1.0] * 40 + [0.1] * 3 + [1.0] * 40)
    e = dry_weather_flow(s, dry_like(s), floor_gpm=0.5)
    assert len(e) == 1 and bool(e["open"].iat[0])


def test_wet_or_unknown_weather_is_not_dry_weather_flow():
    s = flow([3.0] * 60)
    assert dry_weather_flow(s, dry_like(s, DryState.WET)).empty
    assert dry_weather_flow(s, dry_like(s, DryState.UNKNOWN)).empty


def test_flow_readings_out_of_order_or_sent_twice_are_judged_as_in_order():
    """40 min above the floor while dry is dry-weather flow however the readings come: newest
    first they gave no episode, sent twice one of 80 readings."""
    s = flow([2.0] * 41)
    ref = dry_weather_flow(s, dry_like(s))
    assert len(ref) == 1 and ref["n_readings"].iat[0] == 41
    for got in (dry_weather_flow(s.iloc[::-1], dry_like(s).iloc[::-1]),
                dry_weather_flow(pd.concat([s, s]), pd.concat([dry_like(s), dry_like(s)]))):
        pd.testing.assert_frame_equal(got, ref)
    # the states travel with their readings: wet for the last 15 min (given newest first) is 25 min dry
    d = dry_like(s)
    d.iloc[26:] = int(DryState.WET)
    assert dry_weather_flow(s.iloc[::-1], d.iloc[::-1]).empty and dry_weather_flow(s, d).empty
    unknown = dry_like(s, DryState.UNKNOWN)
    assert len(unknown_dry_flow(s.iloc[::-1], unknown.iloc[::-1])) == 1


def test_empty_input_is_no_episode():
    s = pd.Series([], index=pd.DatetimeIndex([], tz="UTC"), dtype=float)
    assert dry_weather_flow(s, dry_like(s)).empty and unknown_dry_flow(s, dry_like(s)).empty


# -- "sustained >= 30 min" across a silence of the logger ------------------------------------------
def readings_at(minutes_and_values):
    idx = pd.DatetimeIndex([T0 + pd.Timedelta(minutes=m) for m, _ in minutes_and_values])
    return pd.Series([v for _, v in minutes_and_values], index=idx, dtype=float)


@pytest.mark.parametrize("silence_min,episodes", [(30, 1), (45, 1), (46, 0), (14 * 60, 0)])
def test_a_silence_longer_than_the_stale_threshold_is_no_sustained_flow(silence_min, episodes):
    """Flow above the floor at 17:00 and again after the logger was silent all night is no
    evidence of flow sustained for 14 h (REGULATIONS.md *Dry-weather flow present*: "sustained
    >= 30 min"): a silence that makes the station stale (by default more than 3 x 15 min,
    ``rules.stale_intervals`` x ``rules.report_interval``) itself ends the run; a missed
    reading or two does not."""
    s = readings_at([(0, 2.0), (silence_min, 2.0)])
    assert len(dry_weather_flow(s, dry_like(s), floor_gpm=0.5)) == episodes
    assert len(unknown_dry_flow(s, dry_like(s, DryState.UNKNOWN), floor_gpm=0.5)) == episodes
    s = readings_at([(m, 2.0) for m in range(0, 11)] + [(m, 2.0) for m in range(10 + silence_min, 20 + silence_min)])
    assert len(dry_weather_flow(s, dry_like(s), floor_gpm=0.5)) == episodes


@pytest.mark.parametrize("step_min", [20, 30, 45])
def test_a_logger_reporting_every_20_to_45_min_shows_sustained_flow(step_min):
    """A healthy battery logger reporting every 20-45 min (stale only after 45 min by
    default) shows flow above the floor for two hours: dry-weather flow, from its first
    reading to its last."""
    s = readings_at([(m, 2.0) for m in range(0, 121, step_min)])
    e = dry_weather_flow(s, dry_like(s), floor_gpm=0.5)
    assert e["start"].tolist() == [T0] and e["end"].tolist() == [s.index[-1]]
    assert len(unknown_dry_flow(s, dry_like(s, DryState.UNKNOWN), floor_gpm=0.5)) == 1


@pytest.mark.parametrize("gap_min,episodes", [(90, 1), (6 * 60, 1), (6 * 60 + 1, 0)])
def test_a_station_reporting_every_2_h_is_silent_only_after_6_h(gap_min, episodes):
    """``max_gap``: the station's stale threshold, here 3 x a registry ``report_interval`` of
    2 h: a 90-min gap between readings above the floor is that logger's ordinary pace."""
    s = readings_at([(0, 2.0), (gap_min, 2.0)])
    assert len(dry_weather_flow(s, dry_like(s), floor_gpm=0.5, max_gap=timedelta(hours=6))) == episodes
    assert len(unknown_dry_flow(s, dry_like(s, DryState.UNKNOWN), floor_gpm=0.5,
                                max_gap=timedelta(hours=6))) == episodes


def test_a_silence_is_never_shorter_than_the_minimum_duration():
    """A stale threshold below the minimum duration (a logger every 5 min, stale after 10)
    still lets two readings the minimum duration apart show it: 30 min, one episode."""
    s = readings_at([(0, 2.0), (30, 2.0)])
    assert len(dry_weather_flow(s, dry_like(s), floor_gpm=0.5, max_gap=timedelta(minutes=10))) == 1
    s = readings_at([(0, 2.0), (31, 2.0)])
    assert dry_weather_flow(s, dry_like(s), floor_gpm=0.5, max_gap=timedelta(minutes=10)).empty


def test_a_silence_splits_the_run_and_each_side_is_judged_on_its_own():
    # 20 min of flow, 2 h of silence, 40 min of flow: one episode, from after the silence
    s = readings_at([(m, 2.0) for m in range(0, 21)] + [(m, 2.0) for m in range(140, 181)])
    e = dry_weather_flow(s, dry_like(s), floor_gpm=0.5)
    assert e["start"].tolist() == [T0 + pd.Timedelta(minutes=140)] and e["n_readings"].tolist() == [41]
    # 40 min, silence, 40 min: two episodes, never one spanning the silence
    s = readings_at([(m, 2.0) for m in range(0, 41)] + [(m, 2.0) for m in range(160, 201)])
    e = dry_weather_flow(s, dry_like(s), floor_gpm=0.5)
    assert e["start"].tolist() == [T0, T0 + pd.Timedelta(minutes=160)]
    assert e["end"].tolist() == [T0 + pd.Timedelta(minutes=40), T0 + pd.Timedelta(minutes=200)]


def test_the_default_silence_is_the_stale_threshold_of_the_registrys_defaults():
    from ms4watch.alerts.rules._common import DEFAULT_MAX_GAP
    from ms4watch.contract.rules_config import RuleSettings
    r = RuleSettings()
    assert DEFAULT_MAX_GAP == r.stale_intervals * r.report_interval == timedelta(minutes=45)
