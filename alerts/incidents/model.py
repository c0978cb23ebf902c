"""Incident values: lifecycle states, per-kind policy, and the episode key of an event.

Events arrive as plain dicts following the ``events.jsonl`` contract (issue 3): ``kind``
plus one of ``outfall``/``pair``/``site``/``gauge``/``station``, ``start`` and ``end``
(null while the episode is open). The same episode is reported again when it closes, so
an episode is identified by kind + subject + start, never by the object that carried it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

from ms4watch.contract.timeutil import parse_time

from .errors import EventError

UTC = timezone.utc


class State(str, enum.Enum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class Priority(str, enum.Enum):
    """How urgent a notice is; only ROUTINE notices wait for a contact's quiet hours."""

    URGENT = "urgent"      # dry-weather flow: a possible illicit discharge, flowing now
    DEADLINE = "deadline"  # a regulatory deadline (post-storm inspection)
    ROUTINE = "routine"    # turbidity contrast, qualifying storm, recovery messages
    NOTICE = "notice"      # data gaps, not evaluable, stale station...: digest only


class Stage(str, enum.Enum):
    """One notification per (incident, recipient, channel, stage) — the outbox's unique key."""

    OPEN = "open"
    ESCALATION = "escalation"
    REMINDER = "reminder"
    OVERDUE = "overdue"
    RECOVERY = "recovery"
    REOPENED = "reopened"    # re-opened within the hold-off after the recovery was already sent
    RETRACTED = "retracted"  # late data showed it did not happen (event status "retracted")
    DIGEST = "digest"


@dataclass(frozen=True)
class KindPolicy:
    priority: Priority
    escalates: bool      # unacknowledged after N min -> the deputy too
    recovery: bool       # a recovery message when the episode closes by itself
    provision: str
    what: str            # a few words for SMS and subjects


# Provisions: ../shared/reference/REGULATIONS.md. An event's own "provision" wins.
_POLICIES: dict[str, KindPolicy] = {
    "dry_weather_flow": KindPolicy(
        Priority.URGENT, True, True,
        "Ramapo ch. 218 / Schenectady ch. 148 Art. II: prohibition of illicit discharges and connections",
        "dry-weather flow"),
    "turbidity_contrast": KindPolicy(
        Priority.ROUTINE, True, True,
        "Schenectady ch. 148 Art. I (6 NYCRR 703.2): no substantial visible contrast in turbidity",
        "turbidity contrast"),
    "inspection_due": KindPolicy(
        Priority.DEADLINE, True, False,
        "Schenectady ch. 148 Art. I: inspect within 24 h of the end of a storm of 0.5 in or more",
        "inspection due"),
    "storm": KindPolicy(
        Priority.ROUTINE, False, False,
        "Schenectady ch. 148 Art. I: a storm of 0.5 in or more starts a 24 h inspection deadline",
        "storm >= 0.5 in"),
}


def policy_for(kind: str) -> KindPolicy:
    """The policy of a kind; any other kind is a notice (digest only, no escalation)."""
    return _POLICIES.get(kind) or KindPolicy(Priority.NOTICE, False, False, "", kind.replace("_", " "))


SUBJECT_FIELDS = ("outfall", "pair", "site", "gauge", "station")


def subject_of(event: Mapping[str, Any]) -> str:
    for f in SUBJECT_FIELDS:
        v = event.get(f)
        if v:
            return str(v)
    raise EventError(event, "subject", f"the event names none of {', '.join(SUBJECT_FIELDS)}")


def event_time(event: Mapping[str, Any], field: str, *, required: bool = False) -> datetime | None:
    v = event.get(field)
    if v is None:
        if required:
            raise EventError(event, field, "missing")
        return None
    try:
        return parse_time(str(v)).astimezone(UTC)
    except ValueError as e:
        raise EventError(event, field, str(e)) from None


def event_start(event: Mapping[str, Any]) -> datetime:
    """When the episode began: ``start``. An inspection item has none: its storm's end stands
    in, or for a routine item the due time less the routine interval (``params.routine_days``,
    default 7): an inspection from then on satisfies it."""
    if event.get("kind") == "inspection_due" and not event.get("start") and not event.get("storm_end"):
        due = event_time(event, "due", required=True)
        params = event.get("params") if isinstance(event.get("params"), Mapping) else {}
        try:
            days = float(params.get("routine_days", 7))  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise EventError(event, "params.routine_days", "not a number") from None
        return due - timedelta(days=days)  # type: ignore[operator]
    for f in ("start", "storm_end", "due", "time"):
        t = event_time(event, f)
        if t is not None:
            return t
    raise EventError(event, "start", "missing (and no storm_end, due or time either)")


def episode_key(event: Mapping[str, Any]) -> str:
    """``kind|subject|start`` in UTC — the same for the open and the closed report of an episode.

    An inspection item is keyed by its site and its deadline (one item per site and storm).
    When the engine gives the event a stable ``id`` (events.py: "an update of an event keeps
    its id"), ``kind|id:<id>`` is the key instead.
    """
    kind = event.get("kind")
    if not isinstance(kind, str) or not kind:
        raise EventError(event, "kind", "missing")
    subject_of(event)  # every event names its subject
    ident = event.get("id")
    if isinstance(ident, str) and ident:
        return f"{kind}|id:{ident}"
    if kind == "inspection_due":
        due = event_time(event, "due", required=True)
        return f"{kind}|{subject_of(event)}|{iso(due)}"
    return f"{kind}|{subject_of(event)}|{iso(event_start(event))}"


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
        return str(self.event.get("provision") or self.policy.provision)

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able copy for the outbox (what was true when the notification was queued)."""
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
