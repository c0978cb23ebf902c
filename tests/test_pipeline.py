"""The alert pipeline's clock never holds up ingest: what ``advance`` asks of a network
store (the calibration state, from InfluxDB) is asked before it takes the lock ``feed``
needs, so a store that does not answer delays the calibration notices, not the readings."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from ms4watch.contract.timeutil import to_ns
from ms4watch.ingest.stores.base import readings_of
from ms4watch.pipeline import AlertPipeline, PipelineParts
from tests.alerts.support import MIN, at, reading, registry
from tests.support.waiting import wait_for


class HungStore:
    """A calibration-history port whose reads block until released (a black-holed InfluxDB)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()

    def calibration_history(self, **kw):
        return []

    def calibrations_due(self, now, *, warn_days=14):
        self.asked.set()
        self.release.wait(60)
        return []


def test_a_hung_store_read_on_the_clock_does_not_hold_up_feed(tmp_path):
    store = HungStore()
    p = AlertPipeline(registry(), tmp_path, PipelineParts(report=lambda line: None, calibrations=store,
                                                        now_ns=lambda: at(0)))
    fed = threading.Event()
    try:
        ticker = threading.Thread(target=p.advance, args=(at(60),), daemon=True)
        ticker.start()
        assert store.asked.wait(10)                                  # the clock is waiting on the store …
        feeder = threading.Thread(target=lambda: (p.feed([reading(at(61), "OF-1", "flow", 0.2)]), fed.set()),
                                  daemon=True)
        feeder.start()
        assert wait_for(fed.is_set, 10), "feed waited for the store's calibration read"   # … feed does not
        assert p.fed_readings == 1 and not store.release.is_set()
    finally:
        store.release.set()
        ticker.join(10)
        p.close()
    assert not ticker.is_alive()


# -- the first start of a town whose sites are older than the server --------------------------
BACKLOG_TOWN = """
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1}]
outfalls: [{id: OF-1, name: Mill St, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
construction_sites: [{id: CS-1, name: Hillcrest, rain_gauges: [RG-1], active_from: 2026-09-01}]
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
"""
FIRST_START = datetime(2026, 12, 1, 17, 0, tzinfo=timezone.utc)   # a Tuesday, 12:00 EST


@pytest.fixture
def smtp():
    from tests.support.notify_peers import SmtpSink
    sink = SmtpSink().start()
    yield sink
    sink.stop()


def _subjects(smtp) -> list[str]:
    return [" ".join(str(m["Subject"]).split()) for m in smtp.to("smo@town.test")]


def _backlog_pipeline(tmp_path, smtp, now_ns) -> AlertPipeline:
    from ms4watch.alerts.delivery.routing import RoutingPolicy
    from ms4watch.contract.registry import parse_registry
    return AlertPipeline(parse_registry(BACKLOG_TOWN), tmp_path, PipelineParts(
        notify_urls=[smtp.url], report=lambda line: None, now_ns=now_ns,
        policy=RoutingPolicy(daily_caps={"email": 3, "sms": 10}))).start()


def test_the_first_start_summarises_what_fell_due_before_it_in_one_message(tmp_path, smtp):
    """CS-1 has been active since Sep 1: thirteen weekly inspections fell due before the
    server first ran. They become incidents (the SMO closes them by recording the
    inspections), listed in one message, not thirteen OVERDUE emails using the day's cap;
    this week's item, not yet due, is told on its own; a real alert afterwards goes at once."""
    now = [to_ns(FIRST_START)]
    p = _backlog_pipeline(tmp_path, smtp, lambda: now[0])
    try:
        p.start_up(None, now[0])
        assert p.delivery.flush(20)
        subjects = _subjects(smtp)
        backlog = [s for s in subjects if s.startswith("[ms4watch] Backlog")]
        assert len(backlog) == 1, subjects
        assert "13 items due before ms4watch first ran" in backlog[0]
        assert [s for s in subjects if s not in backlog] == [
            "[ms4watch] inspection due at Hillcrest (CS-1) by Tue 2026-12-08 00:00 EST"]   # this week's
        body = smtp.to("smo@town.test")[subjects.index(backlog[0])].get_body(("plain",)).get_content()
        assert body.count("Hillcrest (CS-1)") == 13 and "ms4watch incidents inspected" in body
        overdue = [i for i in p.incidents.list(kind="inspection_due") if i.deadline < FIRST_START]
        assert len(overdue) == 13 and all(i.state.value == "open" for i in overdue)

        # a dry-weather flow: three dry days, then 35 min of flow; the day's cap (3) is not used up
        t = now[0] + 60 * MIN
        now[0] = t
        rain = [reading(t - 80 * 60 * MIN + k * 15 * MIN, "RG-1", "rain", 0.0) for k in range(80 * 4 + 1)]
        flow = [reading(t - 35 * MIN + k * 5 * MIN, "OF-1", "flow", 0.3 if k < 1 else 4.0 + k / 10) for k in range(8)]
        p.feed(rain + flow)
        assert p.delivery.flush(20)
        assert any("dry-weather flow at Mill St (OF-1)" in s for s in _subjects(smtp)), _subjects(smtp)
    finally:
        p.close()
    # a restart summarises nothing again
    before = len(smtp.messages)
    p = _backlog_pipeline(tmp_path, smtp, lambda: now[0])
    try:
        p.start_up(None, now[0])
        assert p.delivery.flush(20)
        assert len(smtp.messages) == before
    finally:
        p.close()


