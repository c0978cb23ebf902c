"""What every long-running command shares: stop cleanly on SIGTERM (systemd) or Ctrl-C."""

from __future__ import annotations

import signal
import threading


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT; the command's loop waits on it, then shuts down."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    return stop
