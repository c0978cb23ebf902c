"""A due date as one typed value: what every channel (letter, deadline board, incident, SMS,
email, the API, the annual report, the evidence packet) renders through :mod:`.duetext`, so
they cannot name different days.

Three forms:

* ``END_OF_DAY`` — a period of days (N.Y. General Construction Law § 20: the day of the
  event is excluded, the last day included): due by the end of ``last_day`` in the town's
  zone. ``ends_at`` is the instant that day ends, the local midnight after it (ISO
  ``2026-06-18T00:00:00-04:00`` ends Wednesday 17 June): done before it is on time; from it
  on the clock has run out. People are always shown the *day* (:mod:`.duetext`), never the
  midnight's date.
* ``INSTANT`` — a time of day the law sets (inspection within 24 h of a storm's end; a
  hazardous release notified "immediately", due the instant it was known).
* ``PENDING`` — a period running from an event not yet recorded (§ 148-18B: "within 15
  days of notification" before delivery is recorded): no day yet; shown as the period and
  its event ("within 15 days of receipt of this notice").

On the wire (an alert event's fields, the incident) a due date travels as ``due`` (int UTC
nanoseconds of ``ends_at``, or None) beside ``due_form``, ``due_day``, ``due_tz``,
``due_provision``, ``due_runs_from`` and ``due_period``: :meth:`Due.to_fields` and
:meth:`Due.from_fields`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .timeutil import from_ns, to_ns


class DueForm(str, enum.Enum):
    END_OF_DAY = "end_of_day"
    INSTANT = "instant"
    PENDING = "pending"


@dataclass(frozen=True)
class NonBusinessDay:
    """A day a business-day count skipped, or a last day moved off (GCL § 25-a): a weekend
    day, a public holiday of GCL § 24, or one of the town's own office closures."""

    day: date
    name: str                 # "Saturday", "Independence Day", "Town Hall closed (snow emergency)"
    closure: bool = False     # the town's own office closure (its settings), not a public holiday


