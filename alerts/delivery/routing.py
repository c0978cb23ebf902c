"""Who hears about an incident, when, and over which channel — pure functions of the
registry's contacts, the incident, the stage and the time.

* Recipients by role, stations and kinds (a contact's ``stations``/``kinds`` filter; empty
  means the role's default, see :data:`ROLE_KINDS`).
* Escalation: unacknowledged after ``escalate_after`` (default 30 min) → the deputies too.
* Deadlines: a reminder ``reminder_before`` (default 6 h) the deadline, and one when it passes.
* Quiet hours defer ROUTINE notices to the end of the contact's quiet span; a regulatory
  deadline or a dry-weather-flow alert is never deferred.
* Caps: the delivery queue's unique key allows one message per (incident, recipient, channel,
  stage); a daily cap per recipient and channel holds back the rest *into the digest*,
  which goes out at ``digest_time`` local — or within ``urgent_digest_after`` (1 h) when
  it holds a dry-weather-flow alert or a deadline. Nothing is dropped.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Iterable, Sequence
from zoneinfo import ZoneInfo

from ms4watch.contract.registry import Contact, Registry, Role

from ..kinds import KINDS
from ..incidents.model import Incident, Priority, Stage

# Kinds a role receives when the contact's own ``kinds`` list is empty (each kind's
# ``KindSpec.audience``, alerts/kinds/). None: every kind.
ROLE_KINDS: dict[Role, frozenset[str] | None] = {
    Role.SMO: None,
    Role.DEPUTY: None,
    **{role: frozenset(str(getattr(s.kind, "value", s.kind)) for s in KINDS.values() if role in s.audience)
       for role in (Role.INSPECTOR, Role.SITE_OPERATOR, Role.TECHNICIAN)},
}
FIRST_LINE = (Role.SMO, Role.INSPECTOR, Role.SITE_OPERATOR, Role.TECHNICIAN)
UNCAPPED_STAGES = frozenset({Stage.DIGEST, Stage.BACKLOG})


@dataclass(frozen=True)
class RoutingPolicy:
    escalate_after: timedelta = timedelta(minutes=30)
    reminder_before: timedelta = timedelta(hours=6)
    hold_off: timedelta = timedelta(minutes=30)     # re-open within this merges; recovery waits this long
    daily_caps: dict[str, int] = field(default_factory=lambda: {"sms": 10, "email": 40})
    digest_time: str = "07:00"                       # local time the digest of held items goes out
    urgent_digest_after: timedelta = timedelta(hours=1)  # a held urgent/deadline item: digest within this

    def __post_init__(self) -> None:
        for name in ("escalate_after", "reminder_before", "hold_off", "urgent_digest_after"):
            if getattr(self, name) < timedelta(0):
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        for ch, cap in self.daily_caps.items():
            if not isinstance(cap, int) or cap < 1:
                raise ValueError(f"daily cap for {ch} must be a whole number >= 1, got {cap!r}")
        parse_hhmm(self.digest_time)


# -- recipients ---------------------------------------------------------------------------
def subjects_of(registry: Registry, incident: Incident) -> set[str]:
    """Every id a contact's ``stations`` may name to receive this incident."""
    ev = incident.event
    ids = {incident.subject}
    ids |= {str(ev[f]) for f in ("outfall", "pair", "site", "gauge", "station") if ev.get(f)}
    for p in registry.turbidity_pairs:
        if p.id in ids:
            ids |= {p.upstream, p.downstream} | ({p.construction_site} if p.construction_site else set())
    return ids


def wants(contact: Contact, incident: Incident, registry: Registry) -> bool:
    kinds = set(contact.kinds) if contact.kinds else ROLE_KINDS[contact.role]
    if kinds is not None and incident.kind not in kinds:
        return False
    return not contact.stations or bool(set(contact.stations) & subjects_of(registry, incident))


