"""The clocks of the records (``compliance/deadlines.py``) read against the laws' words."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from ms4watch.compliance.clocks import BusinessCalendar
from ms4watch.compliance.deadlines import release_deadlines
from ms4watch.compliance.store import Event, Release

TZ = ZoneInfo("America/New_York")
CAL = BusinessCalendar(TZ)
KNOWN = datetime(2026, 6, 3, 10, 0, tzinfo=TZ)   # Wednesday


def release(kind: str, *events: tuple[str, datetime], law: str = "ramapo-218") -> Release:
    return Release(1, "REL-2026-001", law, kind, "diesel", "Elm St", None, None, None, KNOWN, "caller", False, None,
                   "insp", tuple(Event(i, k, at) for i, (k, at) in enumerate(events, 1)))


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
