"""Inspections: what is due at the construction sites (with its deadline), recording an
inspection report (Schenectady ch. 148's six items, the professional's certification,
photos), the reports, their photos.

Recording a report is one call: the report and its photos are kept (``workbench.db``,
``DATA_DIR/photos``), then the inspection is recorded through the town's alert pipeline —
the site's due incidents are resolved *and* the alert engine's items are closed (so the
dashboards, which draw the engine's items, close them too) — and the audit log says who.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable, Sequence

from ...alerts.events import AlertKind
from ...alerts.incidents import Incident, State
from ...contract.registry import ConstructionSite, Registry
from ..audit import AuditLog
from ..errors import Conflict, NotFound, WorkbenchError
from ..records import InspectionReport, InspectionReports, Photo, PhotoStore, ReportIn
from ..roles import Actor, Permission
from .incidents import ACTIVE

if TYPE_CHECKING:
    from ...alerts.incidents.service import IncidentService
    from .alertside import AlertSide

log = logging.getLogger(__name__)

MAX_PHOTOS = 12
FUTURE_SLACK = timedelta(minutes=10)     # a phone's clock a little ahead


@dataclass(frozen=True)
class DueItem:
    """An inspection item: its incident, the site, and the engine's item (closed or not)."""

    incident: Incident
    site: ConstructionSite | None
    reason: str                       # storm | routine
    gauge: str | None
    engine_closed_at: datetime | None
    engine_known: bool                # the engine holds the item (a process with the engine)

    @property
    def deadline(self) -> datetime | None:
        return self.incident.deadline

    @property
    def site_name(self) -> str:
        return self.site.name if self.site else self.incident.subject


@dataclass(frozen=True)
class Recorded:
    report: InspectionReport
    closed: list[Incident]


