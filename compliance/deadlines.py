"""Every clock running (or run) in the town's compliance records, computed from the records
and :mod:`.clocks`: what the SMO's deadline board shows, and what the alert pipeline turns
into deadline incidents (``watch.py``), so reminders before and notices when missed come
from the existing delivery machinery.

A deadline is *actionable* when someone must do something by it (remediate, hear the
appeal, file the decision, call, confirm in writing, decide on a plan); the end of the
appeal window is shown but is nobody's duty, so it raises no incident.

Each deadline's due date is one :class:`~ms4watch.contract.due.Due` (``when``), rendered by
:mod:`ms4watch.contract.duetext` wherever it is shown. A clock whose starting event is not
yet recorded is ``pending``: running ("awaiting delivery"), with no day yet, never overdue;
``awaiting`` gives its words ("within 15 days of receipt of this notice").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TypedDict

from ..contract import duetext
from ..contract.due import Due
from . import clocks
from .clocks import RECEIPT, BusinessCalendar, ReleaseKind
from .laws import ClockRule, Counting, law
from .store import ComplianceStore, ClockEvent, Notice, Release, Swppp


@dataclass(frozen=True)
class Deadline:
    key: str                    # "notice/3/remediation": stable across restarts
    record: str                 # "notice:3" (the audit log's target)
    number: str                 # "NOV-2026-001"
    label: str
    who: str
    start: datetime | None      # None: the event it runs from is not yet recorded (``when`` is pending)
    when: Due                   # the due date: the one value every channel renders
    rule: ClockRule
    met_at: datetime | None = None
    closed: str | None = None   # why it stopped running without being met (appeal filed, withdrawn…)
    place: str | None = None    # outfall or site id
    href: str = ""
    actionable: bool = True
    awaits: str = "delivery"    # what a pending clock waits for, in its state ("awaiting delivery")

    @property
    def due(self) -> datetime | None:
        """The instant the clock runs out (the end of the last day); None while pending."""
        return self.when.ends_at

    @property
    def awaiting(self) -> str | None:
        """A pending clock's words instead of a day ("within 15 days of receipt of this notice"), else None."""
        return duetext.by_long(self.when) if self.when.pending_event else None

    @property
    def immediate(self) -> bool:
        """Due "immediately" (a hazardous release): the law sets no period that could be
        counted, so it is due at once, met by the notification recorded, never "met late"."""
        return self.rule.counting is Counting.IMMEDIATELY

    @property
    def elapsed(self) -> timedelta | None:
        """How long an "immediately" clock took to be met (shown instead of a verdict)."""
        if not self.immediate or self.met_at is None or self.start is None:
            return None
        return self.met_at - self.start

    @property
    def elapsed_text(self) -> str | None:
        """``elapsed`` for people: "35 min", "2 h 10 min", "1 d 3 h"."""
        if self.elapsed is None:
            return None
        s = int(self.elapsed.total_seconds())
        if s >= 86400:
            return f"{s // 86400} d {(s % 86400) // 3600} h"
        return f"{s // 3600} h {(s % 3600) // 60} min" if s >= 3600 else f"{s // 60} min"

    def state(self, now: datetime) -> str:
        if self.met_at is not None:
            return "met" if self.immediate or self.when.met_by(self.met_at) else "met late"
        if self.closed is not None:
            return "closed"
        if self.when.pending_event:
            return f"awaiting {self.awaits}"
        if self.immediate and self.start is not None and now >= self.start:
            return "overdue"
        if self.when.passed(now):
            return "passed" if not self.actionable else "overdue"
        return "running"

    @property
    def running(self) -> bool:
        return self.met_at is None and self.closed is None


class _Record(TypedDict):
    """The fields every deadline of one record shares (spread into :class:`Deadline`)."""

    record: str
    number: str
    place: str | None
    href: str


