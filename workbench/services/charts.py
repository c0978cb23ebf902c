"""An incident's chart on its page: the same PNG and window the alert email attaches
(``alerts/notifiers/email/chart.py``), from the store's readings port."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

from ...alerts.notifiers.email.chart import chart_png, evidence_window, normalise
from ...contract.registry import Registry
from ...evidence import StoreReadings
from ...ingest.sinks.base import ReadingsSource

if TYPE_CHECKING:
    from .incidents import IncidentView

log = logging.getLogger(__name__)


class Charts:
    def __init__(self, readings: ReadingsSource, registry: Registry,
                 clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)):
        """``clock``: the pipeline's (the demo's is simulated): an open episode is drawn up to now."""
        self.lookup = StoreReadings(readings, registry)
        self.registry = registry
        self.clock = clock

    def png(self, view: "IncidentView") -> bytes | None:
        snap = view.incident.snapshot()
        start, end, since, until = evidence_window(snap, self.clock())
        frame = self.lookup(snap, since, until)
        if frame is None or len(frame) == 0:
            return None
        return chart_png(normalise(frame), title=f"{view.what} at {view.station_name}", start=start,
                         end=end, threshold=view.threshold, tz=self.registry.timezone)


__all__ = ["Charts"]
