"""What every long-running command shares: stop cleanly on SIGTERM (systemd) or Ctrl-C,
and at once on a second one (``ms4watch.signals``)."""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

from ..signals import StopSignals

STOP_WITHIN_S = 50.0
"""A stop still running this long after the signal exits the process (systemd's unit gives
it 60 s before SIGKILL; this way the log says which threads were still busy)."""


def stop_on_signals(*wake: Callable[[], None], force_after_s: float | None = STOP_WITHIN_S) -> threading.Event:
    """An event set by SIGTERM or SIGINT; the command's loop waits on it, then shuts down.
    ``wake``: also called then, for a loop that sleeps on something else."""
    return StopSignals(*wake, force_after_s=force_after_s).install().requested


@contextmanager
def starting_without_collection() -> Iterator[None]:
    """A long-running command's set-up: no cycle collection while it imports and builds (what
    it makes then lives as long as the process: ~10^5 objects in ``serve``, each full
    collection walking them all), then the collector tuned as for ingest
    (:func:`~ms4watch.ingest.service.tune_gc`: what exists frozen, the young generation
    collected every 50,000 allocations). A start that fails leaves the collector on, untuned."""
    from ..ingest.service import tune_gc
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if was_enabled:
            gc.enable()
        raise
    tune_gc()
    if was_enabled:
        gc.enable()
