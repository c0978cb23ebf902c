"""The sink interface: ``open``, ``write(batch)``, ``close``. Tiny on purpose.

A sink receives whole MQTT messages (already decoded and converted to canonical units) so
that it can drop a message it has already stored — same device, epoch and sequence number —
and write everything else exactly once. ``write`` returns only when the batch is durable;
the ingest service acknowledges the MQTT messages after that and not before. A sink that
keeps each message's ``digest`` reports a repeated (device, epoch, seq) whose content differs
from what it stored as a conflict (not written, not a duplicate): a logger whose sequence
restarted without a new epoch, whose readings must not vanish as duplicates.

``write`` raises :class:`~ms4watch.ingest.errors.StoreUnavailable` when the store cannot take
the batch now (retry the whole batch later), never a third-party exception.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol, Sequence, runtime_checkable

from ...contract.wire import CanonicalReading, SensorCalibration


class StoredMessage(NamedTuple):
    """One MQTT message's readings (a NamedTuple: made once per message on the hot path).

    ``epoch`` is the logger's spool epoch (0: a logger from before epochs); ``digest`` tells a
    redelivery (same digest) from another message under the same (device, epoch, seq):
    :func:`payload_digest` of its payload, None when unknown.
    """
    device: str
    seq: int
    readings: tuple[CanonicalReading, ...]
    epoch: int = 0
    digest: int | None = None

    @property
    def key(self) -> tuple[str, int, int]:
        """What identifies a message: (device, epoch, seq)."""
        return self.device, self.epoch, self.seq


def payload_digest(payload: bytes) -> int:
    """A message's digest: its length [bytes] and its CRC-32, as one integer (< 2^63, so
    every store keeps it as an integer).

    Not a cryptographic hash: it tells a redelivery (the very same bytes, which a logger
    re-sends from its spool) from another message under the same (device, epoch, seq);
    two different payloads of the same length agree by chance once in 2^32. Chosen for
    speed: ingest computes it for every message (~0.2 µs for 500 bytes, blake2b ~0.7 µs).
    """
    return len(payload) << 32 | zlib.crc32(payload)


@dataclass(frozen=True, slots=True)
class WriteResult:
    readings_written: int
    duplicate_messages: int = 0
    # messages not written because their (device, epoch, seq) is stored with other content,
    # each with the reason (one line)
    conflicts: tuple[tuple[StoredMessage, str], ...] = ()


@runtime_checkable
class Sink(Protocol):
    def open(self) -> None:
        """Connect / create tables. May raise StoreUnavailable (the caller retries)."""

    def write(self, batch: Sequence[StoredMessage]) -> WriteResult:
        """Store a batch durably, each (device, epoch, seq) at most once."""

    def close(self) -> None:
        """Release connections. Idempotent."""


@dataclass(frozen=True, slots=True)
class DeviceStatus:
    """A logger's retained status message, as ingest saw it (``received_ns`` is server time)."""
    device: str
    station: str
    received_ns: int
    state: str                      # online | offline
    battery_v: float | None = None
    signal_dbm: float | None = None
    spool_depth: int | None = None
    dropped: int | None = None
    config_version: str | None = None
    agent_version: str | None = None
    clock: str | None = None
    # Each sensor's calibration as the logger reported it; None when the status said nothing
    # about calibration (a logger from before the field, the broker's last will), () when no
    # sensor has a calibration block. A sensor's own station, when set, overrides ``station``.
    calibrations: tuple[SensorCalibration, ...] | None = None


@runtime_checkable
class StatusSink(Protocol):
    """Optional ability: keep device status (health dashboards, stale-station checks)."""

    def write_status(self, status: DeviceStatus) -> None: ...


@runtime_checkable
class Counting(Protocol):
    """Optional ability: count stored readings (the demo's summary, tests)."""

    def count_readings(self) -> int: ...


@runtime_checkable
class ReadingsSource(Protocol):
    """The readings port: what the alert engine (re-fed after a crash) and the evidence
    behind an email (chart, CSV) read back, from whichever store holds the readings.

    ``readings(station, quantity, start, end)``: every stored reading of that station and
    quantity with ``start <= time <= end`` (aware datetimes), sorted by time, as
    :class:`CanonicalReading` (canonical units, flags as stored). It may be called from any
    thread, before ``open`` and beside a running ``write``; it raises
    :class:`~ms4watch.ingest.errors.StoreUnavailable` when the store cannot answer.
    """

    def readings(self, station: str, quantity: str, start: datetime, end: datetime) -> list[CanonicalReading]: ...


STATS = frozenset({"count", "min", "max", "sum", "mean"})


@dataclass(frozen=True, slots=True)
class Bucket:
    """The readings of one time bucket ``[start_ns, start_ns + width)``, summarised: how many
    had a value, their least, greatest, sum and mean (canonical units). A statistic not
    asked for may be None."""
    start_ns: int
    count: int | None
    min: float | None
    max: float | None
    sum: float | None
    mean: float | None


@runtime_checkable
class Summarising(Protocol):
    """Optional ability: a window of readings summarised by the store itself in equal time
    buckets (``summary.py`` says how and why: a year's chart reads ~1,000 rows, not 500,000).

    ``summary(station, quantity, start, end, width_ns, stats)``: the buckets of ``width_ns``
    counted from ``start`` that hold a reading with a value and ``start <= time <= end``, in
    time order, empty ones left out, each with at least the statistics in ``stats`` (of
    ``STATS``; each costs a remote store time, so a chart asks only what it draws). Same
    threads and errors as the readings port.
    """

    def summary(self, station: str, quantity: str, start: datetime, end: datetime, width_ns: int,
                stats: frozenset[str] = STATS) -> list[Bucket]: ...


@dataclass(frozen=True, slots=True)
class LatestReading:
    """The newest stored reading of one station and quantity."""
    station: str
    quantity: str
    time_ns: int
    value: float | None
    flags: str


@runtime_checkable
class StationState(Protocol):
    """Optional ability: what the store knows of its stations now (the workbench's status
    board, station pages and calibrations due).

    ``latest_readings(since)``: the newest reading of every station and quantity that has
    one at or after ``since``; ``device_statuses()``: every logger's latest status, its
    calibrations as its latest status listing them said (None when none ever did).
    """

    def latest_readings(self, since: datetime) -> list[LatestReading]: ...

    def device_statuses(self) -> list[DeviceStatus]: ...


@runtime_checkable
class Probing(Protocol):
    """Optional ability: say whether a write would be taken now (the server's readiness,
    ``/health/ready``). Raises :class:`~ms4watch.ingest.errors.StoreUnavailable` saying why."""

    def check_writable(self) -> None: ...
