"""The streaming engine: storms, provisional notice, inspections, escalation, restart."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ms4watch.alerts.engine import StreamingEngine
from ms4watch.alerts.events import AlertKind, AlertEventStatus

from .support import MIN, REGISTRY, at, reading, registry

H = 60  # minutes


def storm(start_min, tips, step=2):
    return [reading(at(start_min + k * step), "RG-1", "rain", 0.01) for k in range(tips)]


def test_provisional_then_confirmed_storm_then_inspection_due_and_escalation(tmp_path):
    eng = StreamingEngine(registry(), tmp_path / "state.json", eval_interval=timedelta(0))
    out = []
    for r in storm(0, 60):
        out += eng.feed([r])
    storms = [e for e in out if e.kind is AlertKind.STORM]
    provisional = [e for e in storms if e["qualifying"] and e["end"] is None]
    assert provisional and provisional[0]["depth_in"] == 0.5  # crossing 0.50 in, still running
    last_rain = at(59 * 2)
    eng.advance(last_rain + 6 * H * MIN)  # exactly 6 h: not yet confirmed
    assert eng.events()[storms[0].id]["end"] is None
    out = eng.advance(last_rain + 6 * H * MIN + 1)
    confirmed = [e for e in out if e.kind is AlertKind.STORM]
    assert confirmed and confirmed[0]["end"] == last_rain and confirmed[0]["depth_in"] == 0.6
    due = [e for e in out if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "storm"]
    assert len(due) == 1 and due[0]["site"] == "CS-1" and due[0]["due"] == last_rain + 24 * H * MIN
    # overdue after 24 h without an inspection: an escalation
    out = eng.advance(last_rain + 24 * H * MIN + 1)
    esc = [e for e in out if e.kind is AlertKind.INSPECTION_OVERDUE and e["reason"] == "storm"]
    assert len(esc) == 1
    # recording an inspection after the storm closes the item (late, so the escalation stays)
    t_insp = last_rain + 25 * H * MIN
    out = eng.record_inspection("CS-1", t_insp, inspector="J. Doe", note="silt fence repaired")
    closed = [e for e in out if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "storm"]
    assert closed and closed[0]["closed_at"] == t_insp
    eng.checkpoint()
    again = StreamingEngine(registry(), tmp_path / "state.json")
    assert again.events() == eng.events()
    assert again.inspections[0].inspector == "J. Doe"


def test_inspection_in_time_prevents_escalation():
    eng = StreamingEngine(registry(), None)
    eng.feed(storm(0, 60))
    last_rain = at(59 * 2)
    eng.advance(last_rain + 7 * H * MIN)
    eng.record_inspection("CS-1", datetime.fromtimestamp((last_rain + 3 * H * MIN) / 1e9, tz=timezone.utc))
    eng.advance(last_rain + 48 * H * MIN)
    ev = eng.events()
    storm_items = [e for e in ev.values() if e.kind is AlertKind.INSPECTION_OVERDUE and e["reason"] == "storm"]
    assert storm_items == []


def test_duplicates_change_nothing_and_late_reading_revises_storm():
    eng = StreamingEngine(registry(), None, eval_interval=timedelta(0))
    rs = storm(0, 30)
    eng.feed(rs)
    assert eng.feed(rs) == []  # the same readings again: no events
    # a late reading (within lateness) before the first one: the storm now starts earlier
    out = eng.feed([reading(at(-30), "RG-1", "rain", 0.01)])
    kinds = {(e.kind, e.status) for e in out}
    assert (AlertKind.STORM, AlertEventStatus.RETRACTED) in kinds and (AlertKind.STORM, AlertEventStatus.ACTIVE) in kinds
    live = [e for e in eng.events().values() if e.kind is AlertKind.STORM]
    assert len(live) == 1 and live[0]["start"] == at(-30) and live[0]["depth_in"] == 0.31


def test_dst_inspection_due_is_24_real_hours_and_local_offset_in_json():
    # storm ends 2026-11-01 00:30 EDT; due 24 h later is 2026-11-01 23:30 EST (offset changes)
    reg = registry()
    eng = StreamingEngine(reg, None)
    end = int(datetime(2026, 11, 1, 4, 30, tzinfo=timezone.utc).timestamp()) * 10**9
    eng.feed([reading(end - k * 2 * MIN, "RG-1", "rain", 0.01) for k in range(55)])
    out = eng.advance(end + 7 * H * MIN)
    due = next(e for e in out if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "storm")
    d = json.loads(due.to_json(reg.tz))
    assert d["storm_end"] == "2026-11-01T00:30:00-04:00"
    assert d["due"] == "2026-11-01T23:30:00-05:00"
    assert d["provision"].startswith("Schenectady ch. 148") and d["params"]["after_storm_h"] == 24.0


def test_bad_state_file_and_unknown_site_are_named(tmp_path):
    import pytest

    from ms4watch.alerts.errors import AlertError

    bad = tmp_path / "state.json"
    bad.write_text("{not json")
    with pytest.raises(AlertError, match="state.json: cannot read engine state"):
        StreamingEngine(registry(), bad)
    with pytest.raises(AlertError, match="unknown construction site 'CS-9'"):
        StreamingEngine(registry(), None).record_inspection("CS-9", at(0))


def test_a_gauge_that_never_reported_does_not_hold_back_the_outfalls_horizon():
    """An outfall with a dead gauge among three: its episodes still become final and its
    buffers are trimmed (old data then counts as late), as with one gauge."""
    reg = registry("""
municipality: testtown
rain_gauges: [{id: RG-1}, {id: RG-2}, {id: RG-3}]
outfalls:
  - {id: OF-1, name: Outfall 1, rain_gauges: [RG-1, RG-2, RG-3], flow_floor_gpm: 0.5}
