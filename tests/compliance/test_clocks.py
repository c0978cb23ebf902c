"""The laws' clocks at their boundaries: business days around weekends and New York State
holidays (the ``holidays`` package's calendar), in the town's zone across DST; each law's
appeal, hearing, decision, remediation and corrective-work clocks; release notification;
SWPPP review; offences counted per day or per week; repeat offences within five years."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from ms4watch.compliance import clocks
from ms4watch.compliance.clocks import BusinessCalendar, ReleaseKind
from ms4watch.compliance.laws import LAWS, Law

NY = ZoneInfo("America/New_York")
CAL = BusinessCalendar(NY)


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=NY)


def end_of(d: date) -> datetime:
    """A due day's end: the next local midnight."""
    return datetime.combine(d + timedelta(days=1), datetime.min.time(), tzinfo=NY)


# -- business days -------------------------------------------------------------------------
def test_weekends_and_new_york_holidays_are_not_business_days():
    assert CAL.is_business_day(date(2026, 10, 9))           # the Friday before Columbus Day
    assert not CAL.is_business_day(date(2026, 10, 10))      # Saturday
    assert not CAL.is_business_day(date(2026, 10, 11))      # Sunday
    assert not CAL.is_business_day(date(2026, 10, 12))      # Columbus Day (a NY public holiday)
    assert not CAL.is_business_day(date(2026, 2, 12))       # Lincoln's Birthday: New York's, not federal
    assert not CAL.is_business_day(date(2026, 11, 3))       # Election Day, New York
    assert CAL.is_business_day(date(2026, 7, 3))            # GCL § 24: a Saturday holiday (4 July) is not moved
    assert CAL.is_business_day(date(2026, 10, 13))
    assert CAL.holiday_name(date(2026, 10, 12)) == "Columbus Day"


def test_adding_business_days_counts_from_the_day_after():
    assert CAL.add_business_days(date(2026, 10, 9), 1) == date(2026, 10, 13)
    assert CAL.add_business_days(date(2026, 10, 13), 3) == date(2026, 10, 16)
    assert CAL.add_business_days(date(2026, 10, 10), 1) == date(2026, 10, 13)   # from a Saturday
    assert CAL.add_business_days(date(2026, 12, 24), 1) == date(2026, 12, 28)   # over Christmas and a weekend
    assert CAL.add_business_days(date(2026, 11, 25), 2) == date(2026, 11, 30)   # Thanksgiving, then the weekend
    with pytest.raises(ValueError):
        CAL.add_business_days(date(2026, 10, 9), -1)


# -- release notification (Ramapo § 218-43, Schenectady § 148-31) ----------------------------
@pytest.mark.parametrize("law", ["ramapo-218", "schenectady-148-II"])
def test_a_release_reported_the_friday_before_columbus_day_is_due_tuesday(law):
    known = local(2026, 10, 9, 15, 30)
    due = clocks.release_deadlines(LAWS[law], ReleaseKind.NON_HAZARDOUS, known_at=known, called_at=None, cal=CAL)
    assert due.notice == end_of(date(2026, 10, 13))
    assert due.written is None                                   # no call yet: no confirmation clock
    called = local(2026, 10, 13, 9, 5)
    due = clocks.release_deadlines(LAWS[law], ReleaseKind.NON_HAZARDOUS, known_at=known, called_at=called, cal=CAL)
    assert due.written == end_of(date(2026, 10, 16))             # three business days after the call
    assert "three business days" in due.written_rule.text
    # called the very Friday: Tue, Wed, Thu
    due = clocks.release_deadlines(LAWS[law], ReleaseKind.NON_HAZARDOUS, known_at=known,
                                   called_at=local(2026, 10, 9, 16), cal=CAL)
    assert due.written == end_of(date(2026, 10, 15))


def test_a_hazardous_release_is_due_at_once():
    known = local(2026, 10, 9, 15, 30)
    due = clocks.release_deadlines(LAWS["ramapo-218"], ReleaseKind.HAZARDOUS, known_at=known, called_at=None, cal=CAL)
    assert due.notice == known
    assert "immediately" in due.notice_rule.text
    assert due.notice_rule.provision == "Ramapo ch. 218 § 218-43"


