"""The readings port (``readings(station, quantity, start, end)``) of every store: what the
engine is re-fed from after a crash and what an alert email's chart is drawn from.

SQLite directly; InfluxDB 1.x against a real ``influxd``; the InfluxDB 2.x/3.x sink's read
path (InfluxQL over the v1-compatible ``/query``) against the same real ``influxd``, since
no InfluxDB 2 or 3 server installs here (VictoriaMetrics, which takes our v2 writes, has no
InfluxQL); the spooling sink while its store is down.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from ms4watch.contract.timeutil import from_ns
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.base import ReadingsOfMany, ReadingsSource, ReceiptLog
from ms4watch.ingest.stores.influxdb import Influx2Store
from ms4watch.ingest.stores.spooling import SpoolingStore
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.influx_fixtures import make_messages
from tests.support.servers import free_port

END = 1_780_000_000 * 10**9   # 2026-05-28, a whole minute


def _window(msgs, quantity="flow", station="OF-12"):
    rows = [r for m in msgs for r in m.readings if r.quantity == quantity and r.station == station]
    return sorted(rows, key=lambda r: r.time_ns)


def _check(source: ReadingsSource, msgs) -> None:
    want = _window(msgs)
    got = source.readings("OF-12", "flow", from_ns(want[0].time_ns), from_ns(want[-1].time_ns))
    assert [(r.time_ns, r.value, r.unit, r.device, r.sensor, r.flags, r.seq) for r in got] == \
        [(r.time_ns, r.value, r.unit, r.device, r.sensor, r.flags, r.seq) for r in want]
    # the bounds are inclusive, other stations and quantities are not returned
    mid = want[len(want) // 2].time_ns
    assert [r.time_ns for r in source.readings("OF-12", "flow", from_ns(mid), from_ns(mid))] == [mid]
    assert source.readings("OF-99", "flow", from_ns(want[0].time_ns), from_ns(want[-1].time_ns)) == []
    assert all(r.quantity == "rain" for r in source.readings("OF-12", "rain", from_ns(0), from_ns(END)))


def _check_many(source: ReadingsOfMany, msgs) -> None:
    """``readings_of`` (one request for several series: the re-feed's at start) gives what
    ``readings`` gives of each, together, sorted by time; the bounds inclusive, a series with no
    reading adds none."""
    want = _window(msgs)
    a, b = from_ns(want[1].time_ns), from_ns(want[-2].time_ns)
    series = [("OF-12", "flow"), ("OF-12", "rain"), ("OF-99", "flow")]
    got = source.readings_of(series, a, b)
    each = sorted((r for st, q in series for r in source.readings(st, q, a, b)), key=lambda r: r.time_ns)
    assert len(got) > len(want) - 2 and sorted(got) == sorted(each)
    assert [r.time_ns for r in got] == sorted(r.time_ns for r in got)
    assert {(r.station, r.quantity) for r in got} == {("OF-12", "flow"), ("OF-12", "rain")}
    assert source.readings_of([], a, b) == []


def test_sqlite(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    assert isinstance(sink, ReadingsSource)
    assert sink.readings("OF-12", "flow", from_ns(0), from_ns(END)) == []      # no file yet: nothing, no error
    sink.open()
    assert sink.readings("OF-12", "flow", from_ns(0), from_ns(END)) == []      # no reading yet
    msgs = make_messages(300, 4, end_ns=END)
    sink.write(msgs)
    _check(sink, msgs)
    sink.close()


def test_sqlite_reads_beside_a_running_write(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    first = make_messages(100, 4, end_ns=END - 10**12)
    sink.write(first)
    stop = threading.Event()

    def writer():
        seq = 1000
        while not stop.is_set():
            sink.write(make_messages(50, 4, first_seq=seq, end_ns=END))
            seq += 50

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(20):   # every read sees at least what was written before it, never an error
            got = sink.readings("OF-12", "flow", from_ns(0), from_ns(END - 10**12))
            assert len(got) >= 100
    finally:
        stop.set()
        t.join()
        sink.close()


@pytest.mark.influxdb
def test_influxdb1(influxd, tmp_path):
    sink = build_store(influxd.store_url("town"))
    sink.ensure_store(timedelta(days=1096))
    sink.open()
    msgs = make_messages(300, 4, end_ns=END)
    sink.write(msgs)
    _check(sink, msgs)
    _check_many(sink, msgs)
    spooling = SpoolingStore(sink, tmp_path / "spool.db")   # a remote store's, as serve has it
    _check_many(spooling, msgs)
    sink.series_per_query = 1                               # a town of many series: one statement per chunk
    _check_many(sink, msgs)
    sink.close()


@pytest.mark.influxdb
def test_influxdb2_reads_through_the_v1_compatible_query_endpoint(influxd):
    writer = build_store(influxd.store_url("town"))
    writer.ensure_store(timedelta(days=1096))
    writer.open()
    msgs = make_messages(120, 4, end_ns=END)
    writer.write(msgs)
    reader = Influx2Store.from_url(f"influxdb2://127.0.0.1:{influxd.port}/town?org=town")
    _check(reader, msgs)
    _check_many(reader, msgs)
    writer.close()


def test_spooling_store_reads_the_spool_while_its_store_is_down(tmp_path):
    down = build_store(f"influxdb1://127.0.0.1:{free_port()}/town?timeout=1s")
    sink = SpoolingStore(down, tmp_path / "spool.db")
    sink.open()
    try:
        msgs = make_messages(60, 4, end_ns=END)
        sink.write(msgs)                       # the store is down: into the spool, acknowledged
        assert sink.spool_depth == 240
        _check(sink, msgs)
        _check_many(sink, msgs)
    finally:
        sink.close()
    # and from the spool file alone, before the sink is opened again (a server starting up)
    again = SpoolingStore(build_store(f"influxdb1://127.0.0.1:{free_port()}/town?timeout=1s"), tmp_path / "spool.db")
    _check(again, msgs)


def test_a_reading_time_in_the_window_is_an_aware_instant(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    msgs = make_messages(10, 4, end_ns=END)
    sink.write(msgs)
    t = _window(msgs)[3].time_ns
    local = from_ns(t).astimezone(timezone(timedelta(hours=-4)))   # the same instant, another offset
    assert [r.time_ns for r in sink.readings("OF-12", "flow", local, local)] == [t]
    with pytest.raises(ValueError):
        sink.readings("OF-12", "flow", datetime(2026, 1, 1), datetime(2026, 1, 2))   # naive: refused
    sink.close()


# -- receipts: what the store took since a time of ingest's clock (issue 21) ---------------------
def _check_receipts(sink, msgs, before_ns: int) -> None:
    """One receipt per station of the batch, at or after ``before_ns``, spanning its readings;
    none since a time after the write."""
    got = sink.received_since(before_ns)
    want = {}
    for m in msgs:
        for r in m.readings:
            a, b = want.get(r.station, (r.time_ns, r.time_ns))
            want[r.station] = (min(a, r.time_ns), max(b, r.time_ns))
    assert {rc.station: (rc.first_ns, rc.last_ns) for rc in got} == want
    assert all(rc.received_ns >= before_ns for rc in got)
    assert sink.received_since(max(rc.received_ns for rc in got) + 1) == []


def test_sqlite_keeps_receipts_even_of_an_old_backlog(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    assert isinstance(sink, ReceiptLog)
    assert sink.received_since(0) == []                     # no file yet
    sink.open()
    sink.write(make_messages(30, 4, end_ns=END - 10**12))
    before = time.time_ns()
    msgs = make_messages(30, 4, first_seq=100, end_ns=END - 26 * 3600 * 10**9)   # a day-old backlog
    sink.write(msgs)
    sink.write(msgs)                                         # a redelivery: stored once, no receipt
    _check_receipts(sink, msgs, before)
    sink.close()


@pytest.mark.influxdb
def test_influxdb1_keeps_receipts(influxd):
    sink = build_store(influxd.store_url("town"))
    sink.ensure_store(timedelta(days=1096))
    sink.open()
    assert isinstance(sink, ReceiptLog)
    sink.write(make_messages(30, 4, end_ns=END - 10**12))
    before = time.time_ns()
    msgs = make_messages(30, 4, first_seq=100, end_ns=END - 26 * 3600 * 10**9)
    sink.write(msgs)
    _check_receipts(sink, msgs, before)
    sink.close()


def test_spooling_store_gives_the_receipts_of_the_spool_while_its_store_is_down(tmp_path):
    sink = SpoolingStore(build_store(f"influxdb1://127.0.0.1:{free_port()}/town?timeout=1s"), tmp_path / "spool.db")
    sink.open()
    try:
        before = time.time_ns()
        msgs = make_messages(60, 4, end_ns=END)
        sink.write(msgs)                       # the store is down: into the spool, acknowledged
        _check_receipts(sink, msgs, before)
    finally:
        sink.close()