""", "  dry_lookback: 48h\n")
    eng = StreamingEngine(reg, None)
    for h in range(0, 7 * 24):      # a week; RG-3 never reports
        batch = [reading(at(h * H + m), g, "rain", 0.0) for m in range(0, 60, 15) for g in ("RG-1", "RG-2")]
        batch += [reading(at(h * H + m), "OF-1", "flow", 3.0 if 50 * H <= h * H + m < 51 * H else 0.1)
                  for m in range(0, 60, 5)]
        eng.feed(batch)
    eng.advance(at(7 * 24 * H))
    [dwf] = [e for e in eng.events().values() if e.kind is AlertKind.DRY_WEATHER_FLOW]
    assert dwf["rain_gauges_used"] == ["RG-1", "RG-2"] and dwf["rain_gauges_missing"] == ["RG-3"]
    eng.feed([reading(at(24 * H), "OF-1", "flow", 3.0)])   # six days late: long since final
    assert eng.late_dropped == 1


def test_a_gauge_that_went_silent_does_not_hold_back_the_outfalls_horizon_for_ever():
    """Issue 21: the outfall's only gauge reports for an hour, then never again. Once it is
    more than ``lateness`` + ``dry_lookback`` behind the flow it holds nothing back: the flow
    buffer stays bounded (it grew by every reading for ever), the sustained flow is
    *unknown*, never dry (no rain data covers it), the notice becomes final, and the events
    are replay's. The gauge's backlog, days later, does not reopen them, as a never-reported
    gauge's would not."""
    from ms4watch.alerts.replay import final_state, replay

    from .support import table

    reg = registry("""
municipality: testtown
rain_gauges: [{id: RG-1}]
outfalls:
  - {id: OF-1, name: Outfall 1, rain_gauges: [RG-1], flow_floor_gpm: 0.5}
""", "  dry_lookback: 48h\n")    # lateness 2 h, dwf_min_duration 30 min (defaults)
    days, flowing = 10, range(5 * 24 * H, 5 * 24 * H + 2 * H)   # 2 h above the floor on day 5
    rain = [reading(at(m), "RG-1", "rain", 0.0) for m in range(0, 60, 15)]
    flow = [reading(at(m), "OF-1", "flow", 3.0 if m in flowing else 0.1) for m in range(0, days * 24 * H, 5)]
    eng = StreamingEngine(reg, None)
    out, held = eng.feed(rain), 0
    for k in range(0, len(flow), 12):   # an hour a batch
        out += eng.feed(flow[k:k + 12])
        held = max(held, len(eng.get("OF-1", "flow")[0]))
    out += eng.advance(flow[-1].time_ns)
    # bounded: 48 h + 2 h behind the flow before the gauge stops counting, the horizon 2 h
    # behind, 3 x 30 min of context and one 10 min evaluation interval (was every reading: 2,880)
    assert held <= (48 * H + 2 * H + 2 * H + 90 + 10) // 5 + 1
    got = {k: e for k, e in final_state(out).items() if e.status is AlertEventStatus.ACTIVE}
    want = final_state(e for e in replay(reg, table(rain + flow)) if not e.kind.value.startswith(("stale", "inspection")))
    got = {k: e for k, e in got.items() if not e.kind.value.startswith(("stale", "inspection"))}
    assert set(got) == set(want) and all(got[k].fields == want[k].fields for k in want)
    [unknown] = [e for e in got.values() if e.kind is AlertKind.DRY_WEATHER_UNKNOWN]
    assert unknown["start"] == at(flowing[0]) and unknown["rain_gauges_missing"] == ["RG-1"]
    assert not any(e.kind is AlertKind.DRY_WEATHER_FLOW for e in got.values())
    # the gauge's spool arrives: a storm during the flow. The notice is final: it stays
    backlog = eng.feed([reading(at(flowing[0] + m), "RG-1", "rain", 0.05) for m in range(0, 60, 5)])
    backlog += eng.advance(flow[-1].time_ns + 10 * MIN)
    assert unknown.id not in {e.id for e in backlog}
    assert eng.events()[unknown.id].fields == unknown.fields


@pytest.mark.parametrize("outage_h", [20, 49])
def test_a_gauge_outage_shorter_than_lateness_plus_look_back_is_still_waited_for(outage_h):
    """The other side of issue 21's bound: a gauge silent for less than ``lateness`` +
    ``dry_lookback`` (2 h + 48 h) still holds the outfall back, so its spool, drained when it
    is back, makes the flow during the outage wet, as replay says (no dry-weather notice
    made final meanwhile)."""
    from ms4watch.alerts.replay import final_state, replay

    from .support import table

    reg = registry("""
municipality: testtown
rain_gauges: [{id: RG-1}]
outfalls:
  - {id: OF-1, name: Outfall 1, rain_gauges: [RG-1], flow_floor_gpm: 0.5}
""", "  dry_lookback: 48h\n")
    end, down, back = 80 * H, 10 * H, (10 + outage_h) * H
    flowing = range(12 * H, 14 * H)
    rain = [reading(at(m), "RG-1", "rain", 0.5 if m == 11 * H + 30 else 0.0) for m in range(0, end, 15)]
    flow = [reading(at(m), "OF-1", "flow", 3.0 if m in flowing else 0.1) for m in range(0, end, 5)]
    live = [r for r in rain + flow if r.time_ns < at(back) and not (r.station == "RG-1" and at(down) <= r.time_ns)]
    spool = [r for r in rain if at(down) <= r.time_ns < at(back)]
    after = sorted((r for r in rain + flow if r.time_ns >= at(back)), key=lambda r: r.time_ns)
    eng = StreamingEngine(reg, None)
    out = []
    for batch in [sorted(live, key=lambda r: r.time_ns)[k:k + 16] for k in range(0, len(live), 16)] + [spool] + \
            [after[k:k + 16] for k in range(0, len(after), 16)]:
        out += eng.feed(batch)
    out += eng.advance(at(end))
    keep = ("dry_weather",)
    want = final_state(e for e in replay(reg, table(rain + flow)) if e.kind.value.startswith(keep))
    got = {k: e for k, e in final_state(out).items() if e.status is AlertEventStatus.ACTIVE and e.kind.value.startswith(keep)}
    assert set(got) == set(want) and all(got[k].fields == want[k].fields for k in want)
    assert eng.late_dropped == 0


def test_missing_upstream_probe_streaming_gives_what_replay_gives_and_events_become_final():
    """Issue 10 item 2, streaming: the pair is evaluated on the downstream probe's data alone;
    its horizon is not held at -inf by the upstream probe that never reported."""
    from ms4watch.alerts.replay import final_state, replay

    from .support import table

    reg = registry()
    down = [reading(at(k * 5), "TD-1", "turbidity", 300.0 + (k % 3) if 12 <= k < 25 else 20.0 + (k % 3))
            for k in range(12 * 24)]
    eng = StreamingEngine(reg, None, eval_interval=timedelta(0))
    out = []
    for k in range(0, len(down), 6):
        out += eng.feed(down[k:k + 6])
    out += eng.advance(down[-1].time_ns)
    want = final_state(e for e in replay(reg, table(down)) if e.kind.value.startswith("turbidity"))
    got = {k: e for k, e in final_state(out).items() if e.status is AlertEventStatus.ACTIVE and k.startswith("turbidity")}
    assert set(got) == set(want) and all(got[k].fields == want[k].fields for k in want)
    backstop = [e for e in got.values() if e.kind is AlertKind.TURBIDITY_CONTRAST]
    assert [e["basis"] for e in backstop] == ["backstop"] and backstop[0]["end"] == at(24 * 5)
    assert any(e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE for e in got.values())
    # 22 h later, a reading inside the episode that would split it: the episode is final (frozen)
    late = eng.feed([reading(at(13 * 5 + 1), "TD-1", "turbidity", 20.0)])
    assert backstop[0].id not in {e.id for e in late}
    assert eng.events()[backstop[0].id].fields == backstop[0].fields


