"""The server's alert pipeline: stored readings → streaming engine → incidents → notifications.

Ingest calls :meth:`AlertPipeline.feed` with each batch once it is durable; the clock
calls :meth:`AlertPipeline.advance` (storms are confirmed, inspections fall due, stations go
stale even when no reading arrives). The engine's typed :class:`AlertEvent` objects become
incidents and queued notifications in one local SQLite transaction; the delivery worker,
woken by that commit, sends them on its own thread, and dashboard records go to the store
on another. Nothing here waits on a network server, so a hung SMTP server or a slow
InfluxDB never holds up ingest; the delay between a reading and the SMO's email is still
the pipeline's, not a polling period's.

The clock is the data's clock: the latest reading time or ``advance`` time, whichever is
later. In a deployment that is wall time; in the demo it is simulated time, so escalation
after 30 minutes and the 24-hour inspection deadline play out in simulated time too.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from operator import attrgetter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from .alerts.delivery import DeliveryWorker, RecordsWriter
from .alerts.delivery.dispatch import AckLink, Dispatcher, Reaches
from .alerts.delivery.queue import QueuedNotification
from .alerts.delivery.routing import RoutingPolicy
from .alerts.calibration_watch import CalibrationWatch
from .compliance.watch import ComplianceWatch
from .alerts.engine import StreamingEngine
from .alerts.errors import AlertError
from .alerts.events import AlertEvent, AlertKind, AlertEventStatus
from .alerts.incidents import Change, Incident, IncidentStore, Priority, connect
from .alerts.incidents.service import IncidentService
from .alerts.incidents.sms_auth import ReplyLimiter
from .alerts.notifiers.urls import Channels, build_channels
from .alerts.rules._common import td_ns
from .contract.registry import Registry
from .contract.timeutil import from_ns, to_ns
from .contract.wire import CanonicalReading, StatusMessage
from .evidence import StoreReadings
from .ingest.stores.base import CalibrationHistory, ReadingsSource, ReceiptLog, readings_of
from .ingest.stores.influxdb.records import event_records, incident_record
from .settings import DeliverySettings
from .terminal import NotificationEcho, event_line

log = logging.getLogger(__name__)
_TIME_NS = attrgetter("time_ns")

Reporter = Callable[[str], None]

STORED_MARK_FILE = "engine-mark.json"
"""Ingest's stored mark as of the engine's last checkpoint. Named to sort before
``engine-state.json``: a backup copies files in name order, so a backup taken while serving
holds a mark no later than its engine state (a re-feed from it is a superset, never less)."""
CLOCK_SLACK_NS = 5 * 60 * 10**9
"""How much earlier than the checkpointed mark the re-feed starts [ns]: a wall clock stepped
back (NTP) between a batch's receipt and the checkpoint costs nothing but a re-read."""


def open_incidents(registry: Registry, db: Path, channels: Channels, *, clock: Callable[[], datetime],
                   policy: RoutingPolicy | None = None, delivery: DeliverySettings | None = None,
                   ack_link: AckLink | None = None, on_incident: Callable[[Incident], None] | None = None,
                   sms_limiter: Any = None, reaches: Reaches | None = None) -> IncidentService:
    """The town's incident service on its database ``db`` (incidents, audit log, delivery
    queue in one SQLite file, under one lock): what the pipeline and ``open_town`` (the
    ``incidents`` command) both use. ``channels``: where its dispatcher delivers (empty in a
    process that only records what people do: the server delivers); ``reaches``: the town's
    construction sites on its latest map, which the notifications' words read (None: no map)."""
    policy = policy or RoutingPolicy()
    delivery = delivery or DeliverySettings()
    conn = connect(db)
    db_lock = threading.RLock()   # the incident database: incidents, audit log, delivery queue
    store = IncidentStore(conn, hold_off=policy.hold_off, tz=registry.tz)
    dispatcher = Dispatcher(registry, conn, db_lock, store, channels, clock=clock, policy=policy,
                            ack_link=ack_link, retry_first=delivery.retry_first, retry_max=delivery.retry_max,
                            reaches=reaches)
    return IncidentService(registry, store, dispatcher, db_lock, clock=clock, on_incident=on_incident,
                           sms_limiter=sms_limiter)


