"""Dry weather: < 0.10 in in the trailing 72 h at each gauge (never added); a gap in rain data is
unknown, never dry."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ms4watch.alerts.rules.dry_weather import (DryState, RainIndex, combine_dry_states, is_dry_weather,
                                               outfall_dry_weather)

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


# -- several gauges: judged one by one, depths never added (issue 10, item 1) ----------------

W, D, U = DryState.WET, DryState.DRY, DryState.UNKNOWN


@pytest.mark.parametrize("states,outfall", [
    ((D, D, D), D), ((D, D, U), D), ((D, U, U), D),     # every gauge with coverage dry, >= 1 covered
    ((U, U, U), U), ((), U),                            # none covered (or no gauge): never assumed dry
    ((W, D, D), W), ((D, U, W), W), ((U, U, W), W),     # the wettest gauge decides, covered or not
])
def test_combining_gauge_states(states, outfall):
    frame = pd.DataFrame({f"RG-{k}": [int(s)] for k, s in enumerate(states)}, index=pd.DatetimeIndex([T0]))
    if not states:
        frame = pd.DataFrame(index=pd.DatetimeIndex([T0]))
    assert combine_dry_states(frame).iat[0] == outfall


@pytest.mark.parametrize("depths,state", [
    ((0.06, 0.06), DryState.DRY),     # 0.12 in if added: each gauge saw 0.06 in
    ((0.09, 0.09), DryState.DRY),
    ((0.10, 0.00), DryState.WET),     # exactly 0.10 in at one gauge is wet
    ((0.09, 0.10), DryState.WET),
])
def test_each_gauge_judged_on_its_own(depths, state):
    rains = {}
    for k, d in enumerate(depths):
        r = heartbeat(100)
        r.iloc[600] = d                              # ~50 h in, inside the window ending at 100 h
        rains[f"RG-{k + 1}"] = r
    at = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100)])
    st, per_gauge, depth = outfall_dry_weather(rains, at)
    assert st.iat[0] == state
    assert list(depth.iloc[0]) == list(depths)


def test_three_gauges_one_without_coverage_and_a_gap_already_holding_010_in():
    at = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100)])
    dead = pd.Series([0.0], index=pd.DatetimeIndex([T0]))          # reported once, then silent
    rains = {"RG-1": heartbeat(100), "RG-2": heartbeat(100), "RG-3": dead}
    st, per_gauge, _ = outfall_dry_weather(rains, at)
    assert st.iat[0] == DryState.DRY and list(per_gauge.iloc[0]) == [D, D, U]
    # the silent gauge recorded 0.10 in before falling silent inside the window: wet
    wet_then_dead = pd.Series([0.0, 0.10], index=pd.DatetimeIndex([T0, T0 + pd.Timedelta(hours=40)]))
    st, per_gauge, _ = outfall_dry_weather({**rains, "RG-3": wet_then_dead}, at)
    assert st.iat[0] == DryState.WET and list(per_gauge.iloc[0]) == [D, D, W]
    # no gauge covers the window: unknown, whatever the others say
    st, _, _ = outfall_dry_weather({"RG-1": dead, "RG-2": dead.iloc[:0]}, at)
    assert st.iat[0] == DryState.UNKNOWN


def test_recent_rain_at_one_gauge_makes_the_outfall_wet():
    six = pd.Timedelta(hours=6)
    r1, r2 = heartbeat(100), heartbeat(100)
    r2.loc[T0 + pd.Timedelta(hours=97)] = 0.01                      # a storm begins at RG-2 only
    at = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100)])
    st, per_gauge, _ = outfall_dry_weather({"RG-1": r1, "RG-2": r2.sort_index()}, at, after_rain=six)
    assert st.iat[0] == DryState.WET and list(per_gauge.iloc[0]) == [D, W]


# -- RainIndex: what gauge_dry_state builds per call, the streaming engine keeps and extends
H_NS = 3600 * 10**9


def picks(draw, options, n):
    """n values from options, drawn as n bytes in one go: a list of n sampled_from draws cost
    hypothesis one choice each (up to 240 per example here), most of these tests' CPU."""
    return [options[b % len(options)] for b in draw(st.binary(min_size=n, max_size=n))]


