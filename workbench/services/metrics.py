"""``/metrics`` for Prometheus: readings stored and rejected, the store's spool depth and
write errors, the delivery queue by status and what it owes, the alert latency histogram,
each station's newest reading and whether it is stale, incidents not resolved by kind and
state, the broker connection, the data directory's free space; and the process's own
(CPU, memory, open files, build info). Values are read from the live parts when scraped
(no second bookkeeping); the latency is observed by the pipeline as it happens. One
registry per server (no module-level state: two servers in one process stay apart).
The alert rules over these are in ``ms4watch/monitoring/prometheus/``."""

from __future__ import annotations

import platform
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Sequence

from prometheus_client import (CollectorRegistry, GCCollector, Histogram, Info, PlatformCollector, ProcessCollector,
                               generate_latest)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from ... import __version__
from ...alerts.events import AlertKind
from ...alerts.incidents.service import Operations

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
QUEUE_STATUSES = ("pending", "sent", "failed", "held", "digested", "cancelled")
UNRESOLVED_STATES = ("open", "acknowledged")
Freshness = Callable[[], Sequence[tuple[str, int | None, int]]]
"""Each station, its newest reading [UTC ns] (None: none yet), the silence after which it is stale [ns]."""


@dataclass(frozen=True)
class TownParts:
    """The live parts of one town's server that ``/metrics`` reads at each scrape."""

    clock: Callable[[], datetime]                    # the town's clock (wall time; the demo's simulated time)
    operations: Callable[[], Operations]             # the incident database (IncidentService.operations)
    stations: Freshness | None = None                # the alert engine's (StreamingEngine.station_freshness)
    broker_connected: Callable[[], bool] | None = None
    store_errors: Callable[[], int] | None = None    # failed or refused store writes so far
    data_dir: Path | None = None


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.alert_latency = Histogram(
            "ms4watch_alert_latency_seconds",
            "From a stored batch reaching the alert pipeline to the first notification of an incident it "
            "opened being accepted by a channel",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600), registry=self.registry)
        self.process = process_registry()

    def watch(self, *, ingest: Callable[[], tuple[int, int]] | None, spool_depth: Callable[[], int] | None,
              queue: Callable[[], dict[str, int]] | None = None, town: TownParts | None = None) -> None:
        """``ingest``: (readings stored, messages rejected) so far; ``spool_depth``: readings
        waiting for the store; ``queue``: the delivery queue's rows by status (when ``town``
        is not given: its ``operations`` say it); ``town``: the rest of the town's parts."""
        started = town.clock().timestamp() if town is not None else time.time()   # never-reported stations: since
        self.registry.register(_Parts(ingest, spool_depth, queue, town, started=started))

    def render(self) -> bytes:
        return generate_latest(self.registry) + generate_latest(self.process)


def process_registry() -> CollectorRegistry:
    """The process's metrics, not a town's: CPU, memory, open files, start time
    (``process_*``, Linux), the Python runtime and its collections (``python_*``), and
    ``ms4watch_build_info`` (the version)."""
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    Info("ms4watch_build", "The ms4watch release this server runs", registry=registry).info(
        {"version": __version__, "python": platform.python_version()})
    return registry


