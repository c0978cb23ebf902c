"""What every long-running command shares: stop cleanly on SIGTERM (systemd) or Ctrl-C,
and at once on a second one (``ms4watch.signals``)."""

from __future__ import annotations

import threading
from typing import Callable

from ..signals import StopSignals

STOP_WITHIN_S = 50.0
"""A stop still running this long after the signal exits the process (systemd's unit gives
it 60 s before SIGKILL; this way the log says which threads were still busy)."""


def stop_on_signals(*wake: Callable[[], None], force_after_s: float | None = STOP_WITHIN_S) -> threading.Event:
    """An event set by SIGTERM or SIGINT; the command's loop waits on it, then shuts down.
    ``wake``: also called then, for a loop that sleeps on something else."""
    return StopSignals(*wake, force_after_s=force_after_s).install().requested
