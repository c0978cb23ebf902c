"""A store decorator that never makes ingest wait for — or lose data to — a store that is down.

``SpoolingStore(inner, spool_path, max_bytes)`` writes each batch to ``inner``. When ``inner``
raises :class:`StoreUnavailable` (down, slow, 429/503), the batch goes into a local SQLite
spool (WAL, ``synchronous=FULL``: durable when ``write`` returns) and ``write`` reports
success, so the ingest service may acknowledge the MQTT messages: every acknowledged
reading is durable in the store or in the spool.

A drain thread empties the spool oldest-first once the store answers again, retrying
with exponential backoff and jitter (tenacity) and waiting at least as long as a server's
Retry-After. While the spool holds anything, new batches are appended to it, so readings
reach the store in the order they came. The spool is bounded: when ``max_bytes`` would be
exceeded, ``write`` raises StoreUnavailable itself and nothing is acknowledged: the broker
keeps the messages (back-pressure instead of loss).

Data the store refuses as bad while draining is moved to the ``rejected`` table of the
spool file, kept for a person to look at, and draining goes on: each refused message with
its reason when the store named them (MessagesRejected: the rest of the batch was written),
else the whole batch.
The spool survives a restart: ``open`` starts draining whatever is left.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_random_exponential

from ...contract.timeutil import to_ns
from ...contract.wire import CanonicalReading
from ...sqlite import connect, connect_readonly
from ..errors import IngestError, MessagesRejected, StoreRejected, StoreUnavailable
from ...contract.calibration import CALIBRATION_EVENT, CalibrationRecord, CalibrationState
from .base import (STATS, Bucket, CalibrationHistory, Counting, DeviceEvent, DeviceStatus, DeviceEventStore, DeviceEventSource,
                   LatestReading, ReadingsSource, Receipt, ReceiptLog, ReadingsStore, StationState, StatusStore, StoredMessage, Summarising,
                   WriteResult, readings_of, receipts_of)
from .sqlite.store import probe_write_lock

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spool (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  spooled_ns INTEGER NOT NULL,
  messages INTEGER NOT NULL,
  readings INTEGER NOT NULL,
  nbytes INTEGER NOT NULL,
  batch BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS rejected (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  rejected_ns INTEGER NOT NULL,
  reason TEXT NOT NULL,
  batch BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS spool_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  spooled_ns INTEGER NOT NULL,
  events BLOB NOT NULL
);
"""


def encode_events(events: Sequence[DeviceEvent]) -> bytes:
    return json.dumps([[e.device, e.station, e.time_ns, e.kind, dict(e.data), e.digest, e.received_ns]
                       for e in events], separators=(",", ":")).encode()


def decode_events(blob: bytes) -> list[DeviceEvent]:
    out = []
    for d, st, t, k, data, dig, rec in json.loads(blob):
        cal = CalibrationRecord.model_validate(data) if k == CALIBRATION_EVENT else None
        out.append(DeviceEvent(d, st, t, k, data, dig, rec, cal))
    return out


def encode_batch(batch: Sequence[StoredMessage]) -> bytes:
    return json.dumps([[m.device, m.seq, [list(r) for r in m.readings], m.epoch, m.digest] for m in batch],
                      separators=(",", ":")).encode()


def decode_batch(blob: bytes) -> list[StoredMessage]:
    """A spooled batch, also one spooled before epochs ([device, seq, readings] per message)."""
    out = []
    for d, s, rs, *rest in json.loads(blob):
        epoch, digest = rest if rest else (0, None)
        out.append(StoredMessage(d, s, tuple(CanonicalReading(*r) for r in rs), epoch, digest))
    return out


class _WaitRetryAfter:
    """Exponential backoff with jitter, never shorter than the server's Retry-After."""

    def __init__(self, initial_s: float, max_s: float):
        self._exp = wait_random_exponential(multiplier=initial_s, max=max_s)
        self.max_s = max_s

    def __call__(self, state: RetryCallState) -> float:
        wait = self._exp(state)
        exc = state.outcome.exception() if state.outcome else None
        after = getattr(exc, "retry_after_s", None)
        if after is not None:
            wait = max(wait, min(float(after), 3600.0))
        return wait


class SpoolingStore:
    """Wraps a store; see the module docstring. Thread-safe: one drain thread, any writer."""

    def __init__(self, inner: ReadingsStore, spool_path: str | Path, max_bytes: int = 512 * 1024 * 1024,
                 *, drain_batch_readings: int = 20_000, backoff_initial_s: float = 0.5,
                 backoff_max_s: float = 30.0):
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.inner = inner
        self.spool_path = Path(spool_path)
        self.max_bytes = max_bytes
        self.drain_batch_readings = drain_batch_readings
        self._wait = _WaitRetryAfter(backoff_initial_s, backoff_max_s)
        self._db: sqlite3.Connection | None = None
        self._db_lock = threading.Lock()      # the spool connection
        self._inner_lock = threading.Lock()   # one call into the inner store at a time
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._inner_open = False
        self._event_rows = 0                  # batches of events waiting in the spool
        self._hold_until = 0.0                # monotonic time before which the store is not asked
        self._bytes = 0
        self._rows = 0
        self._readings = 0
        self.spooled_readings_total = 0       # readings that ever went through the spool
        self.drained_readings_total = 0
        self.write_errors = 0                 # writes to the store that failed or were refused (each attempt)

    # -- the ReadingsStore interface --------------------------------------------------------------
    def open(self) -> None:
        self.spool_path.parent.mkdir(parents=True, exist_ok=True)
        db = connect(self.spool_path)
        db.executescript(_SCHEMA)
        self._db = db
        self._rows, self._readings, self._bytes = db.execute(
            "SELECT count(*), coalesce(sum(readings),0), coalesce(sum(nbytes),0) FROM spool").fetchone()
        self._event_rows = db.execute("SELECT count(*) FROM spool_events").fetchone()[0]
        try:
            with self._inner_lock:
                self._open_inner()
        except StoreUnavailable as e:
            log.warning("store not reachable at start (%s); spooling until it is", e)
        except BaseException:
            db.close()
            self._db = None
            raise
        self._stop.clear()
        self._thread = threading.Thread(target=self._drain_loop, name="spool-drain", daemon=True)
        self._thread.start()
        if self._rows or self._event_rows:
            log.info("spool %s holds %d readings and %d event batches from before; draining", self.spool_path,
                     self._readings, self._event_rows)
            self._wake.set()

    def write(self, batch: Sequence[StoredMessage]) -> WriteResult:
        if not batch:
            return WriteResult(0)
        if self._rows == 0:
            try:
                with self._inner_lock:
                    self._open_inner()
                    return self.inner.write(batch)
            except StoreUnavailable as e:
                self.write_errors += 1
                log.warning("store unavailable (%s); spooling", e)
                if e.retry_after_s:
                    self._hold_until = time.monotonic() + min(e.retry_after_s, 3600.0)
                self._append(batch)
                self._wake.set()
                return WriteResult(sum(len(m.readings) for m in batch))
        self._append(batch)       # keep order: the spool drains first
        self._wake.set()
        return WriteResult(sum(len(m.readings) for m in batch))

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None
        with self._inner_lock:
            self.inner.close()
            self._inner_open = False
        with self._db_lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _open_inner(self) -> None:
        """Open the inner store once (caller holds the inner lock).

        A store that was down at start is opened (and checked: database, retention) when it
        first answers. A store found unfit then (StoreMisconfigured) is treated as
        unavailable: data stays in the spool until someone fixes the store, never lost.
        A store found unfit at start raises, so ingest refuses to start.
        """
        if self._inner_open:
            return
        try:
            self.inner.open()
        except StoreUnavailable:
            raise
        except IngestError as e:
            if self._thread is None:       # at start: refuse
                raise
            log.error("store not fit for writing, spooling until it is fixed: %s", e)
            raise StoreUnavailable(f"store not fit for writing: {e}", retry_after_s=60.0) from None
        self._inner_open = True

    # -- optional abilities ----------------------------------------------------------------
    def count_readings(self) -> int:
        if not isinstance(self.inner, Counting):
            raise TypeError(f"{type(self.inner).__name__} cannot count readings")
        with self._inner_lock:
            return self.inner.count_readings()

    def write_status(self, status: DeviceStatus) -> None:
        """Status is a snapshot: passed through when the store can take it, else skipped
        (the next status message replaces it)."""
        if isinstance(self.inner, StatusStore) and self._inner_open:
            try:
                self.inner.write_status(status)
            except IngestError as e:
                log.info("status of %s not stored (store unavailable): %s", status.device, e)

    def readings(self, station: str, quantity: str, start: datetime, end: datetime) -> list[CanonicalReading]:
        """The readings port: what the store holds plus what waits in the spool for it
        (acknowledged readings are evidence and engine input even while the store is down).
        The store being down leaves only the spool's part."""
        return self.readings_of([(station, quantity)], start, end)

    def readings_of(self, series: Sequence[tuple[str, str]], start: datetime, end: datetime) -> list[CanonicalReading]:
        """:class:`~.base.ReadingsOfMany`: the store's in one request when it reads several
        series at once (InfluxDB), each series' otherwise; plus the spool's, read once."""
        out: list[CanonicalReading] = []
        try:
            if isinstance(self.inner, ReadingsSource):
                out = readings_of(self.inner, series, start, end)
        except StoreUnavailable as e:
            which = "/".join(series[0]) if len(series) == 1 else f"{len(series)} series"
            log.warning("readings of %s: store unavailable (%s); using the spool only", which, e)
            out = []
        return self._with_spooled(out, set(series), start, end)

    def _with_spooled(self, out: list[CanonicalReading], series: set[tuple[str, str]], start: datetime,
                      end: datetime) -> list[CanonicalReading]:
        """``out`` (the store's) plus the spool's readings of ``series`` in the window that it
        lacks, sorted by time."""
        a, b = to_ns(start), to_ns(end)
        seen = {(r.station, r.quantity, r.time_ns, r.device, r.sensor) for r in out}
        for blob in self._spooled_blobs():
            for m in decode_batch(blob):
                for r in m.readings:
                    if (r.station, r.quantity) in series and a <= r.time_ns <= b \
                            and (r.station, r.quantity, r.time_ns, r.device, r.sensor) not in seen:
                        out.append(r)
        out.sort(key=lambda r: r.time_ns)
        return out

    def summary(self, station: str, quantity: str, start: datetime, end: datetime, width_ns: int,
                stats: frozenset[str] = STATS) -> list[Bucket]:
        """``Summarising``: the store's buckets merged with the spool's readings (the spool
        alone while the store is down; the readings port summarised when the store cannot)."""
        from .summary import merge, summarise
        a, b = to_ns(start), to_ns(end)
        spooled = [r for blob in self._spooled_blobs() for m in decode_batch(blob) for r in m.readings
                   if r.station == station and r.quantity == quantity and a <= r.time_ns <= b]
        if not isinstance(self.inner, Summarising):
            return summarise(self.readings(station, quantity, start, end), a, width_ns)
        try:
            stored = self.inner.summary(station, quantity, start, end, width_ns, stats)
        except StoreUnavailable as e:
            log.warning("summary of %s/%s: store unavailable (%s); using the spool only", station, quantity, e)
            stored = []
        return merge(stored, summarise(spooled, a, width_ns))

    def latest_readings(self, since: datetime) -> list[LatestReading]:
        """``StationState``, from the store (what waits in the spool is minutes old at most);
        nothing while the store is down."""
        try:
            return self.inner.latest_readings(since) if isinstance(self.inner, StationState) else []
        except StoreUnavailable as e:
            log.warning("latest readings: store unavailable (%s)", e)
            return []

    def device_statuses(self) -> list[DeviceStatus]:
        try:
            return self.inner.device_statuses() if isinstance(self.inner, StationState) else []
        except StoreUnavailable as e:
            log.warning("device statuses: store unavailable (%s)", e)
            return []

    def received_since(self, since_ns: int) -> list[Receipt]:
        """``ReceiptLog``: the store's receipts and those of the batches waiting in the spool
        (spooled at or after ``since_ns``). The store being down leaves only the spool's part."""
        out: list[Receipt] = []
        if isinstance(self.inner, ReceiptLog):
            try:
                out = list(self.inner.received_since(since_ns))
            except StoreUnavailable as e:
                log.warning("receipts: store unavailable (%s); using the spool only", e)
        for spooled_ns, blob in self._spooled_rows("WHERE spooled_ns >= ?", (since_ns,)):
            out += receipts_of(decode_batch(blob), spooled_ns)
        return sorted(out)

    def _spooled_blobs(self) -> list[bytes]:
        return [blob for _, blob in self._spooled_rows()]

    def _spooled_rows(self, where: str = "", params: tuple = ()) -> list[tuple[int, bytes]]:
        sql = f"SELECT spooled_ns, batch FROM spool {where} ORDER BY id"
        with self._db_lock:
            if self._db is not None:
                return self._db.execute(sql, params).fetchall()
        if not self.spool_path.exists():
            return []
        db = connect_readonly(self.spool_path)
        try:
            return db.execute(sql, params).fetchall()
        except sqlite3.Error:
            return []
        finally:
            db.close()

    # -- events and the calibration history ------------------------------------------------
    def write_events(self, events: Sequence[DeviceEvent]) -> int:
        """Events go to the store when it answers, else into the spool (durable when this
        returns, like readings), and are sent from there before the readings spooled after them."""
        if not isinstance(self.inner, DeviceEventStore):
            raise StoreRejected(f"{type(self.inner).__name__} cannot keep events")
        if not events:
            return 0
        if self._rows == 0 and self._event_rows == 0:
            try:
                with self._inner_lock:
                    self._open_inner()
                    return self.inner.write_events(events)
            except StoreUnavailable as e:
                log.warning("store unavailable (%s); spooling %d events", e, len(events))
        blob = encode_events(events)
        with self._db_lock:
            if self._db is None:
                raise StoreUnavailable("spool is closed")
            try:
                self._db.execute("INSERT INTO spool_events (spooled_ns, events) VALUES (?, ?)", (time.time_ns(), blob))
            except sqlite3.Error as e:
                raise StoreUnavailable(f"store unavailable and spool {self.spool_path} not writable: {e}") from None
            self._event_rows += 1
        self._wake.set()
        return len(events)

    def device_events(self, **kw: Any) -> list[DeviceEvent]:
        if not isinstance(self.inner, DeviceEventSource):
            return []
        return self.inner.device_events(**kw)

    def calibration_history(self, **kw: Any) -> list[CalibrationRecord]:
        if not isinstance(self.inner, CalibrationHistory):
            return []
        return self.inner.calibration_history(**kw)

    def calibrations_due(self, now: datetime, *, warn_days: int = 14) -> list[CalibrationState]:
        if not isinstance(self.inner, CalibrationHistory):
            return []
        return self.inner.calibrations_due(now, warn_days=warn_days)

    def _drain_events(self) -> None:
        """Spooled events to the store, oldest first (before the readings spooled after them)."""
        while self._event_rows and not self._stop.is_set():
            with self._db_lock:
                assert self._db is not None
                row = self._db.execute("SELECT id, events FROM spool_events ORDER BY id LIMIT 1").fetchone()
            if row is None:
                self._event_rows = 0
                return
            try:
                with self._inner_lock:
                    self._open_inner()
                    self.inner.write_events(decode_events(row[1]))   # type: ignore[attr-defined]
            except StoreRejected as e:
                log.error("store refused spooled events, kept in %s (table rejected): %s", self.spool_path, e)
                self._reject([(str(e), row[1])])
            with self._db_lock:
                assert self._db is not None
                self._db.execute("DELETE FROM spool_events WHERE id = ?", (row[0],))
                self._event_rows -= 1

    def write_records(self, records: Sequence[Any]) -> int:
        """Non-reading records (alerts, incidents) go straight to the store when it has them."""
        write = getattr(self.inner, "write_records", None)
        return write(records) if write is not None else 0

    @property
    def spool_depth(self) -> int:
        """Readings waiting in the spool now."""
        return self._readings

    @property
    def spool_bytes(self) -> int:
        return self._bytes

    def check_writable(self) -> None:
        """What ingest's acknowledgements rest on while the store is down: the spool file
        takes writes and has room (``Probing``)."""
        if self._bytes >= self.max_bytes:
            raise StoreUnavailable(f"spool {self.spool_path} is full ({self._bytes} bytes); the store has been "
                                   "unreachable too long")
        probe_write_lock(self.spool_path)

    def wait_drained(self, timeout_s: float) -> bool:
        """Block until the spool is empty (tests, shutdown); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while (self._rows or self._event_rows) and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._rows == 0 and self._event_rows == 0

    # -- spool -----------------------------------------------------------------------------
    def _append(self, batch: Sequence[StoredMessage]) -> None:
        blob = encode_batch(batch)
        readings = sum(len(m.readings) for m in batch)
        with self._db_lock:
            if self._db is None:
                raise StoreUnavailable("spool is closed")
            if self._bytes + len(blob) > self.max_bytes:
                raise StoreUnavailable(
                    f"store unavailable and spool {self.spool_path} full "
                    f"({self._bytes} of {self.max_bytes} bytes); not acknowledging", retry_after_s=5.0)
            try:
                self._db.execute(
                    "INSERT INTO spool (spooled_ns, messages, readings, nbytes, batch) VALUES (?,?,?,?,?)",
                    (time.time_ns(), len(batch), readings, len(blob), blob))
            except sqlite3.Error as e:
                raise StoreUnavailable(f"store unavailable and spool {self.spool_path} not writable: {e}") from None
            self._rows += 1
            self._readings += readings
            self._bytes += len(blob)
            self.spooled_readings_total += readings

    def _oldest(self) -> list[tuple[int, int, int, bytes]]:
        """Oldest rows, up to about ``drain_batch_readings`` readings (at least one row)."""
        with self._db_lock:
            assert self._db is not None
            heads = self._db.execute("SELECT id, readings FROM spool ORDER BY id LIMIT 1000").fetchall()
            ids: list[int] = []
            n = 0
            for row_id, readings in heads:
                if ids and n + readings > self.drain_batch_readings:
                    break
                ids.append(row_id)
                n += readings
            if not ids:
                return []
            return self._db.execute(
                f"SELECT id, readings, nbytes, batch FROM spool WHERE id IN ({','.join('?' * len(ids))}) ORDER BY id",
                ids).fetchall()

    def _delete(self, rows: list[tuple[int, int, int, bytes]]) -> None:
        with self._db_lock:
            assert self._db is not None
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM spool WHERE id = ?", [(r[0],) for r in rows])
            self._db.execute("COMMIT")
            self._rows -= len(rows)
            self._readings -= sum(r[1] for r in rows)
            self._bytes -= sum(r[2] for r in rows)

    def _reject(self, refused: list[tuple[str, bytes]]) -> None:
        """Keep refused data in the ``rejected`` table: (reason, encoded batch) each."""
        with self._db_lock:
            assert self._db is not None
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO rejected (rejected_ns, reason, batch) VALUES (?,?,?)",
                                 [(time.time_ns(), reason, blob) for reason, blob in refused])
            self._db.execute("COMMIT")

    # -- draining --------------------------------------------------------------------------
    def _drain_once(self) -> None:
        """Send the spool to the store, oldest first, until it is empty (or we are stopped)."""
        self._drain_events()
        while self._rows and not self._stop.is_set():
            rows = self._oldest()
            if not rows:
                return
            batch = [m for r in rows for m in decode_batch(r[3])]
            try:
                with self._inner_lock:
                    self._open_inner()
                    self.inner.write(batch)
            except MessagesRejected as e:
                self.write_errors += 1
                # Bad data, not retryable: the store has taken the rest; keep what it refused
                # aside for a person (one row per message, with its reason) and go on.
                log.error("store refused spooled data, kept in %s (table rejected): %s", self.spool_path, e)
                self._reject([(reason, encode_batch([m])) for m, reason in e.rejected])
            except StoreRejected as e:
                self.write_errors += 1
                log.error("store refused spooled data, kept in %s (table rejected): %s", self.spool_path, e)
                self._reject([(str(e), r[3]) for r in rows])
            except Exception:
                self.write_errors += 1    # unavailable: the drain's retry waits and tries again
                raise
            self._delete(rows)
            self.drained_readings_total += sum(r[1] for r in rows)
        if not self._rows:
            log.info("spool drained")

    def _drain_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            hold = self._hold_until - time.monotonic()
            if hold > 0 and self._stop.wait(hold):   # the server's Retry-After from a direct write
                return
            retrying = Retrying(retry=retry_if_exception_type(StoreUnavailable), wait=self._wait,
                                sleep=self._sleep, reraise=True, before_sleep=_log_retry)
            try:
                retrying(self._drain_once)
            except StoreUnavailable:
                return   # only when stopped during a wait
            except Exception:  # noqa: BLE001 - the thread must not die silently
                log.exception("spool drain failed; retrying in %.0fs", self._wait.max_s)
                self._stop.wait(self._wait.max_s)
                self._wake.set()

    def _sleep(self, seconds: float) -> None:
        if self._stop.wait(seconds):
            raise StoreUnavailable("spool stopped")


def _log_retry(state: RetryCallState) -> None:
    exc: Any = state.outcome.exception() if state.outcome else None
    log.warning("spool drain: store still unavailable (%s); retry %d in %.1fs",
                exc, state.attempt_number, state.next_action.sleep if state.next_action else 0)
