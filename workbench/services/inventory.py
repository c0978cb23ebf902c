"""The outfall inventory (the registry's outfalls: coordinates, receiving water, pipe, the
gauges that serve them) and the approved discharges and exempt flows that suppress their
alerts — the registry's own, and those the SMO records here with a window and a reason.

A record made or withdrawn here reaches the alert engine at once (``AlertSide.use_registry``
with the file's registry plus every record not withdrawn): an open episode it covers is
suppressed, and its incident says why. An exempt flow without an end is refused: one that
lasts for good belongs in the registry file, where the town keeps its configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable

from ...contract.registry import Outfall, Registry
from ..audit import AuditLog
from ..errors import Conflict, NotFound, WorkbenchError
from ..records import Suppression, SuppressionKind, SuppressionStore, with_recorded
from ..roles import Actor, Permission

if TYPE_CHECKING:
    from .alertside import AlertSide

MAX_WINDOW = timedelta(days=366)
# Schenectady ch. 148 § 148-24's exempt discharges, offered as suggestions
EXEMPT_FLOWS = ("water line flushing", "landscape irrigation", "lawn watering", "existing diverted stream flows",
                "rising groundwater", "uncontaminated groundwater infiltration", "uncontaminated pumped groundwater",
                "foundation or footing drains", "crawl space or basement sump pumps", "air-conditioning condensate",
                "irrigation water", "springs", "individual residential car washing",
                "natural riparian habitat or wetland flows", "dechlorinated swimming pool discharges",
                "residential street wash water", "fire-fighting activities")

@dataclass(frozen=True)
class Listed:
    """An approval or exempt flow as the pages list it: from the registry file or recorded here."""

    kind: SuppressionKind
    outfall: str
    start: datetime | None
    end: datetime | None
    flow: str | None
    reason: str
    record: Suppression | None = None         # None: the registry file's

    @property
    def source(self) -> str:
        return "recorded" if self.record is not None else "registry"

    def covers(self, t: datetime) -> bool:
        return (self.record is None or self.record.active) and (self.start is None or self.start <= t) \
            and (self.end is None or t <= self.end)


class Inventory:
    def __init__(self, registry: Registry, store: SuppressionStore, audit: AuditLog, clock: Callable[[], datetime],
                 alert_side: "AlertSide | None" = None):
        self.registry = registry
        self.store = store
        self.audit = audit
        self.clock = clock
        self.alert_side = alert_side

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    def effective_registry(self) -> Registry:
        """The registry the alert engine judges by."""
        return with_recorded(self.registry, self.store.list(self.municipality))

    # -- reading ---------------------------------------------------------------------------
    def outfalls(self, actor: Actor) -> list[Outfall]:
        actor.require(Permission.READ)
        return list(self.registry.outfalls)

    def outfall(self, actor: Actor, oid: str) -> Outfall:
        actor.require(Permission.READ)
        try:
            return self.registry.outfall(oid)
        except StopIteration:
            raise NotFound(f"no outfall {oid!r} in {self.municipality}") from None

    def suppressions(self, actor: Actor, outfall: str | None = None) -> list[Listed]:
        """The registry's and the recorded ones, newest window first."""
        actor.require(Permission.READ)
        out = [Listed(SuppressionKind.APPROVED_DISCHARGE, d.outfall, d.from_, d.to, None, d.reason)
               for d in self.registry.approved_discharges if outfall in (None, d.outfall)]
        for o in self.registry.outfalls:
            if outfall in (None, o.id):
                out += [Listed(SuppressionKind.EXEMPT_FLOW, o.id, x.from_, x.to, x.kind, x.note or "")
                        for x in o.exempt_flows]
        out += [Listed(r.kind, r.outfall, r.start, r.end, r.flow, r.reason, r)
                for r in self.store.list(self.municipality, outfall=outfall)]
        far = datetime.min.replace(tzinfo=self.clock().tzinfo)
        return sorted(out, key=lambda x: x.start or far, reverse=True)

    # -- writing ---------------------------------------------------------------------------
    def record(self, actor: Actor, *, kind: SuppressionKind, outfall: str, start: datetime | None,
               end: datetime | None, reason: str, flow: str | None = None) -> Suppression:
        reason, flow = reason.strip(), (flow or "").strip() or None
        target = f"outfall:{outfall}"
        detail = f"{kind.label} {start.isoformat() if start else '?'} to {end.isoformat() if end else '(no end)'}: " \
                 f"{flow + ', ' if flow else ''}{reason}"
        try:
            actor.require(Permission.RECORD_APPROVAL)
            if outfall not in {o.id for o in self.registry.outfalls}:
                raise NotFound(f"no outfall {outfall!r} in {self.municipality}")
            if start is None:
                raise Conflict("say from when")
            if end is None:
                raise Conflict(f"an {kind.label} recorded here needs an end (a permanent exempt flow belongs in the "
                               "registry file)" if kind is SuppressionKind.EXEMPT_FLOW else "say until when")
            if end <= start:
                raise Conflict("the end must be after the start")
            if end - start > MAX_WINDOW:
                raise Conflict(f"a window of at most {MAX_WINDOW.days} days (a lasting one belongs in the registry "
                               "file)")
            if not reason:
                raise Conflict("say why (the reason is kept with every alert it suppresses)")
            if kind is SuppressionKind.EXEMPT_FLOW and not flow:
                raise Conflict("say which exempt flow (e.g. landscape irrigation)")
        except WorkbenchError as e:
            self.audit.record(actor, f"{kind.value}.record", target=target, detail=detail, outcome=f"refused: {e}")
            raise
        rec = self.store.add(municipality=self.municipality, kind=kind, outfall=outfall, start=start, end=end,
                             reason=reason, flow=flow, by=actor.name)
        self.audit.record(actor, f"{kind.value}.record", target=target, detail=f"#{rec.id} {detail}")
        self._tell_engine()
        return rec

    def withdraw(self, actor: Actor, sid: int, note: str) -> Suppression:
        target = f"suppression:{sid}"
        try:
            actor.require(Permission.RECORD_APPROVAL)
            rec = self.store.get(self.municipality, sid)
            if rec is None:
                raise NotFound(f"no recorded approval or exempt flow {sid} in {self.municipality}")
            if not rec.active:
                raise Conflict(f"#{sid} was withdrawn already, by {rec.withdrawn_by}")
            if not note.strip():
                raise Conflict("say why it is withdrawn")
        except WorkbenchError as e:
            self.audit.record(actor, "suppression.withdraw", target=target, detail=note, outcome=f"refused: {e}")
            raise
        out = self.store.withdraw(sid, by=actor.name, note=note)
        self.audit.record(actor, "suppression.withdraw", target=target, detail=note)
        self._tell_engine()
        return out

    def _tell_engine(self) -> None:
        if self.alert_side is not None:
            self.alert_side.use_registry(self.effective_registry())


__all__ = ["Inventory", "Listed", "EXEMPT_FLOWS", "MAX_WINDOW"]