def notice_deadlines(n: Notice, cal: BusinessCalendar) -> list[Deadline]:
    if n.kind != "nov":
        return []
    lw = law(n.law)
    base = _Record(record=f"notice:{n.id}", number=n.number, place=n.site or n.outfall, href=f"/notices/{n.id}")
    withdrawn = n.first("withdrawn")
    complied = n.first("complied")
    appeal = n.first("appeal_filed")
    decided = n.last("decided")
    out = []
    gone = "withdrawn" if withdrawn else (f"corrected by {n.corrected_by[1]}" if n.corrected_by else None)
    closed = "withdrawn" if withdrawn else ("appeal filed: corrective work runs from the decision" if appeal else None)
    if closed is None and n.corrected_by is not None:
        closed = f"corrected by {n.corrected_by[1]}"
    met = complied.at if complied and not appeal else None
    if lw.remedy_from_notification:
        # § 148-18B: "within 15 days of notification of violation": each recipient's own period,
        # from their own receipt; pending (no day) until that delivery is recorded.
        several = len(n.recipients) > 1
        for i, r in enumerate(n.recipients):
            delivered = n.delivered_to(r)
            key = f"notice/{n.id}/remediation" + (f"/{r.id}" if i else "")
            label = f"{lw.remediation.what} ({n.number}" + (f", {r.role})" if several else ")")
            when = (clocks.deadline(lw.remediation, delivered.at, cal, days=n.remediation_days) if delivered
                    else clocks.pending(lw.remediation, cal, days=n.remediation_days, runs_from=RECEIPT))
            out.append(Deadline(key, label=label, who=f"the {r.role}" if several else "the violator",
                                start=delivered.at if delivered else None, when=when, rule=lw.remediation,
                                met_at=met, closed=None if met else closed, **base))
    else:
        out.append(Deadline(f"notice/{n.id}/remediation", label=f"{lw.remediation.what} ({n.number})",
                            who="the violator", start=n.issued_at,
                            when=clocks.deadline(lw.remediation, n.issued_at, cal, days=n.remediation_days),
                            rule=lw.remediation, met_at=met, closed=None if met else closed, **base))
    if lw.appeal is not None:
        out.append(Deadline(f"notice/{n.id}/appeal", label=f"appeal window closes ({n.number})", who=lw.appeal.who,
                            start=n.issued_at, when=clocks.deadline(lw.appeal, n.issued_at, cal), rule=lw.appeal,
                            met_at=appeal.at if appeal else None, closed=gone, actionable=False, **base))
    if appeal is not None and lw.hearing is not None:
        heard = n.first("hearing_held")
        out.append(Deadline(f"notice/{n.id}/hearing", label=f"{lw.hearing.what} ({n.number})", who=lw.hearing.who,
                            start=appeal.at, when=clocks.deadline(lw.hearing, appeal.at, cal), rule=lw.hearing,
                            met_at=heard.at if heard else None, closed=gone, **base))
    if decided is not None and lw.decision_filing is not None:
        filed = n.first("decision_filed")
        out.append(Deadline(f"notice/{n.id}/decision_filing", label=f"{lw.decision_filing.what} ({n.number})",
                            who=lw.decision_filing.who, start=decided.at,
                            when=clocks.deadline(lw.decision_filing, decided.at, cal), rule=lw.decision_filing,
                            met_at=filed.at if filed else None, **base))
    if decided is not None and decided.outcome in ("upheld", "modified") and lw.corrective_work is not None:
        done = n.last("complied")
        out.append(Deadline(f"notice/{n.id}/corrective_work", label=f"{lw.corrective_work.what} ({n.number})",
                            who=lw.corrective_work.who, start=decided.at,
                            when=clocks.deadline(lw.corrective_work, decided.at, cal), rule=lw.corrective_work,
                            met_at=done.at if done and done.at >= decided.at else None,
                            closed=gone, **base))
    return out


def release_deadlines(r: Release, cal: BusinessCalendar) -> list[Deadline]:
    lw = law(r.law)
    kind = ReleaseKind(r.kind)
    # The notification: a call (in person, by telephone or fax); a hazardous release may be
    # notified via emergency dispatch services instead (§ 218-43, § 148-31), whichever came first.
    called = r.first("called")
    dispatched = r.first("emergency_dispatch") if kind is ReleaseKind.HAZARDOUS else None
    notified = min((e.at for e in (called, dispatched) if e is not None), default=None)
    # "Notifications in person or by telephone shall be confirmed by written notice ... within
    # three business days of the telephone notice": only a call starts that clock.
    notice_rule, written_rule = clocks.release_rules(lw, kind)
    base = _Record(record=f"release:{r.id}", number=r.number, place=r.outfall, href=f"/releases/{r.id}")
    out = [Deadline(f"release/{r.id}/notice", label=f"{notice_rule.what} ({r.number})", who=notice_rule.who,
                    start=r.known_at, when=clocks.deadline(notice_rule, r.known_at, cal), rule=notice_rule,
                    met_at=notified, **base)]
    if called is not None:
        written = r.first("written")
        out.append(Deadline(f"release/{r.id}/written", label=f"{written_rule.what} ({r.number})", who=written_rule.who,
                            start=called.at, when=clocks.deadline(written_rule, called.at, cal), rule=written_rule,
                            met_at=written.at if written else None, **base))
    return out


