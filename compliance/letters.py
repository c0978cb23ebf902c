"""A notice of violation (or a stop-work order) as a letter: every element the law under
which it is issued requires, each under a heading that cites the provision — the provisions
violated, chosen from the law's catalogue (:mod:`.provisions`), with their words and the
remedial measures for each —, its recipients and how each is served, the remediation
deadline and the appeal clocks computed by :mod:`.clocks`. ``notice_sections`` is the
letter as text (the page and the tests read it); ``notice_pdf`` prints it with reportlab;
``notice_letter`` gives the PDF and the facts it states, frozen at issue by the store.

The letter is the notice as served: it states what was true on the day of issue (offences
counted to that day), never "today", so the same records always make the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Mapping

from ..contract import duetext
from ..contract.due import Due
from . import clocks, pdf
from .clocks import BusinessCalendar
from .laws import Law, law as law_of
from .provisions import DEFAULT, Provision
from .store import Facts, Notice, Party


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
        key = getattr(tz, "key", None)
        if tz is None or not isinstance(key, str) or not key:
            raise ValueError("due_text: an end instant needs the town's zone (a ZoneInfo)")
        last = (due.astimezone(tz) - timedelta(microseconds=1)).date()
        due = Due.end_of_day(last, key, provision="", runs_from="")
    notes = [x for x in (duetext.moved_note(due), duetext.closures_note(due)) if x]
    return duetext.long(due) + (f" ({'; '.join(notes)})" if notes else "")


METHODS = {"certified_mail": "certified mail", "posting": "posting of the property",
           "personal_service": "personal service", "first_class_mail": "first-class mail"}


def cited(n: Notice) -> list[Provision]:
    """The provisions ``n`` cites: those it names, else (a notice recorded before notices named
    them) its law's default prohibition."""
    lw = law_of(n.law)
    return [lw.provision(k) for k in (n.provisions or (DEFAULT[n.law],))]


def remedies_for(n: Notice, p: Provision) -> str:
    """The remedial measures ``n`` sets for ``p``: its own words, else the catalogue's."""
    return dict(n.remedies).get(p.key) or " ".join(p.remedies)


def remediation_days(n: Notice) -> int | None:
    lw = law_of(n.law)
    return n.remediation_days if n.remediation_days is not None else lw.remediation.n


def deadline_due(n: Notice, cal: BusinessCalendar) -> Due | None:
    """The remediation deadline the letter states, as one :class:`Due`. § 148-18B counts from
    notification: the letter, made before it is delivered, states the pending period
    ("within 15 days of receipt of this notice"); § 218-44A(2) and § 148-32A(2): the notice
    sets a day counted from its issuance."""
    if n.kind != "nov":
        return None
    lw = law_of(n.law)
    if lw.remedy_from_notification:
        return clocks.pending(lw.remediation, cal, days=n.remediation_days, runs_from=clocks.RECEIPT)
    return clocks.deadline(lw.remediation, n.issued_at, cal, days=n.remediation_days)


def deadline_fact(n: Notice, cal: BusinessCalendar, tz: tzinfo) -> Facts | None:
    """The remediation deadline as the letter states it (a fact frozen with the letter)."""
    due = deadline_due(n, cal)
    if due is None:
        return None
    days = remediation_days(n)
    provision = law_of(n.law).remediation.provision
    if due.pending_event:
        return {"runs_from": "receipt", "days": days, "last_day": None, "provision": provision,
                "text": duetext.long(due)}
    assert due.last_day is not None
    return {"runs_from": "issuance", "days": days, "last_day": due.last_day.isoformat(), "provision": provision,
            "text": f"by {due_text(due)} ({days} days from issuance)"}


