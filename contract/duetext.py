"""The one formatter of a :class:`~.due.Due`: every channel renders a due date here, so the
letter, the deadline board, the incident, the SMS, the email, the API, the annual report and
the evidence packet name the same day and the same end instant.

* :func:`long` — letters and email: "Wednesday, June 17, 2026" (a period of days includes
  its whole last day, GCL § 20: "by" that day is by its end);
* :func:`short` — the board, incident pages, tables: "Wed 2026-06-17 (end of day)";
* :func:`sms` — one GSM-7 segment: "Jun 17 end of day";
* :func:`iso` / :func:`as_json` — the API and JSON: the last day as ``YYYY-MM-DD``
  (``last_day``) beside the instant it ends, ISO 8601 with the town's offset (``ends_at``:
  ``2026-06-18T00:00:00-04:00``, the midnight ending 17 June — the day is ``last_day``).

A pending clock (its event not yet recorded) renders as its period and event in every
form: "within 15 days of receipt of this notice".
"""

from __future__ import annotations

from datetime import date
from typing import Any

from .due import Due, DueForm


def _long_day(d: date) -> str:
    return f"{d:%A}, {d:%B} {d.day}, {d.year}"


def _pending(due: Due) -> str:
    return f"within {due.period} of {due.runs_from}"


def long(due: Due) -> str:
    """For letters and email: "Wednesday, June 17, 2026", "Wednesday, June 17, 2026 at 2:00
    PM EDT", "within 15 days of receipt of this notice"."""
    if due.form is DueForm.PENDING:
        return _pending(due)
    assert due.ends_at is not None and due.last_day is not None
    if due.form is DueForm.END_OF_DAY:
        return _long_day(due.last_day)
    local = due.ends_at.astimezone(due.zone)
    return f"{_long_day(local.date())} at {local:%I:%M %p %Z}".replace(" at 0", " at ")


def by_long(due: Due) -> str:
    """"by Wednesday, June 17, 2026" (or "within 15 days of receipt of this notice")."""
    return long(due) if due.form is DueForm.PENDING else f"by {long(due)}"


def short(due: Due) -> str:
    """For the board, incident pages and tables: "Wed 2026-06-17 (end of day)",
    "Wed 2026-06-17 14:00 EDT", "within 15 days of receipt of this notice (not yet recorded)"."""
    if due.form is DueForm.PENDING:
        return f"{_pending(due)} (not yet recorded)"
    assert due.ends_at is not None and due.last_day is not None
    if due.form is DueForm.END_OF_DAY:
        return f"{due.last_day:%a %Y-%m-%d} (end of day)"
    return f"{due.ends_at.astimezone(due.zone):%a %Y-%m-%d %H:%M %Z}"


def sms(due: Due) -> str:
    """For an SMS (short, GSM-7): "Jun 17 end of day", "Jun 02 14:00 EDT", "15 days from
    receipt of this notice"."""
    if due.form is DueForm.PENDING:
        return f"{due.period} from {due.runs_from}"
    assert due.ends_at is not None and due.last_day is not None
    if due.form is DueForm.END_OF_DAY:
        return f"{due.last_day:%b %d} end of day"
    return f"{due.ends_at.astimezone(due.zone):%b %d %H:%M %Z}"


def iso(due: Due) -> str | None:
    """The end instant in ISO 8601 with the town's offset; None for a pending clock."""
    return None if due.ends_at is None else due.ends_at.astimezone(due.zone).isoformat()


def as_json(due: Due) -> dict[str, Any]:
    """The due date for the API and JSON documents."""
    return {"form": due.form.value, "last_day": due.last_day.isoformat() if due.last_day else None,
            "ends_at": iso(due), "text": short(due), "provision": due.provision, "runs_from": due.runs_from,
            "start": due.start.astimezone(due.zone).isoformat() if due.start else None, "period": due.period,
            "moved_from": due.moved_from.isoformat() if due.moved_from else None,
            "office_closures": [{"day": c.day.isoformat(), "name": c.name} for c in due.closures]}


def closures_note(due: Due) -> str | None:
    """The town's own office closures a period skipped or ran over, for letters and the board:
    "not counted: Monday, July 6, 2026 (office closure: Town Hall closed, flood)"."""
    skipped = [c for c in due.closures if c not in due.moved_because]    # an extension over one says so itself
    if not skipped:
        return None
    return "not counted: " + "; ".join(f"{_long_day(c.day)} (office closure: {c.name})" for c in skipped)


def moved_note(due: Due) -> str | None:
    """Why the last day is later than the period's end (GCL § 25-a)."""
    if due.moved_from is None:
        return None
    why = ", ".join(c.name if not c.closure else f"office closure: {c.name}" for c in due.moved_because)
    return (f"the period ended on {_long_day(due.moved_from)}" + (f" ({why})" if why else "")
            + "; extended to the next business day (N.Y. General Construction Law § 25-a)")


__all__ = ["long", "by_long", "short", "sms", "iso", "as_json", "closures_note", "moved_note"]
