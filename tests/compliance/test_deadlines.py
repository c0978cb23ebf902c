"""The clocks of the records (``compliance/deadlines.py``) read against the laws' words."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from ms4watch.compliance.clocks import BusinessCalendar
from ms4watch.compliance.deadlines import release_deadlines, swppp_deadlines
from ms4watch.compliance.store import ClockEvent, Release, Swppp

TZ = ZoneInfo("America/New_York")
CAL = BusinessCalendar(TZ)
KNOWN = datetime(2026, 6, 3, 10, 0, tzinfo=TZ)   # Wednesday
SEPTEMBER = datetime(2026, 9, 15, 12, tzinfo=TZ)


def release(kind: str, *events: tuple[str, datetime], law: str = "ramapo-218") -> Release:
    return Release(1, "REL-2026-001", law, kind, "diesel", "Elm St", None, None, None, KNOWN, "caller", False, None,
                   "insp", tuple(ClockEvent(i, k, at) for i, (k, at) in enumerate(events, 1)))


# Ramapo § 218-43 / Schenectady § 148-31: "In the event of such a release of hazardous materials said
# person shall immediately notify ... via emergency dispatch services. ... Notifications in person or by
# telephone shall be confirmed by written notice ... within three business days of the telephone notice."
@pytest.mark.parametrize("law", ["ramapo-218", "schenectady-148-II"])
def test_emergency_dispatch_alone_starts_no_written_confirmation_clock(law):
    r = release("hazardous", ("emergency_dispatch", KNOWN + timedelta(minutes=20)), law=law)
    ds = {d.key.rsplit("/", 1)[1]: d for d in release_deadlines(r, CAL)}
    assert set(ds) == {"notice"} and ds["notice"].met_at == KNOWN + timedelta(minutes=20)


def test_a_call_after_emergency_dispatch_starts_the_written_confirmation_from_the_call():
    call = datetime(2026, 6, 4, 9, 0, tzinfo=TZ)
    r = release("hazardous", ("emergency_dispatch", KNOWN + timedelta(minutes=20)), ("called", call))
    ds = {d.key.rsplit("/", 1)[1]: d for d in release_deadlines(r, CAL)}
    assert ds["written"].start == call
    assert ds["written"].due == datetime(2026, 6, 10, 0, 0, tzinfo=TZ)    # Tuesday 9 June: 3 business days


def test_immediately_is_met_by_the_notification_recorded_and_shows_how_long_it_took():
    r = release("hazardous", ("emergency_dispatch", KNOWN + timedelta(minutes=35)))
    d = release_deadlines(r, CAL)[0]
    assert d.immediate and d.state(KNOWN + timedelta(days=1)) == "met"      # never "met late": no period to miss
    assert d.elapsed == timedelta(minutes=35)
    assert not d.running


def test_immediately_with_no_notification_recorded_is_overdue_at_once():
    d = release_deadlines(release("hazardous"), CAL)[0]
    assert d.immediate and d.elapsed is None
    assert d.state(KNOWN) == "overdue" and d.running


def test_a_nonhazardous_release_is_still_met_late_after_the_next_business_day():
    r = release("non_hazardous", ("called", datetime(2026, 6, 5, 9, 0, tzinfo=TZ)))
    d = release_deadlines(r, CAL)[0]
    assert not d.immediate and d.state(KNOWN + timedelta(days=3)) == "met late"


# -- SWPPP reviews: every submission starts its own completeness clock (§ 148-6B, C) ------------
def swppp(*events: tuple[str, datetime], received: datetime = datetime(2026, 6, 1, 10, tzinfo=TZ),
          deviates: bool = False) -> Swppp:
    return Swppp(1, "SWPPP-2026-001", "CS-7", "Hillcrest phase 2", None, received, deviates, "smo",
                 tuple(ClockEvent(i, k, at) for i, (k, at) in enumerate(events, 1)))


def completeness(ds):
    return [d for d in ds if "/completeness" in d.key]


def test_a_revised_plan_starts_its_own_completeness_clock():
    # marked incomplete on 15 June, revised 1 July: in September the revision's clock has run out
    s = swppp(("incomplete", datetime(2026, 6, 15, 11, tzinfo=TZ)), ("revised", datetime(2026, 7, 1, 9, tzinfo=TZ)))
    first, revision = completeness(swppp_deadlines(s, CAL))
    assert first.state(SEPTEMBER) == "met" and first.met_at == datetime(2026, 6, 15, 11, tzinfo=TZ)
    assert revision.start == datetime(2026, 7, 1, 9, tzinfo=TZ) and revision.running
    assert revision.when.last_day == date(2026, 7, 31)                 # 30 days from receipt of the revision
    assert revision.state(SEPTEMBER) == "overdue"
    assert revision.key != first.key and "revised plan" in revision.when.runs_from


def test_each_resubmission_is_met_by_the_determination_after_it():
    s = swppp(("incomplete", datetime(2026, 6, 15, 11, tzinfo=TZ)), ("revised", datetime(2026, 7, 1, 9, tzinfo=TZ)),
              ("incomplete", datetime(2026, 7, 20, 9, tzinfo=TZ)), ("revised", datetime(2026, 8, 3, 9, tzinfo=TZ)),
              ("complete", datetime(2026, 8, 10, 9, tzinfo=TZ)), deviates=True)
    clocks_ = completeness(swppp_deadlines(s, CAL))
    assert [d.met_at.date() for d in clocks_] == [date(2026, 6, 15), date(2026, 7, 20), date(2026, 8, 10)]
    assert all(d.rule.counting.value == "business days" for d in clocks_)     # a deviating plan: 60 business days
    decision = next(d for d in swppp_deadlines(s, CAL) if d.key.endswith("/decision"))
    assert decision.start == datetime(2026, 8, 3, 9, tzinfo=TZ)               # the complete plan's receipt


def test_a_plan_revised_before_it_was_judged_supersedes_the_earlier_clock():
    s = swppp(("revised", datetime(2026, 6, 20, 9, tzinfo=TZ)))
    first, revision = completeness(swppp_deadlines(s, CAL))
    assert not first.running and "superseded" in first.closed
    assert revision.running and revision.when.last_day == date(2026, 7, 20)


def test_a_decision_on_an_earlier_plan_does_not_meet_the_decision_on_a_revised_one():
    s = swppp(("complete", datetime(2026, 6, 10, 9, tzinfo=TZ)), ("decided", datetime(2026, 6, 20, 9, tzinfo=TZ)),
              ("revised", datetime(2026, 7, 1, 9, tzinfo=TZ)), ("complete", datetime(2026, 7, 6, 9, tzinfo=TZ)))
    decision = next(d for d in swppp_deadlines(s, CAL) if d.key.endswith("/decision"))
    assert decision.start == datetime(2026, 7, 1, 9, tzinfo=TZ) and decision.running