@st.composite
def rain_rows(draw):
    """A gauge's rows: heartbeats at a random step with outages (gaps of up to 3 h), tips."""
    n = draw(st.integers(0, 120))
    steps = picks(draw, [60, 300, 900, 3600, 3601, 3 * 3600], n)
    t = np.cumsum([0] + steps[:-1]).astype(np.int64) * 10**9 if n else np.empty(0, np.int64)
    v = np.array(picks(draw, [0.0, 0.0, 0.0, 0.01, 0.04, 0.1], n), dtype=float)
    return t, v


KW = dict(lookback_ns=6 * H_NS, max_rain_uin=100_000, after_rain_ns=2 * H_NS)   # a short look-back: rows fall out of it


@settings(max_examples=300, deadline=None)
@given(rain_rows(), st.lists(st.integers(0, 120), max_size=4))
def test_a_rain_index_extended_row_by_row_equals_one_built_at_once(rows, cuts):
    t, v = rows
    built = RainIndex(t, v, H_NS)
    grown = RainIndex(t[:0], v[:0], H_NS)
    for a, b in zip([0] + sorted(cuts), sorted(cuts) + [t.size]):
        grown.extend(t[a:b], v[a:b])
    for name in ("n", "npos", "ns"):
        assert getattr(grown, name) == getattr(built, name)
    for name, size in (("t", built.n), ("cum", built.n + 1), ("tpos", built.npos), ("ca", built.ns), ("cb", built.ns)):
        assert getattr(grown, name)[:size].tolist() == getattr(built, name)[:size].tolist(), name
    at = np.arange(-H_NS, int(t[-1]) + 2 * H_NS if t.size else H_NS, 600 * 10**9, dtype=np.int64)
    for a, b in zip(grown.states(at, **KW), built.states(at, **KW)):
        assert a.tolist() == b.tolist()


@settings(max_examples=300, deadline=None)
@given(rain_rows(), st.integers(0, 120))
def test_rows_older_than_the_look_back_and_two_gaps_change_no_judgement(rows, k):
    """The engine's index may keep rows its buffer has dropped (the buffer keeps the look-back
    and twice the gap before the earliest flow reading it judges): same states from there on."""
    t, v = rows
    if not t.size:
        return
    cut = int(t[min(k, t.size - 1)])
    kept = t >= cut
    at = np.arange(cut + KW["lookback_ns"] + 2 * H_NS, int(t[-1]) + 2 * H_NS, 300 * 10**9, dtype=np.int64)
    whole = RainIndex(t, v, H_NS).states(at, **KW)
    trimmed = RainIndex(t[kept], v[kept], H_NS).states(at, **KW)
    for a, b in zip(whole, trimmed):
        assert a.tolist() == b.tolist()


# -- units: a metric gauge (REGULATIONS.md *Dry weather*: less than 0.10 in in the previous 72 h) -----
MM = 0.03937007874015749   # what the readings CSV's "mm" becomes in canonical inches (contract/units.py)


@pytest.mark.parametrize("tip_mm,tips,state", [(0.02, 126, DryState.DRY), (0.02, 127, DryState.WET),
                                               (0.254, 10, DryState.WET), (0.1, 25, DryState.DRY),
                                               (0.01, 254, DryState.WET)])
def test_a_metric_gauge_is_wet_at_exactly_2_54_mm(tip_mm, tips, state):
    """2.54 mm is 0.10 in exactly: not "less than 0.10 in", so not dry (127 rows of 0.02 mm
    were summed as 127 x 787 micro-inches = 0.099949 in: dry)."""
    r = heartbeat(100, step="1min")
    r.iloc[3000:3000 + tips] = tip_mm * MM
    at = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100)])
    assert is_dry_weather(r, at).iat[0] == state
    state_of, _per_gauge, depth = outfall_dry_weather({"RG-1": r, "RG-2": heartbeat(100)}, at)
    assert state_of.iat[0] == state and depth["RG-1"].iat[0] == pytest.approx(tip_mm * tips / 25.4, abs=1e-6)


# -- awkward rain records (REGULATIONS.md *Dry weather*: less than 0.10 in of rain in the
#    previous 72 h; a gap in rain data is never assumed dry; *Double tip*) --------------------
AT100 = pd.DatetimeIndex([T0 + pd.Timedelta(hours=100)])


