"""The composition root: :func:`build_server` makes the municipality's server from its
:class:`~ms4watch.settings.Settings`, for ``ms4watch serve`` and ``ms4watch demo`` alike.

ingest (MQTT → store, acknowledged once durable) → alert engine → incidents → the durable
notification queue → the delivery worker → email / SMS / webhook, dashboard records on a
writer of their own, and the SMO's workbench (``ms4watch.workbench``: pages, the API, the
signed acknowledge links in emails, the inbound SMS webhook, ``/health``, ``/metrics``) on
uvicorn in a thread of its own. The alert clock is wall time: a ticker advances the engine every
``engine.tick`` so storms are confirmed, deadlines pass and silent stations are noticed
even when no reading arrives. The demo swaps in the embedded broker and a simulated clock
(``simulated=True``: the data's own time, advanced by the demo) and nothing else.

A coalition's server (``registries = [...]``) is the same per town — a store, an alert
pipeline and an ingest (its own MQTT session on the town's topics) for each municipality,
its files in ``DATA_DIR/<municipality>/`` — and one workbench for all (each town's pages
under ``/t/<municipality>``; users, the audit log and the records made on the workbench in
``DATA_DIR``). The alert engine judges by the registry file plus the approvals and exempt
flows recorded on the workbench (``workbench/records``): read at start, updated as they
are recorded.

On start, before ingest takes new messages, the engine is re-fed from the store with every
reading the store received after the mark checkpointed with the engine (ingest's
``stored_mark``, whatever the readings' own times) and every reading newer than the
checkpoint minus the lateness window: readings acknowledged after that checkpoint were
stored but their evaluation died with a crashed process.
Incidents and notifications are idempotent, so what had been raised is not raised twice.
The workbench's services and app are made once ingest runs (its port is bound first): a
backlog waiting in the broker is taken without waiting for them.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .contract.bounds import ABSOLUTE_ONLY, DEFAULT_WINDOW
from .contract.registry import Registry, load_registry
from .ingest.identity import Identity
from .ingest.service import IngestService
from .ingest.stores import open_store
from .ingest.stores.base import CalibrationHistory, Probing, ReadingsSource, RecordsStore, ReadingsStore
from .ingest.stores.spooling import SpoolingStore
from .pipeline import AlertPipeline, PipelineParts
from .settings import Settings, SettingsError
from .townlock import TownLock
from .wiring import build_ingest

if TYPE_CHECKING:
    from datetime import datetime

    from fastapi import FastAPI

    from .alerts.incidents.service import IncidentService
    from .compliance.store import ComplianceStore
    from .network.current import TownReaches

    from .workbench import Workbench
    from .workbench.auth import AckLinks
    from .workbench.auth.passwords import Passwords
    from .workbench.serving import WebServer
    from .workbench.services.metrics import Metrics

log = logging.getLogger(__name__)
READY_WAIT_S = 10.0
"""How long a start waits for each delivery worker to be ready (:attr:`DeliveryWorker.ready`) before
ingest takes readings [s]: a warm-up that hangs costs the start this much, never the alerts."""

WARMUP_JOIN_S = 30.0
"""How long a stop waits for the web's warm-up to finish drawing [s] (see :meth:`Server.stop`)."""

Reporter = Callable[[str], None]


@dataclass(frozen=True)
class ServerParts:
    """What a caller puts in place of what the settings would make; every field left None
    is built from the settings as ``serve`` builds it. The tests use it: a registry held in
    memory, a clock they move (the engine, incidents, records and pages all read it), the
    password hasher at its smallest cost."""

    registries: Sequence[Registry] | None = None        # instead of the settings' registry files
    clock: "Callable[[], datetime] | None" = None        # instead of wall time (or the demo's data time)
    passwords: "Passwords | None" = None                 # instead of argon2id at its default cost