def _submissions(s: Swppp) -> list[ClockEvent | None]:
    """The plan as received (None) and each revised plan (its ``revised`` event), in order."""
    return [None] + [e for e in s.events if e.kind == "revised"]


def swppp_deadlines(s: Swppp, cal: BusinessCalendar) -> list[Deadline]:
    """§ 148-6B: a completeness determination within 30 days (60 business days when the plan
    deviates) of receipt of *a* SWPPP — the original and every revised plan, each its own
    clock, met by the first ``complete``/``incomplete`` recorded after it and before the
    next revision (a revision before any determination supersedes the earlier clock);
    § 148-6B, C: a decision within 30 days of receiving the complete (original or revised) plan."""
    base = _Record(record=f"swppp:{s.id}", number=s.number, place=s.site, href=f"/swppp/{s.id}")
    rule = clocks.SWPPP_COMPLETENESS_DEVIATING if s.deviates else clocks.SWPPP_COMPLETENESS
    subs = _submissions(s)
    out = []
    for i, sub in enumerate(subs):
        received = s.received_at if sub is None else sub.at
        nxt = subs[i + 1] if i + 1 < len(subs) else None
        determined = next((e for e in s.events if e.kind in ("complete", "incomplete") and e.at >= received
                           and (sub is None or e.id != sub.id) and (nxt is None or e.at < nxt.at)), None)
        when = clocks.deadline(rule, received, cal)
        if sub is None:
            key, label = f"swppp/{s.id}/completeness", f"{rule.what} ({s.number})"
        else:
            key = f"swppp/{s.id}/completeness/revised-{sub.id}"
            label = f"{rule.what}, revised plan of {cal.local_date(received):%Y-%m-%d} ({s.number})"
            when = replace(when, runs_from="receipt of the revised plan")
        superseded = f"superseded by the plan revised {cal.local_date(nxt.at):%Y-%m-%d}" if nxt else None
        out.append(Deadline(key, label=label, who=rule.who, start=received, when=when, rule=rule,
                            met_at=determined.at if determined else None,
                            closed=superseded if not determined else None, **base))
    complete = s.last("complete")
    if complete is not None:
        revised = [e for e in s.events if e.kind == "revised" and e.at <= complete.at]
        plan_in = revised[-1].at if revised else s.received_at
        extended = sum(e.days or 0 for e in s.events if e.kind == "extended" and e.at >= plan_in)
        decided = next((e for e in reversed(s.events) if e.kind == "decided" and e.at >= complete.at), None)
        last = clocks.due_day(clocks.SWPPP_DECISION, plan_in, cal) + timedelta(days=extended)
        when = Due.end_of_day(last, cal.tz_name, provision=clocks.SWPPP_DEFAULT.provision,
                              runs_from=clocks.SWPPP_DEFAULT.start, start=plan_in,
                              period="30 days" + (f" and {extended} days extended by agreement" if extended else ""))
        out.append(Deadline(f"swppp/{s.id}/decision", label=f"SWPPP decision, else the applicant may proceed as filed "
                            f"({s.number})", who="the SMO", start=plan_in, when=when,
                            rule=clocks.SWPPP_DEFAULT, met_at=decided.at if decided else None, **base))
    return out


def all_deadlines(store: ComplianceStore, cal: BusinessCalendar) -> list[Deadline]:
    out: list[Deadline] = []
    for n in store.notices():
        out += notice_deadlines(n, cal)
    for r in store.releases():
        out += release_deadlines(r, cal)
    for s in store.swppps():
        out += swppp_deadlines(s, cal)
    return sorted(out, key=sort_key)


def sort_key(d: Deadline) -> tuple[bool, datetime, str]:
    """Nearest due first; a pending clock (no day yet) after every dated one."""
    return (d.due is None, d.due or datetime.max.replace(tzinfo=d.when.zone), d.key)


__all__ = ["RECEIPT", "Deadline", "all_deadlines", "notice_deadlines", "release_deadlines", "swppp_deadlines", "sort_key"]