def test_the_local_day_decides_not_the_utc_one():
    # 02:00 UTC on Saturday is still Friday evening in New York
    known = datetime(2026, 10, 10, 2, 0, tzinfo=timezone.utc)
    due = clocks.release_deadlines(LAWS["ramapo-218"], ReleaseKind.NON_HAZARDOUS, known_at=known, called_at=None,
                                   cal=CAL)
    assert due.notice == end_of(date(2026, 10, 13))
    # the same instant in a town of another zone is Friday 19:00 in Los Angeles: the same Tuesday
    la = BusinessCalendar(ZoneInfo("America/Los_Angeles"))
    due = clocks.release_deadlines(LAWS["ramapo-218"], ReleaseKind.NON_HAZARDOUS, known_at=known, called_at=None,
                                   cal=la)
    assert due.notice.astimezone(timezone.utc) == datetime(2026, 10, 14, 7, 0, tzinfo=timezone.utc)


def test_deadlines_across_the_dst_changes_end_at_local_midnight():
    # Saturday 7 March 2026, 23:30 EST; clocks go forward on Sunday the 8th
    due = clocks.release_deadlines(LAWS["ramapo-218"], ReleaseKind.NON_HAZARDOUS, known_at=local(2026, 3, 7, 23, 30),
                                   called_at=None, cal=CAL)
    assert due.notice == end_of(date(2026, 3, 9))
    assert due.notice.astimezone(timezone.utc) == datetime(2026, 3, 10, 4, 0, tzinfo=timezone.utc)   # EDT
    # Friday 30 October 2026: clocks go back on Sunday 1 November; due Monday 2 November's end, EST
    due = clocks.release_deadlines(LAWS["ramapo-218"], ReleaseKind.NON_HAZARDOUS, known_at=local(2026, 10, 30, 12),
                                   called_at=None, cal=CAL)
    assert due.notice.astimezone(timezone.utc) == datetime(2026, 11, 3, 5, 0, tzinfo=timezone.utc)


# -- notices of violation: appeal, hearing, decision, corrective work ----------------------------
def test_ramapo_appeal_within_15_days_of_issuance():
    issued = local(2026, 6, 1, 10)                                          # a Monday
    assert clocks.appeal_due(LAWS["ramapo-218"], issued, CAL) == end_of(date(2026, 6, 16))
    # the 15th day a Saturday: the appeal may be filed the next business day (GCL § 25-a)
    assert clocks.appeal_due(LAWS["ramapo-218"], local(2026, 6, 5, 10), CAL) == end_of(date(2026, 6, 22))
    # the 15th day Columbus Day (Monday 12 October): Tuesday
    assert clocks.appeal_due(LAWS["ramapo-218"], local(2026, 9, 27, 10), CAL) == end_of(date(2026, 10, 13))


def test_ramapo_hearing_within_30_days_and_decision_filed_within_5():
    filed = local(2026, 6, 10, 14)
    assert clocks.hearing_due(LAWS["ramapo-218"], filed, CAL) == end_of(date(2026, 7, 10))
    # the Board's own duty does not roll over a weekend: 30 days from 5 June is Sunday 5 July
    assert clocks.hearing_due(LAWS["ramapo-218"], local(2026, 6, 5, 9), CAL) == end_of(date(2026, 7, 5))
    decided = local(2026, 7, 1, 19)
    assert clocks.decision_filing_due(LAWS["ramapo-218"], decided, CAL) == end_of(date(2026, 7, 6))


def test_ramapo_corrective_work_within_5_business_days_of_a_decision_upholding():
    decided = local(2026, 7, 1, 19)                  # Wednesday; Friday the 3rd is a business day (4 July a Saturday)
    assert clocks.corrective_work_due(LAWS["ramapo-218"], decided, CAL) == end_of(date(2026, 7, 8))
    assert clocks.corrective_work_due(LAWS["ramapo-218"], local(2026, 10, 8, 9), CAL) == end_of(date(2026, 10, 16))


def test_schenectady_has_no_appeal_clock_in_its_text():
    for key in ("schenectady-148-I", "schenectady-148-II"):
        law = LAWS[key]
        assert law.appeal is None and law.hearing is None and law.corrective_work is None
        assert clocks.appeal_due(law, local(2026, 6, 1), CAL) is None
        assert clocks.corrective_work_due(law, local(2026, 6, 1), CAL) is None


def test_schenectady_construction_remediation_15_days_of_notification():
    law = LAWS["schenectady-148-I"]
    delivered = local(2026, 6, 2, 11)
    assert clocks.remediation_due(law, delivered, CAL) == end_of(date(2026, 6, 17))
    assert law.remediation.provision == "Schenectady ch. 148 § 148-18B"
    # the SMO may set another deadline ("or as otherwise provided by the City")
    assert clocks.remediation_due(law, delivered, CAL, days=30) == end_of(date(2026, 7, 2))


