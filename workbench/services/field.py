"""The field form's side of the server (``/field/``, ``/api/v1/field``): what the form asks
(served as JSON the phone caches, so the items are the server's, never copied into the
page's script) and the records the phone sends when it is back online, each once.

Two records can be made in the field:

* a **construction-site inspection** (Schenectady ch. 148 Art. I, § 148-13B: items (1)–(6),
  the professional's certification) — recorded by :class:`~.inspections.InspectionDesk`,
  closing the site's due items as the workbench's own form does;
* an **outfall visit** in an illicit-discharge case (dry-weather screening, tracing,
  sampling, follow-up; the access for inspection and sampling of Ramapo § 218-42B and
  Schenectady § 148-30B(2)) — recorded by :class:`~.compliance.ComplianceDesk`.

A send carries the phone's idempotency key. The first result for a key is kept
(``records/field_sends.py``) — the record made, or the conflict that refused it (the case
closed meanwhile, the site no longer active, the item inspected by someone else) — and a
resend with that key gets that result again: one record, however often it is sent.
Authentication, role and CSRF failures are not kept: the phone keeps the record queued and
sends it again after the inspector logs in.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ...alerts.events import AlertKind
from ...alerts.incidents import State
from ...compliance.inputs import EntryIn
from ...compliance.laws import LAWS
from ...contract.registry import Registry
from ...contract.when import RecordTime
from ..audit import AuditLog
from ..errors import Conflict, NotFound, WorkbenchError
from ..records import CERTIFICATION, ITEMS, Credential, ReportIn
from ..records.field_sends import FieldSend, FieldSends
from ..records.inspections import PROVISION
from ..roles import Actor, Permission
from .inspections import MAX_PHOTOS, InspectionDesk

if TYPE_CHECKING:
    from .compliance import ComplianceDesk

KEPT_STATUSES = (404, 409)       # a refusal that is the record's own: the same on every resend
VISIT_KINDS = tuple(k for k in get_args(EntryIn.model_fields["kind"].annotation) if k != "closure")
FINDINGS = tuple(a for x in get_args(EntryIn.model_fields["finding"].annotation) for a in get_args(x))


class Position(BaseModel):
    """Where the phone was, as its geolocation said [degrees WGS 84; accuracy in m]."""

    model_config = ConfigDict(extra="forbid")

    lat: float = Field(ge=-90, le=90, allow_inf_nan=False)
    lon: float = Field(ge=-180, le=180, allow_inf_nan=False)
    accuracy_m: float | None = Field(default=None, ge=0, le=1_000_000, allow_inf_nan=False)

    def text(self) -> str:
        acc = f" (±{self.accuracy_m:.0f} m)" if self.accuracy_m is not None else ""
        return f"{self.lat:.6f}, {self.lon:.6f}{acc}"


class PhotoTaken(BaseModel):
    """A photo's time and place as the phone took it (the files follow in the same order)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", max_length=200)
    taken_at: RecordTime | None = None
    position: Position | None = None


class _Send(BaseModel):
    model_config = ConfigDict(extra="forbid")

    drafted_at: RecordTime | None = Field(default=None, description="when the phone queued it")
    position: Position | None = Field(default=None, description="where the form was filled in")
    photos: list[PhotoTaken] = Field(default_factory=list, max_length=MAX_PHOTOS)


class InspectionSend(_Send):
    kind: Literal["inspection"]
    item: int | None = Field(default=None, ge=1, le=2**63 - 1, description="the due item (incident) it answers")
    report: ReportIn


class VisitSend(_Send):
    kind: Literal["visit"]
    case: int = Field(ge=1, le=2**63 - 1)
    entry: EntryIn


FieldRecord = Annotated[InspectionSend | VisitSend, Field(discriminator="kind")]
FIELD_RECORD: TypeAdapter[InspectionSend | VisitSend] = TypeAdapter(FieldRecord)


def _words(v: str) -> str:
    return v.replace("_", " ")


class FieldDesk:
    def __init__(self, registry: Registry, sends: FieldSends, inspections: InspectionDesk,
                 compliance: "ComplianceDesk | None", audit: AuditLog, clock: Callable[[], datetime]):
        self.registry = registry
        self.sends = sends
        self.inspections = inspections
        self.compliance = compliance
        self.audit = audit
        self.clock = clock
        self._lock = threading.Lock()     # a resend waits for the first send of its key

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    # -- what the form asks -------------------------------------------------------------------
    def form(self, actor: Actor) -> dict[str, Any]:
        """Everything the form shows, from the server's own lists (JSON; the phone caches it)."""
        actor.require(Permission.READ)
        today = self.clock().astimezone(self.registry.tz).date()
        due: dict[str, list[dict[str, Any]]] = {}
        for d in self.inspections.due(actor):
            due.setdefault(d.incident.subject, []).append({
                "incident": d.incident.id, "reason": d.reason, "gauge": d.gauge,
                "deadline": d.deadline.isoformat() if d.deadline else None,
                "label": ("after the storm at " + d.gauge if d.reason == "storm" and d.gauge else
                          "routine (every 7 days)" if d.reason == "routine" else d.reason)})
        sites = [{"id": s.id, "name": s.name, "active": s.active_on(today), "due": due.get(s.id, [])}
                 for s in self.inspections.sites()]
        cases = []
        if self.compliance is not None:
            cases = [{"id": c.id, "number": c.number, "outfall": c.outfall, "location": c.location,
                      "description": c.description} for c in self.compliance.cases(actor) if c.closure is None]
        access = [(lw, lw.provision("access")) for lw in LAWS.values()
                  if any(p.key == "access" for p in lw.provisions)]
        return {
            "municipality": self.municipality, "user": actor.name, "username": actor.username,
            "role": actor.role.value,
            "generated_at": self.clock().isoformat(), "max_photos": MAX_PHOTOS,
            "may": {"inspection": actor.may(Permission.RECORD_INSPECTION), "visit": actor.may(Permission.RECORD_CASE)},
            "inspection": {
                "provision": PROVISION,
                "items": [{"field": f, "number": n, "label": label, "law": words} for f, n, label, words in ITEMS],
                "credentials": [{"value": c.value, "label": c.label} for c in Credential],
                "certification": CERTIFICATION, "sites": sites},
            "visit": {
                "provisions": [{"cite": lw.cite(p), "text": p.text} for lw, p in access],
                "kinds": [{"value": k, "label": _words(k)} for k in VISIT_KINDS],
                "findings": [{"value": f, "label": _words(f)} for f in FINDINGS],
                "dry_weather": "no real rain for 72 h (less than 0.10 in)",
                "cases": cases},
        }

    def photos_taken(self, actor: Actor, kind: str, record_id: int) -> dict[str, PhotoTaken]:
        """When and where each photo of a report (``inspection``) or a case's visits (``visit``)
        was taken, as the phone said, by the photo's SHA-256 (photos not sent from the field: none)."""
        actor.require(Permission.READ)
        return {sha: PhotoTaken.model_validate({k: v for k, v in meta.items() if k != "sha256"})
                for sha, meta in self.sends.photos_of(self.municipality, kind, record_id).items()}

    # -- sending ------------------------------------------------------------------------------
    def admit(self, actor: Actor) -> None:
        """The least role that sends anything from the field (before the body is read)."""
        try:
            actor.require(Permission.RECORD_INSPECTION)
        except WorkbenchError as e:
            self.audit.record(actor, "field.send", target="field", detail="", outcome=f"refused: {e}")
            raise

    def send(self, actor: Actor, key: str, record: InspectionSend | VisitSend,
             photos: list[tuple[str, bytes]]) -> tuple[FieldSend, bool]:
        """Make the record once: (the first result for ``key``, whether this was a resend)."""
        self.admit(actor)
        with self._lock:
            first = self.sends.get(self.municipality, key)
            if first is not None:
                self.audit.record(actor, "field.resend", target=f"field:{key}",
                                  detail=f"{first.kind}: answered with the first result ({first.status})")
                return first, True
            earlier = self.sends.claim(self.municipality, key, kind=record.kind, by=actor.username)
            if earlier is not None:
                who, when = earlier[0], datetime.fromisoformat(earlier[1]).astimezone(self.registry.tz)
                raise Conflict(f"this record's first send did not finish (the server stopped while recording it, "
                               f"sent by {who} at {when:%Y-%m-%d %H:%M %Z}): it may have been recorded then; ask the SMO to look "
                               f"before recording it again")
            try:
                status, result = 201, (self._inspection(actor, record, photos) if isinstance(record, InspectionSend)
                                       else self._visit(actor, record, photos))
            except WorkbenchError as e:
                if e.status not in KEPT_STATUSES:
                    self.sends.release(self.municipality, key)
                    raise                  # not the record's own refusal: the phone sends it again later
                status, result = e.status, {"detail": str(e)}
            meta = [{**m.model_dump(mode="json"), "sha256": sha} for m, sha in
                    zip(record.photos, result.get("photos", []))]
            kept = self.sends.add(self.municipality, key, kind=record.kind, status=status, result=result,
                                  photos=meta, by=actor.username)
            self.audit.record(actor, "field.send", target=f"field:{key}",
                              detail=f"{record.kind}: {result.get('summary') or result.get('detail')}",
                              outcome="done" if status == 201 else f"refused: {result.get('detail')}")
            return kept, False

    def _inspection(self, actor: Actor, rec: InspectionSend, photos: list[tuple[str, bytes]]) -> dict[str, Any]:
        report = rec.report
        site = next((s for s in self.registry.construction_sites if s.id == report.site), None)
        if site is None:
            raise NotFound(f"no construction site {report.site!r} in {self.municipality}")
        day = report.at.astimezone(self.registry.tz).date()
        if site.active_to is not None and day > site.active_to:
            raise Conflict(f"{site.name} is no longer active: its work ended on {site.active_to}, before this "
                           f"inspection ({day})")
        if rec.item is not None:
            try:
                inc = self.inspections.incidents.get(rec.item)
            except Exception:  # noqa: BLE001 — the incident service's own error
                raise NotFound(f"no inspection item {rec.item}") from None
            if inc.kind != AlertKind.INSPECTION_DUE.value or inc.subject != site.id:
                raise Conflict(f"incident {rec.item} is not an inspection item of {site.name}")
            if inc.state is State.RESOLVED:
                when = inc.resolved_at.astimezone(self.registry.tz).strftime("%Y-%m-%d %H:%M %Z") \
                    if inc.resolved_at else "earlier"
                raise Conflict(f"the inspection item {rec.item} at {site.name} was closed meanwhile: resolved "
                               f"{when} by {inc.resolved_by or 'someone else'}"
                               f"{f' ({inc.resolution})' if inc.resolution else ''}; this report was not recorded")
        done = self.inspections.record(actor, report, photos)
        r = done.report
        return {"kind": "inspection", "report": r.id, "path": f"/inspections/{r.id}",
                "summary": f"inspection report {r.id} at {site.name}, {len(r.photos)} photo(s)",
                "closed": [i.id for i in done.closed], "photos": [p.sha256 for p in r.photos]}

    def _visit(self, actor: Actor, rec: VisitSend, photos: list[tuple[str, bytes]]) -> dict[str, Any]:
        if self.compliance is None:
            raise NotFound(f"{self.municipality} keeps no compliance records here")
        entry = rec.entry
        if not entry.location and rec.position is not None:
            entry = entry.model_copy(update={"location": rec.position.text()})
        before = {e.id for e in self.compliance.case(actor, rec.case).entries}
        case = self.compliance.add_entry(actor, rec.case, entry, photos)
        made = next(e for e in reversed(case.entries) if e.id not in before)
        return {"kind": "visit", "case": case.id, "number": case.number, "entry": made.id,
                "path": f"/cases/{case.id}", "summary": f"{_words(entry.kind)} visit in case {case.number}, "
                                                        f"{len(made.attachments)} photo(s)",
                "photos": [a.sha256 for a in made.attachments]}


__all__ = ["FieldDesk", "FIELD_RECORD", "InspectionSend", "VisitSend", "PhotoTaken", "Position"]
