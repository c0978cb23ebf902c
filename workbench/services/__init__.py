"""The town's services behind the workbench's pages and API alike.

:class:`Workbench` holds them; the composition root (``ms4watch/server.py``) opens it with
the pipeline's incident service and the store's readings port, and ``create_app`` serves it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import TYPE_CHECKING, Callable

# The desks are imported when a workbench is opened, not with this package: the server imports
# ``services.metrics`` whether or not it serves the workbench (``--http off``), and a package's
# ``__init__`` runs before any of its modules (~1 s of FastAPI-free desks, pint, compliance).
if TYPE_CHECKING:
    import sqlite3

    from ...alerts.delivery.dispatch import Reaches
    from ...alerts.incidents.service import IncidentService
    from ...alerts.incidents.sms_auth import WebhookVerifier
    from ...compliance.store import ComplianceStore
    from ...contract.registry import Registry
    from ...ingest.stores.base import ReadingsSource
    from ...settings import Settings
    from ..audit import AuditLog
    from ..auth.links import AckLinks
    from ..auth.passwords import Passwords
    from ..auth.users import UserStore
    from .accounts import Accounts
    from .alertside import AlertSide
    from .compliance import ComplianceDesk
    from .corrections import CorrectionDesk
    from .field import FieldDesk
    from .health import Health
    from .incidents import IncidentDesk
    from .inspections import InspectionDesk
    from .inventory import Inventory
    from .metrics import Metrics
    from .sms import SmsInbox
    from .stations import StationDesk
    from .storms import StormLog
    from .tracing import TraceDesk


@dataclass
class Workbench:
    settings: Settings
    registry: Registry
    secret: str
    links: AckLinks
    users: UserStore
    audit: AuditLog
    accounts: Accounts
    desk: IncidentDesk
    sms: SmsInbox
    health: Health
    metrics: Metrics
    stations: StationDesk
    inspections: InspectionDesk
    inventory: Inventory
    storms: StormLog
    conn: "sqlite3.Connection"
    towns: tuple[str, ...] = ()         # every municipality this server serves (a coalition: several)
    compliance: ComplianceDesk | None = None   # cases, samples, notices, releases, SWPPP reviews (issue 12)
    corrections: CorrectionDesk | None = None  # drift corrections: a station's, and reverting one (issue 13)
    tracing: TraceDesk | None = None           # source tracing on a case, over the town's map (issue 24)
    field: FieldDesk | None = None             # the offline field form's sends, each once (issue 23)

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    @property
    def tz(self) -> tzinfo:
        return self.registry.tz

    @property
    def coalition(self) -> bool:
        return len(self.towns) > 1

    @classmethod
    def open(cls, settings: Settings, *, registry: Registry, incidents: "IncidentService", secret: str,
             links: AckLinks, health: Health, metrics: Metrics, readings: ReadingsSource | None = None,
             clock: Callable[[], datetime] | None = None, sms_verifier: "WebhookVerifier | None" = None,
             passwords: Passwords | None = None, alert_side: AlertSide | None = None,
             towns: tuple[str, ...] = (), compliance: "ComplianceStore | None" = None,
             reaches: "Reaches | None" = None) -> "Workbench":
        """``clock``: the pipeline's (charts draw an open episode up to it); ``sms_verifier``:
        the inbound-SMS webhook's signature check (None: the webhook is off); ``passwords``:
        the hasher (default argon2id with argon2-cffi's parameters); ``alert_side``: the
        town's alert pipeline (inspections close the engine's items, approvals reach it,
        storms and items are read from it); ``towns``: every municipality the server serves.
        ``settings`` are the server's: ``workbench.db`` and the photos are in its DATA_DIR;
        ``compliance``: the town's compliance records (the composition root opens them for the
        pipeline too; None: opened here, in the town's data directory); ``reaches``: the town's
        construction sites on its latest map (the root's, which the alerts read too): the
        incident pages and evidence packets say where a site's runoff goes (None: no map)."""
        from ..records.table import connect_workbench_db
        from ...compliance.store import ComplianceStore
        from ...ingest.corrections import town_corrections
        from ..audit import AuditLog
        from ..auth.users import UserStore
        from ..records import InspectionReports, PhotoStore, ReceivedSms, SuppressionStore
        from ..records.field_sends import FieldSends
        from .accounts import Accounts
        from .charts import Charts
        from .compliance import ComplianceDesk, FileStore
        from .corrections import CorrectionDesk
        from .field import FieldDesk
        from .incidents import IncidentDesk
        from .inspections import InspectionDesk
        from .inventory import Inventory
        from .sms import SmsInbox
        from .stations import StationDesk
        from .storms import StormLog
        from .tracing import TraceDesk

        conn = connect_workbench_db(settings.workbench_db)
        lock = threading.RLock()
        users = UserStore(conn, lock, passwords=passwords)
        clock = clock or (lambda: datetime.now(timezone.utc))
        audit = AuditLog(conn, lock, clock)           # one clock for every record (the demo's: simulated)
        charts = Charts(readings, registry, clock) if readings else None
        photos = PhotoStore(settings.data_dir / "photos", settings.web.photo_max_bytes)
        reports = InspectionReports(conn, lock, clock)
        suppressions = SuppressionStore(conn, lock, clock)
        town_dir = settings.town_data_dir(registry.municipality)
        corrections = town_corrections(settings, registry.municipality)   # the town's: `ms4watch corrections --town`
        if compliance is None:
            compliance = ComplianceStore(town_dir / "compliance.db", clock, tz=registry.tz)
        sync = getattr(alert_side, "sync_compliance", None)
        desk = ComplianceDesk(registry, compliance, audit, photos, FileStore(settings.data_dir / "files"), clock,
                              incidents=incidents, events=readings, readings=readings,
                              calibrations=readings, reports=reports,
                              thresholds=ComplianceDesk.thresholds_for(town_dir), on_change=sync, corrections=corrections)
        tracing = TraceDesk(desk, town_dir)
        desk.trace_of = tracing.of_case
        desk.map_outfalls = tracing.outfall_inventory
        desk.reaches = reaches
        inspections = InspectionDesk(registry, incidents, reports, photos, audit, clock, alert_side)
        field = FieldDesk(registry, FieldSends(conn, lock, clock), inspections, desk, audit, clock)
        return cls(settings=settings, registry=registry, secret=secret, links=links, users=users, audit=audit,
                   accounts=Accounts(users, audit, registry.municipality, settings.web),
                   desk=IncidentDesk(incidents, audit, registry, charts, reaches),
                   sms=SmsInbox(incidents, audit, registry.municipality, sms_verifier, ReceivedSms(conn, lock)),
                   health=health, metrics=metrics,
                   stations=StationDesk(registry, incidents, readings, clock, alert_side, corrections),
                   inspections=inspections,
                   inventory=Inventory(registry, suppressions, audit, clock, alert_side),
                   storms=StormLog(registry, incidents, clock, alert_side),
                   conn=conn, towns=tuple(towns) or (registry.municipality,), compliance=desk,
                   corrections=CorrectionDesk(registry, corrections, audit, clock, registry.station_ids()),
                   tracing=tracing, field=field)

    def close(self) -> None:
        self.stations.close()
        if self.compliance is not None:
            self.compliance.close_overrides()
            self.compliance.store.close()
        if self.corrections is not None:
            self.corrections.close()
        self.conn.close()


def open_users(settings: Settings) -> tuple[UserStore, AuditLog, "sqlite3.Connection"]:
    """The users and the audit log alone, for ``ms4watch users`` at a terminal."""
    from ..records.table import connect_workbench_db
    from ..audit import AuditLog
    from ..auth.users import UserStore

    conn = connect_workbench_db(settings.workbench_db)
    lock = threading.RLock()
    return UserStore(conn, lock), AuditLog(conn, lock), conn


__all__ = ["Workbench", "open_users"]
