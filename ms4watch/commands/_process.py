"""What every long-running command shares: stop cleanly on SIGTERM (systemd) or Ctrl-C."""

from __future__ import annotations

import signal
import threading
from typing import Callable


def stop_on_signals(*wake: Callable[[], None]) -> threading.Event:
    """An event set by SIGTERM or SIGINT; the command's loop waits on it, then shuts down.
    ``wake``: also called then, for a loop that sleeps on something else."""
    stop = threading.Event()

    def on_signal(*_: object) -> None:
        stop.set()
        for w in wake:
            w()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop
