"""Drift corrections (USGS TM 1-D3) on the workbench: a station's corrections, in force and
reverted, with their audit trail; the SMO reverts one with a reason. Entering corrections
stays with ``ms4watch corrections add|from-record`` (it needs the service visit's numbers);
the store is the one the command writes, ``DATA_DIR/corrections.db``
(:mod:`ms4watch.ingest.corrections`). Every revert is in both audit logs: the corrections'
own and the workbench's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from ...contract.registry import Registry
from ...contract.timeutil import to_ns
from ...ingest.corrections import AuditEntry, Correction, CorrectionError, CorrectionStore
from ..audit import AuditLog
from ..errors import Conflict, NotFound, WorkbenchError
from ..roles import Actor, Permission


@dataclass(frozen=True)
class CorrectionView:
    correction: Correction
    audit: list[AuditEntry]


class CorrectionDesk:
    def __init__(self, registry: Registry, store: CorrectionStore, audit: AuditLog, clock: Callable[[], datetime],
                 stations: set[str]):
        self.registry = registry
        self.store = store
        self.audit = audit
        self.clock = clock
        self.stations = stations           # the town's stations (the store is the town's own too)

    def of_station(self, actor: Actor, station: str) -> list[CorrectionView]:
        """The station's corrections, newest interval first, reverted ones too."""
        actor.require(Permission.READ)
        if station not in self.stations:
            raise NotFound(f"no station {station!r} in {self.registry.municipality}")
        return [CorrectionView(c, self.store.audit(c.id))
                for c in sorted(self.store.list(station=station), key=lambda c: (c.correction.t0_ns, c.id),
                                reverse=True)]

    def any_in_force(self) -> bool:
        """Whether any of the town's stations has a correction in force (the pages then offer
        corrected values beside the raw)."""
        return any(c.station in self.stations for c in self.store.list(include_reverted=False))

    def revert(self, actor: Actor, cid: int, why: str) -> Correction:
        """Stop applying correction ``cid`` (role smo); it stays, with who, when and why."""
        target = f"correction:{cid}"
        try:
            actor.require(Permission.CORRECT_DATA)
            try:
                c = self.store.get(cid)
            except CorrectionError:
                raise NotFound(f"no correction {cid}") from None
            if c.station not in self.stations:
                raise NotFound(f"no correction {cid}")
            if not why.strip():
                raise Conflict("reverting a correction needs a reason")
            try:
                out = self.store.revert(cid, by=actor.name or actor.username, why=why, now_ns=to_ns(self.clock()))
            except CorrectionError as e:
                raise Conflict(str(e)) from None
        except WorkbenchError as e:
            self.audit.record(actor, "correction.revert", target=target, detail=why.strip() or None,
                              outcome=f"refused: {e}")
            raise
        self.audit.record(actor, "correction.revert", target=target, detail=f"{c.station} {c.quantity}: {why.strip()}")
        return out

    def close(self) -> None:
        self.store.close()


__all__ = ["CorrectionDesk", "CorrectionView"]