@pytest.mark.parametrize("bad", [-0.05, -np.inf])
def test_a_negative_depth_never_cancels_rain_that_fell(bad):
    """0.12 in fell, then a broken row of -0.05 in: 0.12 in is not "less than 0.10 in"
    (the sum 0.07 in called it dry, and a real discharge an hour later unseen)."""
    r = heartbeat(100)
    r.iloc[600], r.iloc[601] = 0.12, bad
    assert is_dry_weather(r, AT100).iat[0] == DryState.WET
    st_, _, depth = outfall_dry_weather({"RG-1": r}, AT100)
    assert st_.iat[0] == DryState.WET and depth["RG-1"].iat[0] == 0.12


def test_missing_depths_are_a_gap_not_dry_weather():
    """A gauge that sent rows without a depth (NaN, None) for the whole window measured
    nothing: unknown (replay drops such rows; the rule called them 72 h of zero rain)."""
    r = heartbeat(100)
    r[:] = np.nan
    assert is_dry_weather(r, AT100).iat[0] == DryState.UNKNOWN
    nones = pd.Series([None] * len(r), index=r.index, dtype=object)
    assert is_dry_weather(nones, AT100).iat[0] == DryState.UNKNOWN
    # 3 h of NaN inside the window: a gap like any other
    r = heartbeat(100)
    r.iloc[600:636] = np.nan
    assert is_dry_weather(r, AT100).iat[0] == DryState.UNKNOWN
    # with a dry second gauge the outfall is judged on that one
    st_, per_gauge, _ = outfall_dry_weather({"RG-1": r, "RG-2": heartbeat(100)}, AT100)
    assert st_.iat[0] == DryState.DRY and list(per_gauge.iloc[0]) == [U, D]


@pytest.mark.parametrize("second_after,state", [
    (pd.Timedelta(0), DryState.DRY),                     # the same row sent twice: 0.05 in, not 0.10 in
    (pd.Timedelta(milliseconds=400), DryState.DRY),      # a double tip (within 1 s): discarded
    (pd.Timedelta(seconds=1), DryState.WET),             # 1 s after: a second tip (as storms count it)
])
def test_duplicated_rows_and_double_tips_are_counted_once(second_after, state):
    from ms4watch.alerts.rules.storms import storm_events
    r = heartbeat(100)
    t = T0 + pd.Timedelta(hours=50, seconds=7)
    r = pd.concat([r, pd.Series([0.05, 0.05], index=[t, t + second_after])]).sort_index(kind="stable")
    assert is_dry_weather(r, AT100).iat[0] == state
    assert is_dry_weather(r.iloc[::-1], AT100).iat[0] == state                 # unsorted rows: the same
    assert storm_events(r)["depth_in"].iat[0] == (0.05 if state == DryState.DRY else 0.10)
    # off (0): every row counts, as before
    assert is_dry_weather(r, AT100, double_tip=pd.Timedelta(0)).iat[0] == DryState.WET


@settings(max_examples=200, deadline=None)
@given(rain_rows(), st.lists(st.integers(0, 120), max_size=4), st.data())
def test_a_rain_index_with_double_tips_and_missing_depths_extended_equals_one_built(rows, cuts, data):
    t, v = rows
    if t.size:   # tips 0.3-0.9 s apart, NaN and negative rows among them
        t = t + np.asarray(picks(data.draw, [0, 0, 300, 900], t.size), dtype=np.int64) * 10**6
        t = np.maximum.accumulate(t)
        odd = picks(data.draw, [None, None, None, np.nan, -0.02], t.size)
        v = np.array([x if x is not None else y for x, y in zip(odd, v)], dtype=float)
    built = RainIndex(t, v, H_NS, 10**9)
    grown = RainIndex(t[:0], v[:0], H_NS, 10**9)
    for a, b in zip([0] + sorted(cuts), sorted(cuts) + [t.size]):
        grown.extend(t[a:b], v[a:b])
    at = np.arange(-H_NS, int(t[-1]) + 2 * H_NS if t.size else H_NS, 600 * 10**9, dtype=np.int64)
    for a, b in zip(grown.states(at, **KW), built.states(at, **KW)):
        assert a.tolist() == b.tolist()
