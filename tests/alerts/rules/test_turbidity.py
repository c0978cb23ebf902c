"""Turbidity contrast: delta > max(5 NTU, 10 % of upstream) sustained 15 min; QC; backstop."""

from datetime import timedelta

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


# -- the backstop needs only the downstream probe (issue 10, item 2) ---------------------------
EMPTY = pd.Series([], index=pd.DatetimeIndex([], tz="UTC"), dtype=float)


@pytest.mark.parametrize("n_above,value,episodes", [
    (4, 300.0, 1),     # 4 readings 5 min apart = 15 min above 250 NTU
    (3, 300.0, 0),     # 10 min: not sustained
    (6, 250.0, 0),     # exactly 250 NTU is not above the backstop
    (6, 250.1, 1),
])
def test_backstop_without_any_upstream_reading(n_above, value, episodes):
    down = ser([20.0] * 3 + [value] * n_above + [20.0] * 3)
    eps, nev = turbidity_contrast(EMPTY, down, params=ContrastParams())
    assert len(eps) == episodes
    if episodes:
        assert eps["basis"].iat[0] == "backstop" and np.isnan(eps["max_delta_ntu"].iat[0])
        assert eps["max_downstream_ntu"].iat[0] == value
        assert eps["start"].iat[0] == down.index[3] and eps["end"].iat[0] == down.index[2 + n_above]
    # the contrast itself could never be evaluated: one notice over every reading
    assert len(nev) == 1 and nev["causes"].iat[0] == ("upstream_missing",) and bool(nev["open"].iat[0])


def test_upstream_failing_qc_leaves_the_backstop_and_raises_not_evaluable():
    up, down = ser([10.0] * 12), ser([10.0] * 2 + [300.0] * 8 + [10.0] * 2, offset_s=60)
    up_bad = pd.Series(True, index=up.index)
    eps, nev = turbidity_contrast(up, down, upstream_bad=up_bad)
    assert list(eps["basis"]) == ["backstop"] and list(nev["causes"]) == [("upstream_qc",)]
    # the downstream probe failing QC: no backstop either, and the notice says why
    down_bad = pd.Series(True, index=down.index)
    eps, nev = turbidity_contrast(up, down, downstream_bad=down_bad)
    assert eps.empty and list(nev["causes"]) == [("downstream_qc",)]


def test_a_gap_in_upstream_data_breaks_the_contrast_and_is_not_evaluable():
    up = ser([10.0] * 20)
    down = ser([40.0] * 20, offset_s=30)
    eps, nev = turbidity_contrast(up, down)
    assert len(eps) == 1 and eps["basis"].iat[0] == "contrast" and nev.empty
    gap = up.drop(up.index[8:13])                      # 40..60 min: 4 downstream readings unpaired
    eps, nev = turbidity_contrast(gap, down)
    assert len(eps) == 2 and list(eps["end"]) == [down.index[7], down.index[19]]
    assert len(nev) == 1 and nev["start"].iat[0] == down.index[8] and nev["end"].iat[0] == down.index[11]


def test_an_episode_carried_partly_by_the_backstop_says_so():
    up = ser([10.0] * 12)
    down = ser([40.0] * 6 + [400.0] * 6, offset_s=30)
    eps, _ = turbidity_contrast(up.drop(up.index[6:]), down)   # upstream stops when downstream reaches 400
    assert list(eps["basis"]) == ["contrast+backstop"] and eps["max_delta_ntu"].iat[0] == 30.0
    assert eps["max_downstream_ntu"].iat[0] == 400.0 and eps["end"].iat[0] == down.index[11]


# -- exactly at the allowance, in the decimals a probe reports (REGULATIONS.md *Turbidity contrast*:
#    downstream − upstream > max(5 NTU, 10 % of upstream): exactly at it is not an exceedance) -------------
@pytest.mark.parametrize("up,down", [
    (3.3, 8.3), (4.8, 9.8), (10.1, 15.1), (45.3, 50.3),       # exactly 5 NTU above (8.3 − 3.3 = 5.000000000000001 in floats)
    (50.3, 55.33), (51.0, 56.1), (123.4, 135.74), (200.0, 220.0),   # exactly 10 % above
])
def test_exactly_at_the_allowance_is_not_an_exceedance(up, down):
    p = ContrastParams()
    assert not bool(exceeds(np.array([up]), np.array([down]), p)[0])
    eps, _ = turbidity_contrast(ser([up] * 6), ser([down] * 6), params=p)
    assert eps.empty
    # 0.01 NTU more (a probe's resolution) is one
    assert bool(exceeds(np.array([up]), np.array([round(down + 0.01, 2)]), p)[0])


