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

On start, before ingest takes new messages, the engine is re-fed from the store with every
reading newer than its last checkpoint minus the lateness window: readings acknowledged
after that checkpoint were stored but their evaluation died with a crashed process.
Incidents and notifications are idempotent, so what had been raised is not raised twice.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .contract.bounds import ABSOLUTE_ONLY, DEFAULT_WINDOW
from .contract.registry import Registry, load_registry
from .ingest.service import IngestService
from .ingest.sinks import open_store
from .ingest.sinks.base import CalibrationHistory, Probing, ReadingsSource, Sink
from .ingest.sinks.spooling import SpoolingSink
from .pipeline import AlertPipeline
from .settings import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .workbench import Workbench
    from .workbench.serving import WebServer

log = logging.getLogger(__name__)

Reporter = Callable[[str], None]


@dataclass
class Server:
    settings: Settings
    registry: Registry
    sink: Sink
    pipeline: AlertPipeline
    ingest: IngestService
    simulated: bool = False
    report: Reporter = log.info
    refed_readings: int = 0
    workbench: "Workbench | None" = None      # the web application's services (None: http.listen off)
    app: "FastAPI | None" = None
    web: "WebServer | None" = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _ticker: threading.Thread | None = None

    @property
    def store_url(self) -> str:
        return self.settings.store_url

    @property
    def web_url(self) -> str | None:
        """Where the workbench listens (once started)."""
        return self.web.url if self.web is not None else None

    def start(self, connect_timeout_s: float = 15.0) -> "Server":
        http = self.settings.http
        if self.app is not None:   # first: a port that is taken stops the start before anything runs
            from .workbench.serving import WebServer
            self.web = WebServer(http.host or "127.0.0.1", http.port or 0)
            assert self.workbench is not None
            if self.workbench.links.base_url is None:
                self.workbench.links.base_url = self.web.url
        self.pipeline.start()
        if isinstance(self.sink, ReadingsSource):
            self.refed_readings = self.pipeline.refeed(self.sink, now_ns=None if self.simulated else time.time_ns())
            if self.refed_readings:
                log.info("engine re-fed with %d stored readings newer than its checkpoint", self.refed_readings)
        self.ingest.start(connect_timeout_s)
        if self.web is not None and self.app is not None:
            self.web.start(self.app)
        if not self.simulated:
            self._ticker = threading.Thread(target=self._tick, name="ms4watch-clock", daemon=True)
            self._ticker.start()
        return self

    def _tick(self) -> None:
        every = self.settings.engine.tick.total_seconds()
        while not self._stop.wait(every):
            try:
                self.sync_inspections()
                self.pipeline.advance(time.time_ns())
                self.pipeline.checkpoint()
            except Exception:  # the clock must keep ticking
                log.exception("advancing the alert clock failed")

    def sync_inspections(self) -> int:
        """Tell the engine of inspections recorded in the incident database by another
        process (``ms4watch incidents inspected``), so its items close too."""
        marker = self.settings.data_dir / "inspections-synced"
        last = int(marker.read_text()) if marker.exists() else 0
        rows = self.pipeline.incidents.store.inspections_after(last)
        for iid, site, at, who, note in rows:
            self.pipeline.record_engine_inspection(site, at, who, note or "")
            last = iid
        if rows:
            marker.write_text(str(last))
        return len(rows)

    def stop(self, end_ns: int | None = None) -> None:
        """Stop taking messages, store what is queued, deliver what is due, checkpoint."""
        self._stop.set()
        self.ingest.stop()
        if self.web is not None:
            self.web.stop()
        self.pipeline.finish(end_ns if end_ns is not None else time.time_ns(), flush_timeout_s=10.0)
        self.pipeline.close()
        if self.workbench is not None:
            self.workbench.close()


def build_server(settings: Settings, *, report: Reporter = log.info, simulated: bool = False,
                 ingest_client_id: str | None = None) -> Server:
    """The server for ``settings``: refuses a bad registry, store URL or channel URL before
    anything is opened or connected."""
    from .workbench.services.metrics import Metrics

    registry = load_registry(settings.require_registry())
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    sink = open_store(settings.store_url, settings.data_dir)
    records = None if settings.store_url.startswith("sqlite:") else sink   # dashboards: InfluxDB only
    links = secret = None
    if settings.http.listen is not None:   # the secret signs sessions and the links in emails alike
        from .workbench.auth import AckLinks, load_secret
        sms_verifier = settings.sms.verifier()   # a missing secret is one line now, not at the first SMS
        secret = load_secret(settings)
        links = AckLinks(secret, settings.web.ack_link_lifetime, settings.http.public_url)
    metrics = Metrics()
    readings = sink if isinstance(sink, ReadingsSource) else None
    pipeline = AlertPipeline(
        registry, settings.data_dir, notify_urls=settings.notify, report=report, readings=readings,
        now_ns=None if simulated else time.time_ns, eval_interval=settings.engine.eval_interval,
        ack_link=links.url if links else None, records_sink=records, delivery=settings.delivery,
        on_alert_latency=metrics.alert_latency.observe, sms_limiter=settings.sms.limiter(),
        calibrations=sink if isinstance(sink, CalibrationHistory) else None)
    broker = settings.broker
    ingest = IngestService(
        broker.url, registry.municipality, sink,
        client_id=ingest_client_id or broker.client_id, username=broker.username, password=broker.secret(),
        on_stored=pipeline.feed, rejected_path=settings.data_dir / "rejected.jsonl",
        batch_wait_s=settings.ingest.batch_wait.total_seconds(),
        time_window=ABSOLUTE_ONLY if simulated else DEFAULT_WINDOW)   # simulated: the data's own time
    server = Server(settings, registry, sink, pipeline, ingest, simulated=simulated, report=report)
    incidents = pipeline.incidents
    metrics.watch(ingest=lambda: (ingest.stats.stored_readings, ingest.stats.rejected_messages),
                  spool_depth=(lambda: sink.spool_depth) if isinstance(sink, SpoolingSink) else None,
                  queue=lambda: incidents.delivery_backlog()[0])
    if links is not None and secret is not None:
        from .workbench import Workbench, create_app
        from .workbench.services.health import Health
        health = Health(broker_connected=ingest.connected.is_set, store=sink if isinstance(sink, Probing) else None,
                        backlog=incidents.delivery_backlog, clock=incidents.clock,
                        backlog_max=settings.web.ready_backlog_max, broker_url=broker.url)
        server.workbench = Workbench.open(settings, registry=registry, incidents=incidents, secret=secret,
                                          links=links, health=health, metrics=metrics, readings=readings,
                                          clock=incidents.clock, sms_verifier=sms_verifier)
        server.app = create_app(settings, server.workbench)
    return server


__all__ = ["Server", "build_server"]
