"""``/metrics`` for Prometheus: readings stored and rejected, the store's spool depth, the
delivery queue by status, the alert latency histogram. Counts are read from the parts when
scraped (no second bookkeeping); the latency is observed by the pipeline as it happens.
One registry per server (no module-level state: two servers in one process stay apart)."""

from __future__ import annotations

from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
QUEUE_STATUSES = ("pending", "sent", "failed", "held", "digested", "cancelled")


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.alert_latency = Histogram(
            "ms4watch_alert_latency_seconds",
            "From a stored batch reaching the alert pipeline to the first notification of an incident it "
            "opened being accepted by a channel",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600), registry=self.registry)

    def watch(self, *, ingest: Callable[[], tuple[int, int]] | None, spool_depth: Callable[[], int] | None,
              queue: Callable[[], dict[str, int]]) -> None:
        """``ingest``: (readings stored, messages rejected) so far; ``spool_depth``: readings
        waiting for the store; ``queue``: the delivery queue's rows by status."""
        self.registry.register(_Parts(ingest, spool_depth, queue))

    def render(self) -> bytes:
        return generate_latest(self.registry)


def render_towns(towns: dict[str, Metrics]) -> bytes:
    """A coalition's ``/metrics``: every town's families in one exposition, each sample
    labelled with its ``municipality`` (one scrape target for the server; each town's own
    stays at ``/t/<town>/metrics``)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Towns(towns))
    return generate_latest(registry)


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
    def __init__(self, ingest, spool_depth, queue):
        self.ingest, self.spool_depth, self.queue = ingest, spool_depth, queue

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
        counts = self.queue()
        fam = GaugeMetricFamily("ms4watch_outbox_notifications", "Notifications in the delivery queue by status",
                                labels=["status"])
        for status in QUEUE_STATUSES:
            fam.add_metric([status], counts.get(status, 0))
        yield fam


__all__ = ["Metrics", "CONTENT_TYPE"]
