"""Dry weather: < 0.10 in in the trailing 72 h; a gap in rain data is unknown, never dry."""

import pandas as pd
import pytest

from ms4watch.alerts.rules.dry_weather import DryState, is_dry_weather

T0 = pd.Timestamp("2026-06-01 00:00", tz="UTC")


def heartbeat(hours, step="5min"):
    return pd.Series(0.0, index=pd.date_range(T0, T0 + pd.Timedelta(hours=hours), freq=step))


@pytest.mark.parametrize("depths,state", [([0.09], DryState.DRY), ([0.10], DryState.WET),
                                          ([0.05, 0.04], DryState.DRY), ([0.05, 0.05], DryState.WET)])
def test_009_is_dry_010_is_wet(depths, state):
    r = heartbeat(100)
    for k, d in enumerate(depths):
        r.iloc[600 + k] = d  # ~50 h in, inside the window ending at 100 h
    at = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100)])
    assert is_dry_weather(r, at).iat[0] == state


def test_rain_older_than_72h_no_longer_counts():
    r = heartbeat(100)
    t_rain = T0 + pd.Timedelta(hours=10)
    r.loc[t_rain] = 0.5
    at = pd.DatetimeIndex([t_rain + pd.Timedelta(hours=72) - pd.Timedelta(minutes=5), t_rain + pd.Timedelta(hours=72)])
    assert list(is_dry_weather(r, at)) == [DryState.WET, DryState.DRY]


def test_gap_in_rain_data_is_unknown_not_dry():
    r = heartbeat(130)
    r = r[(r.index < T0 + pd.Timedelta(hours=40)) | (r.index > T0 + pd.Timedelta(hours=42))]
    at = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100), T0 + pd.Timedelta(hours=115)])
    assert list(is_dry_weather(r, at)) == [DryState.UNKNOWN, DryState.DRY]
    # the gauge falls silent: trusted for 1 h (max_gap), then unknown
    end = T0 + pd.Timedelta(hours=130)
    later = pd.DatetimeIndex([end + pd.Timedelta(minutes=60), end + pd.Timedelta(minutes=61)])
    assert list(is_dry_weather(r, later)) == [DryState.DRY, DryState.UNKNOWN]


def test_no_rain_data_at_all_is_unknown_and_wet_wins_over_a_gap():
    empty = pd.Series([], index=pd.DatetimeIndex([], tz="UTC"), dtype=float)
    at = pd.DatetimeIndex([T0])
    assert is_dry_weather(empty, at).iat[0] == DryState.UNKNOWN
    r = pd.Series([0.2], index=pd.DatetimeIndex([T0 - pd.Timedelta(hours=1)]))
    assert is_dry_weather(r, at).iat[0] == DryState.WET


def test_a_storm_running_off_is_not_dry_weather_even_below_010_in():
    """The first 0.09 in of a storm, and the 6 h after the last rain, are not dry weather:
    otherwise every storm's runoff would start as a dry-weather-flow alarm."""
    r = heartbeat(100)
    t_rain = T0 + pd.Timedelta(hours=80)
    r.loc[t_rain] = 0.03                       # a storm begins: 0.03 in so far
    six = pd.Timedelta(hours=6)
    at = pd.DatetimeIndex([t_rain - pd.Timedelta(minutes=5), t_rain, t_rain + six - pd.Timedelta(minutes=5),
                           t_rain + six])
    assert list(is_dry_weather(r, at, after_rain=six)) == [DryState.DRY, DryState.WET, DryState.WET, DryState.DRY]
    assert list(is_dry_weather(r, at)) == [DryState.DRY] * 4   # off: the literal 0.10 in rule only
