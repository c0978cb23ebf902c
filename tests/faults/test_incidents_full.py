"""The incident database cannot take an alert (issue 21): its data directory is full, so the
transaction that opens the incident and queues its notifications fails with SQLite's
``database or disk is full``. The event is kept and handed over again until taken, and the
engine's checkpoint never passes it: once space returns — while running, or only for the
next start — the incident exists and the SMO gets its mail, once.

The failure is injected where the incident store meets SQLite (its ``apply_event``, inside the
transaction, raising the very error SQLite raises); the pipeline, its engine, the readings
store (SQLite) and the SMTP server are real. The restart is a new pipeline on the same data
directory, re-fed from the store as ``serve`` does at start.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from ms4watch.contract.registry import parse_registry
from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.stores.base import StoredMessage
from ms4watch.ingest.stores.sqlite import SqliteStore
from ms4watch.pipeline import AlertPipeline, PipelineParts
from tests.support.notify_peers import SmtpSink
from tests.support.waiting import wait_for
from tests.support.towns import SITES

pytestmark = pytest.mark.faults
MIN = 60 * 10**9
H = 60 * MIN
SMO = "smo@town.test"


def discharge() -> list[StoredMessage]:
    """Three dry days at RG-1, then 35 min of flow at OF-12: one dry-weather-flow episode."""
    now = time.time_ns() // MIN * MIN
    rain = tuple(CanonicalReading(now - 80 * H + k * 15 * MIN, "RG-1", "LOG-RG1", "rain", "rain", 0.0, "in", "", 1)
                 for k in range(80 * 4 + 1))
    flow = tuple(CanonicalReading(now - 35 * MIN + k * 5 * MIN, "OF-12", "LOG-OF12", "flow", "flow",
                                  0.3 if k < 1 else 60.0 + k, "gpm", "", 1) for k in range(8))
    return [StoredMessage("LOG-RG1", 1, rain), StoredMessage("LOG-OF12", 1, flow)]


class Disk:
    """The incident database's disk: full or not."""

    def __init__(self, pipeline: AlertPipeline):
        self.full = False
        store = pipeline.incidents.store
        apply_event = store.apply_event

        def apply_or_fail(*a, **kw):
            if self.full:
                raise sqlite3.OperationalError("database or disk is full")
            return apply_event(*a, **kw)
        store.apply_event = apply_or_fail


def pipeline(work: Path, smtp: SmtpSink, store: SqliteStore) -> AlertPipeline:
    p = AlertPipeline(parse_registry(SITES), work, PipelineParts(notify_urls=[smtp.url], report=lambda line: None,
                                                                 readings=store, now_ns=time.time_ns))
    p.stored_mark = time.time_ns         # ingest's: here every stored batch is fed at once
    return p.start()


def incidents(work: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(f"file:{work / 'incidents.db'}?mode=ro", uri=True) as c:
        return c.execute("SELECT kind, subject FROM incidents").fetchall()


@pytest.fixture
def rig(tmp_path):
    smtp = SmtpSink().start()
    store = SqliteStore(tmp_path / "store.db")
    store.open()
    yield tmp_path, smtp, store
    store.close()
    smtp.stop()


def test_an_alert_the_full_incident_database_could_not_take_is_raised_once_space_returns(rig):
    work, smtp, store = rig
    p = pipeline(work, smtp, store)
    try:
        disk = Disk(p)
        disk.full = True
        batch = discharge()
        store.write(batch)
        p.feed([r for m in batch for r in m.readings])       # the engine raises it; the incidents cannot take it
        p.advance(time.time_ns())                            # the clock ticks on …
        p.checkpoint()                                       # … and checkpoints
        assert incidents(work) == [] and smtp.to(SMO) == []
        disk.full = False                                    # space returns
        p.advance(time.time_ns())                            # the next tick
        assert incidents(work) == [("dry_weather_flow", "OF-12")]
        assert wait_for(lambda: len(smtp.to(SMO)) >= 1, 30)
        p.advance(time.time_ns())
        p.checkpoint()
        # a second mail would be a second row of the queue: one row, sent (marked after the SMTP server took it)
        assert wait_for(lambda: p.dispatcher.queue.counts() == {"sent": 1}, 30), p.dispatcher.queue.counts()
        assert incidents(work) == [("dry_weather_flow", "OF-12")] and len(smtp.to(SMO)) == 1
    finally:
        p.close()


def test_an_alert_the_full_incident_database_could_not_take_is_raised_after_a_restart(rig):
    work, smtp, store = rig
    p = pipeline(work, smtp, store)
    p.advance(time.time_ns())
    p.checkpoint()                                           # the server has been running a while
    disk = Disk(p)
    disk.full = True
    batch = discharge()
    store.write(batch)
    p.feed([r for m in batch for r in m.readings])
    p.advance(time.time_ns())
    p.checkpoint()
    p.close()                                                # stopped (or crashed) while the disk is full
    assert not (work / "incidents.db").exists() or incidents(work) == []
    # space returns; the server starts again and is re-fed from the store
    p = pipeline(work, smtp, store)
    try:
        p.refeed(store, now_ns=time.time_ns())
        assert incidents(work) == [("dry_weather_flow", "OF-12")]
        assert wait_for(lambda: len(smtp.to(SMO)) >= 1, 30)
        assert wait_for(lambda: p.dispatcher.queue.counts() == {"sent": 1}, 30), p.dispatcher.queue.counts()
        assert len(smtp.to(SMO)) == 1
    finally:
        p.close()
