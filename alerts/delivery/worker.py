"""The delivery worker: one thread that sends what the durable queue holds.

It runs a *tick* (escalations, reminders, digests, then every due notification) when it is
woken — the incident transaction that queued something has committed, or time moved on —
and at least every ``idle_s`` seconds so retries and deadlines come due without a wake.
A tick may take as long as an SMTP timeout; nobody else waits for it. As it starts it runs
``prepare`` once (the channels' one-time costs, such as the first chart's fonts and caches),
so the first alert does not pay them; ``ready`` is set once it returned (the server starts
ingest after it: an alert of the first readings does not wait behind the warm-up chart).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)


class DeliveryWorker:
    def __init__(self, tick: Callable[[], None], *, idle_s: float = 5.0, name: str = "ms4watch-delivery",
                 prepare: Callable[[], None] | None = None):
        if idle_s <= 0:
            raise ValueError(f"idle_s must be positive, got {idle_s}")
        self._tick = tick
        self._prepare = prepare
        self.idle_s = idle_s
        self.name = name
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._done = threading.Condition()
        self.ready = threading.Event()  # prepare has returned (or failed): a notification waits for nothing
        self._started = 0             # ticks begun
        self._ticks = 0               # ticks completed
        self._thread: threading.Thread | None = None

    def start(self) -> "DeliveryWorker":
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """Something was queued or time moved on: tick soon. Never blocks."""
        self._wake.set()

    def flush(self, timeout_s: float) -> bool:
        """Wake the worker and wait until a whole tick started after this call has finished
        (what was due now has been tried). False on timeout or when not running."""
        if self._thread is None or not self._thread.is_alive():
            return False
        with self._done:
            target = self._started + 1   # one that begins after now (a running one began before)
            self._wake.set()
            return self._done.wait_for(lambda: self._ticks >= target, timeout_s)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop after the current tick (a send in progress is not interrupted: its row stays
        pending and is sent at the next start)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.warning("delivery worker still busy after %.0fs (a server not answering?); leaving it", timeout_s)
            self._thread = None

    def _run(self) -> None:
        if self._prepare is not None:
            try:
                self._prepare()
            except Exception:  # only a cost moved to the first alert: never a reason not to deliver
                log.exception("preparing the delivery channels failed; the first notification pays it")
        self.ready.set()
        while not self._stop.is_set():
            self._wake.wait(self.idle_s)
            self._wake.clear()
            if self._stop.is_set():
                break
            with self._done:
                self._started += 1
            t0 = time.monotonic()
            try:
                self._tick()
            except Exception:  # the worker must outlive any fault: the rows stay queued
                log.exception("delivery tick failed; trying again in %.0fs", self.idle_s)
            took = time.monotonic() - t0
            if took > 5:
                log.info("delivery tick took %.1fs", took)
            with self._done:
                self._ticks += 1
                self._done.notify_all()