def test_a_sites_first_routine_item_opens_on_its_first_day_while_readings_stream():
    reg = registry(REGISTRY.replace("active_from: 2026-05-01", "active_from: 2026-06-02"))
    eng = StreamingEngine(reg, None, eval_interval=timedelta(0))
    opened = []
    for k in range(0, 48 * 4):          # 15-min heartbeat from June 1 12:00Z for two days
        opened += [e for e in eng.feed([reading(at(k * 15), "RG-1", "rain", 0.0)])
                   if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "routine"]
    # June 2 00:00 EDT = June 2 04:00Z, 16 h after T0; due 7 calendar days later
    assert [e["due"] for e in opened] == [at(16 * H + 7 * 24 * H)]


def test_the_report_interval_a_logger_states_in_its_status_is_used_and_kept(tmp_path):
    """A gauge with an hourly heartbeat and no report_interval in the registry: stale after
    45 min (the 15 min default) until its logger states 1 h; the registry's word wins."""
    hourly = [reading(at(h * H), "RG-1", "rain", 0.0) for h in range(7)]
    eng = StreamingEngine(registry(), tmp_path / "state.json")
    eng.feed(hourly[:2])
    eng.advance(at(H))
    stale = [e for e in eng.events().values() if e.kind is AlertKind.STALE_STATION and e["station"] == "RG-1"]
    assert [(e["start"], e["end"], e["interval_source"]) for e in stale] == [(at(45), at(H), "default")]
    out = eng.station_report_interval("RG-1", 3600.0)               # its status arrives
    assert [e.id for e in out if e.status is AlertEventStatus.RETRACTED] == [stale[0].id]
    assert eng.station_report_interval("RG-1", 3600.0) == []          # the same again: nothing changes
    eng.feed(hourly[2:])
    eng.advance(at(6 * H))
    assert not [e for e in eng.events().values() if e.kind is AlertKind.STALE_STATION and e["station"] == "RG-1"]
    eng.checkpoint()
    again = StreamingEngine(registry(), tmp_path / "state.json")
    again.advance(at(6 * H + 3 * H + 1))                              # silent > 3 h: stale, judged by 1 h
    [s] = [e for e in again.events().values() if e.kind is AlertKind.STALE_STATION and e["station"] == "RG-1"]
    assert s["start"] == at(9 * H) and s["interval_source"] == "status"
    ruled = StreamingEngine(registry(REGISTRY.replace("  - {id: RG-1}", "  - {id: RG-1, report_interval: 15min}")))
    ruled.feed(hourly)
    ruled.station_report_interval("RG-1", 3600.0)
    ruled.advance(at(6 * H))
    assert {e["interval_source"] for e in ruled.events().values() if e.kind is AlertKind.STALE_STATION
            and e["station"] == "RG-1"} == {"registry"}


def test_station_freshness_is_the_newest_reading_fed_and_the_stale_limit_the_rules_use():
    """What ``/metrics`` reads: each station's newest reading (one fed out of order does not
    move it back; a reading without a value is no reading) and its stale limit —
    rules.stale_intervals x the registry's interval, else the logger's stated, else the default."""
    reg = registry(REGISTRY.replace("  - {id: OF-1, name", "  - {id: OF-1, report_interval: 5min, name"),
                   rules="  stale_intervals: 2\n")
    eng = StreamingEngine(reg, None)
    eng.feed([reading(at(10), "RG-1", "rain", 0.0), reading(at(3), "RG-1", "rain", 0.0),
              reading(at(20), "OF-1", "flow", 1.0), reading(at(30), "OF-1", "flow", float("nan"))._replace(value=None)])
    eng.station_report_interval("RG-1", 3600.0)
    fresh = {s: (t, limit) for s, t, limit in eng.station_freshness()}
    assert fresh["RG-1"] == (at(10), 2 * 60 * MIN)          # stated 1 h
    assert fresh["OF-1"] == (at(20), 2 * 5 * MIN)           # the registry's 5 min
    assert fresh["TU-1"] == (None, 2 * 15 * MIN)            # never reported; the default 15 min
    assert set(fresh) == reg.station_ids()


def test_registry_stations_that_never_reported_become_stale_in_streaming_as_in_replay():
    from ms4watch.alerts.replay import final_state, replay

    from .support import table

    reg = registry()
    rs = [reading(at(k * 5), "RG-1", "rain", 0.0) for k in range(13)]     # only RG-1 reports, 0..60 min
    eng = StreamingEngine(reg, None)
    eng.feed(rs[:6])
    assert [e for e in eng.advance(at(25)) if e.kind is AlertKind.STALE_STATION] == []
    eng.feed(rs[6:])
    out = eng.advance(at(60))
    got = {e["station"]: e for e in out if e.kind is AlertKind.STALE_STATION}
    assert set(got) == {"OF-1", "TU-1", "TD-1"} and {e["start"] for e in got.values()} == {at(45)}
    want = {e.id: e for e in final_state(replay(reg, table(rs))).values() if e.kind is AlertKind.STALE_STATION}
    assert {e.id: e.fields for e in eng.events().values() if e.kind is AlertKind.STALE_STATION} == \
        {k: e.fields for k, e in want.items()}
    import pytest

    from ms4watch.alerts.errors import AlertError
    with pytest.raises(AlertError, match="OF-1: report interval must be a positive number of seconds"):
        eng.station_report_interval("OF-1", 0)