def notice_sections(n: Notice, parties: Mapping[int, Party], *, cal: BusinessCalendar, tz: tzinfo, town: str,
                    replaces: Notice | None = None) -> list[Section]:
    """The letter as it is served: everything as of its issuance (offences counted to the day
    of issue; the § 148-18B period from its receipt), so a reprint reads as the original."""
    lw = law_of(n.law)
    issued = day(n.issued_at, tz)
    issued_day = n.issued_at.astimezone(tz).date()
    out: list[Section] = []
    who = [(r, parties[r.party_id]) for r in n.recipients]
    delivery = [f"{p.name} ({r.role}): by {METHODS.get(r.method, r.method)}"
                + (f", article number {r.reference}." if r.reference else ".") for r, p in who]
    delivery.append(f"Served by {lw.delivery}; the record of each delivery is kept with notice {n.number}.")
    out.append(Section("delivery", f"Delivery ({_cite(lw, 'delivery')})", tuple(delivery)))
    heading = "To the responsible person" if len(who) == 1 else "To the responsible persons"
    out.append(Section("recipient", f"{heading} ({_cite(lw, 'recipient')})",
                       tuple(f"{p.name} ({r.role})\n{p.address}" for r, p in who)))
    if replaces is not None:
        out.append(Section("corrects", f"Correction of notice {replaces.number}",
                           (f"This notice corrects and replaces notice {replaces.number} issued "
                            f"{day(replaces.issued_at, tz)}. Its periods run from this notice.",)))
    out.append(Section("site", f"Property ({_cite(lw, 'site')})", (n.place,)))
    provisions = cited(n)
    violation = [n.violation]
    for p in provisions:
        violation.append(f"This violates {lw.cite(p)} ({p.title}): \u201c{p.text}\u201d")
    violation.append(f"The violation has continued since {day(n.violation_since)}.")
    out.append(Section("violation", f"Nature of the violation ({_cite(lw, 'violation')})", tuple(violation)))
    measures = tuple(f"{lw.cite(p)}: {remedies_for(n, p)}" for p in provisions) + \
        ((f"Also: {n.remedy}",) if n.remedy.strip() else ())
    if lw.requirements:
        chosen = [r for r in lw.requirements if r.key in n.requirements]
        out.append(Section("requirements", f"This notice requires ({_cite(lw, 'requirements')})",
                           tuple(f"{r.item} {r.text}" for r in chosen) + ("Remedial measures:",) + measures))
    deadline = deadline_fact(n, cal, tz)
    if n.kind == "nov":
        assert deadline is not None
        if lw.remedy_from_notification:
            out.append(Section("remedy", f"Remedial measures and time schedule ({_cite(lw, 'remedy')})",
                               measures + (f"Complete them {deadline['text']}.",)))
            out.append(Section("deadline", f"Deadline ({lw.remediation.provision})",
                               (f"Take the remedial measures {deadline['text']}.",
                                f"\u201c{lw.remediation.text}\u201d")))
        else:
            out.append(Section("deadline", f"Deadline for remediation or restoration ({lw.remediation.provision})",
                               (f"Complete the remediation or restoration {deadline['text']}.",)))
        if lw.expense_warning:
            out.append(Section("expense", f"If the deadline is missed ({_cite(lw, 'expense')})",
                               ("Should the violator fail to remediate or restore within the established deadline, "
                                "the work will be done by a designated governmental agency or a contractor and the "
                                "expense thereof shall be charged to the violator.",)))
    else:
        out.append(Section("stop_work", "Stop-work order (Schenectady ch. 148 § 148-18C)",
                           (f"Halt all land development activity at the property at once. {lw.stop_work}",
                            "Remedial measures required:") + measures))
    counted = clocks.within_repeat_window(lw, issued_day, n.prior)   # the five years of § 218-44B, § 148-32B
    tier = clocks.penalty_tier(lw, issued_day, counted)
    offences = clocks.offences(lw, n.violation_since, issued_day)
    addressee = parties[n.party_id].name   # the earlier violations recorded are the addressee's
    pen = [lw.penalty.statement,
           f"Each {lw.penalty.per} of continued violation is a separate offense; to {issued} "
           f"that makes {offences} offense(s)."]
    if lw.penalty.repeat_window_years:
        pen.append(f"Earlier notices of violation of {_article(lw)} recorded against {addressee} within five "
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


def notice_facts(n: Notice, parties: Mapping[int, Party], *, cal: BusinessCalendar, tz: tzinfo,
                 replaces: Notice | None = None) -> Facts:
    """What the letter states, as data (JSON): frozen with the letter at issue."""
    lw = law_of(n.law)
    issued_day = n.issued_at.astimezone(tz).date()
    return {
        "number": n.number, "kind": n.kind, "law": n.law, "issued_at": n.issued_at.isoformat(),
        "recipients": [{"party_id": r.party_id, "name": parties[r.party_id].name,
                        "address": parties[r.party_id].address, "role": r.role, "method": r.method,
                        "reference": r.reference} for r in n.recipients],
        "place": n.place, "violation": n.violation, "violation_since": n.violation_since.isoformat(),
        "provisions": [{"key": p.key, "citation": lw.cite(p), "title": p.title, "text": p.text,
                        "section_inferred": p.inferred, "remedies": remedies_for(n, p)} for p in cited(n)],
        "requirements": list(n.requirements), "remedy": n.remedy,
        "offences": {"count": clocks.offences(lw, n.violation_since, issued_day), "per": lw.penalty.per,
                     "to": issued_day.isoformat()},
        "prior_violations": [d.isoformat() for d in n.prior],
        "deadline": deadline_fact(n, cal, tz),
        "corrects": replaces.number if replaces is not None else None,
        "signatory": n.signatory,
    }


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third or subsequent"}[n]


def _article(lw: Law) -> str:
    """The chapter or article whose offences count towards a repeat offence ("this article")."""
    return {"schenectady-148-II": "Schenectady ch. 148 Article II", "schenectady-148-I":
            "Schenectady ch. 148 Article I"}.get(lw.key, lw.short)


def _cite(lw: Law, key: str) -> str:
    return next((e.provision for e in lw.elements if e.key == key), lw.short)


def notice_pdf(n: Notice, parties: Mapping[int, Party], *, cal: BusinessCalendar, tz: tzinfo, town: str,
               replaces: Notice | None = None) -> bytes:
    lw = law_of(n.law)
    st = pdf.styles()
    what = "NOTICE OF VIOLATION" if n.kind == "nov" else "STOP-WORK ORDER"
    story: list[pdf.Flowable] = [pdf.para(f"{town} \u2014 Stormwater Management Officer", st["small"]),
             pdf.para(f"{what} {n.number}", st["title"]),
             pdf.para(f"Issued {day(n.issued_at, tz)} under the {lw.title}.", st["p"])]
    for s in notice_sections(n, parties, cal=cal, tz=tz, town=town, replaces=replaces):
        paras = [pdf.para(p, st["p"]) for p in s.paragraphs]
        story.append(pdf.KeepTogether([pdf.para(s.heading, st["h"]), *paras[:1]]))   # no heading alone at a page foot
        story += paras[1:]
    story += [pdf.Spacer(1, 18), pdf.para(n.signatory, st["p"]),
              pdf.para(f"Stormwater Management Officer, {town}", st["p"])]
    return pdf.build(story, title=f"{what} {n.number}", footer=f"{n.number} \u2014 {lw.short}")


def notice_letter(n: Notice, parties: Mapping[int, Party], *, cal: BusinessCalendar, tz: tzinfo, town: str,
                  replaces: Notice | None = None) -> tuple[bytes, Facts]:
    """The letter to freeze at issue: its PDF and the facts it states (with its text, section
    by section, so the notice page shows the words served whatever later versions print)."""
    facts = notice_facts(n, parties, cal=cal, tz=tz, replaces=replaces)
    facts["letter"] = [{"key": x.key, "heading": x.heading, "paragraphs": list(x.paragraphs)}
                       for x in notice_sections(n, parties, cal=cal, tz=tz, town=town, replaces=replaces)]
    return notice_pdf(n, parties, cal=cal, tz=tz, town=town, replaces=replaces), facts


def frozen_sections(facts: Facts) -> list[Section] | None:
    """The letter's text as frozen at issue (None: facts frozen without it)."""
    if "letter" not in facts:
        return None
    return [Section(x["key"], x["heading"], tuple(x["paragraphs"])) for x in facts["letter"]]


__all__ = ["Section", "notice_sections", "notice_pdf", "notice_facts", "notice_letter", "frozen_sections", "cited", "remedies_for",
           "deadline_fact", "day", "due_text"]