def test_the_delivery_worker_draws_a_first_chart_as_it_starts(tmp_path, smtp, monkeypatch):
    """With email charts (a readings port), the pipeline's delivery worker pays matplotlib's
    first-chart costs on its own thread as it starts, before any alert: the first alert's
    email is as quick as the others (``bench_alert_latency.py``'s p99 was that first chart)."""
    from ms4watch.alerts.notifiers.email import chart
    from ms4watch.ingest.stores import SqliteStore
    from ms4watch.pipeline import PipelineParts
    drawn: list[str] = []
    real = chart.warm_up
    monkeypatch.setattr(chart, "warm_up", lambda: (drawn.append(threading.current_thread().name), real())[1])
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    p = AlertPipeline(registry(), tmp_path, PipelineParts(notify_urls=[smtp.url], report=lambda line: None, readings=sink)).start()
    try:
        assert p.delivery.flush(20)
        assert drawn == ["ms4watch-delivery"]
    finally:
        p.close()
        sink.close()
    p = AlertPipeline(registry(), tmp_path / "plain", PipelineParts(notify_urls=[smtp.url], report=lambda line: None)).start()
    try:                            # no readings port: no charts, nothing to prepare
        assert p.delivery.flush(20)
        assert drawn == ["ms4watch-delivery"]
    finally:
        p.close()


def test_the_pipeline_takes_its_parts_as_one_typed_object(tmp_path):
    """What the root wires into the pipeline is one :class:`PipelineParts`: here the store's
    dashboard-records writer, which is told of every incident change."""
    from ms4watch.pipeline import PipelineParts
    from tests.support.notify_peers import dwf

    written: list = []

    def write_records(records) -> int:
        written.extend(records)
        return len(records)

    p = AlertPipeline(registry(), tmp_path, PipelineParts(report=lambda line: None, now_ns=lambda: at(0),
                                                          write_records=write_records)).start()
    try:
        inc = p.incidents.handle(dwf("2026-06-01T15:30:00Z", outfall="OF-1")).incident
        assert p.records is not None and p.records.flush(10)
        assert any(str(inc.id) in repr(r) for r in written)
    finally:
        p.close()


# -- the incident database's commits on ingest's writer thread ------------------------------------
def _transactions(statements: list[str]) -> list[str]:
    """The ``synchronous`` each transaction committed at, from a connection's statement trace."""
    mode, out = "FULL", []
    for s in statements:
        if s.startswith("PRAGMA synchronous="):
            mode = s.split("=", 1)[1]
        elif s == "COMMIT":
            out.append(mode)
    return out


def test_the_engines_incidents_commit_without_a_sync_and_are_synced_before_its_checkpoint(tmp_path, monkeypatch):
    """What the engine raises is committed without waiting for the disk (``synchronous=NORMAL``
    for those transactions: a killed process loses nothing, a power cut may lose them, and the
    engine re-fed from its checkpoint raises them again); the checkpoint first fsyncs the
    incident database's log, so the state on disk never runs ahead of the incidents it raised.
    What people record stays ``FULL``."""
    import os

    from tests.alerts.support import series_readings

    p = AlertPipeline(registry(), tmp_path, PipelineParts(report=lambda line: None, now_ns=lambda: at(0)))
    statements: list[str] = []
    p.incidents.conn.set_trace_callback(statements.append)
    try:
        p.feed(series_readings("RG-1", "rain", 0, [0.1] * 10))    # a qualifying storm, inspections due
        assert p.incidents.list(kind="storm")
        assert set(_transactions(statements)) == {"NORMAL"}
        assert p.incidents.conn.execute("PRAGMA synchronous").fetchone()[0] == 2   # FULL again after them

        statements.clear()
        p.incidents.acknowledge(p.incidents.list(kind="storm")[0].id, by="smo")
        assert _transactions(statements) == ["FULL"]

        synced: list[tuple[str, bool]] = []   # (file fsynced, engine state written by then)
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            synced.append((os.readlink(f"/proc/self/fd/{fd}"), (tmp_path / "engine-state.json").exists()))
            real_fsync(fd)
        monkeypatch.setattr(os, "fsync", fsync)
        p.checkpoint()
        assert (str(tmp_path / "incidents.db-wal"), False) in synced
        assert (tmp_path / "engine-state.json").exists()
    finally:
        p.close()


