"""The open-episode shortcut (``Outfalls.extend_open``): while a dry-weather-flow
episode or a dry-weather-unknown notice is open, the engine extends it from the new flow
readings alone instead of running the outfall's rules. Every batch must return the very
same events as an engine without shortcuts, the state files must be equal, and the final
events must equal replay.

The scenarios aim at what the extension recomputes: long episodes (5-min flow) with dips
below the floor, rejoined within the minimum duration or not; a silence of the flow logger
(longer than its stale threshold or not, by the registry's report_interval); rain during an open episode,
late rows inside the look-back among them (the gauge's logger delivers late); an approved
discharge or an exempt flow whose window starts or ends mid-episode; uncalibrated readings
mid-episode (flow or either gauge); a second gauge that never reports, stops or starts
late (no coverage); data across a DST change; episodes open from a station's first
reading and still open at its last."""

from __future__ import annotations

import json
import os
import random
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ms4watch.alerts.engine import StreamingEngine
from ms4watch.alerts.engine.state import snapshot
from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.replay import final_state, replay
from ms4watch.contract.timeutil import to_ns

from .support import MIN, reading, registry, table

REG = """
municipality: testtown
timezone: America/New_York
rain_gauges:
  - {id: RG-1}
  - {id: RG-2}
outfalls:
  - {id: OF-1, name: Outfall 1, rain_gauges: [RG-1, RG-2], flow_floor_gpm: 0.5%s}
"""
RULES = """  dry_lookback: 48h
  lateness: 1h
"""
HOURS = 60
STARTS = {   # the data's first minute: an ordinary day, or 52 h before a DST change (America/New_York)
    "june": datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc),
    "fall_back": datetime(2026, 11, 1, 6, 0, tzinfo=timezone.utc) - timedelta(hours=52),
    "spring_forward": datetime(2026, 3, 8, 7, 0, tzinfo=timezone.utc) - timedelta(hours=52),
}


