"""The composition layer (alerts/evaluate.py) through replay: the rules' awkward cases, each
written from the law's words (boundaries, missing data, several inputs)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from ms4watch.alerts.evaluate import Inspection
from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.replay import replay
from ms4watch.contract.timeutil import to_ns

from .support import REGISTRY, at, reading, registry, table

H = 60  # minutes

GAUGES3 = """
municipality: testtown
timezone: America/New_York
rain_gauges:
  - {id: RG-1}
  - {id: RG-2}
  - {id: RG-3}
outfalls:
  - {id: OF-1, name: Outfall 1, rain_gauges: [RG-1, RG-2, RG-3], flow_floor_gpm: 0.5}
"""


def heartbeat(gauge: str, hours: float, step_min: int = 15, until: float | None = None):
    """Zero rows every ``step_min`` from 0 to ``hours`` (``until``: the gauge dies then)."""
    end = hours if until is None else until
    return [reading(at(k * step_min), gauge, "rain", 0.0) for k in range(int(end * 60 // step_min) + 1)]


def flow_after(hours: float, minutes: int = 40, gpm: float = 3.0):
    """Flow above the floor every 5 min for ``minutes`` from ``hours`` after T0, then below it."""
    n = minutes // 5 + 1
    return [reading(at(hours * H + k * 5), "OF-1", "flow", gpm if k < n else 0.1) for k in range(n + 1)]


def kinds(events, kind):
    return [e for e in events if e.kind is kind]


def test_two_gauges_each_under_010_in_are_not_added():
    """Issue 10 item 1: RG-1 and RG-2 each saw the same 0.06 in shower 30 h before the flow.
    The 0.10 in threshold is a depth at the outfall: 0.06 in is dry, not 0.12 in wet."""
    reg = registry(GAUGES3, "  dry_lookback: 72h\n")
    rs = heartbeat("RG-1", 80) + heartbeat("RG-2", 80) + heartbeat("RG-3", 80)
    rs += [reading(at(45 * H + 1), g, "rain", 0.03) for g in ("RG-1", "RG-2")]
    rs += [reading(at(45 * H + 2), g, "rain", 0.03) for g in ("RG-1", "RG-2")]
    rs += flow_after(75)
    ev = replay(reg, table(rs))
    [dwf] = kinds(ev, AlertKind.DRY_WEATHER_FLOW)
    assert dwf["start"] == at(75 * H) and dwf["end"] == at(75 * H + 40)
    assert dwf["rain_gauges_used"] == ["RG-1", "RG-2", "RG-3"]
    assert dwf["rain_in_by_gauge"] == {"RG-1": 0.06, "RG-2": 0.06, "RG-3": 0.0}
    assert kinds(ev, AlertKind.DRY_WEATHER_UNKNOWN) == []


def test_three_gauges_one_never_reported_the_others_decide_and_are_named():
    reg = registry(GAUGES3, "  dry_lookback: 72h\n")
    rs = heartbeat("RG-1", 80) + heartbeat("RG-2", 80) + flow_after(75)      # RG-3 never reported
    rs += [reading(at(30 * H), "RG-2", "rain", 0.09)]
    ev = replay(reg, table(rs))
    [dwf] = kinds(ev, AlertKind.DRY_WEATHER_FLOW)
    assert dwf["rain_gauges_used"] == ["RG-1", "RG-2"] and dwf["rain_gauges_missing"] == ["RG-3"]
    assert dwf["rain_in_by_gauge"] == {"RG-1": 0.0, "RG-2": 0.09}


def test_exactly_010_in_at_one_gauge_is_wet_even_if_the_others_saw_nothing():
    reg = registry(GAUGES3, "  dry_lookback: 72h\n")
    rs = heartbeat("RG-1", 80) + heartbeat("RG-2", 80) + heartbeat("RG-3", 80) + flow_after(75)
    rs += [reading(at(30 * H), "RG-3", "rain", 0.10)]
    ev = replay(reg, table(rs))
    assert kinds(ev, AlertKind.DRY_WEATHER_FLOW) == [] and kinds(ev, AlertKind.DRY_WEATHER_UNKNOWN) == []


def test_no_gauge_covering_the_window_is_a_data_gap_notice_naming_them():
    reg = registry(GAUGES3, "  dry_lookback: 72h\n")
    # RG-1 died at 60 h, RG-2 started at 10 h (window from 3 h), RG-3 never reported
    rs = heartbeat("RG-1", 80, until=60) + [r for r in heartbeat("RG-2", 80) if r.time_ns >= at(10 * H)]
    rs += flow_after(75)
    ev = replay(reg, table(rs))
    assert kinds(ev, AlertKind.DRY_WEATHER_FLOW) == []
    [dwu] = kinds(ev, AlertKind.DRY_WEATHER_UNKNOWN)
    assert dwu["rain_gauges_missing"] == ["RG-1", "RG-2", "RG-3"]


# -- turbidity: the backstop needs only the downstream probe (issue 10, item 2) ---------------
def turbidity(station: str, start_min: float, values, step_min: float = 5.0):
    return [reading(at(start_min + k * step_min), station, "turbidity", float(v)) for k, v in enumerate(values)]


def test_missing_upstream_probe_still_gives_the_backstop_and_a_not_evaluable_notice():
    """Downstream at 300 NTU for an hour, upstream never reported: the 250 NTU backstop
    (downstream only) and a "not evaluable" notice for the contrast, in replay."""
    reg = registry()
    down = turbidity("TD-1", 0, [20.0] * 6 + [300.0 + k for k in range(13)] + [20.0] * 6)
    ev = replay(reg, table(down))
    [tc] = kinds(ev, AlertKind.TURBIDITY_CONTRAST)
    assert tc["basis"] == "backstop" and tc["start"] == at(30) and tc["end"] == at(90)
    assert tc["max_delta_ntu"] is None and tc["max_downstream_ntu"] == 312.0
    [ne] = kinds(ev, AlertKind.TURBIDITY_NOT_EVALUABLE)
    # still not evaluable at the last reading: open
    assert ne["start"] == at(0) and ne["end"] is None and ne["last_met"] == at(120)
    assert ne["causes"] == ["upstream_missing"] and "no upstream reading" in ne["reason"]


# -- routine inspections: calendar days in the town's zone, the site's own days (item 3) ------
NY = ZoneInfo("America/New_York")


def local(y, m, d, hh=0, mm=0) -> int:
    return to_ns(datetime(y, m, d, hh, mm, tzinfo=NY))


def site_registry(active_from: str, active_to: str | None = None, acres: float | None = None, rules: str = ""):
    extra = (f", active_to: {active_to}" if active_to else "") + (f", disturbed_acres: {acres}" if acres is not None else "")
    return registry(f"""