class ListSource:
    """A readings port over a list (the store, which holds every reading acknowledged)."""

    def __init__(self, rows) -> None:
        self.rows = rows

    def readings(self, station, quantity, start, end):
        return [r for r in self.rows if r.station == station and r.quantity == quantity
                and to_ns(start) <= r.time_ns <= to_ns(end)]


def test_a_power_cut_that_loses_the_engines_unsynced_incidents_raises_them_again_once(tmp_path):
    """The window the unsynced commits open, as a model of a power cut: the data directory as
    it was on disk at the last checkpoint (the incident log fsynced, then the engine's state
    written) with everything committed since lost. The next start re-feeds the engine from the
    store and raises the same incidents, with the same notifications queued, once."""
    import shutil
    import sqlite3

    from tests.alerts.support import series_readings

    rows = series_readings("RG-1", "rain", 0, [0.1] * 10)       # a qualifying storm
    before, after = tmp_path / "running", tmp_path / "after-the-cut"

    def state(d) -> tuple[list, dict]:
        with sqlite3.connect(f"file:{d / 'incidents.db'}?mode=ro", uri=True) as c:
            return (sorted(c.execute("SELECT kind, subject, state FROM incidents").fetchall()),
                    dict(c.execute("SELECT status, count(*) FROM notification_queue GROUP BY status").fetchall()))

    p = AlertPipeline(registry(), before, PipelineParts(report=lambda line: None, now_ns=lambda: at(0)))
    try:
        p.checkpoint()
        shutil.copytree(before, after, ignore=shutil.ignore_patterns("*-shm"))   # what the disk holds
        p.feed(rows)                                       # committed, not synced: lost in the cut
        raised = state(before)
        assert ("storm", "RG-1", "open") in raised[0] and raised[1]
    finally:
        p.close()
    assert state(after) == ([], {})

    p2 = AlertPipeline(registry(), after, PipelineParts(report=lambda line: None, now_ns=lambda: at(20)))
    try:
        assert p2.refeed(ListSource(rows), now_ns=at(0) + 10 * MIN) == len(rows)
    finally:
        p2.close()
    assert state(after) == raised


class ManySource(ListSource):
    """A readings port that also reads several series at once (``ReadingsOfMany``: a remote
    store, one request), counting the requests."""

    def __init__(self, rows) -> None:
        super().__init__(rows)
        self.requests: list[list[tuple[str, str]]] = []

    def readings(self, station, quantity, start, end):
        self.requests.append([(station, quantity)])
        return super().readings(station, quantity, start, end)

    def readings_of(self, series, start, end):
        self.requests.append(list(series))
        return readings_of(ListSource(self.rows), series, start, end)


def test_the_refeed_reads_every_series_of_the_engine_in_one_request(tmp_path):
    """At start the engine is re-fed with the history its rules look back over, every station
    and quantity it follows: from a store that reads several series at once (InfluxDB), one
    request, not one each (20 HTTP requests on the backlog bench's town, ~30 ms of serve's
    CPU before its first reading); the engine gets the same readings."""
    from tests.alerts.support import series_readings

    rows = series_readings("RG-1", "rain", 0, [0.1] * 10) + series_readings("OF-1", "flow", 0, [2.0] * 10)
    fed = {}
    for name, source in (("one by one", ListSource(rows)), ("at once", ManySource(rows))):
        p = AlertPipeline(registry(), tmp_path / name, PipelineParts(report=lambda line: None, now_ns=lambda: at(20)))
        try:
            assert p.refeed(source, now_ns=at(0) + 10 * MIN) == len(rows)
            fed[name] = {k: e.fields for k, e in p.engine.events().items()}
        finally:
            p.close()
    assert fed["at once"] == fed["one by one"] and fed["at once"]
    assert len(source.requests) == 1 and len(source.requests[0]) > 2, source.requests