def test_a_never_reported_notice_is_withdrawn_when_the_stations_first_readings_come():
    """Its first readings may be a backlog covering the silence, or a logger installed late:
    from them on the station is judged by its readings, as replay judges it."""
    from ms4watch.alerts.replay import final_state, replay

    from .support import table

    reg = registry()
    rain = [reading(at(k * 5), "RG-1", "rain", 0.0) for k in range(37)]          # 0 .. 3 h
    flow = [reading(at(120 + k * 5), "OF-1", "flow", 0.1) for k in range(13)]   # OF-1 from 2 h
    eng = StreamingEngine(reg, None)
    eng.feed(rain[:25])
    [open_] = [e for e in eng.advance(at(120)) if e.kind is AlertKind.STALE_STATION and e["station"] == "OF-1"]
    assert open_["start"] == at(45) and open_["end"] is None
    eng.feed(rain[25:] + flow)
    out = eng.advance(at(180))
    assert [e.status for e in out if e.id == open_.id] == [AlertEventStatus.RETRACTED]
    want = {k for k, e in final_state(replay(reg, table(rain + flow))).items() if e.kind is AlertKind.STALE_STATION}
    assert {k for k, e in eng.events().items() if e.kind is AlertKind.STALE_STATION} == want
    assert not any(k.startswith("stale/OF-1") or k.startswith("stale/RG-1") for k in want)


# -- exact shortcuts: a subject's rules are skipped only when what changed cannot change its
# events. Each test feeds the same batches to an engine without shortcuts (every change runs
# the rules) and checks every batch returns the very same events, at the boundary of a shortcut.
DRY = "  dry_lookback: 48h\n"
F0 = 49 * H  # flow starts once the 48 h dry-weather look-back is covered by rain rows


def twins(reg, eval_interval=timedelta(0)):
    return (StreamingEngine(reg, None, eval_interval=eval_interval),
            StreamingEngine(reg, None, eval_interval=eval_interval, shortcuts=False))


def feed_both(engines, batch):
    fast, ref = engines
    got, want = fast.feed(batch), ref.feed(batch)
    assert [(e.id, e.status, e.fields) for e in got] == [(e.id, e.status, e.fields) for e in want]
    return got


def outfall(events):
    return [e for e in events if e.kind in (AlertKind.DRY_WEATHER_FLOW, AlertKind.DRY_WEATHER_UNKNOWN)]


def rain_heartbeat(until_min, step=15):
    return [reading(at(m), "RG-1", "rain", 0.0) for m in range(0, until_min + 1, step)]


def flow(minutes, value):
    return [reading(at(m), "OF-1", "flow", value) for m in minutes]


def test_shortcut_a_reading_at_the_floor_closes_an_open_episode():
    engines = twins(registry())                        # no rain rows: dry weather unknown
    for r in flow(range(0, 45, 5), 3.0):
        feed_both(engines, [r])
    [notice] = [e for e in engines[0].events().values() if e.kind is AlertKind.DRY_WEATHER_UNKNOWN]
    assert notice["end"] is None and notice["last_met"] == at(40)
    out = feed_both(engines, flow([45], 0.5))         # exactly the floor: not above it
    assert [(e.id, e["end"]) for e in out if e.kind is AlertKind.DRY_WEATHER_UNKNOWN] == [(notice.id, at(40))]
    assert outfall(feed_both(engines, flow([50], 0.5))) == []  # nothing left to change


def test_shortcut_a_run_above_the_floor_is_judged_when_it_reaches_the_minimum_duration():
    engines = twins(registry())
    for m in range(0, 30, 5):                          # 0 ... 25 min: shorter than 30 min
        assert outfall(feed_both(engines, flow([m], 3.0))) == []
    [notice] = outfall(feed_both(engines, flow([30], 3.0)))   # 0 ... 30 min: an episode
    assert notice.kind is AlertKind.DRY_WEATHER_UNKNOWN and notice["start"] == at(0)


def test_shortcut_a_spike_above_the_floor_changes_nothing():
    engines = twins(registry())
    for m in range(0, 60, 5):
        assert outfall(feed_both(engines, flow([m], 3.0 if m == 20 else 0.1))) == []


@pytest.mark.parametrize("gauge_ahead", [False, True], ids=["rain-row-appended", "rain-row-inserted"])
def test_shortcut_rain_at_the_time_of_the_last_flow_above_the_floor_ends_the_episode_sooner(gauge_ahead):
    """A rain row for exactly the time of the episode's last reading makes that reading wet:
    the rows from their own time on are what the shortcut re-judges."""
    engines = twins(registry(REGISTRY, DRY))
    feed_both(engines, rain_heartbeat(F0 + (90 if gauge_ahead else 30)))
    for m in range(F0, F0 + 60, 5):
        feed_both(engines, flow([m], 3.0 if m <= F0 + 40 else 0.1))
    [dwf] = [e for e in engines[0].events().values() if e.kind is AlertKind.DRY_WEATHER_FLOW]
    assert (dwf["start"], dwf["end"]) == (at(F0), at(F0 + 40))
    assert outfall(feed_both(engines, [reading(at(F0 + 40) + 1, "RG-1", "rain", 0.2)])) == []   # after it
    out = feed_both(engines, [reading(at(F0 + 40), "RG-1", "rain", 0.2)])
    assert [(e.id, e["end"]) for e in out if e.kind is AlertKind.DRY_WEATHER_FLOW] == [(dwf.id, at(F0 + 35))]


def test_shortcut_quiet_batches_move_the_cut_off_and_make_a_closed_episode_final(tmp_path):
    """Batches that cannot change an outfall's events (flow below the floor, zero rain rows)
    still move its cut-off and make its closed episode final, as without shortcuts: the state
    after every batch is the same, and the episode is frozen before the end."""
    reg = registry(REGISTRY, DRY)
    engines = [StreamingEngine(reg, tmp_path / f"{name}.json", eval_interval=timedelta(0), shortcuts=on)
               for name, on in (("fast", True), ("ref", False))]
    feed_both(engines, rain_heartbeat(F0 - 5, step=5))
    frozen_at = None
    for m in range(F0, F0 + 4 * H, 5):
        feed_both(engines, [reading(at(m), "RG-1", "rain", 0.0)] + flow([m], 3.0 if m < F0 + 40 else 0.1))
        for e in engines:
            e.checkpoint()
        fast, ref = (json.loads(e.state_path.read_text()) for e in engines)
        assert fast == ref, m
        [frozen] = [f for k, n, _cut, f, _evs in fast["subjects"] if (k, n) == ("outfall", "OF-1")]
        if frozen and frozen_at is None:
            frozen_at = m
    assert frozen_at is not None and frozen_at > F0 + 40
    [dwf] = [e for e in engines[0].events().values() if e.kind is AlertKind.DRY_WEATHER_FLOW]
    assert (dwf["start"], dwf["end"]) == (at(F0), at(F0 + 35))


