"""New York business days from the statute's words (compliance/calendar.py).

N.Y. General Construction Law § 24 lists the public holidays "and if any of such days
except Flag day is Sunday, the next day thereafter; each general election day"; nothing
moves a holiday falling on a Saturday. A business day is any day but a Saturday, Sunday or
public holiday (GCL § 25-a's "next succeeding business day"). A town's own office closures
(its registry) are not business days either, and are named as office closures.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from ms4watch.compliance import clocks
from ms4watch.compliance.calendar import BusinessCalendar, NewYorkPublicHolidays
from ms4watch.compliance.clocks import ReleaseKind
from ms4watch.compliance.laws import LAWS
from ms4watch.contract import duetext
from ms4watch.contract.registry import OfficeClosure

NY = ZoneInfo("America/New_York")
CAL = BusinessCalendar(NY)


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=NY)


@pytest.mark.parametrize("day, why", [
    (date(2026, 7, 3), "Independence Day falls on Saturday 4 July 2026: the Friday is no holiday"),
    (date(2027, 6, 18), "Juneteenth falls on Saturday 19 June 2027"),
    (date(2027, 12, 24), "Christmas falls on Saturday 25 December 2027"),
    (date(2027, 12, 31), "New Year's Day 2028 falls on a Saturday: the Friday before, in the old year, is no holiday"),
    (date(2033, 2, 11), "Lincoln's Birthday falls on Saturday 12 February 2033"),
    (date(2034, 11, 10), "Veterans' Day falls on Saturday 11 November 2034"),
    (date(2026, 11, 27), "the day after Thanksgiving is in no list of GCL § 24"),
    (date(2030, 2, 15), "Susan B. Anthony Day is a commemoration, not a public holiday of GCL § 24"),
    (date(2026, 12, 24), "Christmas Eve"),
    (date(2026, 12, 31), "New Year's Eve"),
])
def test_business_days_the_defaults_of_holidays_got_wrong_or_might(day, why):
    assert CAL.is_business_day(day), why


@pytest.mark.parametrize("day, name", [
    (date(2027, 7, 5), "Independence Day"),           # the 4th is a Sunday: the next day thereafter
    (date(2022, 12, 26), "Christmas Day"),
    (date(2023, 1, 2), "New Year's Day"),             # the year boundary: 1 January 2023 a Sunday
    (date(2023, 2, 13), "Lincoln's Birthday"),        # Sunday 12 February 2023
    (date(2022, 6, 20), "Juneteenth"),
    (date(2029, 11, 12), "Veterans Day"),
    (date(2026, 2, 12), "Lincoln's Birthday"),        # New York's, not a federal holiday
    (date(2026, 6, 19), "Juneteenth"),
    (date(2026, 11, 3), "Election Day"),              # the general election, an even year
    (date(2027, 11, 2), "Election Day"),              # New York holds a general election every year
    (date(2026, 10, 12), "Columbus Day"),
    (date(2026, 11, 26), "Thanksgiving"),
    (date(2027, 1, 1), "New Year's Day"),
])
def test_public_holidays_of_gcl_24(day, name):
    assert not CAL.is_business_day(day)
    assert name in (CAL.holiday_name(day) or "")


def test_the_calendar_is_the_holidays_package_configured_not_a_list_of_our_own():
    h = NewYorkPublicHolidays(years=2027)
    assert date(2027, 7, 5) in h and date(2027, 12, 24) not in h and date(2027, 6, 18) not in h
    assert h.get(date(2027, 2, 15)) == "Washington's Birthday"     # Susan B. Anthony Day dropped, not the holiday


def test_saturdays_and_sundays_are_never_business_days():
    assert not CAL.is_business_day(date(2026, 7, 4)) and not CAL.is_business_day(date(2026, 7, 5))
    assert CAL.non_business_day(date(2026, 7, 4)).name.startswith("Saturday")


# -- the case and its neighbours ---------------------------------------------------------
@pytest.mark.parametrize("law", ["ramapo-218", "schenectady-148-II"])
def test_a_release_known_thursday_2_july_2026_is_due_friday_3_july(law):
    due = clocks.release_deadlines(LAWS[law], ReleaseKind.NON_HAZARDOUS, known_at=local(2026, 7, 2, 16),
                                   called_at=None, cal=CAL)
    assert clocks.due_day(due.notice_rule, local(2026, 7, 2, 16), CAL) == date(2026, 7, 3)
    called = local(2026, 7, 3, 9)
    written = clocks.due_day(LAWS[law].release_written, called, CAL)
    assert written == date(2026, 7, 8)              # Mon 6, Tue 7, Wed 8: the Saturday holiday not counted twice


def test_business_days_across_the_year_boundary():
    assert CAL.add_business_days(date(2026, 12, 31), 1) == date(2027, 1, 4)     # New Year's Day (Fri), weekend
    assert CAL.add_business_days(date(2027, 12, 30), 1) == date(2027, 12, 31)   # New Year's 2028 is a Saturday
    assert CAL.add_business_days(date(2022, 12, 30), 1) == date(2023, 1, 3)     # Monday 2 January 2023 moved


# -- GCL § 25-a: a period ending on a Saturday, Sunday or public holiday ------------------------
def test_a_period_ending_on_a_saturday_holiday_runs_to_monday():
    ramapo = LAWS["ramapo-218"]
    # issued Friday 19 June 2026: the 15th day is Saturday 4 July (a holiday and a Saturday)
    d = clocks.deadline(ramapo.appeal, local(2026, 6, 19, 10), CAL)
    assert d.last_day == date(2026, 7, 6) and d.moved_from == date(2026, 7, 4)
    assert "General Construction Law § 25-a" in duetext.moved_note(d)


def test_a_period_ending_on_a_sunday_holiday_runs_past_its_monday():
    ramapo = LAWS["ramapo-218"]
    d = clocks.deadline(ramapo.appeal, local(2027, 6, 19, 10), CAL)      # 15th day: Sunday 4 July 2027
    assert d.last_day == date(2027, 7, 6)                                 # Monday 5 July is the holiday


def test_a_period_ending_on_a_dst_sunday():
    ramapo = LAWS["ramapo-218"]
    spring = clocks.deadline(ramapo.appeal, local(2026, 2, 21, 10), CAL)  # 15th day: Sunday 8 March (EST -> EDT)
    assert spring.last_day == date(2026, 3, 9) and spring.ends_at == local(2026, 3, 10)
    fall = clocks.deadline(ramapo.appeal, local(2026, 10, 17, 10), CAL)   # Sunday 1 November (EDT -> EST)
    assert fall.last_day == date(2026, 11, 2)
    assert fall.ends_at.utcoffset().total_seconds() == -5 * 3600
    # Monday 2 November is the day before Election Day: a business day
    assert CAL.is_business_day(date(2026, 11, 2)) and not CAL.is_business_day(date(2026, 11, 3))


# -- the town's office closures ----------------------------------------------------------------
def test_an_office_closure_is_no_business_day_and_is_named_as_one():
    cal = BusinessCalendar(NY, closures=[OfficeClosure(day=date(2026, 7, 6), name="Town Hall closed (flood)")])
    assert not cal.is_business_day(date(2026, 7, 6)) and CAL.is_business_day(date(2026, 7, 6))
    nb = cal.non_business_day(date(2026, 7, 6))
    assert nb.closure and nb.name == "Town Hall closed (flood)"
    ramapo = LAWS["ramapo-218"]
    d = clocks.deadline(ramapo.release_notice, local(2026, 7, 2, 16), cal)      # next business day: Friday 3 July
    assert d.last_day == date(2026, 7, 3) and d.closures == ()
    d = clocks.deadline(ramapo.release_written, local(2026, 7, 3, 9), cal)      # 3 business days: 7, 8, 9 July
    assert d.last_day == date(2026, 7, 9)
    assert [c.day for c in d.closures] == [date(2026, 7, 6)]
    assert duetext.closures_note(d) == "not counted: Monday, July 6, 2026 (office closure: Town Hall closed (flood))"
    appeal = clocks.deadline(ramapo.appeal, local(2026, 6, 19, 10), cal)       # ends Sat 4 July; Mon 6 closed
    assert appeal.last_day == date(2026, 7, 7) and [c.day for c in appeal.closures] == [date(2026, 7, 6)]


# -- 29 February: GCL § 20 counts calendar days, the leap day one of them ------------------------
@pytest.mark.parametrize("issued, last", [
    (local(2028, 2, 14, 10), date(2028, 2, 29)),    # the 15th day is the leap day, a Tuesday: not moved
    (local(2027, 2, 14, 10), date(2027, 3, 1)),     # no 29 February in 2027: the 15th day is 1 March
    (local(2028, 2, 29, 16), date(2028, 3, 15)),    # issued on the leap day: 15 days on
])
def test_a_period_counted_over_29_february(issued, last):
    d = clocks.deadline(LAWS["ramapo-218"].appeal, issued, CAL)
    assert d.last_day == last and d.moved_from is None
    assert d.ends_at == local(last.year, last.month, last.day) + timedelta(days=1)
    assert duetext.long(d).startswith(f"{last:%A}, {last:%B} {last.day}, {last.year}")


def test_business_days_and_the_swppp_clock_over_29_february():
    # a call on Friday 25 February 2028: Mon 28, Tue 29 February, Wed 1 March
    assert clocks.due_day(LAWS["ramapo-218"].release_written, local(2028, 2, 25, 9), CAL) == date(2028, 3, 1)
    # 30 days from 1 February: 2 March in a leap year, 3 March otherwise
    assert clocks.due_day(clocks.SWPPP_COMPLETENESS, local(2028, 2, 1, 9), CAL) == date(2028, 3, 2)
    assert clocks.due_day(clocks.SWPPP_COMPLETENESS, local(2027, 2, 1, 9), CAL) == date(2027, 3, 3)