@dataclass
class Town:
    """One municipality's part of the server: its registry (the file's), store, alert
    pipeline, ingest and workbench services, its data in ``data_dir``."""

    registry: Registry
    data_dir: Path
    store: ReadingsStore
    pipeline: AlertPipeline
    ingest: IngestService
    refed_readings: int = 0
    reaches: "TownReaches | None" = None     # its construction sites on its latest imported map
    links: "AckLinks | None" = None          # its signed acknowledge links (None: no workbench)
    open_workbench: "Callable[[], Workbench] | None" = field(default=None, repr=False)   # the root's
    _workbench: "Workbench | None" = field(default=None, repr=False)

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    @property
    def workbench(self) -> "Workbench | None":
        """The town's workbench services (None: ``http.listen`` off), opened at first use: a
        started server opens them once its ingest runs (:meth:`Server.start`), so the
        workbench's imports and databases (~1 s of CPU) do not hold up the first readings; a
        caller that reads them before (the demo, the tests) opens them then."""
        if self._workbench is None and self.open_workbench is not None:
            self._workbench = self.open_workbench()
            self.open_workbench = None
        return self._workbench

    @property
    def opened_workbench(self) -> "Workbench | None":
        """The workbench services if they were opened, without opening them (what a stop closes)."""
        return self._workbench

    def sync(self) -> int:
        """Learn what another process (``ms4watch incidents``, through :func:`open_town`)
        changed in the incident database: the incident service notices a commit not its own
        (SQLite's data_version, one pragma per tick); then the delivery worker looks again
        at once (an acknowledgement stops an escalation) and the engine is told of new
        inspections. Returns how many inspections were new to the engine."""
        incidents = self.pipeline.incidents
        if not incidents.changed_elsewhere():
            return 0
        incidents.dispatcher.wake()
        return self.pipeline.learn_inspections()