@dataclass(frozen=True)
class PipelineParts:
    """What the composition root (``server.build_server``) wires into a town's pipeline.

    ``notify_urls``: the channels (``--notify``); ``report``: where the terminal's lines go;
    ``readings``: the store's readings port (charts in emails, re-feeding after a crash);
    ``now_ns``: the wall clock (None: the data's own clock, as in the demo);
    ``eval_interval``: how often the engine evaluates (0: every stored batch at once);
    ``ack_link``: an incident's acknowledge link (the workbench signs it);
    ``write_records``: the store's dashboard-records writer (InfluxDB, for Grafana; None: none);
    ``on_alert_latency``: told, in wall seconds, how long each incident a stored batch opened
    took from that batch reaching the pipeline to its first notification being accepted by a
    channel; ``sms_limiter``: SMS replies per sender and attempts per incident (``[sms]``);
    ``calibrations``: the store's calibration state, whose due and overdue sensors become
    notices on the pipeline's clock (:class:`~.alerts.calibration_watch.CalibrationWatch`);
    ``compliance``: the town's compliance deadlines at a time (``compliance.deadlines``), whose
    actionable clocks become deadline incidents (:class:`~.compliance.watch.ComplianceWatch`);
    ``reaches``: the town's construction sites on its latest imported map
    (``network.current.TownReaches.current``): the alerts say where a site's runoff goes."""

    notify_urls: Sequence[str] = ()
    report: Reporter = print
    readings: ReadingsSource | None = None
    now_ns: Callable[[], int] | None = None
    eval_interval: timedelta = timedelta(0)
    ack_link: AckLink | None = None
    write_records: Callable[[Sequence[Any]], int] | None = None
    delivery: DeliverySettings = field(default_factory=DeliverySettings)
    policy: RoutingPolicy = field(default_factory=RoutingPolicy)
    on_alert_latency: Callable[[float], None] | None = None
    sms_limiter: ReplyLimiter | None = None
    calibrations: CalibrationHistory | None = None
    compliance: Callable[[datetime], list[Any]] | None = None
    reaches: Reaches | None = None


