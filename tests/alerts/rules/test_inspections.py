"""Inspections: post-storm items on the site's active local dates; routine items in calendar
days of the municipality's zone (Schenectady ch. 148 Art. I; NYSDEC GP-0-20-001 IV.C.2.b)."""

from datetime import date, datetime, timedelta, timezone
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from ms4watch.alerts.rules.inspections import add_calendar_days, inspection_due, routine_inspections
from ms4watch.contract.timeutil import to_ns

NY = ZoneInfo("America/New_York")
H = 3600 * 10**9


def local(y, m, d, hh=0, mm=0) -> int:
    return to_ns(datetime(y, m, d, hh, mm, tzinfo=NY))


def site(active_from, active_to=None, acres=None):
    s = SimpleNamespace(id="CS-1", rain_gauges=["RG-1"], active_from=active_from, active_to=active_to,
                        disturbed_acres=acres)
    s.active_on = lambda day: active_from <= day and (active_to is None or day <= active_to)
    return s


@pytest.mark.parametrize("start,days,end,hours", [
    (local(2026, 3, 2), 7, local(2026, 3, 9), 167),              # spring forward inside: 167 real hours
    (local(2026, 10, 26), 7, local(2026, 11, 2), 169),           # fall back inside: 169 real hours
    (local(2026, 6, 1, 10, 30), 7, local(2026, 6, 8, 10, 30), 168),
    (local(2026, 3, 7, 2, 30), 1, local(2026, 3, 8, 3, 30), 24),  # 02:30 does not exist on Mar 8: moved on by the gap
    (local(2026, 10, 31, 1, 30), 1, to_ns(datetime(2026, 11, 1, 5, 30, tzinfo=timezone.utc)), 24),  # 01:30 EDT, the first
])
def test_calendar_days_keep_the_local_wall_time(start, days, end, hours):
    assert add_calendar_days(start, days, NY) == end
    assert (end - start) == hours * H
    assert add_calendar_days(start + 123, days, NY) == end + 123   # nanoseconds kept


def test_routine_interval_must_be_whole_days():
    with pytest.raises(ValueError, match="whole number of days"):
        routine_inspections(site(date(2026, 6, 1)), [], local(2026, 6, 30), NY, interval=timedelta(hours=84))


def test_a_shortened_interval_for_a_large_site_keeps_two_inspections_a_period():
    items = routine_inspections(site(date(2026, 6, 1), acres=20), [], local(2026, 6, 5, 12), NY,
                                interval=timedelta(days=5))
    # 5-day periods: the first by the end of day 2 (3 days before the end), the second by the end
    assert [(i.due_ns, i.key.endswith("/1")) for i in items] == [
        (local(2026, 6, 3), True), (local(2026, 6, 6), False)]


def test_twice_weekly_items_stop_when_the_site_closes():
    # active June 1-10: week 2 (June 8-14) owes its first inspection by June 12: after the close
    items = routine_inspections(site(date(2026, 6, 1), date(2026, 6, 10), acres=8), [], local(2026, 7, 1), NY)
    assert [i.due_ns for i in items] == [local(2026, 6, 5), local(2026, 6, 8)]
    # closing June 11 (end: June 12 00:00): the first of week 2 is owed, the second is not
    items = routine_inspections(site(date(2026, 6, 1), date(2026, 6, 11), acres=8), [], local(2026, 7, 1), NY)
    assert [i.due_ns for i in items] == [local(2026, 6, 5), local(2026, 6, 8), local(2026, 6, 12)]


def storm_frame(*ends_ns):
    return pd.DataFrame({"end": pd.DatetimeIndex(pd.to_datetime(list(ends_ns), utc=True)), "qualifying": True})


@pytest.mark.parametrize("end,owed", [
    (local(2026, 6, 30, 23, 59), True),    # the site's last day, local time (already July 1 in UTC)
    (local(2026, 7, 1, 0, 0), False),      # the next local day
    (local(2026, 5, 31, 23, 59), False),   # the evening before the first day (June 1 in UTC)
    (local(2026, 6, 1, 0, 0), True),       # the first minute of the first day
])
def test_post_storm_items_on_the_sites_local_first_and_last_day(end, owed):
    rows = inspection_due(storm_frame(end), [site(date(2026, 6, 1), date(2026, 6, 30))], "RG-1", NY)
    assert len(rows) == int(owed)
    if owed:
        assert rows["due"].iat[0] == end + 24 * H     # within 24 hours of the storm's end: real hours


# -- "within 24 hours of the end of a storm event": exactly 24 h, across the fall-back night -------
@pytest.mark.parametrize("late_ns,overdue", [(0, False), (1, True)])
def test_an_inspection_exactly_24_hours_after_the_storm_is_within_them(late_ns, overdue):
    from ms4watch.alerts.evaluate import site_inspections
    from tests.alerts.support import registry

    end = local(2026, 10, 31, 23, 30)          # the storm ends the evening before the clocks go back
    insp = end + 24 * H + late_ns              # 24 real hours: 22:30 local on Nov 1 (EST)
    evs = site_inspections(registry(), "CS-1", {"RG-1": [end]}, [insp], insp + H)
    storm = [e for e in evs if e.fields["reason"] == "storm"]
    assert [e.fields["due"] for e in storm if e.kind.value == "inspection_due"] == [end + 24 * H]
    assert any(e.kind.value == "inspection_overdue" for e in storm) is overdue


def test_every_active_site_on_that_gauge_and_no_other():
    """A qualifying storm at RG-1 owes an inspection at each site served by RG-1 and active on
    the storm's local end date: not at a site on RG-2, nor at one closed or not yet open."""
    def on(sid, gauges, a, b=None):
        s = site(a, b)
        s.id, s.rain_gauges = sid, gauges
        return s
    sites = [on("A", ["RG-1"], date(2026, 6, 1)), on("B", ["RG-2"], date(2026, 6, 1)),
             on("C", ["RG-2", "RG-1"], date(2026, 6, 1), date(2026, 6, 30)),
             on("D", ["RG-1"], date(2026, 5, 1), date(2026, 6, 9)), on("E", ["RG-1"], date(2026, 6, 11))]
    end = local(2026, 6, 10, 8)
    rows = inspection_due(storm_frame(end), sites, "RG-1", NY)
    assert rows["site"].tolist() == ["A", "C"] and set(rows["due"]) == {end + 24 * H}
    frame = storm_frame(end)
    frame["qualifying"] = False                     # 0.49 in: nothing owed
    assert inspection_due(frame, sites, "RG-1", NY).empty
    assert inspection_due(storm_frame(), sites, "RG-1", NY).empty


@pytest.mark.parametrize("end,due_local", [
    # the spring-forward night: 24 real hours after 02:30 EST falls on the skipped 02:30: 03:30 EDT;
    # after 01:30 EST on the night itself, 02:30 EDT the next day (23 h of wall clock)
    (local(2026, 3, 7, 2, 30), local(2026, 3, 8, 3, 30)),
    (local(2026, 3, 8, 1, 30), local(2026, 3, 9, 2, 30)),
    # the deadline in the repeated hour: 24 h after 01:30 EDT Oct 31 is the first 01:30 of Nov 1 (EDT)
    (local(2026, 10, 31, 1, 30), to_ns(datetime(2026, 11, 1, 5, 30, tzinfo=timezone.utc))),
])
def test_within_24_hours_across_dst_is_24_real_hours(end, due_local):
    rows = inspection_due(storm_frame(end), [site(date(2026, 1, 1))], "RG-1", NY)
    assert rows["due"].iat[0] == end + 24 * H == due_local


def test_an_inspection_in_the_second_repeated_hour_is_late_for_a_deadline_in_the_first():
    """Due at 01:30 EDT on Nov 1 (24 h after 01:30 EDT Oct 31): an inspection at 01:40 EST,
    the clock's second 01:40, is 70 min late although the wall clock reads 01:40."""
    from ms4watch.alerts.evaluate import site_inspections
    from tests.alerts.support import registry

    end = local(2026, 10, 31, 1, 30)
    insp = to_ns(datetime(2026, 11, 1, 6, 40, tzinfo=timezone.utc))   # 01:40 EST
    evs = site_inspections(registry(), "CS-1", {"RG-1": [end]}, [insp], insp + H)
    storm = [e for e in evs if e.fields["reason"] == "storm"]
    assert [e.kind.value for e in storm] == ["inspection_due", "inspection_overdue"]
    assert storm[0].fields["due"] == end + 24 * H and storm[0].fields["closed_at"] == insp
