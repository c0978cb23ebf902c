"""The composition root: :func:`build_server` makes the municipality's server from its
:class:`~ms4watch.settings.Settings`, for ``ms4watch serve`` and ``ms4watch demo`` alike.

ingest (MQTT → store, acknowledged once durable) → alert engine → incidents → the durable
notification queue → the delivery worker → email / SMS / webhook, dashboard records on a
writer of their own, and a small HTTP endpoint for the acknowledge links in emails and the
inbound SMS webhook. The alert clock is wall time: a ticker advances the engine every
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
from typing import Any, Callable

from .contract.registry import Registry, load_registry
from .ingest.service import IngestService
from .ingest.sinks import open_store
from .ingest.sinks.base import ReadingsSource, Sink
from .pipeline import AlertPipeline
from .settings import Settings

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
    _stop: threading.Event = field(default_factory=threading.Event)
    _web: Any = None
    _ticker: threading.Thread | None = None

    @property
    def store_url(self) -> str:
        return self.settings.store_url

    def start(self, connect_timeout_s: float = 15.0) -> "Server":
        self.pipeline.start()
        if isinstance(self.sink, ReadingsSource):
            self.refed_readings = self.pipeline.refeed(self.sink, now_ns=None if self.simulated else time.time_ns())
            if self.refed_readings:
                log.info("engine re-fed with %d stored readings newer than its checkpoint", self.refed_readings)
        self.ingest.start(connect_timeout_s)
        http = self.settings.http
        if http.listen is not None:
            from .alerts.incidents.web import serve as serve_web
            self._web = serve_web(self.pipeline.incidents, http.host or "127.0.0.1", http.port or 8000)
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
        if self._web is not None:
            self._web.shutdown()
        self.pipeline.finish(end_ns if end_ns is not None else time.time_ns(), flush_timeout_s=10.0)
        self.pipeline.close()


def build_server(settings: Settings, *, report: Reporter = log.info, simulated: bool = False,
                 ingest_client_id: str | None = None) -> Server:
    """The server for ``settings``: refuses a bad registry, store URL or channel URL before
    anything is opened or connected."""
    registry = load_registry(settings.require_registry())
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    sink = open_store(settings.store_url, settings.data_dir)
    records = None if settings.store_url.startswith("sqlite:") else sink   # dashboards: InfluxDB only
    pipeline = AlertPipeline(
        registry, settings.data_dir, notify_urls=settings.notify, report=report,
        readings=sink if isinstance(sink, ReadingsSource) else None,
        now_ns=None if simulated else time.time_ns, eval_interval=settings.engine.eval_interval,
        ack_base_url=settings.http.base_url(), records_sink=records, delivery=settings.delivery)
    broker = settings.broker
    ingest = IngestService(
        broker.url, registry.municipality, sink,
        client_id=ingest_client_id or broker.client_id, username=broker.username, password=broker.secret(),
        on_stored=pipeline.feed, rejected_path=settings.data_dir / "rejected.jsonl",
        batch_wait_s=settings.ingest.batch_wait.total_seconds())
    return Server(settings, registry, sink, pipeline, ingest, simulated=simulated, report=report)


__all__ = ["Server", "build_server"]
