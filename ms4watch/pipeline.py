"""The server's alert pipeline: stored readings → streaming engine → incidents → notifications.

Ingest calls :meth:`AlertPipeline.feed` with each batch once it is durable; the clock
calls :meth:`AlertPipeline.advance` (storms are confirmed, inspections fall due, stations go
stale even when no reading arrives). Events become incidents and queued notifications in
one local SQLite transaction; the delivery worker, woken by that commit, sends them on its
own thread, and dashboard records go to the store on another. Nothing here waits on a
network server, so a hung SMTP server or a slow InfluxDB never holds up ingest; the delay
between a reading and the SMO's email is still the pipeline's, not a polling period's.

The clock is the data's clock: the latest reading time or ``advance`` time, whichever is
later. In a deployment that is wall time; in the demo it is simulated time, so escalation
after 30 minutes and the 24-hour inspection deadline play out in simulated time too.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from .alerts.delivery import DeliveryWorker, RecordsWriter
from .alerts.engine import StreamingEngine
from .alerts.events import Event, EventKind
from .alerts.notify import Notifications
from .contract.registry import Registry
from .alerts.rules._common import td_ns
from .contract.timeutil import from_ns, to_ns
from .contract.wire import CanonicalReading
from .evidence import StoreReadings
from .ingest.sinks.base import ReadingsSource
from .ingest.sinks.influxdb.records import event_records, incident_record
from .settings import DeliverySettings

log = logging.getLogger(__name__)

Reporter = Callable[[str], None]

_SUBJECT = ("outfall", "pair", "site", "gauge", "station")


class _LineStream:
    """Hands each notification the local outbox prints to the reporter, one line each."""

    def __init__(self, report: Reporter):
        self.report = report
        self._buf = ""

    def write(self, text: str) -> int:
        self._buf += text
        return len(text)

    def flush(self) -> None:
        """An entry is: a header line (time, stage, key), ``To: …``, the headline, details."""
        entry, self._buf = self._buf.strip(), ""
        lines = [ln.strip() for ln in entry.splitlines() if ln.strip() and not set(ln.strip()) <= set("-=")]
        if len(lines) >= 3:
            self.report(f"  ✉ {lines[2][:110]} → {lines[1].removeprefix('To: ')}")
        elif lines:
            self.report("  ✉ " + " · ".join(lines)[:160])


class AlertPipeline:
    def __init__(self, registry: Registry, workdir: Path, *, notify_urls: Sequence[str] = (),
                 report: Reporter = print, readings: ReadingsSource | None = None,
                 now_ns: Callable[[], int] | None = None, eval_interval: timedelta = timedelta(0),
                 ack_base_url: str | None = None, records_sink: Any = None,
                 delivery: DeliverySettings | None = None):
        """``readings``: the store's readings port (charts in emails, re-feeding after a crash);
        ``now_ns``: the wall clock (None: the data's own clock, as in the demo)."""
        self.registry = registry
        self.report = report
        self._lock = threading.RLock()
        self._now_ns = 0
        self._wall = now_ns
        # eval_interval 0: every stored batch is evaluated at once (alert latency is the
        # pipeline's). The demo, running thousands of times faster than real time, evaluates
        # every 10 simulated minutes instead.
        self.engine = StreamingEngine(registry, workdir / "engine-state.json", eval_interval=eval_interval)
        self.readings = readings
        lookup = StoreReadings(readings, registry) if readings is not None else None
        delivery = delivery or DeliverySettings()
        # A store that keeps alert / storm / inspection / incident records (InfluxDB, for the
        # Grafana dashboards). They are derived data: the engine state and the incident
        # database are the record, so a store that is down only costs dashboard points.
        write_records = getattr(records_sink, "write_records", None)
        self.records = RecordsWriter(write_records) if write_records else None
        self.notifications = Notifications(
            registry, workdir / "incidents.db", list(notify_urls), clock=self._clock, readings_lookup=lookup,
            outbox_path=workdir / "outbox.txt", stream=_LineStream(report), ack_base_url=ack_base_url,
            on_incident=self._incident_record if self.records else None,
            retry_first=delivery.retry_first, retry_max=delivery.retry_max)
        self.delivery = DeliveryWorker(self.notifications.tick, idle_s=delivery.idle.total_seconds())
        self.notifications.wake = self.delivery.wake
        self._latest: dict[str, dict[str, Any]] = {}
        self._reported_end: set[str] = set()
        self.fed_readings = 0

    def _clock(self) -> datetime:
        ns = self._wall() if self._wall else self._now_ns
        return from_ns(ns) if ns else datetime.now(timezone.utc)

    # -- inputs ---------------------------------------------------------------------------------
    def feed(self, readings: Sequence[CanonicalReading]) -> None:
        with self._lock:
            for r in readings:
                if r.time_ns > self._now_ns:
                    self._now_ns = r.time_ns
            self._handle(self.engine.feed(readings))
            self.fed_readings += len(readings)

    def start(self) -> "AlertPipeline":
        """Start the delivery worker and the dashboard-records writer."""
        if self.records is not None:
            self.records.start()
        self.delivery.start()
        return self

    def advance(self, now_ns: int) -> None:
        with self._lock:
            self._now_ns = max(self._now_ns, now_ns)
            self._handle(self.engine.advance(self._now_ns))
        self.delivery.wake()   # time moved on: escalations, reminders and retries may be due

    def refeed(self, source: ReadingsSource, now_ns: int | None = None, chunk_ns: int = 3_600_000_000_000) -> int:
        """Feed the engine what the store holds newer than its checkpoint minus the lateness
        window (readings acknowledged after the last checkpoint, whose evaluation a crash may
        have lost), an hour of data at a time in time order, as it first arrived. Without a
        checkpoint, the history the rules look back over (dry-weather look-back and margins).
        Returns how many readings were fed; feeding a reading the engine has is a no-op."""
        engine = self.engine
        r = self.registry.rules
        end = now_ns if now_ns is not None else max(engine.now_ns, 0)
        if engine.checkpoint_ns:
            start = engine.checkpoint_ns - td_ns(r.lateness)
        elif now_ns is not None:
            start = now_ns - td_ns(r.dry_lookback + 2 * r.dry_rain_max_gap + r.lateness)
        else:
            return 0   # nothing checkpointed and no wall clock: a fresh simulated run
        if end <= start:
            return 0
        rows: list[CanonicalReading] = []
        for station, quantity in sorted(engine.inputs()):
            rows += source.readings(station, quantity, from_ns(start), from_ns(end))
        rows.sort(key=lambda x: x.time_ns)
        i = 0
        while i < len(rows):
            j = i
            limit = rows[i].time_ns + chunk_ns
            while j < len(rows) and rows[j].time_ns < limit:
                j += 1
            self.feed(rows[i:j])
            i = j
        return len(rows)

    def record_inspection(self, site: str, at: datetime, by: str, note: str = "") -> None:
        """An inspection recorded here: the incidents close, then the engine's items."""
        with self._lock:
            self.notifications.record_inspection(site, at=at, by=by, note=note)
            self._handle(self.engine.record_inspection(site, at, by, note))

    def record_engine_inspection(self, site: str, at: datetime, by: str, note: str = "") -> None:
        """An inspection already in the incident database (recorded by another process)."""
        with self._lock:
            self._handle(self.engine.record_inspection(site, at, by, note))

    def checkpoint(self) -> None:
        """The engine's state to disk, under the lock ``feed`` takes (never half a batch)."""
        with self._lock:
            self.engine.checkpoint()

    def finish(self, end_ns: int, flush_timeout_s: float = 30.0) -> None:
        """End of a run: advance to ``end_ns``, deliver what is due, checkpoint."""
        self.advance(end_ns)
        self.delivery.flush(flush_timeout_s)
        if self.records is not None:
            self.records.flush(flush_timeout_s)
        self.checkpoint()

    def close(self) -> None:
        self.delivery.stop()
        if self.records is not None:
            self.records.stop()
        with self._lock:
            self.engine.close()
            self.notifications.close()

    # -- events ---------------------------------------------------------------------------------
    def _handle(self, events: list[Event]) -> None:
        if not events:
            return
        tz = self.registry.tz
        for e in events:
            d = e.to_dict(tz)
            first = e.id not in self._latest
            self._latest[e.id] = d
            closing = bool(d.get("end")) and e.id not in self._reported_end
            if closing:
                self._reported_end.add(e.id)
            if first or closing or d.get("status") == "retracted":
                self.report(self._line(d))
            try:
                self.notifications.handle(d)
            except Exception:  # a notification problem must never lose the event or stop ingest
                log.exception("notifications could not take event %s", e.id)
            if self.records is not None:
                self.records.put(event_records(d))

    def _incident_record(self, inc: Any) -> None:
        assert self.records is not None
        by = inc.resolved_by or inc.acknowledged_by or ""
        self.records.put([incident_record(str(inc.id), inc.kind, inc.subject, to_ns(inc.opened_at),
                                          inc.state.value, by)])

    def _line(self, d: dict[str, Any]) -> str:
        when = d.get("start") or d.get("due") or d.get("time") or ""
        when = when[:16].replace("T", " ")
        subject = next((d[k] for k in _SUBJECT if d.get(k)), "")
        kind = d["kind"]
        detail = ""
        if kind == EventKind.INSPECTION_OVERDUE.value:
            when = str(d.get("due") or "")[:16].replace("T", " ")
        if kind == EventKind.STORM.value:
            detail = f"{_num(d.get('depth_in'), 2)} in" + (", qualifying" if d.get("qualifying") else "")
            detail += ", ended " + d["end"][11:16] if d.get("end") else ", raining"
        elif kind in (EventKind.INSPECTION_DUE.value, EventKind.INSPECTION_OVERDUE.value):
            why = f"after the storm at {d['gauge']}" if d.get("reason") == "storm" else "routine (7-day)"
            detail = f"{why}, due {str(d.get('due'))[:16].replace('T', ' ')}"
            if d.get("closed_at"):
                detail += f", inspected {d['closed_at'][:16].replace('T', ' ')}"
        elif kind == EventKind.DRY_WEATHER_FLOW.value:
            detail = f"peak {_num(d.get('peak_gpm'), 1)} gpm" + (f", suppressed: {d['suppressed']}" if d.get("suppressed") else "")
        elif kind == EventKind.TURBIDITY_CONTRAST.value:
            detail = f"max +{_num(d.get('max_delta_ntu'), 1)} NTU"
        if d.get("status") == "retracted":
            detail += " (retracted)"
        elif d.get("end") and kind != EventKind.STORM.value:
            detail += f", closed {d['end'][11:16]}"
        return f"[{when}] {kind.replace('_', ' ')} {subject} {detail}".rstrip()

    # -- results --------------------------------------------------------------------------------
    def events(self) -> list[dict[str, Any]]:
        return [d for d in self._latest.values() if d.get("status") != "retracted"]

    def storms(self) -> list[dict[str, Any]]:
        return [d for d in self.events() if d["kind"] == EventKind.STORM.value]

    def alerts(self) -> list[dict[str, Any]]:
        return [d for d in self.events() if d["kind"] != EventKind.STORM.value]


__all__ = ["AlertPipeline"]


def _num(value: Any, digits: int) -> str:
    """A measured value for a person to read: rounded (storms to 0.01 in, as rain gauges report)."""
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