class InspectionDesk:
    def __init__(self, registry: Registry, incidents: "IncidentService", reports: InspectionReports,
                 photos: PhotoStore, audit: AuditLog, clock: Callable[[], datetime],
                 alert_side: "AlertSide | None" = None):
        self.registry = registry
        self.incidents = incidents
        self.reports = reports
        self.photos = photos
        self.audit = audit
        self.clock = clock
        self.alert_side = alert_side

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    def sites(self) -> list[ConstructionSite]:
        """The sites active today (in the town's zone), then the others."""
        today = self.clock().astimezone(self.registry.tz).date()
        return sorted(self.registry.construction_sites, key=lambda s: (not s.active_on(today), s.name))

    # -- reading ---------------------------------------------------------------------------
    def due(self, actor: Actor) -> list[DueItem]:
        """Unresolved inspection items, the nearest deadline first."""
        actor.require(Permission.READ)
        items = self._items(self.incidents.list(list(ACTIVE), kind=AlertKind.INSPECTION_DUE.value, limit=10_000))
        far = datetime.max.replace(tzinfo=self.clock().tzinfo)
        return sorted(items, key=lambda d: (d.deadline or far, d.incident.id))

    def closed(self, actor: Actor, limit: int = 20) -> list[DueItem]:
        """Inspection items resolved lately, newest first."""
        actor.require(Permission.READ)
        return self._items(self.incidents.list([State.RESOLVED], kind=AlertKind.INSPECTION_DUE.value, limit=limit))

    def _items(self, incidents: list[Incident]) -> list[DueItem]:
        engine = {}
        if self.alert_side is not None:
            engine = {e.id: e for e in self.alert_side.engine_events() if e.kind is AlertKind.INSPECTION_DUE}
        sites = {s.id: s for s in self.registry.construction_sites}
        out = []
        for inc in incidents:
            ev = engine.get(str(inc.event.get("id")))
            closed = ev.instant("closed_at") if ev is not None else None
            out.append(DueItem(inc, sites.get(inc.subject), str(inc.event.get("reason") or "storm"),
                               inc.event.get("gauge"), closed, ev is not None))
        return out

    def list(self, actor: Actor, *, site: str | None = None, limit: int = 100, offset: int = 0) -> list[InspectionReport]:
        actor.require(Permission.READ)
        return self.reports.list(self.municipality, site=site or None, limit=limit, offset=offset)

    def get(self, actor: Actor, rid: int) -> InspectionReport:
        actor.require(Permission.READ)
        report = self.reports.get(self.municipality, rid)
        if report is None:
            raise NotFound(f"no inspection report {rid} in {self.municipality}")
        return report

    def photo(self, actor: Actor, rid: int, sha256: str) -> tuple[Photo, bytes]:
        """A photo of a report of this town (the report is the authority to see it)."""
        report = self.get(actor, rid)
        photo = next((p for p in report.photos if p.sha256 == sha256), None)
        if photo is None:
            raise NotFound(f"inspection report {rid} has no such photo")
        return photo, self.photos.read(sha256)

    # -- writing ---------------------------------------------------------------------------
    def record(self, actor: Actor, report: ReportIn, photos: Sequence[tuple[str, bytes]] = ()) -> Recorded:
        """Keep the report and its photos, record the inspection (incidents and engine)."""
        target = f"site:{report.site}"
        summary = f"inspection at {report.at.isoformat()} by {report.inspector} ({report.credential.label} " \
                  f"{report.license_no}); {len(photos)} photo(s)"
        try:
            actor.require(Permission.RECORD_INSPECTION)
            site = self._site(report.site)
            now = self.clock()
            if report.at > now + FUTURE_SLACK:
                raise Conflict(f"the inspection's time {report.at.isoformat()} is in the future")
            if report.at.astimezone(self.registry.tz).date() < site.active_from:
                raise Conflict(f"{site.name} is active from {site.active_from}; the inspection is before that")
            if len(photos) > MAX_PHOTOS:
                raise Conflict(f"at most {MAX_PHOTOS} photos per report")
            checked = [self.photos.check(data, name) for name, data in photos]   # all refused before any is kept
        except WorkbenchError as e:
            self.audit.record(actor, "inspection.record", target=target, detail=summary, outcome=f"refused: {e}")
            raise
        kept = [self.photos.put(data, name) for name, data in photos]
        assert [p.sha256 for p in kept] == [p.sha256 for p in checked]
        saved = self.reports.add(self.municipality, report, by=actor.username, photos=kept)
        note = f"inspection report {saved.id}: {report.inspector}, {report.credential.label} {report.license_no}"
        how = f"{actor.via.value} ({actor.role.value})"
        if self.alert_side is not None:
            done = self.alert_side.record_inspection(site.id, report.at, actor.name, note, how)
        else:   # a process without the engine (its items close when the server syncs the incident database)
            done = self.incidents.record_inspection(site.id, at=report.at, by=actor.name, note=note, how=how)
        self.reports.closed(saved.id, [i.id for i in done])
        self.audit.record(actor, "inspection.record", target=target,
                          detail=f"report {saved.id}: {summary}; closed incident(s) "
                                 f"{', '.join(str(i.id) for i in done) or 'none'}")
        return Recorded(self.reports.get(self.municipality, saved.id) or saved, done)

    def add_photo(self, actor: Actor, rid: int, name: str, data: bytes) -> InspectionReport:
        target = f"inspection:{rid}"
        try:
            actor.require(Permission.RECORD_INSPECTION)
            report = self.get(actor, rid)
            if len(report.photos) >= MAX_PHOTOS:
                raise Conflict(f"inspection report {rid} has {MAX_PHOTOS} photos already")
            photo = self.photos.put(data, name)
        except WorkbenchError as e:
            self.audit.record(actor, "inspection.photo", target=target, detail=name, outcome=f"refused: {e}")
            raise
        out = self.reports.add_photo(rid, photo, by=actor.username)
        self.audit.record(actor, "inspection.photo", target=target, detail=f"{photo.name or photo.sha256[:12]} "
                                                                           f"({photo.media_type}, {photo.size} bytes)")
        return out

    def _site(self, sid: str) -> ConstructionSite:
        site = next((s for s in self.registry.construction_sites if s.id == sid), None)
        if site is None:
            raise NotFound(f"no construction site {sid!r} in {self.municipality}")
        return site


__all__ = ["InspectionDesk", "DueItem", "Recorded", "MAX_PHOTOS"]