municipality: testtown
timezone: America/New_York
rain_gauges: [{{id: RG-1}}]
construction_sites:
  - {{id: CS-1, name: Site 1, rain_gauges: [RG-1], active_from: {active_from}{extra}}}
""", rules)


def routine(reg, now_ns: int, inspected: tuple[int, ...] = ()):
    ev = replay(reg, table([reading(at(0), "RG-1", "rain", 0.0)]), now_ns=now_ns,
                inspections=[Inspection("CS-1", t) for t in inspected])
    due = sorted((e["due"], e.id) for e in ev if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "routine")
    overdue = sorted(e["due"] for e in ev if e.kind is AlertKind.INSPECTION_OVERDUE and e["reason"] == "routine")
    return [d for d, _ in due], overdue


def test_seven_calendar_days_across_the_spring_dst_change():
    """Spring forward (2026-03-08): due at local midnight 7 calendar days on, not 168 h (01:00)."""
    dues, _ = routine(site_registry("2026-03-02"), local(2026, 3, 8, 12))
    assert dues == [local(2026, 3, 9)]
    # inspected Thursday 10:00 EST: the next is due the next Thursday at 10:00 EDT (167 h later)
    dues, _ = routine(site_registry("2026-03-02"), local(2026, 3, 6), inspected=(local(2026, 3, 5, 10),))
    assert dues == [local(2026, 3, 9), local(2026, 3, 12, 10)]


def test_seven_calendar_days_across_the_fall_dst_change():
    dues, _ = routine(site_registry("2026-10-26"), local(2026, 11, 3))
    assert dues[0] == local(2026, 11, 2)          # 169 h after local midnight of Oct 26


def test_no_routine_item_or_escalation_after_the_site_closed():
    """Active June 1-10: the item due June 8 is required (and escalates); the next would be
    due June 15, after the site closed (June 11 00:00): not required, never escalated."""
    dues, overdue = routine(site_registry("2026-06-01", "2026-06-10"), local(2026, 6, 30))
    assert dues == [local(2026, 6, 8)] and overdue == [local(2026, 6, 8)]


def test_a_site_active_exactly_seven_days_needs_one_inspection():
    """First and last day inclusive: active June 1-7 is seven calendar days; the inspection is
    due by June 8 00:00, the end of its last day."""
    dues, overdue = routine(site_registry("2026-06-01", "2026-06-07"), local(2026, 6, 30))
    assert dues == overdue == [local(2026, 6, 8)]
    dues, overdue = routine(site_registry("2026-06-01", "2026-06-06"), local(2026, 6, 30))
    assert dues == overdue == []


def test_nothing_before_active_from_and_earlier_inspections_do_not_count():
    reg = site_registry("2026-06-10")
    assert routine(reg, local(2026, 6, 9, 23, 59)) == ([], [])
    dues, overdue = routine(reg, local(2026, 6, 20), inspected=(local(2026, 6, 9, 12),))
    assert dues == [local(2026, 6, 17), local(2026, 6, 24)] and overdue == [local(2026, 6, 17)]
    # an inspection at the very first minute of the first day counts
    dues, overdue = routine(reg, local(2026, 6, 12), inspected=(local(2026, 6, 10),))
    assert dues == [local(2026, 6, 17), local(2026, 6, 17)] and overdue == []


@pytest.mark.parametrize("acres,per_week", [(None, 1), (5.0, 1), (5.01, 2), (12, 2)])
def test_more_than_5_acres_disturbed_is_inspected_twice_every_7_days(acres, per_week):
    """NYSDEC construction permit (REGULATIONS.md): > 5 acres disturbed, two inspections
    every seven calendar days, at least two full calendar days apart."""
    now = local(2026, 6, 14, 12)
    dues, overdue = routine(site_registry("2026-06-01", acres=acres), now)
    if per_week == 1:
        assert dues == [local(2026, 6, 8), local(2026, 6, 15)]
    else:   # the first by the end of day 4 (June 4) so the second fits by the end of day 7
        assert dues == [local(2026, 6, 5), local(2026, 6, 8), local(2026, 6, 12), local(2026, 6, 15)]
    assert overdue == [d for d in dues if d < now]


def test_twice_a_week_the_second_must_be_two_full_calendar_days_after_the_first():
    reg = site_registry("2026-06-01", acres=6)
    mon, tue, thu = local(2026, 6, 1, 9), local(2026, 6, 2, 9), local(2026, 6, 4, 8)
    # Monday then Thursday (Tuesday and Wednesday between): both items closed in time
    dues, overdue = routine(reg, local(2026, 6, 8, 1), inspected=(mon, thu))
    assert overdue == []
    # Monday 09:00 then the first minute of Thursday: two full days between, in time
    dues, overdue = routine(reg, local(2026, 6, 8, 1), inspected=(mon, local(2026, 6, 4)))
    assert overdue == []
    # Monday then Tuesday: the second does not count, the week's second inspection is overdue
    dues, overdue = routine(reg, local(2026, 6, 8, 1), inspected=(mon, tue))
    assert overdue == [local(2026, 6, 8)]


# -- stale stations: judged against the expected report interval (item 5) ---------------------
def stale(events, station):
    return [e for e in events if e.kind is AlertKind.STALE_STATION and e["station"] == station]


def event_driven_gauge(hours: int, storm_from_min: int, tips: int):
    """A logger sending one row per tip and a heartbeat every 30 min."""
    rs = [reading(at(k * 30), "RG-1", "rain", 0.0) for k in range(hours * 2 + 1)]
    return rs + [reading(at(storm_from_min + 2 * k + 0.5), "RG-1", "rain", 0.01) for k in range(tips)]


def test_an_event_driven_gauge_is_not_stale_after_a_storms_last_tip():
    """Issue 10 item 5: tips every 2 min for an hour, then the 30-min heartbeat again: not
    stale ~12 min after the last tip (the registry says it reports every 30 min)."""
    reg = registry(REGISTRY.replace("  - {id: RG-1}", "  - {id: RG-1, report_interval: 30min}"))
    rs = event_driven_gauge(12, 5 * 60 + 7, 30)
    ev = replay(reg, table(rs), now_ns=at(12 * H))
    assert stale(ev, "RG-1") == []
    # silent for more than 3 x 30 min after its last heartbeat: stale from last + 90 min
    ev = replay(reg, table(rs), now_ns=at(12 * H + 91))
    [s] = stale(ev, "RG-1")
    assert s["start"] == at(12 * H + 90) and s["end"] is None and s["interval_s"] == 1800.0
    assert s["interval_source"] == "registry" and s["reason"] == "no reading for more than 3 x 30min"
    ev = replay(reg, table(rs), now_ns=at(12 * H + 90))
    assert stale(ev, "RG-1") == []                       # exactly 3 intervals: not yet


def test_a_registry_station_that_never_reported_is_stale():
    """TU-1 is in the registry and never sent anything: stale once 3 x its interval (default
    15 min) have passed since the data began."""
    reg = registry()
    rs = [reading(at(k * 5), "TD-1", "turbidity", 10.0) for k in range(13)]      # 0 .. 60 min
    ev = replay(reg, table(rs))
    [s] = stale(ev, "TU-1")
    assert s["start"] == at(45) and s["end"] is None and s["interval_source"] == "default"
    assert s["reason"] == "never reported (more than 3 x 15min since monitoring began)"
    assert stale(replay(reg, table(rs[:10])), "TU-1") == []        # data up to 45 min: exactly 3 x 15, not yet


@pytest.mark.parametrize("inspected_after_h,overdue", [(24, False), (24 + 1 / 60, True), (None, True)])
def test_post_storm_inspection_exactly_24_hours_after_the_storm_is_in_time(inspected_after_h, overdue):
    """A storm of exactly 0.50 in (50 tips) ending 13:38Z; inspected exactly 24 h later is in
    time, a minute later is overdue (and still closes the item)."""
    reg = site_registry("2026-05-25")
    tips = [reading(at(2 * k), "RG-1", "rain", 0.01) for k in range(50)]
    end, s = at(98), 10**9
    inspected = () if inspected_after_h is None else (end + round(inspected_after_h * 3600) * s,)
    ev = replay(reg, table(tips), now_ns=end + 48 * 3600 * s, inspections=[Inspection("CS-1", t) for t in inspected])
    [due] = [e for e in ev if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "storm"]
    assert due["storm_end"] == end and due["due"] == end + 24 * 3600 * s
    assert due["closed_at"] == (inspected[0] if inspected else None)
    assert bool([e for e in ev if e.kind is AlertKind.INSPECTION_OVERDUE and e["reason"] == "storm"]) is overdue
