"""Incident values: lifecycle states, per-kind policy, and the episode key of an event.

Events arrive from the engine as typed :class:`~ms4watch.alerts.events.AlertEvent` objects (an
:class:`AlertKind`, an ``id`` an update keeps, times as UTC ns). An episode is identified
by kind and id: the engine reports it again when it grows, closes or is retracted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..events import AlertEvent, AlertKind
from ..kinds import Priority, spec_for
from .errors import EventError

UTC = timezone.utc


class State(str, enum.Enum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class Stage(str, enum.Enum):
    """One notification per (incident, recipient, channel, stage) — the delivery queue's unique key."""

    OPEN = "open"
    ESCALATION = "escalation"
    REMINDER = "reminder"
    OVERDUE = "overdue"
    RECOVERY = "recovery"
    REOPENED = "reopened"    # re-opened within the hold-off after the recovery was already sent
    RETRACTED = "retracted"  # late data showed it did not happen (event status "retracted")
    DIGEST = "digest"
    BACKLOG = "backlog"      # one summary of the items that fell due before the server first ran


@dataclass(frozen=True)
class KindPolicy:
    """The incident side of a kind's :class:`~ms4watch.alerts.kinds.KindSpec`."""

    priority: Priority
    escalates: bool      # unacknowledged after N min -> the deputy too (a deadline item instead reminds
                         # the first line before its deadline and tells the deputies once it is overdue)
    recovery: bool       # a recovery message when the episode closes by itself
    what: str            # the kind without numbers (lists, the audit log); the town's words: kinds.describe


def policy_for(kind: AlertKind | str) -> KindPolicy:
    """The policy of a kind (alerts/kinds/); any other kind is a notice (digest only, no escalation)."""
    s = spec_for(kind)
    return KindPolicy(s.priority, s.escalates, s.recovery, s.name)


def subject_of(event: AlertEvent) -> str:
    try:
        return event.subject
    except Exception as e:  # AlertError: the event names no subject
        raise EventError(event.to_dict(), "subject", str(e)) from None


def event_start(event: AlertEvent) -> datetime:
    """When the episode began: ``start``. An inspection item has none: its storm's end stands
    in, or for a routine item the due time less the routine interval (``params.routine_days``,
    default 7): an inspection from then on satisfies it."""
    for f in ("start", "storm_end"):
        t = event.instant(f)
        if t is not None:
            return t
    due = event.instant("due")
    if due is not None:
        if event.kind is AlertKind.INSPECTION_DUE:
            return due - timedelta(days=float(event.params.get("routine_days", 7)))
        return due
    t = event.instant("time")
    if t is None:
        raise EventError(event.to_dict(), "start", "missing (and no storm_end, due or time either)")
    return t


def episode_key(event: AlertEvent) -> str:
    """``kind|id:<id>``: the same for every report of one episode (the engine keeps an
    event's id through its updates)."""
    subject_of(event)  # every event names its subject
    return f"{event.kind.value}|id:{event.id}"


def iso(dt: datetime) -> str:
    """Sortable UTC text used in the database: ``2026-06-01T12:00:00.000+00:00``."""
    if dt.tzinfo is None:
        raise ValueError(f"time without a UTC offset: {dt.isoformat()}")
    return dt.astimezone(UTC).isoformat(timespec="milliseconds")


def from_iso(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


@dataclass(frozen=True)
class Incident:
    id: int
    key: str
    kind: str
    subject: str
    code: str
    state: State
    priority: Priority
    opened_at: datetime
    start: datetime
    end: datetime | None
    deadline: datetime | None
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    resolved_at: datetime | None
    resolved_by: str | None
    resolution: str | None
    suppressed: str | None
    episodes: int
    event: dict[str, Any]

    @property
    def policy(self) -> KindPolicy:
        return policy_for(self.kind)

    @property
    def provision(self) -> str:
        """The provision of the law the rule implements, as the engine's event cites it."""
        return str(self.event.get("provision") or "")

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able copy for the delivery queue (what was true when the notification was queued)."""
        return {
            "id": self.id, "key": self.key, "kind": self.kind, "subject": self.subject,
            "code": self.code, "state": self.state.value, "priority": self.priority.value,
            "opened_at": iso(self.opened_at), "start": iso(self.start),
            "end": iso(self.end) if self.end else None,
            "deadline": iso(self.deadline) if self.deadline else None,
            "acknowledged_by": self.acknowledged_by, "resolved_by": self.resolved_by,
            "resolution": self.resolution, "suppressed": self.suppressed,
            "episodes": self.episodes, "provision": self.provision, "what": self.policy.what,
            "event": self.event,
        }


@dataclass(frozen=True)
class AuditEntry:
    id: int
    incident_id: int
    at: datetime
    who: str
    how: str
    action: str
    note: str | None