def test_idde_laws_take_the_remediation_deadline_the_notice_sets():
    for key in ("ramapo-218", "schenectady-148-II"):
        law = LAWS[key]
        assert law.remediation.n is None
        with pytest.raises(ValueError, match="sets its own remediation deadline"):
            clocks.remediation_due(law, local(2026, 6, 2), CAL)
        assert clocks.remediation_due(law, local(2026, 6, 2), CAL, days=21) == end_of(date(2026, 6, 23))


# -- offences ------------------------------------------------------------------------------------
def test_each_day_or_each_week_is_a_separate_offence():
    start, end = date(2026, 6, 1), date(2026, 6, 15)                      # 15 days of violation
    assert clocks.offences(LAWS["schenectady-148-I"], start, end) == 15   # each day (§ 148-18D)
    assert clocks.offences(LAWS["schenectady-148-II"], start, end) == 3   # each week (§ 148-32B)
    assert clocks.offences(LAWS["ramapo-218"], start, end) == 3           # each week (§ 218-44B)
    assert clocks.offences(LAWS["ramapo-218"], start, date(2026, 6, 7)) == 1
    assert clocks.offences(LAWS["ramapo-218"], start, date(2026, 6, 8)) == 2
    assert clocks.offences(LAWS["ramapo-218"], start, start) == 1


def test_a_violation_within_five_years_makes_a_repeat_offence():
    law = LAWS["ramapo-218"]
    at = date(2026, 6, 1)
    assert clocks.penalty_tier(law, at, []).ordinal == 1
    assert clocks.penalty_tier(law, at, [date(2021, 6, 1)]).ordinal == 2          # exactly five years: within
    assert clocks.penalty_tier(law, at, [date(2021, 5, 31)]).ordinal == 1         # a day more: not
    tier = clocks.penalty_tier(law, at, [date(2022, 1, 1), date(2024, 3, 3)])
    assert (tier.ordinal, tier.fine_min_usd, tier.fine_max_usd) == (3, 2500, 5000)
    tier = clocks.penalty_tier(LAWS["schenectady-148-II"], at, [date(2025, 1, 1)])
    assert (tier.ordinal, tier.fine_min_usd, tier.fine_max_usd) == (2, 350, 700)
    # Article I counts no repeat offences: $250 for each offence
    tier = clocks.penalty_tier(LAWS["schenectady-148-I"], at, [date(2025, 1, 1)])
    assert (tier.ordinal, tier.fine_max_usd) == (1, 250)
    assert clocks.penalty_tier(law, date(2028, 2, 29), [date(2023, 2, 28)]).ordinal == 2   # leap day


# -- SWPPP review, Schenectady § 148-6 ----------------------------------------------------------
def test_swppp_completeness_30_days_or_60_business_days_when_it_deviates():
    received = local(2026, 9, 1, 10)
    assert clocks.swppp_completeness_due(received, deviates=False, cal=CAL) == end_of(date(2026, 10, 1))
    # 60 business days from 1 September 2026: Labor Day, Columbus Day, Election Day, Veterans Day and
    # Thanksgiving skipped (counted by hand: 20 in September, 21 in October, 18 in November, then 1 December)
    assert clocks.swppp_completeness_due(received, deviates=True, cal=CAL) == end_of(date(2026, 12, 1))


def test_swppp_decision_30_days_after_a_complete_plan_else_it_passes_by_default():
    complete = local(2026, 9, 20, 10)
    assert clocks.swppp_decision_due(complete, CAL) == end_of(date(2026, 10, 20))
    assert "authorize the applicant to proceed" in clocks.SWPPP_DEFAULT.text


def test_every_clock_cites_its_provision_and_quotes_the_law():
    text = {}
    for name in ("ramapo-ch218-illicit-discharges.txt", "schenectady-ch148-stormwater.txt"):
        from pathlib import Path
        p = Path(__file__).resolve().parents[3] / "shared" / "reference" / name
        if p.exists():
            text[name] = " ".join(p.read_text().split())
    for rule in clocks.all_rules():
        assert rule.provision.startswith(("Ramapo ch. 218 § 218-", "Schenectady ch. 148 § 148-"))
        if text:
            assert any(rule.text in t for t in text.values()), (rule.key, rule.text)


def test_a_law_is_data():
    assert isinstance(LAWS["ramapo-218"], Law)
    assert set(LAWS) == {"ramapo-218", "schenectady-148-I", "schenectady-148-II"}
