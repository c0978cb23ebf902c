"""The incidents desk: what pages and the API do with incidents, for an :class:`Actor`.

Every method checks the actor's permission first (``roles.NEEDS``); every write goes to
the incident service (its own audit row: who, how) and then to the workbench's audit log
(who, role, from where). Incident errors become the workbench's (404, 409) here.
"""

from __future__ import annotations

import builtins
import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ...alerts.delivery.dispatch import station_name
from ...alerts.kinds import describe
from ...alerts.kinds.params import param_lines, threshold_words
from ...alerts.incidents import AuditEntry, Incident, IncidentError, State
from ...alerts.incidents.due import incident_due
from ...contract.due import Due
from ...contract.registry import Registry
from ..audit import AuditLog
from ..errors import Conflict, NotFound
from ..roles import Actor, Permission, Via

if TYPE_CHECKING:
    from ...alerts.delivery.dispatch import Reaches
    from ...alerts.delivery.queue import QueuedNotification
    from ...alerts.kinds.runoff import Runoff
    from ...alerts.incidents.service import IncidentService
    from .. import svgchart
    from .charts import Charts

log = logging.getLogger(__name__)

ACTIVE = (State.OPEN, State.ACKNOWLEDGED)


@dataclass(frozen=True)
class IncidentView:
    """An incident with what a person needs beside it: the station's name, its kind in the
    town's words (``what``, ``rule``: alerts/kinds/), the threshold."""

    incident: Incident
    station_name: str
    threshold: dict[str, Any] | None
    due: Due | None = None     # the deadline as the one due-date value (alerts/incidents/due.py)
    what: str = ""
    rule: str = ""
    runoff: "Runoff | None" = None     # where the subject's runoff goes on the town's map (alerts/kinds/runoff.py)

    @property
    def unreviewed(self) -> bool:
        """The episode ended by itself before anyone acknowledged it: the SMO reviews it
        (acknowledges it after the fact)."""
        return ended_unreviewed(self.incident)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.incident.event.get("params") or {})

    @property
    def param_lines(self) -> list[tuple[str, str]]:
        """The rule's parameters in words with units (alerts/kinds/params.py)."""
        return param_lines(self.params)

    @property
    def threshold_text(self) -> str:
        return threshold_words(self.threshold)


@dataclass(frozen=True)
class IncidentDetail:
    view: IncidentView
    audit: list[AuditEntry]
    notifications: list["QueuedNotification"]


