"""A notice of violation (or a stop-work order) as a letter: every element the law under
which it is issued requires, each under a heading that cites the provision, with the
delivery record, the remediation deadline and the appeal clocks computed by
:mod:`.clocks`. ``notice_sections`` is the letter as text (the page and the tests read
it); ``notice_pdf`` prints it with reportlab.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from ..contract import duetext
from ..contract.due import Due
from . import clocks, pdf
from .clocks import BusinessCalendar
from .laws import PROHIBITION, law as law_of
from .store import Notice, Party


@dataclass(frozen=True)
class Section:
    key: str              # the NoticeElement key it satisfies ("" for none)
    heading: str
    paragraphs: tuple[str, ...]


def day(dt: datetime | date, tz: tzinfo | None = None) -> str:
    if isinstance(dt, datetime):
        dt = dt.astimezone(tz).date() if tz else dt.date()
    return f"{dt:%B} {dt.day}, {dt.year}"


def due_text(due: Due | datetime, tz: tzinfo | None = None) -> str:
    """A due date as the letter states it (``contract/duetext.py``: the one formatter), with
    a § 25-a extension and the town's office closures said as such. Given an end instant
    (``clocks.due``) and the town's zone instead, the day that instant ends."""
    if isinstance(due, datetime):
        if tz is None or not getattr(tz, "key", None):
            raise ValueError("due_text: an end instant needs the town's zone (a ZoneInfo)")
        last = (due.astimezone(tz) - timedelta(microseconds=1)).date()
        due = Due.end_of_day(last, tz.key, provision="", runs_from="")
    notes = [x for x in (duetext.moved_note(due), duetext.closures_note(due)) if x]
    return duetext.long(due) + (f" ({'; '.join(notes)})" if notes else "")


