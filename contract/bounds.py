"""What a readings message may carry: numbers every store can hold, and reading times that
are plausible around the moment ingest received the message.

* ``seq`` and ``epoch``: JSON integers, 0 ≤ n < 2^63. Every store keeps them as signed
  64-bit integers (SQLite INTEGER, InfluxDB integer fields); a larger one made SQLite raise
  ``OverflowError`` at write time.
* A reading's time, in epoch nanoseconds, must fit what InfluxDB keeps (a signed 64-bit
  integer short of its two extremes: up to 2262-04-11T23:47:16.854775806Z) and be plausible
  (:class:`TimeWindow`): not before ``earliest`` — absolute, 2000-01-01T00:00:00Z by default,
  so a logger's backlog of weeks or months is still taken — and not more than ``future``
  after the message was received — relative, 1 day by default: a logger whose clock ran
  ahead, or one writing local time with ``Z``, is refused rather than stored in the future.
* A value must be finite in the reading's own unit and after conversion to the canonical one
  (1e308 cfs is inf gpm).

The receive time is passed in by the caller (ingest); validation never reads the clock.
Without one, only the absolute bounds apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from .timeutil import format_duration, iso_utc, parse_wire_time, to_ns

COUNT_LIMIT = 2**63
"""``seq`` and ``epoch`` are below this (signed 64-bit integers in every store)."""

STORE_MAX_NS = 2**63 - 2
"""The latest time every store can hold [epoch ns]: InfluxDB's maximum, 2262-04-11T23:47:16.854775806Z."""

EARLIEST_NS = to_ns(parse_wire_time("2000-01-01T00:00:00Z"))
FUTURE = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """Reading times ingest takes: ``earliest`` ≤ time ≤ received + ``future`` (and ≤ STORE_MAX_NS).

    earliest_ns : absolute lower bound [epoch ns], default 2000-01-01T00:00:00Z
    future_ns : how far after the receive time a reading may be [ns], default 1 day
    """

    earliest_ns: int = EARLIEST_NS
    future_ns: int = int(FUTURE.total_seconds()) * 10**9

    def __post_init__(self) -> None:
        if not 0 <= self.earliest_ns < STORE_MAX_NS:
            raise ValueError(f"earliest must be between 1970-01-01 and 2262-04-11, got {self.earliest_ns} ns")
        if self.future_ns < 0:
            raise ValueError(f"future must not be negative, got {self.future_ns} ns")

    def limits(self, received_ns: int | None) -> tuple[int, int]:
        """(lowest, highest) reading time [epoch ns, both included] for a message received at
        ``received_ns`` (None: only what the stores hold)."""
        if received_ns is None:
            return self.earliest_ns, STORE_MAX_NS
        return self.earliest_ns, min(STORE_MAX_NS, received_ns + self.future_ns)

    def problem(self, time_ns: int, text: str, received_ns: int | None) -> str | None:
        """Why a reading time is refused, in words (None when it is taken). ``text`` is the
        time as the message wrote it."""
        if time_ns < self.earliest_ns:
            return f"{text} is before {iso_utc(self.earliest_ns)}, the earliest time ingest takes"
        if time_ns > STORE_MAX_NS:
            return f"{text} is after {iso_utc(STORE_MAX_NS)}, the latest time every store can hold"
        if received_ns is not None and time_ns > received_ns + self.future_ns:
            ahead = format_duration(timedelta(microseconds=self.future_ns // 1000))
            return (f"{text} is more than {ahead} after the message was received ({iso_utc(received_ns)}); "
                    "is the logger's clock right?")
        return None


DEFAULT_WINDOW = TimeWindow()

ABSOLUTE_ONLY = TimeWindow(future_ns=STORE_MAX_NS)
"""Only the absolute bounds, whatever the receive time: for simulated data (the demo, its
``--start`` anywhere), whose times have nothing to do with the wall clock receiving them."""
