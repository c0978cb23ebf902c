"""Liveness and readiness. ``/health`` answers while the process serves; ``/health/ready``
asks the parts the server depends on: the broker (ingest connected and subscribed), the
store (takes a write now), the delivery queue (nothing waits past ``web.ready_backlog_max``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable

from ...ingest.errors import StoreUnavailable
from ...ingest.stores.base import Probing

Backlog = Callable[[], tuple[dict[str, int], datetime | None]]


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


class Health:
    def __init__(self, *, broker_connected: Callable[[], bool] | None, store: Probing | None, backlog: Backlog,
                 clock: Callable[[], datetime], backlog_max: timedelta, broker_url: str = ""):
        """``broker_connected`` None: this process takes no readings (nothing to check)."""
        self.broker_connected = broker_connected
        self.store = store
        self.backlog = backlog
        self.clock = clock
        self.backlog_max = backlog_max
        self.broker_url = broker_url

    def checks(self) -> list[Check]:
        out = []
        if self.broker_connected is not None:
            up = self.broker_connected()
            out.append(Check("broker", up, f"{'subscribed at' if up else 'not connected to'} {self.broker_url}".strip()))
        if self.store is not None:
            try:
                self.store.check_writable()
                out.append(Check("store", True, "takes writes"))
            except StoreUnavailable as e:
                out.append(Check("store", False, str(e)))
        counts, oldest = self.backlog()
        late = self.clock() - oldest if oldest is not None else timedelta(0)
        detail = f"{counts.get('pending', 0)} pending, {counts.get('failed', 0)} failed"
        if oldest is not None:
            detail += f"; the longest-waiting is {int(late.total_seconds())} s past due"
        out.append(Check("delivery queue", late <= self.backlog_max, detail))
        return out


__all__ = ["Health", "Check"]
