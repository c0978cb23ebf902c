"""The annual report's uptime: how many hours of the reporting year have at least one reading
of a station's quantity.

Counting them reads every reading of the year (a year of 1-minute readings is half a million
rows a station), and every page of the report counts them again. :class:`HoursWithReadings`
counts the year once, then keeps the hours up to date from the store's receipts
(:class:`~ms4watch.ingest.stores.base.ReceiptLog`: which stations' readings were stored
since, with the span of their times): only the hours a new batch touched, and those after
the last count, are read again — a logger's day-old backlog included. A store without
receipts is counted in full every time.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from ..contract.timeutil import from_ns, to_ns

HOUR_NS = 3_600_000_000_000
SLACK_NS = 5 * 60 * 10**9     # a batch being written while the receipts are read is read again next time


def count_hours(readings: Any, station: str, quantity: str, start: datetime, end: datetime) -> int:
    """Hours from ``start`` (whole hours after it) to ``end`` (excluded) with a reading."""
    return len(_hours(readings, station, quantity, to_ns(start), to_ns(end)))


def _hours(readings: Any, station: str, quantity: str, a: int, b: int) -> set[int]:
    """The hours [k: ``a + k`` hours] from ``a`` to ``b`` [ns, excluded] with a reading."""
    if b <= a:
        return set()
    start, end = from_ns(a), from_ns(b - 1)
    if hasattr(readings, "summary"):
        buckets = readings.summary(station, quantity, start, end, HOUR_NS, frozenset({"count"}))
    else:
        from ..ingest.stores.summary import summarise
        buckets = summarise(readings.readings(station, quantity, start, end), a, HOUR_NS)
    return {(x.start_ns - a) // HOUR_NS for x in buckets if (x.count or 0) > 0}


@dataclass
class _Counted:
    hours: set[int] = field(default_factory=set)   # from the year's start
    upto_ns: int = 0                               # counted up to (excluded)


class HoursWithReadings:
    """``hours(station, quantity, start, end)``: :func:`count_hours`, remembered per station,
    quantity and start, and brought up to date from the store's receipts."""

    def __init__(self, readings: Any, clock_ns: Callable[[], int] = time.time_ns):
        self.readings = readings
        self.clock_ns = clock_ns
        self._counted: dict[tuple[str, str, int], _Counted] = {}
        self._since: int | None = None         # receipts read up to (ingest's clock)
        self._seen: set[Any] = set()           # the receipts of the last few minutes already counted
        self._lock = threading.Lock()

    def __call__(self, station: str, quantity: str, start: datetime, end: datetime) -> int:
        a, b = to_ns(start), to_ns(end)
        if not hasattr(self.readings, "received_since"):
            return len(_hours(self.readings, station, quantity, a, b))
        with self._lock:
            self._catch_up()
            c = self._counted.get((station, quantity, a))
            if c is None:
                c = self._counted[(station, quantity, a)] = _Counted(_hours(self.readings, station, quantity, a, b), b)
            elif b > c.upto_ns:           # the hour the last count ended in, and those after it
                self._recount(station, quantity, a, c, a + (c.upto_ns - a) // HOUR_NS * HOUR_NS, b)
                c.upto_ns = b
            if b < c.upto_ns and (b - a) % HOUR_NS:     # an earlier end within an hour: not remembered
                return len(_hours(self.readings, station, quantity, a, b))
            last = (b - a + HOUR_NS - 1) // HOUR_NS        # hours [0, last) begin before ``end``
            return sum(1 for h in c.hours if h < last)

    def _catch_up(self) -> None:
        """Recount the hours of every batch stored since the last look (each batch once)."""
        now = self.clock_ns()
        if self._since is not None:
            fresh = [rc for rc in self.readings.received_since(self._since - SLACK_NS) if rc not in self._seen]
            for rc in fresh:
                for (station, quantity, a), c in self._counted.items():
                    if rc.station != station:
                        continue
                    lo = max(a, a + (rc.first_ns - a) // HOUR_NS * HOUR_NS)
                    hi = min(c.upto_ns, a + ((rc.last_ns - a) // HOUR_NS + 1) * HOUR_NS)
                    if lo < hi:
                        self._recount(station, quantity, a, c, lo, hi)
            self._seen = {rc for rc in self._seen | set(fresh) if rc.received_ns >= now - SLACK_NS}   # what the next look reads again
        else:
            self._seen = set(self.readings.received_since(now - SLACK_NS))   # counted in full below
        self._since = now

    def _recount(self, station: str, quantity: str, a: int, c: _Counted, lo: int, hi: int) -> None:
        """Hours [``lo``, ``hi``) (whole hours from ``a``) counted again."""
        first, stop = (lo - a) // HOUR_NS, (hi - a + HOUR_NS - 1) // HOUR_NS
        c.hours -= set(range(first, stop))
        c.hours |= {first + h for h in _hours(self.readings, station, quantity, lo, hi)}


__all__ = ["HoursWithReadings", "count_hours", "HOUR_NS"]