def test_shortcut_a_corrected_flow_value_is_judged():
    engines = twins(registry())
    for m in range(0, 50, 5):
        feed_both(engines, flow([m], 3.0))
    out = feed_both(engines, flow([40, 45], 0.1))      # the logger corrects its last two readings
    assert [(e["end"], e["last_met"]) for e in out if e.kind is AlertKind.DRY_WEATHER_UNKNOWN] == [(at(35), at(35))]


def test_shortcut_a_correction_after_a_new_reading_in_the_same_batch_is_judged():
    engines = twins(registry())
    for m in range(0, 50, 5):
        feed_both(engines, flow([m], 3.0))
    out = feed_both(engines, flow([50, 45], 0.1))      # a new reading, then the last one corrected
    assert [(e["end"], e["last_met"]) for e in out if e.kind is AlertKind.DRY_WEATHER_UNKNOWN] == [(at(40), at(40))]


def test_shortcut_two_sensors_of_one_quantity_in_one_batch_are_new_readings():
    """A station with two flow meters reports both at one time: the second value replaces
    the first (the engine keeps one reading per station, quantity and time, the last), but
    both are new in the batch, so the shortcut still applies; the store keeps both."""
    engines = twins(registry())
    for m in range(0, 35, 5):                          # the second, at the floor, is what counts
        assert outfall(feed_both(engines, flow([m], 3.0) + flow([m], 0.5))) == []
    out = []
    for m in range(35, 70, 5):                         # now the second is above it
        out += outfall(feed_both(engines, flow([m], 0.1) + flow([m], 3.0)))
    assert [(e["start"], e["last_met"]) for e in out] == [(at(35), at(65))]


def test_shortcut_a_late_reading_below_the_floor_splits_a_run():
    engines = twins(registry())
    for m in range(0, 45, 5):
        if m != 20:
            feed_both(engines, flow([m], 3.0))
    [notice] = outfall(engines[0].events().values())   # 0 ... 40 min, the 20-min reading not in yet
    out = outfall(feed_both(engines, flow([20], 0.1)))  # it comes: 0 ... 15 and 25 ... 40, both too short
    assert [(e.id, e.status) for e in out] == [(notice.id, AlertEventStatus.RETRACTED)]


def test_shortcut_zero_rows_confirm_a_storm_once_the_inter_event_time_has_passed():
    engines = twins(registry())
    out = []
    for r in storm(0, 30):
        out += feed_both(engines, [r])
    last_rain = at(29 * 2)
    assert [e["depth_in"] for e in out if e.kind is AlertKind.STORM][-1] == 0.3
    for m in range(60, 6 * H + 60, 15):                 # zero rows: nothing changes ...
        assert [e for e in feed_both(engines, rain_heartbeat(m)[-1:]) if e.kind is AlertKind.STORM] == []
    assert at(6 * H + 45) - last_rain == 6 * H * MIN - 13 * MIN
    out = feed_both(engines, [reading(last_rain + 6 * H * MIN, "RG-1", "rain", 0.0)])   # exactly 6 h: not yet
    assert [e for e in out if e.kind is AlertKind.STORM] == []
    out = feed_both(engines, [reading(last_rain + 6 * H * MIN + 1, "RG-1", "rain", 0.0)])
    assert [(e["end"], e["confirmed"]) for e in out if e.kind is AlertKind.STORM] == [(last_rain, True)]


def test_shortcut_zero_rows_after_a_storm_move_the_cut_off_and_make_it_final(tmp_path):
    """Zero rows cannot change a storm but once it is due to be confirmed; they still move
    the gauge's cut-off and make the confirmed storm final, as without shortcuts: the state
    after every batch is the same, and the storm is frozen before the end."""
    engines = [StreamingEngine(registry(), tmp_path / f"{name}.json", eval_interval=timedelta(0), shortcuts=on)
               for name, on in (("fast", True), ("ref", False))]
    feed_both(engines, storm(0, 10))
    frozen_at = None
    for m in range(20, 10 * H, 5):
        feed_both(engines, [reading(at(m), "RG-1", "rain", 0.0)])
        for e in engines:
            e.checkpoint()
        fast, ref = (json.loads(e.state_path.read_text()) for e in engines)
        assert fast == ref, m
        [frozen] = [f for k, n, _cut, f, _evs in fast["subjects"] if (k, n) == ("gauge", "RG-1")]
        if frozen and frozen_at is None:
            frozen_at = m
    assert frozen_at is not None
    [s] = [e for e in engines[0].events().values() if e.kind is AlertKind.STORM]
    assert s["confirmed"] and s["depth_in"] == 0.1


def test_shortcut_a_late_tip_grows_the_storm_and_a_tip_corrected_to_zero_shrinks_it():
    engines = twins(registry())
    feed_both(engines, storm(0, 10) + rain_heartbeat(60)[1:])
    out = feed_both(engines, [reading(at(3), "RG-1", "rain", 0.01)])   # a tip from the logger's spool
    assert [e["depth_in"] for e in out if e.kind is AlertKind.STORM] == [0.11]
    out = feed_both(engines, [reading(at(4), "RG-1", "rain", 0.0)])    # a tip corrected to nothing
    assert [e["depth_in"] for e in out if e.kind is AlertKind.STORM] == [0.1]


def test_shortcut_a_late_zero_row_from_a_gauge_past_its_calibration_marks_the_storm():
    """Issue 13: a storm says uncalibrated when a rain row inside it carries
    calibration_overdue, zero rows included; such a row out of order runs the rules."""
    engines = twins(registry())
    feed_both(engines, storm(0, 10) + rain_heartbeat(60)[1:])
    after = feed_both(engines, [reading(at(61), "RG-1", "rain", 0.0, "calibration_overdue")])   # after the storm
    assert [e for e in after if e.kind is AlertKind.STORM] == []
    out = feed_both(engines, [reading(at(5), "RG-1", "rain", 0.0, "calibration_overdue")])     # inside it
    assert [e.fields.get("uncalibrated") for e in out if e.kind is AlertKind.STORM] == [True]


