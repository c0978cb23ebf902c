"""Ctrl-C and SIGTERM as a request to stop, never as an exception.

Python's default SIGINT handler raises ``KeyboardInterrupt`` in the main thread at whatever
bytecode it is running. When that is the line after a C call that took a lock or opened a
transaction (``BEGIN IMMEDIATE`` has returned, the ``try`` that would roll it back has not
begun), the exception leaves it taken: the next thread to use that connection fails, and a
stop that waits for that thread waits out its timeout. A loaded machine makes this likely,
as the main thread then spends its time waiting inside such calls. So the long-running
commands take the signal as a flag their loops look at between steps:

* the first SIGINT or SIGTERM sets :attr:`StopSignals.requested` and calls the ``wake``
  callables (loops that sleep on something else);
* a second one while stopping exits at once (exit code 130) — what a user pressing Ctrl-C
  again means;
* ``force_after_s``: if the process is still stopping that long after the first signal, it
  exits as if signalled again, naming the threads still alive. A stop is bounded.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from types import FrameType
from typing import Callable

log = logging.getLogger(__name__)

FORCED_EXIT_CODE = 130   # 128 + SIGINT, what a shell reports for a process ended by Ctrl-C
HANDLED = (signal.SIGINT, signal.SIGTERM)


def exit_now(reason: str) -> None:
    """Leave the process at once (no cleanup: it is what was asked, or cleanup hung)."""
    try:
        sys.stderr.write(f"ms4watch: {reason}; exiting now\n")
        sys.stderr.flush()
    finally:
        os._exit(FORCED_EXIT_CODE)


class StopSignals:
    """SIGINT/SIGTERM handlers for the main thread (see the module's docstring). A context
    manager: installed on entry (a no-op outside the main thread, where Python cannot take
    signals), the previous handlers and no watchdog left on exit."""

    def __init__(self, *wake: Callable[[], None], force_after_s: float | None = None,
                 force_exit: Callable[[str], None] = exit_now):
        self.requested = threading.Event()
        self.wake = wake
        self.force_after_s = force_after_s
        self._force_exit = force_exit
        self._previous: dict[int, object] = {}
        self._watchdog: threading.Timer | None = None

    def install(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in HANDLED:
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def restore(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)   # type: ignore[arg-type]
        self._previous.clear()

    def __enter__(self) -> "StopSignals":
        return self.install()

    def __exit__(self, *_: object) -> None:
        self.restore()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.requested.is_set():
            self._force_exit(f"{name} again while stopping")
            return
        self.requested.set()
        if self.force_after_s is not None:
            self._watchdog = threading.Timer(self.force_after_s, self._overdue, args=(name,))
            self._watchdog.daemon = True
            self._watchdog.start()
        for w in self.wake:
            w()

    def _overdue(self, name: str) -> None:
        busy = sorted(t.name for t in threading.enumerate()
                      if t is not threading.current_thread() and t is not threading.main_thread() and t.is_alive())
        self._force_exit(f"still stopping {self.force_after_s:.0f} s after {name} "
                         f"(threads alive: {', '.join(busy) or 'none'})")


__all__ = ["StopSignals", "exit_now", "FORCED_EXIT_CODE"]
