"""The readings store's interface, :class:`ReadingsStore`: ``open``, ``write(batch)``,
``close``. Tiny on purpose.

A store receives whole MQTT messages (already decoded and converted to canonical units) so
that it can drop a message it has already stored — same device, epoch and sequence number —
and write everything else exactly once. ``write`` returns only when the batch is durable;
the ingest service acknowledges the MQTT messages after that and not before. A store that
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
from typing import Any, ClassVar, Mapping, NamedTuple, Protocol, Sequence, runtime_checkable

from ...contract.calibration import CalibrationRecord, CalibrationState
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
class ReadingsStore(Protocol):
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
class StatusStore(Protocol):
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


@runtime_checkable
class ReadingsOfMany(Protocol):
    """A readings port that reads several series in one request (a remote store: the re-feed's
    reads at start, one per station and quantity the engine follows, were one HTTP request each).

    ``readings_of(series, start, end)``: what :meth:`ReadingsSource.readings` gives of each
    ``(station, quantity)`` of ``series``, together, sorted by time."""

    def readings_of(self, series: Sequence[tuple[str, str]], start: datetime, end: datetime) -> list[CanonicalReading]: ...


def readings_of(source: ReadingsSource, series: Sequence[tuple[str, str]], start: datetime,
                end: datetime) -> list[CanonicalReading]:
    """Every series of ``series`` from ``source``, sorted by time: in one request where the
    source reads several at once (:class:`ReadingsOfMany`), one read a series otherwise."""
    if isinstance(source, ReadingsOfMany):
        return source.readings_of(series, start, end)
    out = [r for station, quantity in series for r in source.readings(station, quantity, start, end)]
    out.sort(key=lambda r: r.time_ns)
    return out


class Receipt(NamedTuple):
    """What one stored batch brought of one station: when the store took it (``received_ns``,
    ingest's wall clock [epoch ns]) and the span of its reading times [epoch ns, both included]."""
    received_ns: int
    station: str
    first_ns: int
    last_ns: int


def receipts_of(batch: Sequence[StoredMessage], received_ns: int) -> list[Receipt]:
    """One :class:`Receipt` per station of ``batch`` (the messages written), at ``received_ns``."""
    spans: dict[str, list[int]] = {}
    for m in batch:
        for r in m.readings:
            span = spans.get(r[1])
            if span is None:
                spans[r[1]] = [r[0], r[0]]
            elif r[0] < span[0]:
                span[0] = r[0]
            elif r[0] > span[1]:
                span[1] = r[0]
    return [Receipt(received_ns, station, a, b) for station, (a, b) in sorted(spans.items())]


@runtime_checkable
class ReceiptLog(Protocol):
    """Optional ability: which stations' readings the store took at or after a time of ingest's
    clock, with the span of their reading times (one :class:`Receipt` per batch and station,
    written in the same write as the readings). The alert pipeline re-feeds after a crash
    what was *stored* after its last checkpoint, however old the readings' own times (a
    logger's backlog of a day is acknowledged like fresh readings). Raises
    :class:`~ms4watch.ingest.errors.StoreUnavailable` when the store cannot answer."""

    def received_since(self, since_ns: int) -> list[Receipt]: ...


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


@runtime_checkable
class RecordsStore(Protocol):
    """Optional ability: keep the alert side's dashboard records (alerts, storms,
    inspections, incidents as points; InfluxDB, for Grafana). Returns how many it wrote."""

    def write_records(self, records: Sequence[Any]) -> int: ...


# -- events and the calibration history (issue 13) -----------------------------------------
@dataclass(frozen=True, slots=True)
class DeviceEvent:
    """One event message of a logger as ingest stores it (``…/events``, contract/wire.py).

    ``time_ns``: the event's own time (the logger's clock); ``digest``:
    :func:`payload_digest` of the message, so a redelivery — same device, time, kind and
    digest — is stored once; ``received_ns``: server time. ``calibration``: for a
    ``calibration`` event, its record (validated), which also goes to the calibration history.
    """
    device: str
    station: str
    time_ns: int
    kind: str
    data: Mapping[str, Any]
    digest: int
    received_ns: int
    calibration: CalibrationRecord | None = None
    readings: ClassVar[tuple[()]] = ()   # queued beside readings messages, it counts for none

    @property
    def key(self) -> tuple[str, int, str, int]:
        return self.device, self.time_ns, self.kind, self.digest


@runtime_checkable
class DeviceEventStore(Protocol):
    """Optional ability: keep every event of every logger (≥ 3 years, like readings), and each
    calibration record in the calibration history. Durable when it returns; a repeated
    :attr:`DeviceEvent.key` is stored once. Raises StoreUnavailable (retry) or StoreRejected
    (the data's fault), never a third-party exception. Returns how many were new."""

    def write_events(self, events: Sequence[DeviceEvent]) -> int: ...


@runtime_checkable
class DeviceEventSource(Protocol):
    """Optional ability: read events back (the workbench, issue 12's bottle records).

    ``device_events(device=, station=, kind=, start=, end=, limit=)``: newest first."""

    def device_events(self, *, device: str | None = None, station: str | None = None, kind: str | None = None,
                      start: datetime | None = None, end: datetime | None = None,
                      limit: int = 1000) -> list[DeviceEvent]: ...


@runtime_checkable
class CalibrationHistory(Protocol):
    """The calibration history the stores keep (the read API for the workbench, dashboards
    and the alert rules):

    * ``calibration_history(device=, station=, sensor=, start=, end=)``: every calibration
      record (one per ``ms4watch calibrate`` run, pass or fail), oldest first;
    * ``calibrations_due(now, warn_days=14)``: every sensor whose logger reports a
      calibration, with its due day, days left and state (ok / due soon / overdue), the
      latest record's id, result and technician; sorted by due day.
    """

    def calibration_history(self, *, device: str | None = None, station: str | None = None,
                            sensor: str | None = None, start: datetime | None = None,
                            end: datetime | None = None) -> list[CalibrationRecord]: ...

    def calibrations_due(self, now: datetime, *, warn_days: int = 14) -> list[CalibrationState]: ...
