"""The laws' clocks as pure functions over :mod:`.laws`.

:func:`deadline` gives a clock as one :class:`~ms4watch.contract.due.Due` — its last day,
the instant that day ends in the town's zone (the next local midnight), the provision and
the event it runs from — or, for what must be done *immediately*, the instant the clock
started; :func:`pending` one whose event is not yet recorded. ``due`` and ``due_day`` are
its end instant and last day. Every channel renders a ``Due`` with ``contract.duetext``.

* Days are counted as N.Y. General Construction Law § 20 counts them: "exclusive of the
  calendar day from which the reckoning is made" — a notice issued on 1 June gives an
  appeal period whose 15th day is 16 June.
* Business days are Monday to Friday less the public holidays of General Construction Law
  § 24 (only a Sunday holiday moves, to the Monday; Lincoln's Birthday, Election Day) and
  the town's own office closures: :mod:`.calendar`, the ``holidays`` package configured to
  the statute — never a list of our own.
* A calendar-day period that ends on a Saturday, Sunday or public holiday runs to the next
  business day (General Construction Law § 25-a) where the clock is a person's
  (:attr:`~.laws.ClockRule.rollover`); the municipality's own clocks are not extended.
* The local date decides: a release known at 22:00 on a Friday in New York (02:00 UTC on
  Saturday) was known on Friday; the due instant is local midnight, whatever DST does.

Offences (each day, or each week, of a continued violation) and repeat offences (a
previous violation within five years) follow each law's penalty section.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Iterable, TypedDict

from ..contract.due import Due
from .calendar import BusinessCalendar
from .laws import LAWS, ClockRule, Counting, Law, PenaltyTier

GCL_25A = "N.Y. General Construction Law § 25-a"


def _number(rule: ClockRule, days: int | None) -> int:
    n = rule.n if rule.n is not None else days
    if days is not None and rule.n is not None and days != rule.n:
        n = days   # "or as otherwise provided": the notice's own number
    if n is None:
        raise ValueError(f"{rule.provision}: the notice sets its own remediation deadline; give it (days)")
    if n < 0:
        raise ValueError(f"{rule.provision}: a period must not be negative, got {n}")
    return n


def period_text(rule: ClockRule, days: int | None = None) -> str:
    """The period in words, as a letter states it: "15 days", "3 business days", "immediately"."""
    if rule.counting is Counting.IMMEDIATELY:
        return "immediately"
    n = _number(rule, days)
    return f"{n} {'business day' if rule.counting is Counting.BUSINESS_DAYS else 'day'}{'' if n == 1 else 's'}"


class _DueOf(TypedDict):
    """What every :class:`Due` of one started rule states (spread into ``Due.end_of_day``)."""

    provision: str
    runs_from: str
    start: datetime
    period: str


def deadline(rule: ClockRule, start: datetime, cal: BusinessCalendar, *, days: int | None = None) -> Due:
    """``rule`` started at ``start`` as a :class:`~ms4watch.contract.due.Due` (see the module's notes):
    the last day, the instant it ends, the provision and the event it runs from, the
    non-business days a § 25-a extension ran over and the town's office closures skipped."""
    tz = cal.tz_name
    if rule.counting is Counting.IMMEDIATELY:
        return Due.at(start, tz, provision=rule.provision, runs_from=rule.start, start=start, period="immediately")
    n = _number(rule, days)
    d = cal.local_date(start)
    common = _DueOf(provision=rule.provision, runs_from=rule.start, start=start, period=period_text(rule, days))
    if rule.counting is Counting.BUSINESS_DAYS:
        last = cal.add_business_days(d, n)
        return Due.end_of_day(last, tz, closures=cal.closures_between(d + timedelta(days=1), last), **common)
    end = d + timedelta(days=n)
    last = cal.next_business_day_from(end) if rule.rollover else end
    if last == end:
        return Due.end_of_day(last, tz, **common)
    because = tuple(x for x in (cal.non_business_day(end + timedelta(days=i)) for i in range((last - end).days))
                    if x is not None)
    return Due.end_of_day(last, tz, moved_from=end, moved_because=because,
                          closures=tuple(x for x in because if x.closure), **common)


def due_day(rule: ClockRule, start: datetime, cal: BusinessCalendar, *, days: int | None = None) -> date:
    """The last day of ``rule`` started at ``start``; ``days`` for a rule whose number the notice sets."""
    last = deadline(rule, start, cal, days=days).last_day
    assert last is not None
    return last


def due(rule: ClockRule, start: datetime, cal: BusinessCalendar, *, days: int | None = None) -> datetime:
    """The instant ``rule`` started at ``start`` runs out (see the module's notes)."""
    ends = deadline(rule, start, cal, days=days).ends_at
    assert ends is not None
    return ends


def pending(rule: ClockRule, cal: BusinessCalendar, *, days: int | None = None, runs_from: str | None = None) -> Due:
    """``rule`` before the event it runs from is recorded (§ 148-18B before delivery: "within
    15 days of receipt of this notice"); ``runs_from`` words the event for the reader."""
    return Due.pending(period_text(rule, days), runs_from or rule.start, cal.tz_name, provision=rule.provision)


def _maybe(rule: ClockRule | None, start: datetime, cal: BusinessCalendar) -> datetime | None:
    return None if rule is None else due(rule, start, cal)


# -- notices of violation -----------------------------------------------------------------------
def remediation_due(law: Law, start: datetime, cal: BusinessCalendar, *, days: int | None = None) -> datetime:
    """Ramapo § 218-44A(2) and Schenectady § 148-32A(2): the deadline the notice sets
    (``days`` after ``start``, its issuance); Schenectady § 148-18B: 15 days of notification
    (``start``: when the notice reached the violator) unless the City provides otherwise."""
    return due(law.remediation, start, cal, days=days)


RECEIPT = "receipt of this notice"   # § 148-18B's "notification", in the letter's words


def receipt_period(days: int) -> str:
    """A period that runs from the notice's receipt (§ 148-18B) while no delivery is recorded:
    the words the letter and the deadline board both use instead of a day."""
    return f"within {days} days of receipt of this notice"


def appeal_due(law: Law, issued: datetime, cal: BusinessCalendar) -> datetime | None:
    """Ramapo § 218-45: appeal to the Town Board within 15 days of issuance. None: no appeal in the law's text."""
    return _maybe(law.appeal, issued, cal)


def hearing_due(law: Law, appeal_filed: datetime, cal: BusinessCalendar) -> datetime | None:
    """Ramapo § 218-45: the Town Board hears the appeal within 30 days after its filing."""
    return _maybe(law.hearing, appeal_filed, cal)


def decision_filing_due(law: Law, decided: datetime, cal: BusinessCalendar) -> datetime | None:
    """Ramapo § 218-45: within five days of its decision, filed with the Municipal Clerk and mailed."""
    return _maybe(law.decision_filing, decided, cal)


def corrective_work_due(law: Law, decided: datetime, cal: BusinessCalendar) -> datetime | None:
    """Ramapo § 218-46A: corrected within five business days of a decision upholding the notice."""
    return _maybe(law.corrective_work, decided, cal)


# -- releases -----------------------------------------------------------------------------------
class ReleaseKind(str, enum.Enum):
    HAZARDOUS = "hazardous"
    NON_HAZARDOUS = "non_hazardous"


@dataclass(frozen=True)
class ReleaseDue:
    notice: datetime
    notice_rule: ClockRule
    written: datetime | None          # None until the call: the confirmation counts from it
    written_rule: ClockRule


def release_rules(law: Law, kind: ReleaseKind) -> tuple[ClockRule, ClockRule]:
    """The notification clock of a release of ``kind`` and the written confirmation's."""
    rule = law.release_hazardous if kind is ReleaseKind.HAZARDOUS else law.release_notice
    if rule is None or law.release_written is None:
        raise ValueError(f"{law.short} ({law.key}) has no release notification section")
    return rule, law.release_written


def release_deadlines(law: Law, kind: ReleaseKind, *, known_at: datetime, called_at: datetime | None,
                      cal: BusinessCalendar) -> ReleaseDue:
    """Ramapo § 218-43, Schenectady § 148-31: a hazardous release is notified immediately; a
    nonhazardous one in person, by telephone or facsimile by the next business day after it
    was known; a notice in person or by telephone is confirmed in writing within three
    business days of it."""
    rule, written_rule = release_rules(law, kind)
    written = due(written_rule, called_at, cal) if called_at is not None else None
    return ReleaseDue(due(rule, known_at, cal), rule, written, written_rule)


# -- offences and penalties ---------------------------------------------------------------------
def offences(law: Law, first_day: date, last_day: date) -> int:
    """How many separate offences a violation continued from ``first_day`` to ``last_day``
    (both counted) makes: one each day (§ 148-18D) or each week begun (§ 218-44B, § 148-32B)."""
    if last_day < first_day:
        raise ValueError(f"the violation's last day {last_day} is before its first {first_day}")
    days = (last_day - first_day).days + 1
    return days if law.penalty.per == "day" else math.ceil(days / 7)


def _years_before(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year - years)
    except ValueError:   # 29 February
        return d.replace(year=d.year - years, day=28)


def within_repeat_window(law: Law, at: date, prior: Iterable[date]) -> list[date]:
    """The earlier violations (``prior``) that count towards a repeat offence on ``at``: those
    within the law's five years before it (none under a law without repeat tiers)."""
    p = law.penalty
    if p.repeat_window_years is None:
        return []
    since = _years_before(at, p.repeat_window_years)
    return sorted(d for d in prior if since <= d < at)


def penalty_tier(law: Law, at: date, prior: Iterable[date]) -> PenaltyTier:
    """The fine range for a violation on ``at`` given the person's earlier violations
    (``prior``): second or third offence when they fall within the law's five years."""
    p = law.penalty
    n = len(within_repeat_window(law, at, prior))
    return p.tiers[min(n, len(p.tiers) - 1)]


# -- SWPPP review, Schenectady ch. 148 § 148-6 --------------------------------------------------
_SWPPP_COMPLETE_TEXT = ("Within 30 days (60 business days if the SWPPP identifies practices or designs that deviate "
                        "from the proscribed standards established by § 148-11 of this article) of receipt of a SWPPP "
                        "the City of Schenectady Stormwater Management Officer, shall make a determination as to "
                        "whether it is complete.")
SWPPP_COMPLETENESS = ClockRule("swppp_completeness", "SWPPP completeness determination", "the SMO", 30,
                               Counting.CALENDAR_DAYS, "receipt of the SWPPP", "Schenectady ch. 148 § 148-6B",
                               _SWPPP_COMPLETE_TEXT)
SWPPP_COMPLETENESS_DEVIATING = ClockRule("swppp_completeness_deviating", "SWPPP completeness determination (plan "
                                         "deviating from the § 148-11 standards)", "the SMO", 60,
                                         Counting.BUSINESS_DAYS, "receipt of the SWPPP",
                                         "Schenectady ch. 148 § 148-6B", _SWPPP_COMPLETE_TEXT)
SWPPP_DECISION = ClockRule("swppp_decision", "SWPPP decision in writing (approve, approve with conditions, "
                           "disapprove)", "the SMO", 30, Counting.CALENDAR_DAYS, "receipt of a complete plan",
                           "Schenectady ch. 148 § 148-6B",
                           "Within 30 days after receiving a complete plan, the City of Schenectady Stormwater "
                           "Management Officer, shall, in writing:")
SWPPP_DEFAULT = ClockRule("swppp_default", "the applicant may proceed as filed (no action on a complete plan)",
                          "the SMO", 30, Counting.CALENDAR_DAYS, "receipt of a complete plan",
                          "Schenectady ch. 148 § 148-6C",
                          "Failure of the City of Schenectady Stormwater Management Officer to act on a complete "
                          "original or revised application within 30 days of receipt shall authorize the applicant to "
                          "proceed in accordance with the plans as filed unless such time is extended by agreement "
                          "between the applicant and the City of Schenectady.")


def swppp_completeness_due(received: datetime, *, deviates: bool, cal: BusinessCalendar) -> datetime:
    """§ 148-6B: completeness decided within 30 days of receipt; 60 business days when the plan deviates."""
    return due(SWPPP_COMPLETENESS_DEVIATING if deviates else SWPPP_COMPLETENESS, received, cal)


def swppp_decision_due(complete_received: datetime, cal: BusinessCalendar, *, extended_days: int = 0) -> datetime:
    """§ 148-6B and C: decided within 30 days of receiving a complete plan, else the applicant
    may proceed as filed — unless the time was extended by agreement (``extended_days``)."""
    return cal.end_of(due_day(SWPPP_DECISION, complete_received, cal) + timedelta(days=extended_days))


def all_rules() -> list[ClockRule]:
    out = [r for law in LAWS.values() for r in law.rules()]
    return out + [SWPPP_COMPLETENESS, SWPPP_COMPLETENESS_DEVIATING, SWPPP_DECISION, SWPPP_DEFAULT]


__all__ = ["BusinessCalendar", "ReleaseKind", "ReleaseDue", "RECEIPT", "deadline", "pending", "period_text", "due", "due_day",
           "remediation_due", "appeal_due", "hearing_due", "decision_filing_due", "receipt_period", "corrective_work_due",
           "release_deadlines", "offences",
           "penalty_tier", "within_repeat_window", "swppp_completeness_due", "swppp_decision_due", "SWPPP_COMPLETENESS",
           "SWPPP_COMPLETENESS_DEVIATING", "SWPPP_DECISION", "SWPPP_DEFAULT", "all_rules", "GCL_25A"]

# the typed due date (contract/due.py) of a clock, and the rule choice of a release
__all__ += ["release_rules"]