class IncidentDesk:
    def __init__(self, incidents: "IncidentService", audit: AuditLog, registry: Registry,
                 charts: "Charts | None" = None, reaches: "Reaches | None" = None):
        """``reaches``: the town's construction sites on its latest map (None: no map)."""
        self.incidents = incidents
        self.audit = audit
        self.registry = registry
        self.charts = charts
        self.reaches = reaches

    # -- reading ------------------------------------------------------------------------------
    def view(self, inc: Incident) -> IncidentView:
        words = describe(self.registry, inc.kind, inc.subject, self.reaches() if self.reaches is not None else None)
        return IncidentView(inc, station_name(self.registry, inc), words.threshold,
                            incident_due(inc.kind, inc.deadline, inc.event, self.registry.timezone),
                            words.what, words.rule, words.runoff)

    def list(self, actor: Actor, *, states: tuple[State, ...] = ACTIVE, kind: str | None = None,
             subject: str | None = None, limit: int = 100, offset: int = 0) -> list[IncidentView]:
        actor.require(Permission.READ)
        return [self.view(i) for i in self.incidents.list(list(states), kind=kind or None, subject=subject or None,
                                                           limit=limit, offset=offset)]

    def unreviewed(self, actor: Actor, *, kind: str | None = None, subject: str | None = None) -> builtins.list[IncidentView]:
        """Episodes that ended by themselves and nobody has reviewed yet, the latest first."""
        actor.require(Permission.READ)
        return [self.view(i) for i in self.incidents.ended_unreviewed()
                if (not kind or i.kind == kind) and (not subject or i.subject == subject)]

    def get(self, actor: Actor, iid: int) -> IncidentView:
        actor.require(Permission.READ)
        return self.view(self._incident(iid))

    def detail(self, actor: Actor, iid: int) -> IncidentDetail:
        view = self.get(actor, iid)
        return IncidentDetail(view, self.incidents.audit(iid), self.incidents.notifications(iid))

    def counts(self, actor: Actor) -> dict[str, dict[str, int]]:
        """Unresolved incidents: state -> kind -> how many."""
        actor.require(Permission.READ)
        out: dict[str, dict[str, int]] = {s.value: {} for s in ACTIVE}
        for inc in self.incidents.list(list(ACTIVE), limit=100_000):
            by_kind = out[inc.state.value]
            by_kind[inc.kind] = by_kind.get(inc.kind, 0) + 1
        return out

    def chart_png(self, actor: Actor, iid: int) -> bytes | None:
        """The episode's chart, as the email draws it; None when there are no readings."""
        view = self.get(actor, iid)
        if self.charts is None:
            return None
        return self.charts.png(view)

    def chart_svg(self, actor: Actor, iid: int, pixels: int) -> "svgchart.Chart | None":
        """The same chart for the incident's page (``svgchart``), ``pixels`` columns wide;
        None when there are no readings."""
        view = self.get(actor, iid)
        if self.charts is None:
            return None
        return self.charts.svg(view, pixels)

    # -- writing ------------------------------------------------------------------------------
    def acknowledge(self, actor: Actor, iid: int, note: str | None = None) -> IncidentView:
        """Acknowledge an open incident; or review one that ended by itself before anyone
        acknowledged it (it stays resolved, the review is in both audit logs)."""
        inc = self._incident(iid)
        if inc.state is State.RESOLVED and inc.resolution == "auto":
            return self._write(actor, Permission.ACKNOWLEDGE, iid, "incident.acknowledge", note,
                               lambda: self.incidents.review(iid, by=actor.name, how=_how(actor), note=note or None))
        return self._write(actor, Permission.ACKNOWLEDGE, iid, "incident.acknowledge", note,
                           lambda: self.incidents.acknowledge(iid, by=actor.name, how=_how(actor), note=note or None))

    def may_resolve(self, actor: Actor, iid: int) -> IncidentView:
        """The incident, for the question before resolving it; a role that may not resolve is
        refused (and audited) before it is asked."""
        try:
            actor.require(Permission.RESOLVE)
        except Exception as e:
            self.audit.record(actor, "incident.resolve", target=f"incident:{iid}", outcome=f"refused: {e}")
            raise
        return self.view(self._incident(iid))

    def resolve(self, actor: Actor, iid: int, note: str) -> IncidentView:
        return self._write(actor, Permission.RESOLVE, iid, "incident.resolve", note,
                           lambda: self.incidents.resolve(iid, by=actor.name, how=_how(actor), note=note))

    def linked(self, iid: int) -> IncidentView:
        """The incident a valid acknowledge link names (the link is the authority to see it)."""
        return self.view(self._incident(iid))

    def acknowledge_by_link(self, iid: int, *, by: str, note: str | None, address: str | None,
                            municipality: str) -> IncidentView:
        """The holder of a valid acknowledge link (``auth/links.py`` checked it) acknowledges
        that one incident, under the name it typed."""
        by = by.strip()
        if not by:
            raise Conflict("say who acknowledges (your name)")
        ended = ended_unreviewed(self._incident(iid))
        target = f"incident:{iid}"
        act = self.incidents.review if ended else self.incidents.acknowledge
        try:
            inc = act(iid, by=by, how=Via.EMAIL_LINK.value, note=note or None)
        except IncidentError as e:
            self.audit.write(who=by, via=Via.EMAIL_LINK.value, address=address, municipality=municipality,
                             action="incident.acknowledge", target=target, detail=note, outcome=f"refused: {e}")
            raise Conflict(str(e)) from None
        self.audit.write(who=by, via=Via.EMAIL_LINK.value, address=address, municipality=municipality,
                         action="incident.acknowledge", target=target, detail=note)
        return self.view(inc)

    def _write(self, actor: Actor, permission: Permission, iid: int, action: str, note: str | None,
               do: Any) -> IncidentView:
        target = f"incident:{iid}"
        try:
            actor.require(permission)
        except Exception as e:
            self.audit.record(actor, action, target=target, detail=note, outcome=f"refused: {e}")
            raise
        self._incident(iid)
        try:
            inc = do()
        except IncidentError as e:
            self.audit.record(actor, action, target=target, detail=note, outcome=f"refused: {e}")
            raise Conflict(str(e)) from None
        self.audit.record(actor, action, target=target, detail=note)
        return self.view(inc)

    def _incident(self, iid: int) -> Incident:
        try:
            return self.incidents.get(iid)
        except IncidentError:
            raise NotFound(f"no incident {iid}") from None


def ended_unreviewed(inc: Incident) -> bool:
    """An alerting episode that ended by itself (resolution ``auto``) before anyone acknowledged it."""
    return (inc.state is State.RESOLVED and inc.resolution == "auto" and inc.acknowledged_at is None
            and inc.suppressed is None and inc.policy.escalates)


def _how(actor: Actor) -> str:
    """The incident log's ``how``: the channel, and the role it was allowed under."""
    return f"{actor.via.value} ({actor.role.value})"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ["IncidentDesk", "IncidentView", "IncidentDetail", "ACTIVE", "ended_unreviewed"]