def notice_sections(n: Notice, party: Party, *, cal: BusinessCalendar, tz: tzinfo, town: str,
                    today: date | None = None) -> list[Section]:
    lw = law_of(n.law)
    issued = day(n.issued_at, tz)
    out: list[Section] = []
    mailed, posted = n.first("mailed"), n.first("posted")
    delivery = []
    if mailed:
        delivery.append(f"By certified mail, article number {mailed.reference}, mailed {day(mailed.at, tz)}.")
    if posted:
        delivery.append(f"Posted at the property on {day(posted.at, tz)}" + (f" ({posted.reference})."
                                                                           if posted.reference else "."))
    if not delivery:
        delivery.append(f"To be delivered by {lw.delivery}; the delivery record is kept with notice {n.number}.")
    out.append(Section("delivery", f"Delivery ({_cite(lw, 'delivery')})", tuple(delivery)))
    recipient = f"{party.name}\n{party.address}"
    out.append(Section("recipient", f"To the responsible person ({_cite(lw, 'recipient')})", (recipient,)))
    out.append(Section("site", f"Property ({_cite(lw, 'site')})", (n.place,)))
    prohibition = PROHIBITION.get(n.law)
    violation = [n.violation]
    if prohibition:
        violation.append(f"This violates {prohibition[0]}: \u201c{prohibition[1]}\u201d")
    violation.append(f"The violation has continued since {day(n.violation_since)}.")
    out.append(Section("violation", f"Nature of the violation ({_cite(lw, 'violation')})", tuple(violation)))
    if lw.requirements:
        chosen = [r for r in lw.requirements if r.key in n.requirements]
        out.append(Section("requirements", f"This notice requires ({_cite(lw, 'requirements')})",
                           tuple(f"{r.item} {r.text}" for r in chosen) + (f"Remedial measures: {n.remedy}",)))
    if n.kind == "nov":
        start = n.issued_at
        delivered = n.first("delivered")
        if lw.remediation.n is not None and delivered is not None:
            start = delivered.at
        due = clocks.deadline(lw.remediation, start, cal, days=n.remediation_days)
        if lw.key == "schenectady-148-I":
            out.append(Section("remedy", f"Remedial measures and time schedule ({_cite(lw, 'remedy')})",
                               (n.remedy,)))
            days = n.remediation_days or lw.remediation.n
            counted = f"notification ({day(delivered.at, tz)})" if delivered else f"issuance ({issued})"
            out.append(Section("deadline", f"Deadline ({lw.remediation.provision})",
                               (f"Take the remedial measures within {days} days of notification of this violation: by "
                                f"{due_text(due)} (counted from {counted}).",
                                f"\u201c{lw.remediation.text}\u201d")))
        else:
            out.append(Section("deadline", f"Deadline for remediation or restoration ({lw.remediation.provision})",
                               (f"Complete the remediation or restoration by {due_text(due)} "
                                f"({n.remediation_days} days from issuance).",)))
        if lw.expense_warning:
            out.append(Section("expense", f"If the deadline is missed ({_cite(lw, 'expense')})",
                               ("Should the violator fail to remediate or restore within the established deadline, "
                                "the work will be done by a designated governmental agency or a contractor and the "
                                "expense thereof shall be charged to the violator.",)))
    else:
        out.append(Section("stop_work", "Stop-work order (Schenectady ch. 148 § 148-18C)",
                           (f"Halt all land development activity at the property at once. {lw.stop_work}",
                            f"Remedial measures required: {n.remedy}")))
    issued_day = n.issued_at.astimezone(tz).date()
    counted = clocks.within_repeat_window(lw, issued_day, n.prior)   # the five years of § 218-44B, § 148-32B
    tier = clocks.penalty_tier(lw, issued_day, counted)
    offences = clocks.offences(lw, n.violation_since, today or n.issued_at.astimezone(tz).date())
    pen = [lw.penalty.statement,
           f"Each {lw.penalty.per} of continued violation is a separate offense; to {day(today or n.issued_at, tz)} "
           f"that makes {offences} offense(s)."]
    if lw.penalty.repeat_window_years:
        pen.append(f"Earlier notices of violation of {_article(lw)} recorded against {party.name} within five "
                   f"years: {len(counted)} ({', '.join(day(d) for d in counted) or 'none'}).")
        if tier.ordinal == 1:
            pen.append(f"This would be a first offense: a fine of up to ${tier.fine_max_usd:,}.")
        else:
            pen.append(f"Possible {_ordinal(tier.ordinal)} offense, subject to conviction: the law sets the higher "
                       f"fines upon conviction of a {'second offense, both' if tier.ordinal == 2 else 'third or subsequent offense, all'} "
                       "of which were committed within a period of five years, and a notice of violation is not a "
                       f"conviction. If this and the earlier violations end in convictions, this would be a "
                       f"{_ordinal(tier.ordinal)} offense: a fine of ${tier.fine_min_usd:,} to ${tier.fine_max_usd:,}.")
    out.append(Section("penalties", f"Penalties ({lw.penalty.provision})", tuple(pen)))
    if lw.appeal is not None and n.kind == "nov":
        assert lw.hearing and lw.decision_filing and lw.corrective_work
        appeal = clocks.deadline(lw.appeal, n.issued_at, cal)
        out.append(Section("appeal", f"Your right to appeal ({lw.appeal.provision}, § 218-46A)", (
            f"You may appeal this determination to the Town Board within 15 days of its issuance on {issued}: "
            f"file your appeal by {due_text(appeal)}.",
            "The Town Board shall hear the appeal within 30 days after it is filed and, within five days of making "
            "its decision, file the decision with the Municipal Clerk and mail it to you by certified mail.",
            "If the Town Board upholds this notice, the violation must be corrected within five business days of "
            "its decision; otherwise the SMO may take the measures needed to abate it at your cost (§ 218-46A).")))
    return out


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third or subsequent"}[n]


def _article(lw) -> str:
    """The chapter or article whose offences count towards a repeat offence ("this article")."""
    return {"schenectady-148-II": "Schenectady ch. 148 Article II", "schenectady-148-I":
            "Schenectady ch. 148 Article I"}.get(lw.key, lw.short)


def _cite(lw, key: str) -> str:
    return next((e.provision for e in lw.elements if e.key == key), lw.short)


def notice_pdf(n: Notice, party: Party, *, cal: BusinessCalendar, tz: tzinfo, town: str,
               today: date | None = None) -> bytes:
    lw = law_of(n.law)
    st = pdf.styles()
    what = "NOTICE OF VIOLATION" if n.kind == "nov" else "STOP-WORK ORDER"
    story = [pdf.para(f"{town} \u2014 Stormwater Management Officer", st["small"]),
             pdf.para(f"{what} {n.number}", st["title"]),
             pdf.para(f"Issued {day(n.issued_at, tz)} under the {lw.title}.", st["p"])]
    for s in notice_sections(n, party, cal=cal, tz=tz, town=town, today=today):
        story.append(pdf.para(s.heading, st["h"]))
        story += [pdf.para(p, st["p"]) for p in s.paragraphs]
    story += [pdf.Spacer(1, 18), pdf.para(n.signatory, st["p"]),
              pdf.para(f"Stormwater Management Officer, {town}", st["p"])]
    return pdf.build(story, title=f"{what} {n.number}", footer=f"{n.number} \u2014 {lw.short}")


__all__ = ["Section", "notice_sections", "notice_pdf", "day", "due_text"]
