"""Dashboard records (alerts, storms, inspections, incidents) written to the store on their
own thread.

They are derived data — the engine state and the incident database are the record — so
the queue is bounded and, while the store is down or slow, the oldest are dropped and
counted rather than anything waiting for them. The engine puts a batch per event and per
incident change, faster than a store answers a request each: the batches queued while one is
written go to the store together, in order, in one write (at most ``MAX_RECORDS_PER_WRITE``).
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable, Sequence

log = logging.getLogger(__name__)

Write = Callable[[Sequence[Any]], Any]
MAX_RECORDS_PER_WRITE = 5_000


class RecordsWriter:
    def __init__(self, write: Write, *, max_batches: int = 10_000, name: str = "ms4watch-records"):
        self._write = write
        self._queue: queue.Queue[list[Any] | None] = queue.Queue(max_batches)
        self.name = name
        self.dropped = 0
        self.failed = 0
        self.written = 0
        self._thread: threading.Thread | None = None
        self._idle = threading.Condition()
        self._pending = 0

    def start(self) -> "RecordsWriter":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        return self

    def put(self, records: Sequence[Any]) -> None:
        """Queue records for the store; never blocks (drops the oldest batch when full)."""
        if not records:
            return
        with self._idle:
            self._pending += 1
        while True:
            try:
                self._queue.put_nowait(list(records))
                return
            except queue.Full:
                try:
                    old = self._queue.get_nowait()
                except queue.Empty:
                    continue
                if old is not None:
                    self._finished(dropped=len(old))

    def flush(self, timeout_s: float) -> bool:
        """Wait until everything queued so far was written or given up (tests, shutdown)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout_s)

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._thread is None:
            return
        self.flush(timeout_s)
        self._queue.put(None)
        self._thread.join(timeout_s)
        self._thread = None

    def _run(self) -> None:
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            records, batches, stopping = self._with_queued(batch)
            try:
                self._write(records)
                self._finished(written=len(records), batches=batches)
            except Exception as e:  # derived data: log and go on
                log.warning("dashboard records not written (%s): %s", type(e).__name__, e)
                self._finished(failed=len(records), batches=batches)
            if stopping:
                return

    def _with_queued(self, records: list[Any]) -> tuple[list[Any], int, bool]:
        """``records`` and those of the batches queued behind them (up to MAX_RECORDS_PER_WRITE):
        (the records, how many batches they were, whether the stop came after them)."""
        batches = 1
        while len(records) < MAX_RECORDS_PER_WRITE:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is None:
                return records, batches, True
            records += more
            batches += 1
        return records, batches, False

    def _finished(self, *, written: int = 0, failed: int = 0, dropped: int = 0, batches: int = 1) -> None:
        with self._idle:
            self.written += written
            self.failed += failed
            if dropped:
                self.dropped += dropped
                log.warning("dashboard records queue full: %d oldest records dropped", dropped)
            self._pending -= batches
            self._idle.notify_all()
