"""The due date value (contract/due.py) and its one formatter (contract/duetext.py)."""

from datetime import date, datetime, timezone

import pytest

from ms4watch.contract import duetext
from ms4watch.contract.due import Due, DueForm, NonBusinessDay

NY = "America/New_York"


def nov_001() -> Due:
    """NOV-2026-001: issued Sunday 7 June 2026, 10 days: the last day is Wednesday 17 June."""
    return Due.end_of_day(date(2026, 6, 17), NY, provision="Ramapo ch. 218 § 218-44A(2)",
                          runs_from="issuance of the notice", period="10 days",
                          start=datetime(2026, 6, 7, 14, tzinfo=timezone.utc))


def test_every_form_names_the_last_day():
    d = nov_001()
    assert duetext.long(d) == "Wednesday, June 17, 2026"
    assert duetext.by_long(d) == "by Wednesday, June 17, 2026"
    assert duetext.short(d) == "Wed 2026-06-17 (end of day)"
    assert duetext.sms(d) == "Jun 17 end of day"
    assert duetext.iso(d) == "2026-06-18T00:00:00-04:00"                          # the midnight ending the 17th
    assert duetext.as_json(d)["last_day"] == "2026-06-17"


def test_the_end_instant_is_the_midnight_ending_the_last_day_and_round_trips():
    d = nov_001()
    assert d.met_by(datetime(2026, 6, 18, 3, 59, 59, tzinfo=timezone.utc))       # 23:59:59 EDT on the 17th
    assert not d.met_by(datetime(2026, 6, 18, 4, 0, tzinfo=timezone.utc))         # 00:00 EDT on the 18th
    assert Due.from_fields(d.to_fields()) == Due.end_of_day(d.last_day, NY, provision=d.provision,
                                                             runs_from=d.runs_from, period="10 days")


def test_an_instant_and_a_pending_clock():
    storm = Due.at(datetime(2026, 6, 18, 18, 30, tzinfo=timezone.utc), NY, provision="§ 148-13",
                   runs_from="the end of the storm", period="24 h")
    assert duetext.short(storm) == "Thu 2026-06-18 14:30 EDT"
    assert duetext.long(storm) == "Thursday, June 18, 2026 at 2:30 PM EDT"
    assert Due.from_fields(storm.to_fields()) == storm
    p = Due.pending("15 days", "receipt of this notice", NY, provision="Schenectady ch. 148 § 148-18B")
    assert p.form is DueForm.PENDING and p.ends_at is None and not p.met_by(datetime.now(timezone.utc))
    assert duetext.by_long(p) == "within 15 days of receipt of this notice"
    assert duetext.iso(p) is None and Due.from_fields(p.to_fields()) == p


def test_office_closures_are_named_as_such():
    d = Due.end_of_day(date(2026, 7, 7), NY, provision="x", runs_from="y",
                       closures=(NonBusinessDay(date(2026, 7, 6), "Town Hall closed (flood)", True),))
    assert duetext.closures_note(d) == "not counted: Monday, July 6, 2026 (office closure: Town Hall closed (flood))"
    assert Due.from_fields(d.to_fields()).closures == d.closures


def test_bad_values_refused():
    with pytest.raises(ValueError, match="not a time zone"):
        Due.end_of_day(date(2026, 6, 17), "Mars/Olympus", provision="x", runs_from="y")
    with pytest.raises(ValueError, match="local midnight after it"):
        Due(DueForm.END_OF_DAY, "x", "y", NY, last_day=date(2026, 6, 17),
            ends_at=datetime(2026, 6, 18, 3, 59, 59, tzinfo=timezone.utc))
    with pytest.raises(ValueError, match="needs its period"):
        Due.pending("", "receipt", NY, provision="x")


def test_an_extension_over_a_closure_names_it_once_and_survives_the_wire():
    closed = NonBusinessDay(date(2026, 7, 6), "Town Hall closed (flood)", True)
    d = Due.end_of_day(date(2026, 7, 7), NY, provision="x", runs_from="y", moved_from=date(2026, 7, 4),
                       moved_because=(NonBusinessDay(date(2026, 7, 4), "Saturday, Independence Day"),
                                      NonBusinessDay(date(2026, 7, 5), "Sunday"), closed),
                       closures=(closed,))
    assert duetext.moved_note(d) == ("the period ended on Saturday, July 4, 2026 (Saturday, Independence Day, "
                                     "Sunday, office closure: Town Hall closed (flood)); extended to the next "
                                     "business day (N.Y. General Construction Law § 25-a)")
    assert duetext.closures_note(d) is None
    assert Due.from_fields(d.to_fields()) == d