def _iso(t_ns: int) -> str:
    return datetime.fromtimestamp(t_ns / 1e9, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@st.composite
def open_episode_scenarios(draw):
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    t0 = to_ns(STARTS[draw(st.sampled_from(sorted(STARTS)))])

    def at(m: float) -> int:
        return t0 + int(round(m * MIN))

    end_min = HOURS * 60
    # flow every 5 min: long runs above the floor (one may start at the first reading, one
    # run to the last), with dips below it of 1-8 readings (5-40 min: rejoined or not)
    on = draw(st.lists(st.tuples(st.integers(0, end_min // 5), st.integers(6, 12 * 12)), min_size=1, max_size=4))
    if draw(st.booleans()):
        on.append((0, draw(st.integers(6, 200))))
    if draw(st.booleans()):
        on.append((end_min // 5 - draw(st.integers(6, 200)), 400))
    hi = set()
    for a, n in on:
        hi |= set(range(a, a + n))
    dips = set()
    for _ in range(draw(st.integers(0, 6))):
        a = rnd.randrange(0, end_min // 5)
        dips |= set(range(a, a + rnd.randint(1, 8)))
    # the flow logger silent for 35-205 min between readings: a silence that ends a run when
    # longer than its stale threshold, 3 x its registry report_interval (perhaps stated: 20 min,
    # 1 h) or 3 x 15 min; anywhere, or inside a run above the floor (an open episode, perhaps)
    quiet = draw(st.one_of(st.none(), st.tuples(st.integers(0, end_min // 5), st.integers(6, 40)),
                           st.tuples(st.sampled_from(sorted(hi)), st.integers(6, 40))))
    interval = draw(st.sampled_from(["", ", report_interval: 20m", ", report_interval: 1h"]))
    rs = []
    for i in range(end_min // 5):
        if quiet and quiet[0] <= i < quiet[0] + quiet[1]:
            continue
        v = rnd.choice([2.0, 2.5, 3.25, 0.5000001, 7.125]) if i in hi and i not in dips else rnd.choice([0.1, 0.5, 0.0])
        rs.append(reading(at(i * 5), "OF-1", "flow", v))
    # RG-1: zero rows every 15 min (perhaps with an outage), tips now and then, some while
    # flow runs (rain during an open episode)
    gap = draw(st.one_of(st.none(), st.tuples(st.integers(0, end_min // 15), st.integers(4, 20))))
    for i in range(end_min // 15):
        if not (gap and gap[0] <= i < gap[0] + gap[1]):
            rs.append(reading(at(i * 15), "RG-1", "rain", 0.0))
    tips = {}   # one value per time (bursts may overlap)
    for _ in range(draw(st.integers(0, 4))):
        a = rnd.randrange(0, end_min)
        for k in range(rnd.randint(1, 12)):
            tips.setdefault(at(a + 3 * k + 0.25), rnd.choice([0.01, 0.02, 0.0]))
    rs += [reading(x, "RG-1", "rain", tip) for x, tip in tips.items()]
    # RG-2: never, until some time, or only from some time on (no coverage where it is silent)
    rg2 = draw(st.sampled_from(["never", "stops", "starts", "always"]))
    cut = rnd.randrange(0, end_min // 15)
    for i in range(end_min // 15):
        if rg2 == "always" or (rg2 == "stops" and i < cut) or (rg2 == "starts" and i >= cut):
            rs.append(reading(at(i * 15 + 0.5), "RG-2", "rain", 0.01 if rnd.random() < 0.01 else 0.0))
    # uncalibrated: one reading, or every reading of a station from some time on
    if draw(st.booleans()):
        station = draw(st.sampled_from(["OF-1", "RG-1", "RG-2"]))
        since = at(rnd.randrange(0, end_min))
        one = rnd.random() < 0.5
        hits = [k for k, r in enumerate(rs) if r.station == station and r.time_ns >= since]
        for k in hits[:1] if one else hits:
            rs[k] = rs[k]._replace(flags="calibration_overdue")
    # an approved discharge or an exempt flow starting or ending mid-data
    extra, rows = "", ""
    kind = draw(st.sampled_from(["none", "discharge", "exempt"]))
    a_on, n_on = rnd.choice(on)   # a window that starts before a run and ends inside it, or the other way round
    a, b = max(0, a_on * 5 - rnd.randrange(0, 120)), (a_on + rnd.randrange(1, n_on + 1)) * 5
    if rnd.random() < 0.3:
        a, b = sorted(rnd.sample(range(0, end_min, 5), 2))
    frm, to = _iso(at(a)), _iso(at(max(b + rnd.choice([0, 1, 5]), a + 1)))
    if kind == "discharge":
        rows = f'approved_discharges:\n  - {{outfall: OF-1, from: "{frm}", to: "{to}", reason: hydrant flushing}}\n'
    elif kind == "exempt":
        bounds = rnd.choice([f'from: "{frm}", to: "{to}"', f'from: "{frm}"', f'to: "{to}"'])
        extra = f", exempt_flows: [{{kind: foundation drain, {bounds}}}]"
    text = REG % (extra + interval) + rows
    # delivery: jitter within the lateness window; the rain gauge's logger may lag (its rows
    # arrive late, inside the look-back of flow readings already judged)
    lateness = 60 * MIN
    lag = draw(st.sampled_from([0, 20, 55])) * MIN
    keyed = []
    for r in rs:
        k = r.time_ns + rnd.randrange(0, 2 * MIN)
        if r.quantity == "rain" and lag:
            k = r.time_ns + rnd.randrange(0, lag)
        keyed.append((k, r))
    keyed += [(r.time_ns + rnd.randrange(0, lateness - MIN), r) for r in rnd.sample(rs, len(rs) // 20)]
    keyed.sort(key=lambda x: x[0])
    restart_at = draw(st.one_of(st.none(), st.floats(0.1, 0.9)))
    batch = draw(st.integers(1, 30))
    eval_interval = timedelta(minutes=draw(st.sampled_from([0, 0, 10])))
    return text, rs, [r for _, r in keyed], restart_at, batch, eval_interval


def _same_files(engines) -> None:
    """Both engines checkpoint; their state files are equal."""
    for e in engines:
        e.checkpoint()
    fast, ref = (json.loads(e.state_path.read_text()) for e in engines)
    assert fast == ref


def _run(text, rs, delivered, restart_at, batch, eval_interval, d):
    """Feed both engines batch by batch; assert equal events and state after every batch
    (what a checkpoint writes; the files themselves at the restart and at the end) and
    replay. Returns the number of extensions made."""
    reg = registry(text, RULES)
    made = []
    engines = [StreamingEngine(reg, d / f"{on}.json", eval_interval=eval_interval, shortcuts=on)
               for on in (True, False)]

    def count(eng):
        orig = eng.outfalls.extend_open

        def wrapped(oid, changed):
            e = orig(oid, changed)
            if e is not None:
                made.append(e.kind)
            return e
        eng.outfalls.extend_open = wrapped
    count(engines[0])
    cut = int(len(delivered) * restart_at) if restart_at is not None else None
    out = []
    for i in range(0, len(delivered), batch):
        if cut is not None and i >= cut:
            _same_files(engines)
            engines = [StreamingEngine(reg, e.state_path, eval_interval=eval_interval, shortcuts=e.shortcuts)
                       for e in engines]
            count(engines[0])
            cut = None
        got, want = (e.feed(delivered[i:i + batch]) for e in engines)
        assert [(e.id, e.status, e.fields) for e in got] == [(e.id, e.status, e.fields) for e in want]
        out += got
        fast, ref = (snapshot(e) for e in engines)   # what checkpoint() would write, not written
        assert fast == ref
    end = max(r.time_ns for r in rs)
    got, want = (e.advance(end) for e in engines)
    assert [(e.id, e.status, e.fields) for e in got] == [(e.id, e.status, e.fields) for e in want]
    out += got
    _same_files(engines)
    expected = final_state(replay(reg, table(rs)))
    final = {k: e for k, e in final_state(out).items() if e.status.value == "active"}
    assert set(final) == set(expected)
    for k in expected:
        assert final[k].fields == expected[k].fields, k
    return made


@pytest.mark.slow
@settings(max_examples=100 if os.environ.get("MS4_SLOW") else 12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(open_episode_scenarios())
def test_extending_open_episodes_changes_nothing(tmp_path_factory, scenario):
    _run(*scenario, tmp_path_factory.mktemp("engines"))


def test_the_extension_is_made_for_both_kinds(tmp_path):
    """The shortcut is exercised at all: a long dry-weather-flow episode (48-53 h, under an
    approved discharge that ends mid-episode, at 50 h) and a long dry-weather-unknown notice after it
    (the second gauge silent, the first in an outage) are extended batch after batch, with
    the same events as without it."""
    t0 = to_ns(STARTS["june"])
    rs = []
    for i in range(HOURS * 12):
        rs.append(reading(t0 + i * 5 * MIN, "OF-1", "flow", 2.0 + (i % 7) / 8 if i >= 576 else 0.1))
    for i in range(HOURS * 4):
        if not 208 <= i < 216:   # an outage at 52-54 h: flow from then on is dry weather unknown
            rs.append(reading(t0 + i * 15 * MIN, "RG-1", "rain", 0.0))
    rs.sort(key=lambda r: r.time_ns)
    until = _iso(t0 + 50 * 60 * MIN)
    text = REG % "" + f'approved_discharges:\n  - {{outfall: OF-1, from: "{_iso(t0)}", to: "{until}", reason: x}}\n'
    made = _run(text, rs, rs, None, 4, timedelta(0), tmp_path)
    assert made.count(AlertKind.DRY_WEATHER_FLOW) > 10 and made.count(AlertKind.DRY_WEATHER_UNKNOWN) > 10


def _silent_flow(missing: int) -> list:
    """Flow every 5 min, above the floor from 48 h, the logger silent for ``missing``
    readings from 50 h (a gap of ``(missing + 1) x 5`` min); zero rain rows every 15 min."""
    t0 = to_ns(STARTS["june"])
    silent = range(600, 600 + missing)
    rs = [reading(t0 + i * 5 * MIN, "OF-1", "flow", 2.0 if i >= 576 else 0.1)
          for i in range(HOURS * 12) if i not in silent]
    rs += [reading(t0 + i * 15 * MIN, "RG-1", "rain", 0.0) for i in range(HOURS * 4)]
    rs.sort(key=lambda r: r.time_ns)
    return rs


@pytest.mark.parametrize("missing,interval,split", [
    (24, None, True),     # 2 h 5 min: a silence (stale after 3 x 15 min)
    (9, None, True),      # 50 min: stale
    (8, None, False),     # 45 min: the stale threshold itself is not yet a silence
    (17, "2h", False),    # 90 min of a logger the registry says reports every 2 h
    (71, "2h", False),    # 6 h: its stale threshold
    (72, "2h", True),     # 6 h 5 min
])
def test_a_silence_of_the_flow_logger_ends_an_open_episode(tmp_path, missing, interval, split):
    """An open dry-weather-flow episode, then the flow logger silent, then flow above the
    floor again. A silence that makes the station stale (``rules.stale_intervals`` x its
    registry ``report_interval``, else ``rules.report_interval``) showed no flow sustained
    through it: the shortcut does not extend the episode across it; the episode ends at the
    last reading before it and a new one starts after it, as replay has them. A shorter gap
    is the logger's pace: the episode goes on, extended by the shortcut."""
    t0 = to_ns(STARTS["june"])
    rs = _silent_flow(missing)
    text = REG % (f", report_interval: {interval}" if interval else "")
    made = _run(text, rs, rs, None, 4, timedelta(0), tmp_path)
    dwf = sorted((e.fields["start"], e.fields["end"]) for e in final_state(replay(registry(text, RULES), table(rs))).values()
                 if e.kind is AlertKind.DRY_WEATHER_FLOW)
    if split:
        assert dwf == [(t0 + 576 * 5 * MIN, t0 + 599 * 5 * MIN), (t0 + (600 + missing) * 5 * MIN, None)]
    else:
        assert dwf == [(t0 + 576 * 5 * MIN, None)] and AlertKind.DRY_WEATHER_FLOW in made


def test_the_interval_a_logger_states_does_not_bridge_a_silence(tmp_path):
    """The interval the flow logger states in its status (2 h) is not used to judge a silence
    (replay never sees status messages, and streaming must equal replay): 50 min without a
    reading still ends the run, by the registry's default stale threshold (3 x 15 min)."""
    rs = _silent_flow(9)
    reg = registry(REG % "", RULES)
    eng = StreamingEngine(reg, tmp_path / "state.json")
    eng.station_report_interval("OF-1", 7200.0)
    out = []
    for i in range(0, len(rs), 4):
        out += eng.feed(rs[i:i + 4])
    out += eng.advance(max(r.time_ns for r in rs))
    def flow_events(events):   # (the stale-station notice does follow the stated interval)
        return {k: e.fields for k, e in events.items() if e.kind is AlertKind.DRY_WEATHER_FLOW}
    want = flow_events(final_state(replay(reg, table(rs))))
    assert flow_events(final_state(out)) == want and len(want) == 2


@pytest.mark.parametrize("gap_h,episode", [(47, True), (48, True), (49, False), (60, False)])
def test_a_silence_longer_than_the_dry_lookback_ends_a_run_whatever_the_interval(tmp_path, gap_h, episode):
    """A flow logger the registry says reports every 30 h (stale after 90 h): 10 min above the
    floor, silent for ``gap_h``, 10 min above it again. The engine keeps no station's readings
    across a silence longer than ``lateness`` + ``dry_lookback`` (49 h here: the station has
    gone silent, docs/rules.md), so a run ends at a silence longer than ``dry_lookback``
    (48 h) whatever the station's stale threshold: streaming equals replay."""
    t0 = to_ns(STARTS["june"])
    a, b = 50 * 12, 50 * 12 + 2 + gap_h * 12      # 5-min steps: the first and second burst
    rs = [reading(t0 + i * 5 * MIN, "OF-1", "flow", 2.0 if i < a + 3 or i < b + 3 else 0.1)
          for i in [*range(a, a + 3), *range(b, b + 4)]]
    rs += [reading(t0 + i * 15 * MIN, "RG-1", "rain", 0.0) for i in range((gap_h + 60) * 4)]
    rs.sort(key=lambda r: r.time_ns)
    text = REG % ", report_interval: 30h"
    _run(text, rs, rs, None, 8, timedelta(0), tmp_path)
    dwf = [(e.fields["start"], e.fields["end"]) for e in final_state(replay(registry(text, RULES), table(rs))).values()
           if e.kind is AlertKind.DRY_WEATHER_FLOW]
    assert dwf == ([(t0 + a * 5 * MIN, t0 + (b + 2) * 5 * MIN)] if episode else [])