def test_exactly_at_a_registry_allowance_is_not_an_exceedance():
    p = ContrastParams(delta_ntu=7.3, fraction=0.15)
    assert not exceeds(np.array([1.1, 60.7]), np.array([8.4, 69.805]), p).any()   # 7.3 NTU; 15 % of 60.7
    assert exceeds(np.array([1.1, 60.7]), np.array([8.41, 69.815]), p).all()


# -- readings without a value and readings out of order (REGULATIONS.md *Turbidity contrast*:
#    "both sensors passing QC"; a pair that cannot be judged says so, never stays silent) ------
@pytest.mark.parametrize("bad,cause", [(np.nan, "upstream_missing"), (np.inf, "upstream_qc")])
def test_an_upstream_probe_sending_no_value_is_not_evaluable_not_silence(bad, cause):
    """100 NTU downstream against an upstream probe reading NaN (no reading, as the engine
    and replay skip it) or infinity (failing QC): the contrast cannot be judged, and says so
    (before, it met no test and raised no notice: silence); the backstop still can."""
    up, down = ser([bad] * 10), ser([100.0] * 10, offset_s=30)
    eps, nev = turbidity_contrast(up, down)
    assert eps.empty and list(nev["causes"]) == [(cause,)] and nev["n_readings"].iat[0] == 10
    eps, nev = turbidity_contrast(up, ser([300.0] * 10, offset_s=30))
    assert list(eps["basis"]) == ["backstop"] and len(nev) == 1


def test_an_infinite_downstream_reading_breaks_the_run_and_is_not_evaluable():
    up = ser([10.0] * 12)
    down = ser([40.0] * 4 + [np.inf] * 4 + [40.0] * 4, offset_s=30)
    eps, nev = turbidity_contrast(up, down)
    assert list(eps["n_readings"]) == [4, 4]
    assert list(nev["causes"]) == [("downstream_qc",)] and nev["start"].iat[0] == down.index[4]


def test_a_downstream_reading_without_a_value_is_no_reading():
    """NaN downstream readings are left out, as the engine and replay skip them: the run of
    the readings around them goes on, as across readings the logger never sent (a hole
    shorter than the stale threshold: a longer silence ends a run)."""
    up = ser([10.0] * 12)
    down = ser([40.0] * 4 + [np.nan] * 4 + [40.0] * 4, offset_s=30)
    eps, nev = turbidity_contrast(up, down)
    assert list(eps["n_readings"]) == [8] and nev.empty
    gone = down.dropna()
    pd.testing.assert_frame_equal(eps, turbidity_contrast(up, gone)[0])


def test_readings_out_of_order_or_sent_twice_are_judged_as_in_order():
    up, down = ser([10.0] * 10), ser([40.0] * 10, offset_s=30)
    ref, _ = turbidity_contrast(up, down)
    assert len(ref) == 1 and ref["n_readings"].iat[0] == 10
    for u, d in ((up.iloc[::-1], down.iloc[::-1]), (pd.concat([up, up]), pd.concat([down, down]))):
        bad_u, bad_d = pd.Series(False, index=u.index), pd.Series(False, index=d.index)
        eps, nev = turbidity_contrast(u, d, upstream_bad=bad_u, downstream_bad=bad_d)
        pd.testing.assert_frame_equal(eps, ref)
        assert nev.empty
    # a QC failure travels with its reading when both are given out of order
    bad = pd.Series([False] * 10, index=down.index)
    bad.iloc[5] = True
    ref = turbidity_contrast(up, down, downstream_bad=bad)
    got = turbidity_contrast(up.iloc[::-1], down.iloc[::-1], downstream_bad=bad.iloc[::-1])
    for a, b in zip(got, ref):
        pd.testing.assert_frame_equal(a, b)