def render_towns(towns: dict[str, Metrics]) -> bytes:
    """A coalition's ``/metrics``: every town's families in one exposition, each sample
    labelled with its ``municipality`` (one scrape target for the server; each town's own
    stays at ``/t/<town>/metrics``)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Towns(towns))
    process = next(iter(towns.values())).process if towns else None   # one process serves them all
    return generate_latest(registry) + (generate_latest(process) if process is not None else b"")


class _Towns(Collector):
    def __init__(self, towns: dict[str, Metrics]):
        self.towns = towns

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        merged: dict[str, Metric] = {}
        for town, m in self.towns.items():
            for fam in m.registry.collect():
                out = merged.setdefault(fam.name, Metric(fam.name, fam.documentation, fam.type, fam.unit))
                out.samples += [Sample(x.name, {**x.labels, "municipality": town}, x.value, x.timestamp, x.exemplar)
                                for x in fam.samples]
        return list(merged.values())


class _Parts(Collector):
    def __init__(self, ingest, spool_depth, queue, town: TownParts | None, started: float):
        self.ingest, self.spool_depth, self.queue, self.town, self.started = ingest, spool_depth, queue, town, started

    def describe(self) -> Iterable[Metric]:
        return []   # collected fresh on each scrape

    def collect(self) -> Iterable[Metric]:
        if self.ingest is not None:
            stored, rejected = self.ingest()
            yield CounterMetricFamily("ms4watch_readings_stored", "Readings ingest stored (since start)", stored)
            yield CounterMetricFamily("ms4watch_messages_rejected", "Messages ingest rejected as breaking the "
                                      "wire contract (kept in rejected.jsonl)", rejected)
        if self.spool_depth is not None:
            yield GaugeMetricFamily("ms4watch_store_spool_depth", "Readings acknowledged and waiting in the "
                                    "local spool for the store", self.spool_depth())
        town = self.town
        ops = town.operations() if town is not None else None
        counts = ops.queue if ops is not None else self.queue() if self.queue is not None else {}
        fam = GaugeMetricFamily("ms4watch_outbox_notifications", "Notifications in the delivery queue by status",
                                labels=["status"])
        for status in QUEUE_STATUSES:
            fam.add_metric([status], counts.get(status, 0))
        yield fam
        if town is None or ops is None:
            return
        now = town.clock().timestamp()
        yield from _incidents(ops)
        yield GaugeMetricFamily("ms4watch_delivery_queue_depth", "Notifications delivery owes now: due and not "
                                "yet accepted by their channel, or being retried after a failed attempt", ops.owed)
        yield GaugeMetricFamily("ms4watch_delivery_queue_oldest_age_seconds", "How long the longest-waiting "
                                "notification delivery owes has waited: since it fell due (since queued for one "
                                "being retried); 0 when none waits",
                                max(0.0, now - ops.owed_since.timestamp()) if ops.owed_since is not None else 0.0)
        if town.stations is not None:
            yield from _stations(town.stations(), now, self.started)
        if town.broker_connected is not None:
            yield GaugeMetricFamily("ms4watch_broker_connected", "1 while ingest is connected to the MQTT broker "
                                    "and subscribed, else 0", 1.0 if town.broker_connected() else 0.0)
        if town.store_errors is not None:
            yield CounterMetricFamily("ms4watch_store_write_errors", "Writes of readings or events the store "
                                      "failed or refused, each attempt (since start; for a remote store, the "
                                      "spool's writes to it too)", town.store_errors())
        if town.data_dir is not None:
            usage = shutil.disk_usage(town.data_dir)     # one statvfs
            yield GaugeMetricFamily("ms4watch_data_dir_free_bytes", "Bytes free for ms4watch on the file system "
                                    "of its data directory (DATA_DIR)", usage.free)
            yield GaugeMetricFamily("ms4watch_data_dir_size_bytes", "Size of the file system of the data "
                                    "directory (DATA_DIR)", usage.total)


def _incidents(ops: Operations) -> Iterable[Metric]:
    fam = GaugeMetricFamily("ms4watch_incidents_unresolved", "Incidents not resolved, by kind and state (open: "
                            "not acknowledged yet)", labels=["kind", "state"])
    kinds = [k.value for k in AlertKind] + sorted({k for k, _ in ops.unresolved} - {k.value for k in AlertKind})
    for kind in kinds:
        for state in UNRESOLVED_STATES:
            fam.add_metric([kind, state], ops.unresolved.get((kind, state), 0))
    yield fam


def _stations(stations: Sequence[tuple[str, int | None, int]], now: float, started: float) -> Iterable[Metric]:
    """Each station's newest reading's age, and stale as the alert rules judge it: silent for
    more than ``rules.stale_intervals`` × its report interval. One that never reported has
    no age; it is stale once this server has run that long without a reading from it."""
    age = GaugeMetricFamily("ms4watch_station_last_reading_age_seconds", "Age of the station's newest reading "
                            "(by the reading's own time), as the alert engine has it", labels=["station"])
    limit = GaugeMetricFamily("ms4watch_station_stale_after_seconds", "Silence after which the station is "
                              "stale: rules.stale_intervals x its report interval", labels=["station"])
    stale = GaugeMetricFamily("ms4watch_station_stale", "1 while the station is stale (no reading for longer "
                              "than its stale_after), else 0", labels=["station"])
    n = 0
    for station, newest_ns, after_ns in stations:
        silent = now - (newest_ns / 1e9 if newest_ns is not None else started)
        if newest_ns is not None:
            age.add_metric([station], silent)
        limit.add_metric([station], after_ns / 1e9)
        is_stale = silent > after_ns / 1e9
        n += is_stale
        stale.add_metric([station], 1.0 if is_stale else 0.0)
    yield age
    yield limit
    yield stale
    yield GaugeMetricFamily("ms4watch_stations_stale", "Stations stale now", n)


__all__ = ["Metrics", "TownParts", "CONTENT_TYPE", "process_registry"]