def test_shortcuts_run_every_rule_again_after_a_restart(tmp_path):
    """What changed before a restart and was not yet evaluated (eval_interval) is not in the
    state file: the first evaluation after it runs the rules in full, even for a change that
    could not change anything by itself."""
    reg = registry(REGISTRY.replace("  - {id: RG-1}\n", "  - {id: RG-1}\n  - {id: RG-2}\n").replace(
        "rain_gauges: [RG-1], flow", "rain_gauges: [RG-2], flow"))     # the storm falls elsewhere
    engines = [StreamingEngine(reg, tmp_path / f"{name}.json", eval_interval=timedelta(minutes=10), shortcuts=on)
               for name, on in (("fast", True), ("ref", False))]
    for m in range(0, 44, 4):                          # evaluated at 0, 12, 24, 36 min: not the 40 min batch
        feed_both(engines, storm(m, 1) + flow([m], 3.0))
    for e in engines:
        e.checkpoint()
    engines = [StreamingEngine(reg, e.state_path, eval_interval=timedelta(minutes=10), shortcuts=e.shortcuts)
               for e in engines]
    out = feed_both(engines, [reading(at(44), "RG-1", "rain", 0.0), reading(at(44), "OF-1", "flow", 0.1)])
    assert [e["depth_in"] for e in out if e.kind is AlertKind.STORM] == [0.11]
    assert [(e["start"], e["end"]) for e in outfall(out)] == [(at(0), at(40))]


def turbidity_rows(minutes, up, down, flags=""):
    """One batch per probe reading: upstream at m, downstream at m + 1 min (``up``/``down``:
    functions of the minute; ``down`` None: no downstream reading)."""
    batches = []
    for m in minutes:
        if up(m) is not None:
            batches.append([reading(at(m), "TU-1", "turbidity", up(m))])
        batches.append([reading(at(m + 1), "TD-1", "turbidity", down(m), flags(m) if callable(flags) else flags)])
    return batches


def pair_of(events):
    return [e for e in events if e.kind in (AlertKind.TURBIDITY_CONTRAST, AlertKind.TURBIDITY_NOT_EVALUABLE)]


