"""``ms4watch serve``: the municipality's server process, for a real deployment.

ingest (MQTT → store, acknowledged once durable) → alert engine → incidents → the durable
notification outbox → email / SMS / webhook, plus a small HTTP endpoint for the
acknowledge links in emails and the inbound SMS webhook. The alert clock is wall time: a
ticker advances the engine every ``tick_s`` so storms are confirmed, deadlines pass and
silent stations are noticed even when no reading arrives.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .alerts.incidents.web import serve as serve_web
from .contract.registry import load_registry
from .ingest.service import IngestService
from .ingest.sinks import open_store
from .pipeline import AlertPipeline

log = logging.getLogger(__name__)


@dataclass
class ServerOptions:
    registry: Path
    broker_url: str = "mqtt://127.0.0.1:1883"
    store_url: str | None = None
    data_dir: Path = Path("/var/lib/ms4watch")
    notify_urls: list[str] = field(default_factory=list)
    http_host: str = "127.0.0.1"
    http_port: int | None = 8000           # None: no HTTP endpoint
    public_url: str | None = None          # base of acknowledge links; default http://HOST:PORT
    username: str | None = None
    password: str | None = None
    tick_s: float = 30.0


class Server:
    def __init__(self, o: ServerOptions, report=log.info):
        self.o = o
        self.report = report
        self.registry = load_registry(o.registry)       # refuses a bad file before anything starts
        o.data_dir.mkdir(parents=True, exist_ok=True)
        store_url = o.store_url or f"sqlite:///{(o.data_dir / 'store.db').resolve()}"
        self.store_url = store_url
        store_path = Path(store_url[len("sqlite:///"):]) if store_url.startswith("sqlite:///") else None
        public = o.public_url or (f"http://{o.http_host}:{o.http_port}" if o.http_port else None)
        sink = open_store(store_url, o.data_dir)
        self.pipeline = AlertPipeline(self.registry, o.data_dir, notify_urls=o.notify_urls, report=report,
                                      store_path=store_path, now_ns=time.time_ns, ack_base_url=public,
                                      records_sink=None if store_path else sink)
        self.ingest = IngestService(o.broker_url, self.registry.municipality, sink,
                                    username=o.username, password=o.password, on_stored=self.pipeline.feed,
                                    rejected_path=o.data_dir / "rejected.jsonl")
        self._stop = threading.Event()
        self._web = None

    def start(self) -> "Server":
        self.ingest.start()
        if self.o.http_port is not None:
            self._web = serve_web(self.pipeline.notifications, self.o.http_host, self.o.http_port)
        threading.Thread(target=self._tick, name="ms4watch-clock", daemon=True).start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(self.o.tick_s):
            try:
                self.sync_inspections()
                self.pipeline.advance(time.time_ns())
                self.pipeline.engine.checkpoint()
            except Exception:  # the clock must keep ticking
                log.exception("advancing the alert clock failed")

    def sync_inspections(self) -> int:
        """Tell the engine of inspections recorded in the incident database by another
        process (``ms4watch incidents inspected``), so its items close too."""
        marker = self.o.data_dir / "inspections-synced"
        last = int(marker.read_text()) if marker.exists() else 0
        rows = self.pipeline.notifications.store.inspections_after(last)
        for iid, site, at, who, note in rows:
            self.pipeline.record_engine_inspection(site, at, who, note or "")
            last = iid
        if rows:
            marker.write_text(str(last))
        return len(rows)

    def stop(self) -> None:
        self._stop.set()
        self.ingest.stop()
        if self._web is not None:
            self._web.shutdown()
        self.pipeline.finish(time.time_ns())
        self.pipeline.close()