class AlertPipeline:
    def __init__(self, registry: Registry, workdir: Path, parts: PipelineParts | None = None):
        """The town's pipeline on its files in ``workdir`` (engine state, incident database),
        with what the root wires (:class:`PipelineParts`; defaults: nothing but a file of
        notifications)."""
        parts = parts or PipelineParts()
        report, readings, now_ns, delivery, policy = (parts.report, parts.readings, parts.now_ns, parts.delivery,
                                                      parts.policy)
        self.registry = registry
        self.report = report
        self._lock = threading.RLock()
        self._now_ns = 0
        self._wall = now_ns
        # eval_interval 0: every stored batch is evaluated at once (alert latency is the
        # pipeline's). The demo, running thousands of times faster than real time, evaluates
        # every 60 simulated minutes instead.
        self.engine = StreamingEngine(registry, workdir / "engine-state.json", eval_interval=parts.eval_interval)
        self.readings = readings
        # ingest's ``stored_mark`` (the server wires it): checkpointed with the engine, so a
        # restart re-feeds what the store received after it, however old the readings' times
        self.stored_mark: Callable[[], int] | None = None
        self._mark_path = workdir / STORED_MARK_FILE
        # Dashboard records (alerts, storms, inspections, incidents) for a store that keeps
        # them (InfluxDB, for Grafana). Derived data: the engine state and the incident
        # database are the record, so a store that is down only costs dashboard points.
        self.records = RecordsWriter(parts.write_records) if parts.write_records is not None else None
        channels = build_channels(   # first: a bad URL is refused before anything is opened
            list(parts.notify_urls), file_path=workdir / "notifications.txt", clock=self._clock,
            readings_lookup=StoreReadings(readings, registry) if readings is not None else None,
            stream=NotificationEcho(report))
        self.incidents = open_incidents(registry, workdir / "incidents.db", channels, clock=self._clock,
                                        policy=policy, delivery=delivery, ack_link=parts.ack_link,
                                        on_incident=self._incident_record if self.records else None,
                                        sms_limiter=parts.sms_limiter, reaches=parts.reaches)
        self.dispatcher = self.incidents.dispatcher
        self.delivery = DeliveryWorker(self.dispatcher.tick, idle_s=delivery.idle.total_seconds(),
                                       prepare=channels.prepare)
        self.dispatcher.wake = self.delivery.wake
        self._on_alert_latency = on_alert_latency = parts.on_alert_latency
        self._batch_t0: float | None = None          # monotonic time the batch being fed arrived
        self._awaiting_delivery: dict[int, float] = {}  # incident id -> its batch's arrival
        if on_alert_latency is not None:
            self.dispatcher.on_sent = self._delivered
        self._latest: dict[str, AlertEvent] = {}
        # events the incident database could not take yet (full disk, I/O error), in order:
        # handed over again at every feed and tick, and no checkpoint is taken while any waits
        self._untaken: deque[AlertEvent] = deque()
        self._incidents_failing = False
        self._stated: dict[str, float] = {}          # report intervals the loggers stated, as last told
        self._reported_end: set[str] = set()
        self.fed_readings = 0
        self.calibrations = calibrations = parts.calibrations
        self.calibration_watch = CalibrationWatch(registry.rules.calibration_warn, workdir / "calibration-watch.json") \
            if calibrations is not None else None
        self.compliance = compliance = parts.compliance
        self.compliance_watch = ComplianceWatch(workdir / "compliance-watch.json") if compliance is not None else None

    def _clock(self) -> datetime:
        ns = self._wall() if self._wall else self._now_ns
        return from_ns(ns) if ns else datetime.now(timezone.utc)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> "AlertPipeline":
        """Start the delivery worker and the dashboard-records writer."""
        if self.records is not None:
            self.records.start()
        self.delivery.start()
        return self

    def checkpoint(self) -> None:
        """The engine's state to disk, under the lock ``feed`` takes (never half a batch)."""
        with self._lock:
            if not self._take():
                log.error("engine state not checkpointed: %d events wait for the incident database; "
                          "if the server stops now, its next start raises them again", len(self._untaken))
                return
            mark = self.stored_mark() if self.stored_mark is not None else None   # before the engine's state
            self.incidents.make_durable()   # what the state to be saved raised is on disk before it
            self.engine.checkpoint()
            if mark is not None:        # after it: a crash between the two leaves the older mark
                tmp = self._mark_path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"stored_mark_ns": mark}), encoding="utf-8")
                os.replace(tmp, self._mark_path)
            if self.calibration_watch is not None:
                self.calibration_watch.checkpoint()
            if self.compliance_watch is not None:
                self.compliance_watch.checkpoint()

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
            if self._take():
                self.incidents.make_durable()
                self.engine.close()
            else:              # the state on disk stays before them: the next start raises them again
                log.error("stopping with %d events the incident database did not take; engine state left at "
                          "its last checkpoint, so the next start raises them again", len(self._untaken))
            self.incidents.close()

    # -- inputs ---------------------------------------------------------------------------------
    def feed(self, readings: Sequence[CanonicalReading]) -> None:
        with self._lock:
            self._batch_t0 = time.monotonic()
            if readings:   # the latest time in C (a loop over the readings here cost ~0.3 µs each)
                self._now_ns = max(self._now_ns, max(map(_TIME_NS, readings)))
            try:
                self._handle(self.engine.feed(readings))
            finally:
                self._batch_t0 = None
            self.fed_readings += len(readings)

    def advance(self, now_ns: int) -> None:
        # asked before taking the lock feed needs: a store that does not answer (InfluxDB is a
        # network server) delays the calibration notices, never ingest's readings
        sensors = self._calibration_state(max(self._now_ns, now_ns))
        deadlines = self._compliance_deadlines()
        with self._lock:
            self._now_ns = max(self._now_ns, now_ns)
            self._handle(self.engine.advance(self._now_ns))
            if sensors is not None and self.calibration_watch is not None:
                self._handle(self.calibration_watch.advance(self._now_ns, sensors))
            if deadlines is not None and self.compliance_watch is not None:
                self._handle(self.compliance_watch.advance(to_ns(deadlines[0]), deadlines[1]))
        self.delivery.wake()   # time moved on: escalations, reminders and retries may be due

    def station_status(self, station: str, device: str, status: StatusMessage) -> None:
        """A logger's status (ingest's ``on_status``): the report interval it states tells the
        engine when its station is silent for too long. A status without one (the offline
        last will, an older logger) changes nothing."""
        seconds = status.report_interval_s
        if seconds is None or self._stated.get(station) == seconds:
            return          # ingest's network thread calls this: the same again costs no lock
        with self._lock:
            self._handle(self.engine.station_report_interval(station, seconds))
            self._stated[station] = seconds

    def _calibration_state(self, now_ns: int) -> list[Any] | None:
        """Every sensor's calibration state from the store (issue 13), None when the store
        cannot say now (asked again at the next tick)."""
        if self.calibrations is None or self.calibration_watch is None:
            return None
        warn_days = int(self.registry.rules.calibration_warn.total_seconds() // 86400)
        try:
            return self.calibrations.calibrations_due(from_ns(now_ns), warn_days=warn_days)
        except Exception as e:  # noqa: BLE001 — a store that cannot answer now is asked again at the next tick
            log.warning("calibration state not read from the store (%s); asking again at the next tick", e)
            return None

    def _compliance_deadlines(self) -> tuple[datetime, list[Any]] | None:
        """The compliance records' clocks (issue 12) as of now, None when they cannot be read."""
        if self.compliance is None or self.compliance_watch is None:
            return None
        now = self._clock()
        try:
            return now, self.compliance(now)
        except Exception:  # noqa: BLE001 — a record that cannot be read now is read again at the next tick
            log.exception("compliance deadlines not read; asking again at the next tick")
            return None

    def sync_compliance(self) -> None:
        """A compliance record changed (the workbench): its clocks reach the incidents now, not at the next tick."""
        deadlines = self._compliance_deadlines()
        if deadlines is not None and self.compliance_watch is not None:
            with self._lock:
                self._handle(self.compliance_watch.advance(to_ns(deadlines[0]), deadlines[1]))
        self.delivery.wake()

    def start_up(self, source: ReadingsSource | None, now_ns: int | None) -> int:
        """What the server does before ingest takes new messages: re-feed the engine from the
        store (:meth:`refeed`) and, on the wall clock (``now_ns``), advance it to now, so what
        fell due while the server was down is found at once. Items due before the server
        first ran (recorded at its first start) are then told in one summary per recipient,
        not one message each (``Dispatcher``'s backlog). The demo's simulated clock (None)
        starts with the data: no backlog. Returns how many readings were re-fed."""
        if now_ns is None:
            return self.refeed(source) if source is not None else 0
        self.dispatcher.record_first_run(from_ns(now_ns))
        self.dispatcher.summarising = False
        try:
            fed = self.refeed(source, now_ns=now_ns) if source is not None else 0
            self.advance(now_ns)
        finally:
            self.dispatcher.summarise_backlog()
        return fed

    def refeed(self, source: ReadingsSource, now_ns: int | None = None, chunk_ns: int = 3_600_000_000_000) -> int:
        """Feed the engine what a crash may have kept from it, an hour of data at a time in time
        order, as it first arrived:

        * what the store *received* after the stored mark checkpointed with the engine, whatever
          the readings' own times (a logger's day-old backlog acknowledged just before the
          crash), when the store keeps receipts (:class:`~.ingest.stores.base.ReceiptLog`);
        * what the store holds newer than the checkpoint minus the lateness window. Without a
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
        inputs = sorted(engine.inputs())
        found: list[CanonicalReading] = []
        if end > start:   # a remote store: one request, not one a series
            found += readings_of(source, inputs, from_ns(start), from_ns(end))
        mark = self._stored_mark() if engine.checkpoint_ns else None
        if mark is not None and isinstance(source, ReceiptLog):
            spans: dict[str, list[tuple[int, int]]] = {}
            for rc in source.received_since(mark - CLOCK_SLACK_NS):
                spans.setdefault(rc.station, []).append((rc.first_ns, rc.last_ns))
            for station, quantity in inputs:
                for a, b in _merged(spans.get(station, [])):
                    found += source.readings(station, quantity, from_ns(a), from_ns(b))
        rows = sorted(set(found), key=lambda x: x.time_ns)
        i = 0
        while i < len(rows):
            j = i
            limit = rows[i].time_ns + chunk_ns
            while j < len(rows) and rows[j].time_ns < limit:
                j += 1
            self.feed(rows[i:j])
            i = j
        return len(rows)

    def _stored_mark(self) -> int | None:
        """The stored mark checkpointed with the engine (None: none yet, or unreadable)."""
        try:
            return int(json.loads(self._mark_path.read_text(encoding="utf-8"))["stored_mark_ns"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("%s unreadable (%s): re-feeding by reading time only", self._mark_path, e)
            return None

    def record_inspection(self, site: str, at: datetime, by: str, note: str = "", how: str = "api") -> list[Incident]:
        """An inspection recorded here: the incidents close, then the engine's items. Returns
        the incidents it resolved."""
        with self._lock:
            done = self.incidents.record_inspection(site, at=at, by=by, note=note, how=how)
            self._handle(self.engine.record_inspection(site, at, by, note))
            return done

    def learn_inspections(self) -> int:
        """Tell the engine of the inspections in the incident database it does not hold yet
        (recorded by another process, ``ms4watch incidents inspected``, or while no server
        ran), so its items close too. The engine's state is what it holds, so one is told
        once, across restarts. Returns how many were new to it."""
        with self._lock:
            known = {(i.site, i.time_ns, i.inspector) for i in self.engine.inspections}
            new = [(site, at, who, note) for _, site, at, who, note in self.incidents.inspections()
                   if (site, to_ns(at), who) not in known]
            told = 0
            for site, at, who, note in new:
                try:
                    self._handle(self.engine.record_inspection(site, at, who, note or ""))
                    told += 1
                except AlertError as e:   # a site since removed from the registry
                    log.warning("inspection of %s at %s not told to the engine: %s", site, at, e)
            return told

    def use_registry(self, registry: Registry) -> None:
        """The town's registry with the approved discharges and exempt flows recorded on the
        workbench (``Registry.with_suppressions``): the engine judges by it from now on, and
        an open episode they cover becomes suppressed (its incident says why)."""
        with self._lock:
            self._handle(self.engine.use_registry(registry))

    def engine_events(self) -> list[AlertEvent]:
        """Every event the engine holds (final ones included), not retracted: what the
        workbench shows of storms and inspection items, whenever the process started."""
        with self._lock:
            return list(self.engine.events().values())

    # -- events ---------------------------------------------------------------------------------
    def _handle(self, events: list[AlertEvent]) -> None:
        tz = self.registry.tz
        for e in events:
            first = e.id not in self._latest
            self._latest[e.id] = e
            closing = e.fields.get("end") is not None and e.id not in self._reported_end
            if closing:
                self._reported_end.add(e.id)
            if first or closing or e.status is AlertEventStatus.RETRACTED:
                self.report(event_line(e, tz))
            self._untaken.append(e)
            if self.records is not None:
                self.records.put(event_records(e.to_dict(tz)))
        self._take()

    def _take(self) -> bool:
        """Hand the incident database the events it has not taken, in order; True when it took
        them all. One it cannot take now (SQLite or the disk failing: full, I/O, locked) waits,
        with every event after it, for the next feed or tick — never dropped. One it refuses
        for any other reason (a fault of ours with that event) is logged and passed over, so
        it cannot hold up the alerts behind it."""
        while self._untaken:
            e = self._untaken[0]
            try:
                change = self.incidents.handle(e, replayable=True)   # re-fed after a power cut: no fsync
            except (sqlite3.OperationalError, OSError) as err:
                if not self._incidents_failing:
                    log.error("the incident database cannot take event %s (%s); keeping it and %d more, "
                              "trying again at every tick", e.id, err, len(self._untaken) - 1)
                self._incidents_failing = True
                return False
            except Exception:  # a fault of ours with this event: never stop ingest or the alerts behind it
                log.exception("incidents could not take event %s", e.id)
            else:
                self._await_delivery(change)
            self._untaken.popleft()
        if self._incidents_failing:
            log.warning("the incident database takes events again")
            self._incidents_failing = False
        return True

    def _await_delivery(self, change: Change) -> None:
        inc = change.incident
        if (self._on_alert_latency is None or self._batch_t0 is None or not change.opened or inc is None
                or inc.suppressed or inc.priority is Priority.NOTICE):   # notices wait for the digest
            return
        if len(self._awaiting_delivery) >= 10_000:   # never delivered (no channel reaches anyone): forget the oldest
            self._awaiting_delivery.pop(next(iter(self._awaiting_delivery)))
        self._awaiting_delivery[inc.id] = self._batch_t0

    def _delivered(self, row: QueuedNotification) -> None:
        """The delivery worker's thread: the first notification of an incident a batch opened."""
        t0 = self._awaiting_delivery.pop(row.incident_id, None) if row.incident_id is not None else None
        if t0 is not None and self._on_alert_latency is not None:
            self._on_alert_latency(time.monotonic() - t0)

    def _incident_record(self, inc: Any) -> None:
        assert self.records is not None
        by = inc.resolved_by or inc.acknowledged_by or ""
        self.records.put([incident_record(str(inc.id), inc.kind, inc.subject, to_ns(inc.opened_at),
                                          inc.state.value, by)])

    # -- results --------------------------------------------------------------------------------
    def events(self) -> list[AlertEvent]:
        """The latest version of every event not retracted."""
        return [e for e in self._latest.values() if e.status is not AlertEventStatus.RETRACTED]

    def storms(self) -> list[AlertEvent]:
        return [e for e in self.events() if e.kind is AlertKind.STORM]

    def alerts(self) -> list[AlertEvent]:
        return [e for e in self.events() if e.kind is not AlertKind.STORM]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Time spans [ns, both ends included] with the overlapping ones joined, in order."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


__all__ = ["AlertPipeline"]
