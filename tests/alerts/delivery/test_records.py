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
        assert written == [("ms4watch-records", ["a"]), ("ms4watch-records", ["b", "c"])]
        assert w.written == 3
    finally:
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
        w.put(["y"])
        assert w.flush(5)
        assert w.failed == 1 and w.written == 1
    finally:
        w.stop()


def test_a_hung_store_never_blocks_put_and_the_oldest_are_dropped():
    release = threading.Event()
    w = RecordsWriter(lambda batch: release.wait(10), max_batches=3).start()
    try:
        for i in range(10):          # the first is being written (hung); 3 wait; the rest push out the oldest
            w.put([i])
        assert w.dropped >= 6
        release.set()
        assert w.flush(5)
        assert w.dropped + w.written == 10
    finally:
        release.set()
        w.stop()