@dataclass
class Server:
    settings: Settings
    towns: list[Town]
    simulated: bool = False
    report: Reporter = log.info
    make_app: "Callable[[], FastAPI] | None" = field(default=None, repr=False)   # the root's (None: http.listen off)
    web: "WebServer | None" = None
    _app: "FastAPI | None" = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _ticker: threading.Thread | None = None
    _warmup: threading.Thread | None = None
    _locks: list[TownLock] = field(default_factory=list)

    @property
    def app(self) -> "FastAPI | None":
        """The workbench's application (None: ``http.listen`` off), made at first use (with
        every town's workbench services: :attr:`Town.workbench`); a started server makes it
        once its ingest runs."""
        if self._app is None and self.make_app is not None:
            self._app = self.make_app()
            self.make_app = None
        return self._app

    # -- one town (``serve`` of a municipality, the demo): its parts by name ---------------
    @property
    def town(self) -> Town:
        """The town of a one-town server (the first of a coalition's)."""
        return self.towns[0]

    @property
    def registry(self) -> Registry:
        return self.town.registry

    @property
    def store(self) -> ReadingsStore:
        return self.town.store

    @property
    def pipeline(self) -> AlertPipeline:
        return self.town.pipeline

    @property
    def ingest(self) -> IngestService:
        return self.town.ingest

    @property
    def workbench(self) -> "Workbench | None":
        return self.town.workbench

    @property
    def refed_readings(self) -> int:
        return sum(t.refed_readings for t in self.towns)

    def town_named(self, municipality: str) -> Town:
        for t in self.towns:
            if t.municipality == municipality:
                return t
        raise KeyError(municipality)

    @property
    def store_url(self) -> str:
        return self.settings.town_store_url(self.town.municipality)

    @property
    def web_url(self) -> str | None:
        """Where the workbench listens (once started)."""
        return self.web.url if self.web is not None else None

    def start(self, connect_timeout_s: float = 15.0) -> "Server":
        """Take each town's lock (``townlock.py``: one server per town; TownLocked when another
        holds it), then bind the workbench's port, re-feed the engines, start ingest, open and
        serve the workbench (its services and app made now, not before the first readings),
        and start the clock."""
        if not self.simulated:
            self._lock_towns()
        try:
            return self._start(connect_timeout_s)
        except BaseException:
            self._unlock_towns()
            raise

    def _lock_towns(self) -> None:
        broker = self.settings.broker
        try:
            for t in self.towns:
                self._locks.append(TownLock(t.municipality, t.data_dir, broker.url, username=broker.username,
                                            password=broker.secret(), tls=broker.tls(), on_lost=self._lost).acquire())
        except BaseException:
            self._unlock_towns()
            raise

    def _unlock_towns(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks.clear()

    def _lost(self, reason: str) -> None:
        """Another server held a town whose broker lock could only be checked once running (the
        broker was down at start): stop as systemd would, so only one server alerts."""
        log.critical("%s: stopping this server", reason)
        os.kill(os.getpid(), signal.SIGTERM)

    def _start(self, connect_timeout_s: float) -> "Server":
        http = self.settings.http
        if self.make_app is not None or self._app is not None:
            # first: a port that is taken stops the start before anything runs
            from .workbench.serving import WebServer
            self.web = WebServer(http.host or "127.0.0.1", http.port or 0, trusted_proxies=http.trusted_proxies)
            for t in self.towns:
                if t.links is not None and t.links.base_url is None:
                    t.links.base_url = self.web.url + _town_path(self.settings, t.municipality)
        for t in self.towns:
            t.pipeline.start()
            t.refed_readings = t.pipeline.start_up(t.store if isinstance(t.store, ReadingsSource) else None,
                                                   now_ns=None if self.simulated else time.time_ns())
            if t.refed_readings:
                log.info("%s: engine re-fed with %d stored readings newer than its checkpoint", t.municipality,
                         t.refed_readings)
            t.sync()   # what was recorded while no server ran (``ms4watch incidents inspected``)
        for t in self.towns:   # readings once the delivery worker drew its warm-up chart: the first alert
            if not t.pipeline.delivery.ready.wait(READY_WAIT_S):     # does not wait behind it
                log.warning("%s: the delivery worker is not ready after %.0f s; starting ingest", t.municipality,
                            READY_WAIT_S)
        for t in self.towns:
            t.ingest.start(connect_timeout_s)
        if self.web is not None:
            # the workbench opened and its app made now that ingest runs: not before the first readings
            try:
                app = self.app
                assert app is not None
                self.web.start(app)
            except BaseException:
                self.stop()    # ingest runs: stop it as a signal would (what it stored is evaluated and kept)
                raise
            from .workbench import warmup
            self._warmup = warmup.start(self._stop)   # matplotlib and reportlab now, not in the first chart or packet
        if not self.simulated:
            self._ticker = threading.Thread(target=self._tick, name="ms4watch-clock", daemon=True)
            self._ticker.start()
        return self

    def _tick(self) -> None:
        every = self.settings.engine.tick.total_seconds()
        while not self._stop.wait(every):
            for t in self.towns:
                try:
                    t.sync()
                    if t.reaches is not None:
                        t.reaches.current()   # a new map import read here, not in the next alert's transaction
                    t.pipeline.advance(time.time_ns())
                    t.pipeline.checkpoint()
                except Exception:  # the clock must keep ticking
                    log.exception("advancing the alert clock of %s failed", t.municipality)

    def sync(self) -> int:
        """Every town's :meth:`Town.sync` (the clock tick's first step)."""
        return sum(t.sync() for t in self.towns)

    def stop(self, end_ns: int | None = None) -> None:
        """Stop taking messages, store what is queued, deliver what is due, checkpoint."""
        self._stop.set()
        for t in self.towns:
            t.ingest.stop()
        if self.web is not None:
            self.web.stop()
        if self._warmup is not None:
            # a process that exits while the warm-up draws (matplotlib's C++) dies with SIGABRT
            self._warmup.join(WARMUP_JOIN_S)
        for t in self.towns:
            t.pipeline.finish(end_ns if end_ns is not None else time.time_ns(), flush_timeout_s=10.0)
            t.pipeline.close()
            wb = t.opened_workbench
            if wb is not None:
                wb.close()
        self._unlock_towns()


@dataclass
class TownRecords:
    """One town's records opened for a command (``ms4watch incidents``): its registry, its
    data directory and its incident service. No thread runs and nothing is delivered here:
    what a person records goes through the service, and the server, noticing the commit,
    delivers (:meth:`Town.sync`)."""

    settings: Settings
    registry: Registry
    data_dir: Path
    incidents: "IncidentService"

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    def open_store(self) -> ReadingsStore:
        """The town's readings store (its calibrations and readings); the caller closes it."""
        return open_store(self.settings.town_store_url(self.municipality), self.data_dir)

    def open_compliance(self) -> "ComplianceStore":
        """The town's compliance records (``compliance.db``); the caller closes it."""
        from .compliance.store import ComplianceStore
        return ComplianceStore(self.data_dir / "compliance.db", tz=self.registry.tz)

    def close(self) -> None:
        self.incidents.close()

    def __enter__(self) -> "TownRecords":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_town(settings: Settings, municipality: str | None = None, *,
              incidents_db: Path | None = None) -> TownRecords:
    """One town's records as ``settings`` name them (the town of a one-town server, or
    ``municipality`` of a coalition's), opened without starting anything; ``incidents_db``
    instead of the town's ``incidents.db`` (a copy, say). SettingsError for a town the
    settings do not name, or a data directory without the town's records (the server makes
    them), before anything is created."""
    registries = [load_registry(p) for p in settings.registry_paths()]
    names = [r.municipality for r in registries]
    if municipality is None and len(registries) > 1:
        raise SettingsError(f"registries: the settings name a coalition; say which town ({', '.join(names)})")
    try:
        registry = registries[0] if municipality is None else registries[names.index(municipality)]
    except ValueError:
        raise SettingsError(f"{municipality}: no registry of that municipality in the settings "
                            f"({', '.join(names)})") from None
    data_dir = settings.town_data_dir(registry.municipality)
    if incidents_db is not None and not incidents_db.exists():
        raise SettingsError(f"no incident database at {incidents_db}")
    if incidents_db is None and not any((data_dir / f).is_file() for f in ("incidents.db", "compliance.db")):
        # an empty or wrong directory: opening the databases would create them (and report zeros)
        raise SettingsError(f"no incidents.db or compliance.db in {data_dir}: not {registry.municipality}'s data "
                            "directory (check data_dir in the settings)")
    db = incidents_db or data_dir / "incidents.db"
    from datetime import datetime, timezone

    from .alerts.notifiers.urls import Channels
    from .pipeline import open_incidents
    incidents = open_incidents(registry, Path(db), Channels(), clock=lambda: datetime.now(timezone.utc),
                               delivery=settings.delivery, sms_limiter=settings.sms.limiter())
    return TownRecords(settings, registry, data_dir, incidents)


def _town_path(settings: Settings, municipality: str) -> str:
    """Where a town's pages are on the server: the root, or ``/t/<town>`` in a coalition."""
    return f"/t/{municipality}" if settings.coalition else ""


def build_server(settings: Settings, *, report: Reporter = log.info, simulated: bool = False,
                 ingest_client_id: str | None = None, parts: ServerParts | None = None) -> Server:
    """The server for ``settings`` — one town's, or a coalition's (one registry per
    municipality, each town with its own store, alert pipeline and ingest; one workbench
    for all, each town's under ``/t/<town>``). Refuses a bad registry, store URL or channel
    URL, or two registries of one municipality, before anything is opened or connected.
    ``parts``: what the caller makes itself (:class:`ServerParts`)."""
    parts = parts or ServerParts()
    registries = list(parts.registries) if parts.registries else [load_registry(p) for p in settings.registry_paths()]
    names = [r.municipality for r in registries]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise SettingsError(f"registries: {', '.join(twice)} named by more than one registry")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    secret = sms_verifier = None
    if settings.http.listen is not None:   # the secret signs sessions and the links in emails alike
        sms_verifier = settings.sms.verifier()   # a missing secret is one line now, not at the first SMS
        from .workbench.auth import load_secret
        secret = load_secret(settings)
    towns = [_town(settings, reg, report=report, simulated=simulated, links=_links(settings, secret, reg.municipality),
                   sms_verifier=sms_verifier, secret=secret, towns=tuple(names),
                   client_id=ingest_client_id if len(registries) == 1 else None, parts=parts)
             for reg in registries]
    server = Server(settings, towns, simulated=simulated, report=report)
    if secret is not None:
        def make_app() -> "FastAPI":   # at first use (Server.app): a started server's once its ingest runs
            from .workbench import create_app
            from .workbench.app import create_coalition_app
            wbs = [t.workbench for t in towns if t.workbench is not None]
            return create_coalition_app(settings, wbs) if settings.coalition else create_app(settings, wbs[0])
        server.make_app = make_app
    return server


def _links(settings: Settings, secret: str | None, municipality: str) -> Any:
    """The town's signed acknowledge links (None without the workbench)."""
    if secret is None:
        return None
    from .workbench.auth import AckLinks
    base = settings.http.public_url + _town_path(settings, municipality) if settings.http.public_url else None
    return AckLinks(secret, settings.web.ack_link_lifetime, base, scope=municipality if settings.coalition else None)


def _town(settings: Settings, registry: Registry, *, report: Reporter, simulated: bool, links: Any,
          sms_verifier: Any, secret: str | None, towns: tuple[str, ...], client_id: str | None,
          parts: ServerParts) -> Town:
    from .compliance.clocks import BusinessCalendar
    from .compliance.deadlines import all_deadlines
    from .compliance.store import ComplianceStore
    from .network.current import TownReaches
    from .workbench.records.suppressions import load_suppressions, with_recorded

    m = registry.municipality
    data_dir = settings.town_data_dir(m)
    data_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(settings.town_store_url(m), data_dir)
    # dashboards: InfluxDB only
    write_records = store.write_records if isinstance(store, RecordsStore) and \
        not settings.town_store_url(m).startswith("sqlite:") else None
    metrics: "Metrics | None" = None
    if links is not None:       # served at the workbench's /metrics: none without it (``--http off``)
        from .workbench.services.metrics import Metrics
        metrics = Metrics()
    readings = store if isinstance(store, ReadingsSource) else None
    # the alert rules judge by the file's registry and the approvals and exempt flows recorded on the workbench
    judged = with_recorded(registry, load_suppressions(settings.workbench_db, m))
    # the compliance records' clocks (notices, releases, SWPPP reviews) become deadline incidents
    compliance = ComplianceStore(data_dir / "compliance.db", tz=registry.tz)
    # where each construction site's runoff goes on the town's map, re-read after each `ms4watch map import`
    reaches = TownReaches(data_dir, registry)
    calendar = BusinessCalendar(registry.tz, registry.office_closures)
    pipeline = AlertPipeline(judged, data_dir, PipelineParts(
        notify_urls=settings.notify, report=report, readings=readings,
        now_ns=_now_ns(parts.clock) if parts.clock else None if simulated else time.time_ns, eval_interval=settings.engine.eval_interval,
        ack_link=links.url if links else None, write_records=write_records, delivery=settings.delivery,
        on_alert_latency=metrics.alert_latency.observe if metrics else None, sms_limiter=settings.sms.limiter(),
        calibrations=store if isinstance(store, CalibrationHistory) else None,
        compliance=lambda now: all_deadlines(compliance, calendar), reaches=reaches.current))
    compliance.clock = pipeline.incidents.clock   # the demo's simulated time, else wall time
    ingest = build_ingest(settings, m, store, client_id=client_id,
                          identity=Identity(registry.station_ids(), settings.devices(registry)),   # who sends what
                          on_stored=pipeline.feed, on_status=pipeline.station_status,
                          time_window=ABSOLUTE_ONLY if simulated else DEFAULT_WINDOW)   # simulated: the data's time
    pipeline.stored_mark = ingest.stored_mark   # checkpointed with the engine: what a restart re-feeds
    town = Town(registry, data_dir, store, pipeline, ingest, reaches=reaches, links=links)
    if metrics is not None and links is not None and secret is not None:
        def open_workbench() -> "Workbench":   # at first use (Town.workbench): a started server's once its ingest runs
            from .workbench import Workbench
            from .workbench.services.health import Health
            from .workbench.services.metrics import TownParts
            assert metrics is not None and links is not None and secret is not None
            incidents = pipeline.incidents
            spool = store if isinstance(store, SpoolingStore) else None
            metrics.watch(ingest=lambda: (ingest.stats.stored_readings, ingest.stats.rejected_messages),
                          spool_depth=(lambda: spool.spool_depth) if spool is not None else None,
                          town=TownParts(clock=incidents.clock, operations=incidents.operations,
                                         stations=pipeline.engine.station_freshness,
                                         broker_connected=ingest.connected.is_set,
                                         store_errors=lambda: ingest.stats.store_errors + (spool.write_errors if spool else 0),
                                         data_dir=data_dir))
            health = Health(broker_connected=ingest.connected.is_set, store=store if isinstance(store, Probing) else None,
                            backlog=incidents.delivery_backlog, clock=incidents.clock,
                            backlog_max=settings.web.ready_backlog_max, broker_url=settings.broker.url)
            return Workbench.open(settings, registry=registry, incidents=incidents, secret=secret, links=links,
                                  health=health, metrics=metrics, readings=readings, clock=incidents.clock,
                                  sms_verifier=sms_verifier, alert_side=pipeline, towns=towns,
                                  compliance=compliance, passwords=parts.passwords, reaches=reaches.current)
        town.open_workbench = open_workbench
    return town


def _now_ns(clock: "Callable[[], datetime]") -> Callable[[], int]:
    from .contract.timeutil import to_ns
    return lambda: to_ns(clock())


__all__ = ["Server", "ServerParts", "Town", "TownRecords", "build_server", "open_town"]