def recipients(contacts: Sequence[Contact], registry: Registry, incident: Incident, stage: Stage,
               *, escalated: bool = False) -> list[Contact]:
    """The contacts of one stage, in registry order.

    open/reminder: the first line (SMO, inspectors, site operators who want it);
    escalation: the deputies; overdue: both; recovery: whoever heard of it (deputies only
    if it was escalated).
    """
    if stage is Stage.ESCALATION:
        roles: Iterable[Role] = (Role.DEPUTY,)
    elif stage is Stage.OVERDUE or (stage in (Stage.RECOVERY, Stage.REOPENED, Stage.RETRACTED) and escalated):
        roles = (*FIRST_LINE, Role.DEPUTY)
    else:
        roles = FIRST_LINE
    roles = set(roles)
    return [c for c in contacts if c.role in roles and wants(c, incident, registry)]


# -- quiet hours, caps, digest -----------------------------------------------------------
def parse_hhmm(text: str) -> time:
    try:
        h, m = text.split(":")
        return time(int(h), int(m))
    except ValueError:
        raise ValueError(f"not a local time like 07:00: {text!r}") from None


def _at_local(day: date, t: time, tz: ZoneInfo) -> datetime:
    # fold=0: in a repeated hour take the first; in a skipped hour zoneinfo moves forward.
    return datetime.combine(day, t, tzinfo=tz)


def quiet_until(quiet_hours: str | None, now: datetime, tz: ZoneInfo) -> datetime | None:
    """The end of the quiet span ``now`` falls in (e.g. ``22:00-07:00``), or None if not quiet."""
    if not quiet_hours:
        return None
    a, b = (parse_hhmm(x) for x in quiet_hours.split("-"))
    if a == b:
        return None
    local = now.astimezone(tz)
    for day in (local.date() - timedelta(days=1), local.date()):
        start = _at_local(day, a, tz)
        end = _at_local(day if b > a else day + timedelta(days=1), b, tz)
        if start <= local < end:
            return end.astimezone(now.tzinfo)
    return None


def next_local(after: datetime, hhmm: str, tz: ZoneInfo) -> datetime:
    """The first ``hhmm`` local time strictly after ``after``."""
    t = parse_hhmm(hhmm)
    local = after.astimezone(tz)
    for d in range(0, 3):
        cand = _at_local(local.date() + timedelta(days=d), t, tz)
        if cand > local:
            return cand.astimezone(after.tzinfo)
    raise AssertionError("unreachable")  # pragma: no cover


def local_day_bounds(now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[midnight, next midnight) of the local day ``now`` falls in, as aware datetimes."""
    d = now.astimezone(tz).date()
    return _at_local(d, time(0), tz), _at_local(d + timedelta(days=1), time(0), tz)


class Verdict(str, enum.Enum):
    SEND = "send"
    DEFER = "defer"   # quiet hours: try again at ``until``
    HOLD = "hold"     # capped or a notice: into the digest


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    until: datetime | None = None
    reason: str = ""


def decide(*, priority: Priority, stage: Stage, channel: str, contact: Contact | None, now: datetime,
           tz: ZoneInfo, sent_today: int, policy: RoutingPolicy) -> Decision:
    """Send now, defer past quiet hours, or hold for the digest. ``contact`` None is a feed
    (webhook, notifications file, group chat): feeds have no quiet hours and no caps."""
    if contact is None:
        return Decision(Verdict.SEND)
    if priority is Priority.NOTICE and stage not in UNCAPPED_STAGES:
        return Decision(Verdict.HOLD, reason="notices go into the digest")
    deferrable = stage in (Stage.DIGEST, Stage.BACKLOG, Stage.RECOVERY, Stage.RETRACTED) or (
        priority is Priority.ROUTINE and stage not in (Stage.REMINDER, Stage.OVERDUE))
    if deferrable:
        until = quiet_until(contact.quiet_hours, now, tz)
        if until is not None:
            return Decision(Verdict.DEFER, until, f"quiet hours {contact.quiet_hours}")
    cap = policy.daily_caps.get(channel)
    if cap is not None and stage not in UNCAPPED_STAGES and sent_today >= cap:
        return Decision(Verdict.HOLD, reason=f"daily {channel} cap of {cap} reached")
    return Decision(Verdict.SEND)


__all__ = ["RoutingPolicy", "ROLE_KINDS", "recipients", "wants", "subjects_of", "quiet_until", "next_local",
           "local_day_bounds", "decide", "Decision", "Verdict", "parse_hhmm"]
