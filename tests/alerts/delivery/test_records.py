"""Dashboard records go to the store on their own thread; a slow or failing store costs
the caller nothing, and a full queue drops the oldest (derived data), counted."""

from __future__ import annotations

import threading

from ms4watch.alerts.delivery import RecordsWriter


def test_records_are_written_in_order_off_the_callers_thread():
    written: list[tuple[str, list]] = []
    w = RecordsWriter(lambda batch: written.append((threading.current_thread().name, list(batch)))).start()
    try:
        w.put(["a"])
        w.put(["b", "c"])
        w.put([])                     # nothing to write: nothing queued
        assert w.flush(5)
        assert {name for name, _ in written} == {"ms4watch-records"}
        assert [r for _, batch in written for r in batch] == ["a", "b", "c"]   # one write or two (see below)
        assert w.written == 3
    finally:
        w.stop()


def test_batches_queued_while_a_write_is_in_flight_go_to_the_store_in_one_write():
    """The engine puts one batch per event and per incident change, faster than a store
    answers one request each: what queued meanwhile is one write (a 4.5-day demo on InfluxDB
    made 1,580 requests of one or two records), in order and counted as before."""
    writing, release = threading.Event(), threading.Event()
    written: list[list] = []

    def write(batch):
        written.append(list(batch))
        writing.set()
        assert release.wait(10)

    w = RecordsWriter(write).start()
    try:
        w.put(["a"])
        assert writing.wait(5)          # "a" is being written
        w.put(["b"])
        w.put(["c", "d"])
        w.put(["e"])
        release.set()
        assert w.flush(5)
        assert written == [["a"], ["b", "c", "d", "e"]]
        assert w.written == 5 and w.failed == 0 and w.dropped == 0
    finally:
        release.set()
        w.stop()


def test_a_write_that_fails_counts_every_batch_it_held_as_failed():
    writing, release = threading.Event(), threading.Event()
    calls: list[list] = []

    def write(batch):
        calls.append(list(batch))
        if len(calls) == 1:
            writing.set()
            assert release.wait(10)
            return
        raise ConnectionError("influx down")

    w = RecordsWriter(write).start()
    try:
        w.put(["a"])
        assert writing.wait(5)
        w.put(["b"])
        w.put(["c"])
        release.set()
        assert w.flush(5)                # both queued batches given up: nothing left pending
        assert calls == [["a"], ["b", "c"]]
        assert w.written == 1 and w.failed == 2
    finally:
        release.set()
        w.stop()


def test_a_store_that_fails_is_logged_and_the_writer_goes_on():
    calls = []

    def write(batch):
        calls.append(batch)
        if len(calls) == 1:
            raise ConnectionError("influx down")

    w = RecordsWriter(write).start()
    try:
        w.put(["x"])
        assert w.flush(5)               # "x" tried (and failed) before "y" is queued: two writes
        w.put(["y"])
        assert w.flush(5)
        assert w.failed == 1 and w.written == 1
    finally:
        w.stop()


def test_a_hung_store_never_blocks_put_and_the_oldest_are_dropped():
    writing, release = threading.Event(), threading.Event()
    w = RecordsWriter(lambda batch: writing.set() or release.wait(10), max_batches=3).start()
    try:
        w.put([0])
        assert writing.wait(5)
        for i in range(1, 10):       # the first is being written (hung); 3 wait; the rest push out the oldest
            w.put([i])
        assert w.dropped >= 6
        release.set()
        assert w.flush(5)
        assert w.dropped + w.written == 10
    finally:
        release.set()
        w.stop()