@dataclass(frozen=True)
class Due:
    """When something is due, and under what; see the module's notes.

    ``provision``: the section setting the clock ("Ramapo ch. 218 § 218-45");
    ``runs_from``: the event it runs from, in words ("issuance of the notice");
    ``start``: when that event happened (None while ``PENDING``);
    ``period``: the period in words ("15 days", "3 business days", "24 h", "immediately");
    ``moved_from``: the day the period ended on before GCL § 25-a extended it, with why
    (``moved_because``: the non-business days it ran over);
    ``closures``: the town's office closures the period skipped or was extended over.
    """

    form: DueForm
    provision: str
    runs_from: str
    tz: str                                  # IANA zone of the town ("America/New_York")
    start: datetime | None = None
    last_day: date | None = None
    ends_at: datetime | None = None
    period: str = ""
    moved_from: date | None = None
    moved_because: tuple[NonBusinessDay, ...] = ()
    closures: tuple[NonBusinessDay, ...] = field(default=())

    def __post_init__(self) -> None:
        zone = _zone(self.tz)
        if self.start is not None and self.start.tzinfo is None:
            raise ValueError(f"due date: a start without a UTC offset: {self.start.isoformat()}")
        if self.form is DueForm.PENDING:
            if self.last_day is not None or self.ends_at is not None:
                raise ValueError("due date: a pending clock has no day yet")
            if not self.period:
                raise ValueError("due date: a pending clock needs its period (\"15 days\")")
            return
        if self.ends_at is None or self.ends_at.tzinfo is None:
            raise ValueError(f"due date: {self.form.value} needs an aware ends_at, got {self.ends_at!r}")
        local = self.ends_at.astimezone(zone)
        if self.form is DueForm.END_OF_DAY:
            midnight = None if self.last_day is None else datetime.combine(self.last_day + timedelta(days=1), time(0))
            if local.replace(tzinfo=None) != midnight:
                raise ValueError(f"due date: end of day {self.last_day} must end at the local midnight after it in "
                                 f"{self.tz}, got {self.ends_at.isoformat()}")
        elif self.last_day is not None and self.last_day != local.date():
            raise ValueError(f"due date: instant {self.ends_at.isoformat()} is not on {self.last_day}")

    # -- constructors --------------------------------------------------------------------------
    @classmethod
    def end_of_day(cls, last_day: date, tz: str, *, provision: str, runs_from: str, start: datetime | None = None,
                   period: str = "", moved_from: date | None = None, moved_because: tuple[NonBusinessDay, ...] = (),
                   closures: tuple[NonBusinessDay, ...] = ()) -> "Due":
        return cls(DueForm.END_OF_DAY, provision, runs_from, tz, start, last_day, end_of(last_day, tz), period,
                   moved_from, moved_because, closures)

    @classmethod
    def at(cls, instant: datetime, tz: str, *, provision: str, runs_from: str, start: datetime | None = None,
           period: str = "") -> "Due":
        if instant.tzinfo is None:
            raise ValueError(f"due date: an instant without a UTC offset: {instant.isoformat()}")
        local = instant.astimezone(_zone(tz))
        return cls(DueForm.INSTANT, provision, runs_from, tz, start, local.date(), local, period)

    @classmethod
    def pending(cls, period: str, runs_from: str, tz: str, *, provision: str) -> "Due":
        """A clock whose event (``runs_from``: "receipt of this notice") is not yet recorded."""
        return cls(DueForm.PENDING, provision, runs_from, tz, period=period)

    # -- questions -----------------------------------------------------------------------------
    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    @property
    def pending_event(self) -> bool:
        return self.form is DueForm.PENDING

    def met_by(self, at: datetime) -> bool:
        """Done at ``at`` in time (on the last day at the latest / by the instant)? Never for a pending clock."""
        if self.ends_at is None:
            return False
        return at < self.ends_at if self.form is DueForm.END_OF_DAY else at <= self.ends_at

    def passed(self, now: datetime) -> bool:
        """Has the clock run out at ``now``?"""
        if self.ends_at is None:
            return False
        return now >= self.ends_at if self.form is DueForm.END_OF_DAY else now > self.ends_at

    # -- the wire ------------------------------------------------------------------------------
    def to_fields(self) -> dict[str, Any]:
        """The due date as an alert event's fields (times as int UTC nanoseconds)."""
        return {"due": to_ns(self.ends_at) if self.ends_at is not None else None, "due_form": self.form.value,
                "due_day": self.last_day.isoformat() if self.last_day else None, "due_tz": self.tz,
                "due_provision": self.provision, "due_runs_from": self.runs_from, "due_period": self.period,
                "due_moved_from": self.moved_from.isoformat() if self.moved_from else None,
                "due_moved_because": [[c.day.isoformat(), c.name, c.closure] for c in self.moved_because] or None,
                "due_closures": [[c.day.isoformat(), c.name] for c in self.closures] or None}

    @classmethod
    def from_fields(cls, f: Mapping[str, Any]) -> "Due | None":
        """The due date of an event's fields (``due`` as int ns or ISO text, as events and
        incidents carry it); None when they hold none."""
        form = f.get("due_form")
        if form is None:
            return None
        try:
            form = DueForm(form)
        except ValueError:
            raise ValueError(f"due_form: not one of {[x.value for x in DueForm]}: {form!r}") from None
        tz, provision = str(f.get("due_tz")), str(f.get("due_provision", ""))
        runs_from = str(f.get("due_runs_from", ""))
        if form is DueForm.PENDING:
            return cls.pending(str(f.get("due_period", "")), runs_from, tz, provision=provision)
        due = f.get("due")
        ends = from_ns(due) if isinstance(due, int) else datetime.fromisoformat(str(due).replace("Z", "+00:00"))
        if form is DueForm.INSTANT:
            return cls.at(ends, tz, provision=provision, runs_from=runs_from, period=str(f.get("due_period", "")))
        closures = tuple(NonBusinessDay(date.fromisoformat(d), n, True) for d, n in (f.get("due_closures") or ()))
        moved = f.get("due_moved_from")
        because = tuple(NonBusinessDay(date.fromisoformat(d), n, bool(c))
                        for d, n, c in (f.get("due_moved_because") or ()))
        return cls.end_of_day(date.fromisoformat(str(f["due_day"])), tz, provision=provision, runs_from=runs_from,
                              period=str(f.get("due_period", "")),
                              moved_from=date.fromisoformat(moved) if moved else None, moved_because=because,
                              closures=closures)


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"due date: not a time zone: {tz!r}") from None


def end_of(day: date, tz: str) -> datetime:
    """The instant ``day`` ends in zone ``tz``: the local midnight after it (whatever DST does)."""
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=_zone(tz))


__all__ = ["Due", "DueForm", "NonBusinessDay", "end_of"]