def upstream(m):
    return 10.0 + (m // 5 % 4) * 0.5         # a background that moves a little (no flat line)


def test_shortcut_a_contrast_is_judged_once_it_has_lasted_15_min():
    engines = twins(registry())
    out = []
    for b in turbidity_rows(range(0, 60, 5), upstream, lambda m: upstream(m) + (8.0 if 20 <= m <= 40 else 1.0)):
        out += pair_of(feed_both(engines, b))
    assert [(e["start"], e["end"], e["basis"]) for e in out] == [(at(21), None, "contrast"), (at(21), None, "contrast"),
                                                                  (at(21), at(41), "contrast")]


@pytest.mark.parametrize("step,interval,episode", [(30, None, True), (45, None, True), (90, None, False),
                                                    (90, "2h", True)])
def test_a_probe_reporting_at_its_own_pace_shows_a_sustained_contrast(step, interval, episode):
    """Both probes every ``step`` min, the downstream one muddy for two hours or more: a
    contrast, unless its gaps are silences, longer than the probe's stale threshold
    (``rules.stale_intervals`` x its registry ``report_interval``, else 15 min: 45 min).
    Streaming with and without shortcuts gives what replay gives."""
    from ms4watch.alerts.replay import final_state, replay
    from .support import table
    text = REGISTRY.replace("construction_site: CS-1}", "construction_site: CS-1"
                            + (f", report_interval: {interval}" if interval else "") + "}")
    reg = registry(text)
    engines = twins(reg)
    k = -(-120 // step)                                     # muddy readings 2 .. 2 + k: >= 2 h
    muddy = range(2 * step, (2 + k) * step + 1)
    batches = turbidity_rows(range(0, (5 + k) * step, step), upstream,
                             lambda m: upstream(m) + (8.0 if m in muddy else 1.0))
    out = []
    for b in batches:
        out += pair_of(feed_both(engines, b))
    want = [(e.fields["start"], e.fields["end"]) for e in final_state(replay(reg, table([r for b in batches for r in b]))).values()
            if e.kind is AlertKind.TURBIDITY_CONTRAST]
    got = [(e["start"], e["end"]) for e in out if e.kind is AlertKind.TURBIDITY_CONTRAST][-1:]
    assert got == want == ([(at(2 * step + 1), at((2 + k) * step + 1))] if episode else [])


@pytest.mark.parametrize("gap_h,episode", [(72, True), (73, False)])
def test_a_probe_silent_longer_than_the_dry_lookback_shows_no_contrast_whatever_its_interval(gap_h, episode):
    """A pair the registry says reports every 30 h (stale after 90 h), muddy below the site
    before and after a silence of the downstream probe (the upstream one reporting): the engine keeps no readings across a silence
    longer than ``lateness`` + ``dry_lookback`` (72 h by default), so a run ends at one longer than
    ``dry_lookback`` whatever the stale threshold, in streaming as in replay."""
    from ms4watch.alerts.replay import final_state, replay
    from .support import table
    reg = registry(REGISTRY.replace("construction_site: CS-1}", "construction_site: CS-1, report_interval: 30h}"))
    engines = twins(reg)
    # the upstream probe every 5 min throughout, the downstream one muddy at 0-5 min and after the silence
    batches = [[reading(at(m), "TU-1", "turbidity", 10.0 + m / 1000)] for m in range(0, (gap_h + 3) * 60, 5)]
    batches += [[reading(at(m + 1), "TD-1", "turbidity", 20.0 + m / 1000)]           # never a flat line
                for m in (0, 5, gap_h * 60 + 5, gap_h * 60 + 10)]
    batches.sort(key=lambda b: b[0].time_ns)
    out = []
    for b in batches:
        out += pair_of(feed_both(engines, b))
    want = [(e.fields["start"], e.fields["end"]) for e in final_state(replay(reg, table([r for b in batches for r in b]))).values()
            if e.kind is AlertKind.TURBIDITY_CONTRAST]
    got = [(e["start"], e["end"]) for e in final_state(out).values() if e.kind is AlertKind.TURBIDITY_CONTRAST]
    assert got == want == ([(at(1), None)] if episode else [])


@pytest.mark.parametrize("level,episode", [(250.0, False), (250.1, True)])
def test_shortcut_the_backstop_is_judged_at_its_threshold(level, episode):
    engines = twins(registry())
    out = []
    for b in turbidity_rows(range(0, 40, 5), lambda m: 240.0 + upstream(m), lambda m: level + (m // 5 % 2) * 0.01):
        out += pair_of(feed_both(engines, b))
    assert [(e["start"], e["basis"]) for e in out][-1:] == ([(at(1), "backstop")] if episode else [])


def test_shortcut_a_silent_upstream_probe_gives_its_notice():
    engines = twins(registry())
    out = []
    for b in turbidity_rows(range(0, 60, 5), lambda m: None if 15 <= m < 40 else upstream(m), lambda m: upstream(m) + 1):
        out += pair_of(feed_both(engines, b))
    # the downstream reading at 36 min pairs with the upstream one at 40 (within 5 min) once it comes
    assert [(e["start"], e["end"], e["causes"]) for e in out][-1] == (at(16), at(31), ["upstream_missing"])


def test_shortcut_a_spike_is_judged_when_the_reading_after_it_comes():
    """Readings alternating by 225 NTU (a drop below the background and back): each fails the
    spike test once its next reading is in, so they are not evaluable from the first."""
    engines = twins(registry())
    out = []
    for b in turbidity_rows(range(0, 40, 5), lambda m: 225.0 + (m // 5 % 2) * 0.5,
                            lambda m: 230.0 if m < 10 or m // 5 % 2 else 5.0):
        out += pair_of(feed_both(engines, b))
    assert out and out[-1]["causes"] == ["downstream_qc"] and out[-1]["start"] == at(11)


def test_shortcut_a_logger_flag_is_judged():
    engines = twins(registry())
    out = []
    for b in turbidity_rows(range(0, 40, 5), upstream, lambda m: upstream(m) + 1,
                            flags=lambda m: "sensor_error" if m >= 10 else ""):
        out += pair_of(feed_both(engines, b))
    assert out and out[-1]["causes"] == ["downstream_qc"] and out[-1]["start"] == at(11)


def test_shortcut_an_upstream_reading_closer_in_time_ends_an_open_episode():
    """Downstream readings every 10 min, 8 NTU above the background: an episode from 1 min.
    An upstream reading at 21 min, 16 NTU, pairs with the downstream one at 21 (it was
    paired with 20 min): no contrast there, the run is 1 ... 11 min, too short."""
    engines = twins(registry())
    out = []
    for m in range(0, 25, 5):
        out += pair_of(feed_both(engines, [reading(at(m), "TU-1", "turbidity", 10.0 + m / 100)]))
        if m % 10 == 0:
            out += pair_of(feed_both(engines, [reading(at(m + 1), "TD-1", "turbidity", 18.0 + m / 10)]))
    [episode] = {e.id: e for e in out}.values()
    assert episode["end"] is None and episode["last_met"] == at(21)
    out = pair_of(feed_both(engines, [reading(at(21), "TU-1", "turbidity", 16.0)]))
    assert [(e.id, e.status) for e in out] == [(episode.id, AlertEventStatus.RETRACTED)]


def test_shortcut_upstream_spikes_are_judged_at_the_downstream_readings_before_them():
    """The upstream probe alternates 10 / 250 NTU: each of its readings fails the spike test
    once the next is in, and the downstream reading paired with it (1 min before) is not
    evaluable from then."""
    engines = twins(registry())
    out = []
    for m in range(0, 50, 5):
        out += pair_of(feed_both(engines, [reading(at(m), "TU-1", "turbidity", 250.0 if m >= 10 and m // 5 % 2 else 10.0)]))
        out += pair_of(feed_both(engines, [reading(at(m + 4), "TD-1", "turbidity", 11.0 + m / 100)]))
    assert out and out[-1]["causes"] == ["upstream_qc"]


def test_shortcut_upstream_readings_out_of_order_are_judged():
    engines = twins(registry())
    for m in range(0, 60, 5):
        feed_both(engines, [reading(at(m), "TU-1", "turbidity", 10.0 + m / 100)])
        feed_both(engines, [reading(at(m + 2), "TD-1", "turbidity", 11.0 + m / 100)])
    out = []
    for m in range(10, 35, 5):      # from the logger's spool: readings nearer the downstream ones, 3 NTU
        out += pair_of(feed_both(engines, [reading(at(m + 2), "TU-1", "turbidity", 3.0 + m / 100)]))
    assert [(e["start"], e["end"], e["basis"]) for e in out][-1] == (at(12), at(32), "contrast")


def test_a_flow_reading_without_a_value_is_no_reading_in_streaming_replay_and_the_rule_alike():
    """A sensor_error flow reading (no value) 20 min into 41 min of flow above the floor in dry
    weather is no reading at all, like a minute the logger missed: the engine (which skips
    it), replay (which drops it) and the rule give the same one episode over the 41 min."""
    import pandas as pd

    from ms4watch.alerts.replay import final_state, replay
    from ms4watch.alerts.rules.dry_weather import DryState
    from ms4watch.alerts.rules.dry_weather_flow import dry_weather_flow

    from .support import table

    reg = registry()
    rain = [reading(at(k * 15), "RG-1", "rain", 0.0) for k in range(4 * 24 * 4)]       # 4 dry days
    t0 = 80 * H
    flow = [reading(at(t0 + k), "OF-1", "flow", 3.0) for k in range(20)]
    flow.append(reading(at(t0 + 20), "OF-1", "flow", None, "sensor_error"))
    flow += [reading(at(t0 + 21 + k), "OF-1", "flow", 3.0) for k in range(20)]
    flow += [reading(at(t0 + 41 + k), "OF-1", "flow", 0.0) for k in range(30)]
    rs = sorted(rain + flow, key=lambda r: r.time_ns)
    eng = StreamingEngine(reg, None, eval_interval=timedelta(0))
    out = []
    for k in range(0, len(rs), 10):
        out += eng.feed(rs[k:k + 10])
    out += eng.advance(rs[-1].time_ns)

    def dwf(events):
        return {k: e.fields for k, e in events.items() if e.kind is AlertKind.DRY_WEATHER_FLOW}

    got = dwf({k: e for k, e in final_state(out).items() if e.status is AlertEventStatus.ACTIVE})
    want = dwf(final_state(replay(reg, table(rs))))
    assert got == want
    [ep] = want.values()
    assert (ep["start"], ep["end"]) == (at(t0), at(t0 + 40))
    # the rule on its own, given the reading as NaN: the same episode, not two 20-min halves
    idx = pd.DatetimeIndex(pd.to_datetime([r.time_ns for r in flow], utc=True))
    values = pd.Series([float("nan") if r.value is None else r.value for r in flow], index=idx)
    eps = dry_weather_flow(values, pd.Series(DryState.DRY, index=idx), floor_gpm=0.5)
    assert [(e.start.value, e.end.value) for e in eps.itertuples()] == [(at(t0), at(t0 + 40))]


@pytest.mark.parametrize("case", ["upstream_missing", "contrast_through_a_silence", "silent_longer_than_the_look_back"])
def test_a_probe_whose_turbidity_falls_silent_while_its_logger_reports_keeps_the_run_it_began(case):
    """The downstream probe's logger goes on sending its battery every 15 min while its
    turbidity sensor is silent for 2 h after one reading; the readings that come after
    continue the run that reading began: a not-evaluable span (no upstream probe: such a
    span goes on through silences) or a contrast (report_interval 1 h: stale after 3 h, so a
    2 h silence does not end it). Its one reading before the silence made no event yet (a
    run of one reading lasts 0 min), so the engine, whose horizon the battery readings move
    on, must keep it: streaming (with and without shortcuts, lateness 1 h, in 2 h batches, the
    first ending just before the turbidity comes back) gives replay's
    start. Found by test_streaming_equals_replay (streaming started the span 2 h late).
    ``silent_longer_than_the_look_back``: no upstream probe, the sensor silent for 50 h
    (``dry_lookback`` 48 h): the silence ends the span and the readings after it start
    another, in streaming as in replay."""
    from ms4watch.alerts.replay import final_state, replay
    from .support import table
    if case == "silent_longer_than_the_look_back":
        reg = registry(REGISTRY, "  lateness: 1h\n  dry_lookback: 48h\n")
        back = 50 * 60
        rows = [reading(at(m), "TD-1", "battery", 12.6) for m in range(0, back + 181, 15)]
        rows += [reading(at(m + 2), "TD-1", "turbidity", upstream(m) + 8.0) for m in (0, 15, 30, *range(back, back + 181, 15))]
        rows.sort(key=lambda r: r.time_ns)
        engines = twins(reg)
        out = []
        for a in range(0, back + 181, 120):
            out += feed_both(engines, [r for r in rows if at(a) <= r.time_ns < at(a + 120)])
        want = [e.fields["start"] for e in final_state(replay(reg, table(rows))).values()
                if e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE]
        got = [e.fields["start"] for e in final_state(out).values()
               if e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE and e.status is AlertEventStatus.ACTIVE]
        assert sorted(got) == sorted(want) == [at(2), at(back + 2)]
        return
    missing = case == "upstream_missing"
    reg = registry(REGISTRY if missing else REGISTRY.replace("construction_site: CS-1}",
                                                             "construction_site: CS-1, report_interval: 1h}"),
                   "  lateness: 1h\n")
    rows = [reading(at(m), "TD-1", "battery", 12.6) for m in range(0, 301, 15)]
    rows += [reading(at(m + 2), "TD-1", "turbidity", upstream(m) + 8.0) for m in (0, *range(120, 301, 15))]
    if not missing:
        rows += [reading(at(m + 1), "TU-1", "turbidity", upstream(m)) for m in range(0, 301, 15)]
    rows.sort(key=lambda r: r.time_ns)
    engines = twins(reg)
    out = []
    for a, b in ((0, 122), (122, 242), (242, 302)):   # the first ends before the turbidity comes back
        out += feed_both(engines, [r for r in rows if at(a) <= r.time_ns < at(b)])
    kind = AlertKind.TURBIDITY_NOT_EVALUABLE if missing else AlertKind.TURBIDITY_CONTRAST
    want = [e.fields["start"] for e in final_state(replay(reg, table(rows))).values() if e.kind is kind]
    got = [e.fields["start"] for e in final_state(out).values() if e.kind is kind and e.status is AlertEventStatus.ACTIVE]
    assert got == want == [at(2)]


@pytest.mark.parametrize("first", [0.0, None])
def test_a_downstream_probe_stuck_from_its_first_reading_fails_the_flat_line_test(first):
    """QARTOD flat line (``rules.qc_flat_line``, here 3 h): the downstream probe reads 11.0 NTU
    from its first reading on (``first`` 0.0: one other value before it), every 5 min
    for 5 h, batches of 30 min. From 3 h after the segment began its readings fail QC: a
    not-evaluable span, in streaming (with and without shortcuts) as in replay. The engine
    keeps a flat segment whole while it moves its cut-off on, also when the segment began
    at the first reading it holds."""
    from ms4watch.alerts.replay import final_state, replay
    from .support import table
    reg = registry(REGISTRY, "  lateness: 1h\n  qc_flat_line: 3h\n")
    rows = [reading(at(m), "TU-1", "turbidity", upstream(m)) for m in range(0, 5 * 60 + 1, 5)]
    rows += [reading(at(m + 1), "TD-1", "turbidity", 11.0) for m in range(5, 5 * 60 + 1, 5)]
    if first is not None:
        rows.append(reading(at(1), "TD-1", "turbidity", 10.0))
    rows.sort(key=lambda r: r.time_ns)
    engines = twins(reg)
    out = []
    for a in range(0, 5 * 60 + 1, 30):
        out += feed_both(engines, [r for r in rows if at(a) <= r.time_ns < at(a + 30)])
    want = [(e.fields["start"], e.fields["causes"]) for e in final_state(replay(reg, table(rows))).values()
            if e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE]
    got = [(e.fields["start"], e.fields["causes"]) for e in final_state(out).values()
           if e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE and e.status is AlertEventStatus.ACTIVE]
    assert got == want == [(at(3 * 60 + 6), ["downstream_qc"])]


def test_a_flow_sensor_silent_while_its_logger_reports_keeps_the_run_it_began():
    """The outfall's logger (report_interval 1 h: stale after 3 h) sends its battery every
    15 min while the flow sensor is silent for 170 min after one reading above the floor;
    the flow after the silence is above the floor too: one run, a dry-weather notice (no rain
    data) from the first reading, in streaming (with and without shortcuts, lateness 1 h,
    the first batch ending just before the flow comes back) as in replay."""
    from ms4watch.alerts.replay import final_state, replay
    from .support import table
    reg = registry(REGISTRY.replace("flow_floor_gpm: 0.5}", "flow_floor_gpm: 0.5, report_interval: 1h}"),
                   "  lateness: 1h\n")
    rows = [reading(at(m), "OF-1", "battery", 12.6) for m in range(0, 301, 15)]
    rows += flow((2, *range(172, 301, 15)), 3.0)
    rows.sort(key=lambda r: r.time_ns)
    engines = twins(reg)
    out = []
    for a, b in ((0, 172), (172, 302)):
        out += feed_both(engines, [r for r in rows if at(a) <= r.time_ns < at(b)])
    want = [e.fields["start"] for e in final_state(replay(reg, table(rows))).values()
            if e.kind is AlertKind.DRY_WEATHER_UNKNOWN]
    got = [e.fields["start"] for e in final_state(out).values()
           if e.kind is AlertKind.DRY_WEATHER_UNKNOWN and e.status is AlertEventStatus.ACTIVE]
    assert got == want == [at(2)]