def test_the_partner_is_the_nearest_upstream_reading_passing_qc():
    """An upstream reading failing QC 1 min away does not leave the downstream reading
    unjudged while one passing QC lies within the ±5 min tolerance (2.5 min away): the
    contrast is judged against that one (docs/rules.md: "a QC-passing upstream reading
    within ±5 min")."""
    down = ser([40.0] * 8, offset_s=0)                 # 00:00, 00:05, …
    near_bad = ser([10.0] * 8, offset_s=60)            # 1 min after each: flagged
    far_good = ser([10.0] * 8, offset_s=-150)          # 2.5 min before each: passing
    up = pd.concat([near_bad, far_good]).sort_index()
    up_bad = pd.Series(up.index.isin(near_bad.index), index=up.index)
    eps, nev = turbidity_contrast(up, down, upstream_bad=up_bad)
    assert nev.empty, nev
    assert len(eps) == 1 and eps["basis"].iat[0] == "contrast" and eps["max_delta_ntu"].iat[0] == 30.0
    # with only failing readings in reach, not evaluable for the upstream's QC (not "missing")
    eps, nev = turbidity_contrast(near_bad, down, upstream_bad=pd.Series(True, index=near_bad.index))
    assert eps.empty and list(nev["causes"]) == [("upstream_qc",)]


# -- "sustained >= 15 min" across a silence of the downstream probe --------------------------------
def at_minutes(minutes, ntu):
    return pd.Series(ntu, index=pd.DatetimeIndex([T0 + pd.Timedelta(minutes=m) for m in minutes]), dtype=float)


@pytest.mark.parametrize("silence_min,episodes", [(15, 1), (45, 1), (46, 0), (14 * 60, 0)])
def test_a_silence_longer_than_the_stale_threshold_is_no_sustained_contrast(silence_min, episodes):
    """Two muddy downstream readings with the probe silent between them show no contrast
    sustained through the silence (REGULATIONS.md *Turbidity contrast*: sustained >= 15 min)
    when the silence makes the probe stale (by default more than 3 x 15 min,
    ``rules.stale_intervals`` x ``rules.report_interval``): it ends the run, by contrast or
    backstop; a shorter one is the logger's pace."""
    t = [0, silence_min]
    up, down = at_minutes(t, 10.0), at_minutes(t, 40.0)
    assert len(turbidity_contrast(up, down)[0]) == episodes
    empty = pd.Series([], index=pd.DatetimeIndex([], tz="UTC"), dtype=float)
    assert len(turbidity_contrast(empty, down * 10)[0]) == episodes        # the backstop alone
    # 10 min muddy, the silence, 10 min muddy: no 15 min shown on either side of a long one
    t = [0, 5, 10, 10 + silence_min, 15 + silence_min, 20 + silence_min]
    assert len(turbidity_contrast(at_minutes(t, 10.0), at_minutes(t, 40.0))[0]) == episodes


@pytest.mark.parametrize("step_min", [20, 30, 45])
def test_a_probe_reporting_every_20_to_45_min_shows_a_sustained_contrast(step_min):
    """A healthy battery logger reporting every 20-45 min, muddy for two hours below the site:
    a contrast episode from its first muddy reading to its last."""
    up = ser([10.0] * 12, step_min=step_min)
    down = ser([11.0] * 2 + [40.0] * (120 // step_min + 1) + [11.0] * 2, step_min=step_min, offset_s=30)
    eps, nev = turbidity_contrast(up, down)
    assert nev.empty and len(eps) == 1 and eps["basis"].iat[0] == "contrast"
    assert eps["start"].iat[0] == down.index[2] and eps["end"].iat[0] == down.index[2 + 120 // step_min]


@pytest.mark.parametrize("gap_min,episodes", [(90, 1), (6 * 60, 1), (6 * 60 + 1, 0)])
def test_a_probe_reporting_every_2_h_is_silent_only_after_6_h(gap_min, episodes):
    """``max_gap``: the probe's stale threshold, here 3 x a registry ``report_interval`` of 2 h:
    a 90-min gap between muddy readings is that logger's ordinary pace."""
    t = [0, gap_min]
    eps, _ = turbidity_contrast(at_minutes(t, 10.0), at_minutes(t, 40.0), max_gap=timedelta(hours=6))
    assert len(eps) == episodes


def test_a_silence_is_never_shorter_than_the_minimum_duration():
    """A stale threshold below the minimum duration still lets two readings 15 min apart show it."""
    for gap_min, episodes in ((15, 1), (16, 0)):
        t = [0, gap_min]
        eps, _ = turbidity_contrast(at_minutes(t, 10.0), at_minutes(t, 40.0), max_gap=timedelta(minutes=5))
        assert len(eps) == episodes
