"""The embedded store: SQLite in WAL mode, one file.

Tables: ``messages`` (device, epoch, seq) — the duplicate filter, with each message's
payload digest — and the readings in canonical units, kept as ``series`` (station, device,
sensor, quantity, unit: one row per physical sensor) and ``samples`` (series, time, value,
flags, seq). Readers use the view ``readings``, which joins them back into one row per
reading. Three years of a town's minute data is ~10^8 readings: without the repeated text a
reading takes ~45 bytes with its index instead of ~130, and writing it binds 5 values
instead of 9. Store files from before are converted when opened: a ``readings`` table (the
first layout), a ``messages`` table without epoch and digest (their messages become epoch
0, digest unknown).

A message whose (device, epoch, seq) is stored already is a duplicate (a redelivery) when
its digest is the stored one, or unknown; with another digest it is a conflict: not written,
reported in the WriteResult so ingest sets it aside with a warning — a logger whose sequence
restarted without a new epoch (one from before epochs whose spool was lost) loses nothing
silently.

A batch is one transaction, committed with ``synchronous=FULL``, so when ``write`` returns
the readings survive a crash or a power cut; only then does ingest acknowledge.

A write that fails because of the data — a number SQLite cannot bind (an integer beyond 64
bits), a type it does not know, a constraint the data breaks — is not an outage: the batch
is written again message by message, each in its own savepoint, the messages that fail are
reported (:class:`~ms4watch.ingest.errors.MessagesRejected`) and the rest is committed.
Any other SQLite failure (locked, disk full, I/O) is StoreUnavailable and retried.

``device_status`` keeps each logger's latest status, ``calibration`` the latest calibration
each logger reported per sensor (device, sensor, station, performed, due as ``YYYY-MM-DD``,
received_ns): a status that lists calibrations replaces the device's rows, one that says
nothing about calibration (an older logger, the last will) leaves them alone.

``events`` keeps every event message of every logger (device, station, time_ns, kind,
digest, received_ns, data as JSON), a redelivery once; ``calibration_records`` the
calibration history: one row per ``ms4watch calibrate`` run (its record as JSON, and the
columns it is looked up by). Nothing is ever deleted from either (records kept ≥ 3 years).

``receipts`` says, per written batch and station, when the batch was stored (``received_ns``,
as in ``messages``) and the span of its reading times (:class:`~..base.ReceiptLog`): after a
crash the alert engine is re-fed with what was stored after its last checkpoint.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from datetime import date, datetime, timezone
from itertools import chain
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ....contract.calibration import CALIBRATION_EVENT, CalibrationRecord, CalibrationState, due_state
from ....contract.timeutil import iso_utc, to_ns
from ....contract.wire import CanonicalReading, SensorCalibration
from ....sqlite import columns, connect, connect_readonly
from ...errors import MessagesRejected, StoreRejected, StoreUnavailable, refused_summary
from ..base import (STATS, Bucket, DeviceEvent, DeviceStatus, LatestReading, Receipt, StoredMessage, WriteResult,
                    receipts_of)

MESSAGES_TABLE = """
CREATE TABLE IF NOT EXISTS messages (
    device TEXT NOT NULL, epoch INTEGER NOT NULL, seq INTEGER NOT NULL, received_ns INTEGER NOT NULL,
    n INTEGER NOT NULL, digest INTEGER, PRIMARY KEY (device, epoch, seq)) WITHOUT ROWID"""

SCHEMA = MESSAGES_TABLE + """;
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY, station TEXT NOT NULL, device TEXT NOT NULL, sensor TEXT NOT NULL,
    quantity TEXT NOT NULL, unit TEXT NOT NULL, UNIQUE (station, device, sensor, quantity, unit));
CREATE TABLE IF NOT EXISTS samples (
    series INTEGER NOT NULL REFERENCES series (id), time_ns INTEGER NOT NULL, value REAL,
    flags TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS samples_series_time ON samples (series, time_ns);
CREATE VIEW IF NOT EXISTS readings AS
    SELECT s.time_ns, r.station, r.device, r.sensor, r.quantity, s.value, r.unit, s.flags, s.seq
    FROM samples AS s JOIN series AS r ON r.id = s.series;
CREATE TABLE IF NOT EXISTS device_status (
    device TEXT PRIMARY KEY, station TEXT NOT NULL, received_ns INTEGER NOT NULL, state TEXT NOT NULL,
    battery_v REAL, signal_dbm REAL, spool_depth INTEGER, dropped INTEGER, config_version TEXT,
    agent_version TEXT, clock TEXT);
CREATE TABLE IF NOT EXISTS calibration (
    device TEXT NOT NULL, sensor TEXT NOT NULL, station TEXT NOT NULL, performed TEXT NOT NULL,
    due TEXT NOT NULL, received_ns INTEGER NOT NULL, PRIMARY KEY (device, sensor)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS events (
    device TEXT NOT NULL, station TEXT NOT NULL, time_ns INTEGER NOT NULL, kind TEXT NOT NULL,
    digest INTEGER NOT NULL, received_ns INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (device, time_ns, kind, digest)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_station_time ON events (station, time_ns);
CREATE TABLE IF NOT EXISTS calibration_records (
    id TEXT PRIMARY KEY, device TEXT NOT NULL, station TEXT NOT NULL, sensor TEXT NOT NULL,
    procedure TEXT NOT NULL, performed_ns INTEGER NOT NULL, next_due TEXT NOT NULL, result TEXT NOT NULL,
    technician TEXT NOT NULL, received_ns INTEGER NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS calibration_records_sensor ON calibration_records (device, sensor, performed_ns);
CREATE TABLE IF NOT EXISTS receipts (
    received_ns INTEGER NOT NULL, station TEXT NOT NULL, first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS receipts_received ON receipts (received_ns);
"""

SUMMARY_MAX_RANGES = 5000   # a summary of more buckets than this is one GROUP BY (see SqliteStore.summary)

# Latest wins: a row already written from a later status is not overwritten by an earlier one.
_UPSERT_CALIBRATION = """
INSERT INTO calibration VALUES (?,?,?,?,?,?) ON CONFLICT (device, sensor) DO UPDATE SET
    station = excluded.station, performed = excluded.performed, due = excluded.due,
    received_ns = excluded.received_ns
WHERE excluded.received_ns >= calibration.received_ns"""


def insert_rows(db: sqlite3.Connection, insert: str, width: int, rows: Sequence[tuple]) -> None:
    """``insert`` (``INSERT INTO t``) of many rows in as few multi-row statements as SQLite's
    variable limit allows (5,000 rows at most; the rest by 50s, then one by one).

    Not ``executemany``: it lets go of the GIL around each row's step, and while ingest's
    network thread is decoding, taking it back waits up to the 5 ms switch interval — per
    row. Beside a busy thread (2 cores, SQLite 3.40), 200,000 rows through executemany had
    not finished after 3 minutes; multi-row statements wrote ~150,000 rows/s.
    """
    one = "(" + ",".join("?" * width) + ")"
    big = max(50, min(5000, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    i, n = 0, len(rows)
    for size in (big, 50):
        if n - i >= size:
            statement = f"{insert} VALUES " + ",".join([one] * size)
            while n - i >= size:
                db.execute(statement, list(chain.from_iterable(rows[i:i + size])))
                i += size
    if i < n:
        db.executemany(f"{insert} VALUES {one}", rows[i:])


def is_data_fault(e: BaseException) -> bool:
    """Whether a failed insert is the data's fault (refuse the message) rather than the store's
    (retry): a value SQLite cannot bind or a constraint the data breaks."""
    if isinstance(e, (OverflowError, sqlite3.IntegrityError, sqlite3.DataError, sqlite3.InterfaceError)):
        return True
    # sqlite3 raises ProgrammingError both for a value of a type it cannot bind (the data) and
    # for a closed connection or a wrong number of parameters (ours): only the first is data.
    return isinstance(e, sqlite3.ProgrammingError) and str(e).startswith("Error binding parameter")


class SqliteStore:
    """``sqlite:///PATH`` — the default store."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL"):
        self.path = Path(path)
        self.synchronous = synchronous
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._series: dict[tuple[str, str, str, str, str], int] = {}
        self._reader: sqlite3.Connection | None = None   # the readings port's own connection
        self._reader_lock = threading.Lock()
        self._idle_readers: list[sqlite3.Connection] = []  # summaries' connections, one per caller at a time

    @classmethod
    def from_url(cls, url: str) -> "SqliteStore":
        """``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` (SQLAlchemy style)."""
        if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
            raise ValueError(f"sqlite URL must look like sqlite:///PATH, got {url!r}")
        return cls(url[len("sqlite:///"):])

    def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # foreign keys off, as before: samples.series is taken from series in the same transaction,
            # and checking it costs each stored reading a look-up (ms4watch/sqlite.py)
            db = connect(self.path, synchronous=self.synchronous, busy_timeout_s=30, foreign_keys=False)
            old = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'readings' AND type = 'table'").fetchone()
            if old:
                _convert_readings_table(db)
            else:
                db.executescript(SCHEMA)
            if not _has_epochs(db):
                _convert_messages_table(db)
        except (sqlite3.Error, OSError) as e:
            raise StoreUnavailable(f"cannot open {self.path}: {e}") from None
        self._db = db
        self._reload_series()

    def _series_id(self, r: CanonicalReading) -> int:
        """The id of a reading's series, made on first sight (inside the write transaction)."""
        key = (r.station, r.device, r.sensor, r.quantity, r.unit)
        assert self._db is not None
        self._db.execute("INSERT OR IGNORE INTO series (station, device, sensor, quantity, unit) "
                         "VALUES (?,?,?,?,?)", key)
        sid = self._db.execute("SELECT id FROM series WHERE station=? AND device=? AND sensor=? AND quantity=? "
                               "AND unit=?", key).fetchone()[0]
        self._series[key] = sid
        return sid

    def _rows(self, readings: Iterable[CanonicalReading]) -> list[tuple]:
        series, new = self._series, self._series_id
        out = []
        for r in readings:
            sid = series.get((r[1], r[2], r[3], r[4], r[6]))
            if sid is None:
                sid = new(r)
            out.append((sid, r[0], r[5], r[7], r[8]))
        return out

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock. Any failure rolls it back; an SQLite one becomes
        StoreUnavailable (the caller retries; nothing was acknowledged)."""
        if self._db is None:
            raise StoreUnavailable("sqlite store is not open")
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except BaseException as e:     # never leave a transaction open behind
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                self._reload_series()     # ids made in the rolled-back transaction are gone
                if isinstance(e, sqlite3.Error):
                    raise StoreUnavailable(f"sqlite write to {self.path} failed: {e}") from None
                raise

    def write(self, batch: Sequence[StoredMessage]) -> WriteResult:
        written = dup = 0
        rejected: list[tuple[StoredMessage, str]] = []
        conflicts: list[tuple[StoredMessage, str]] = []
        now = time.time_ns()
        with self._transaction() as db:
            stored: list[StoredMessage] = []       # the messages written (their receipts)
            if self._write_all(db, batch, now):
                written = sum(len(m.readings) for m in batch)
                stored = list(batch)
            else:
                for m in batch:
                    db.execute("SAVEPOINT message")
                    try:
                        cur = db.execute("INSERT OR IGNORE INTO messages VALUES (?,?,?,?,?,?)",
                                         (m.device, m.epoch, m.seq, now, len(m.readings), m.digest))
                        if cur.rowcount == 1:
                            insert_rows(db, "INSERT INTO samples", 5, self._rows(m.readings))
                    except Exception as e:
                        if not is_data_fault(e):
                            raise
                        self._undo(db, "message")
                        rejected.append((m, f"{type(e).__name__}: {e}"))
                        continue
                    db.execute("RELEASE message")
                    if cur.rowcount == 1:
                        written += len(m.readings)
                        stored.append(m)
                        continue
                    conflict = self._conflict(db, m)
                    if conflict:
                        conflicts.append((m, conflict))
                    else:
                        dup += 1
            receipts = receipts_of(stored, now)
            if receipts:
                insert_rows(db, "INSERT INTO receipts", 4, receipts)
        result = WriteResult(written, dup, tuple(conflicts))
        if rejected:
            raise MessagesRejected(refused_summary(str(self.path), rejected, len(batch)), rejected, result)
        return result

    @staticmethod
    def _conflict(db: sqlite3.Connection, m: StoredMessage) -> str | None:
        """Why ``m``, whose (device, epoch, seq) is stored already, is not a redelivery of the
        stored message; None when it is (same digest, or a digest unknown on either side)."""
        stored = db.execute("SELECT digest, received_ns FROM messages WHERE device = ? AND epoch = ? AND seq = ?",
                            m.key).fetchone()
        if stored is None or stored[0] is None or m.digest is None or stored[0] == m.digest:
            return None
        return (f"{m.device} epoch {m.epoch} seq {m.seq} is stored already with other content (received "
                f"{iso_utc(stored[1])}); a logger whose sequence restarted? not stored, kept aside")

    def _write_all(self, db: sqlite3.Connection, batch: Sequence[StoredMessage], now: int) -> bool:
        """The usual case, no duplicate and no bad data: the whole batch in a few multi-row
        INSERTs. False (and nothing written) when the message filter ignored a row or the
        data could not be written: then the caller goes message by message."""
        db.execute("SAVEPOINT batch")
        try:
            before = db.total_changes
            insert_rows(db, "INSERT OR IGNORE INTO messages", 6,
                        [(m.device, m.epoch, m.seq, now, len(m.readings), m.digest) for m in batch])
            if db.total_changes - before == len(batch):
                insert_rows(db, "INSERT INTO samples", 5, self._rows(chain.from_iterable(m.readings for m in batch)))
                db.execute("RELEASE batch")
                return True
        except Exception as e:
            if not is_data_fault(e):
                raise
        self._undo(db, "batch")
        return False

    def _undo(self, db: sqlite3.Connection, savepoint: str) -> None:
        db.execute(f"ROLLBACK TO {savepoint}")
        db.execute(f"RELEASE {savepoint}")
        self._reload_series()          # series made since the savepoint are gone

    def _reload_series(self) -> None:
        assert self._db is not None
        try:
            self._series = {tuple(k): i for i, *k in self._db.execute(
                "SELECT id, station, device, sensor, quantity, unit FROM series")}
        except sqlite3.Error:
            self._series = {}

    def write_status(self, st: DeviceStatus) -> None:
        """The device's status row and, when the status lists them, its calibration rows (one
        transaction)."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO device_status VALUES (?,?,?,?,?,?,?,?,?,?,?)", (
                st.device, st.station, st.received_ns, st.state, st.battery_v, st.signal_dbm,
                st.spool_depth, st.dropped, st.config_version, st.agent_version, st.clock))
            if st.calibrations is not None:
                # The status lists every calibrated sensor: a sensor no longer listed is gone.
                db.execute("DELETE FROM calibration WHERE device = ? AND received_ns <= ?",
                           (st.device, st.received_ns))
                db.executemany(_UPSERT_CALIBRATION, [
                    (st.device, c.sensor, c.station or st.station, c.performed.isoformat(),
                     c.due.isoformat(), st.received_ns) for c in st.calibrations])

    # -- events and the calibration history ------------------------------------------------
    def write_events(self, events: Sequence[DeviceEvent]) -> int:
        """``DeviceEventStore``: every event, and each calibration record into the history (one
        transaction). A redelivered event (same key) or record (same id) is stored once."""
        new = 0
        with self._transaction() as db:
            for e in events:
                try:
                    data = json.dumps(dict(e.data), separators=(",", ":"), allow_nan=False)
                    cur = db.execute("INSERT OR IGNORE INTO events VALUES (?,?,?,?,?,?,?)",
                                     (e.device, e.station, e.time_ns, e.kind, e.digest, e.received_ns, data))
                except (ValueError, OverflowError) as err:
                    raise StoreRejected(f"{self.path}: event {e.kind} of {e.device}: {err}") from None
                new += cur.rowcount
                r = e.calibration
                if r is not None:
                    db.execute("INSERT OR IGNORE INTO calibration_records VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                               (r.id, r.device, r.station, r.sensor, r.procedure.value, to_ns(r.performed),
                                r.next_due.isoformat(), r.result.value, r.technician, e.received_ns,
                                r.model_dump_json(by_alias=True)))
        return new

    def device_events(self, *, device: str | None = None, station: str | None = None, kind: str | None = None,
                      start: datetime | None = None, end: datetime | None = None,
                      limit: int = 1000) -> list[DeviceEvent]:
        """``DeviceEventSource``: newest first."""
        where, params = _filters("time_ns", start, end, device=device, station=station, kind=kind)
        rows = self._read("SELECT device, station, time_ns, kind, data, digest, received_ns FROM events"
                          + where + " ORDER BY time_ns DESC LIMIT ?",
                          (*params, int(limit)))
        out = []
        for d, st, t, k, data, dig, rec in rows:
            body = json.loads(data)
            cal = CalibrationRecord.model_validate(body) if k == CALIBRATION_EVENT else None
            out.append(DeviceEvent(d, st, t, k, body, dig, rec, cal))
        return out

    def calibration_history(self, *, device: str | None = None, station: str | None = None,
                            sensor: str | None = None, start: datetime | None = None,
                            end: datetime | None = None) -> list[CalibrationRecord]:
        """``CalibrationHistory``: every record of the sensors asked for, oldest first."""
        where, params = _filters("performed_ns", start, end, device=device, station=station, sensor=sensor)
        rows = self._read("SELECT record FROM calibration_records" + where + " ORDER BY performed_ns, id", tuple(params))
        return [CalibrationRecord.model_validate_json(r[0]) for r in rows]

    def calibrations_due(self, now: datetime, *, warn_days: int = 14) -> list[CalibrationState]:
        """``CalibrationHistory``: each calibrated sensor as its logger last reported it, with its
        latest record; sorted by due day."""
        rows = self._read(
            "SELECT c.device, c.station, c.sensor, c.performed, c.due, c.received_ns, r.id, r.result, r.technician "
            "FROM calibration AS c LEFT JOIN calibration_records AS r ON r.id = ("
            "  SELECT id FROM calibration_records WHERE device = c.device AND sensor = c.sensor "
            "  ORDER BY performed_ns DESC, id DESC LIMIT 1) ORDER BY c.due, c.device, c.sensor", ())
        today = now.astimezone(timezone.utc).date()
        out = []
        for d, st, se, perf, due, rec_ns, rid, res, tech in rows:
            due_day = date.fromisoformat(due)
            left, state = due_state(due_day, today, warn_days)
            out.append(CalibrationState(d, st, se, date.fromisoformat(perf), due_day, left, state, rid, res, tech,
                                        rec_ns))
        return out

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        """A query on the read-only connection (any thread, beside a write); [] before any
        table exists."""
        with self._reader_lock:
            try:
                if self._reader is None:
                    if not self.path.exists():
                        return []
                    self._reader = connect_readonly(self.path, busy_timeout_s=30)
                return self._reader.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                if "no such table" in str(e):
                    return []
                raise StoreUnavailable(f"cannot read {self.path}: {e}") from None

    def received_since(self, since_ns: int) -> list[Receipt]:
        """``ReceiptLog``: the receipts of batches stored at or after ``since_ns``, oldest first."""
        return [Receipt(*row) for row in self._read(
            "SELECT received_ns, station, first_ns, last_ns FROM receipts WHERE received_ns >= ? ORDER BY received_ns",
            (since_ns,))]

    def count_readings(self) -> int:
        with self._lock:
            assert self._db is not None
            return self._db.execute("SELECT count(*) FROM samples").fetchone()[0]

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Read-only helper for the CLI, tests and the alert engine's look-backs."""
        with self._lock:
            assert self._db is not None
            return self._db.execute(sql, params).fetchall()

    def readings(self, station: str, quantity: str, start: datetime, end: datetime) -> list[CanonicalReading]:
        """The readings port (:class:`~ms4watch.ingest.stores.base.ReadingsSource`), on a
        read-only connection of its own: WAL lets it read beside a write transaction."""
        with self._reader_lock:
            try:
                if self._reader is None:
                    if not self.path.exists():
                        return []
                    self._reader = connect_readonly(self.path, busy_timeout_s=30)
                rows = self._reader.execute(
                    "SELECT s.time_ns, r.device, r.sensor, s.value, r.unit, s.flags, s.seq FROM samples AS s "
                    "JOIN series AS r ON r.id = s.series WHERE r.station = ? AND r.quantity = ? "
                    "AND s.time_ns BETWEEN ? AND ? ORDER BY s.time_ns",
                    (station, quantity, to_ns(start), to_ns(end))).fetchall()
            except sqlite3.Error as e:
                if "no such table" in str(e):
                    return []    # a store no reading has reached yet
                raise StoreUnavailable(f"cannot read {self.path}: {e}") from None
        return [CanonicalReading(t, station, d, se, quantity, v, u, f, q) for t, d, se, v, u, f, q in rows]

    # -- what the workbench reads (the optional abilities Summarising and StationState) ----
    def summary(self, station: str, quantity: str, start: datetime, end: datetime, width_ns: int,
                stats: frozenset[str] = STATS) -> list[Bucket]:
        """``Summarising``: one index range per bucket (a chart's ~1,000) — twice as fast as
        one GROUP BY, which sorts every row of the window in a temporary B-tree; GROUP BY
        only when the buckets are many more than a chart's. Every statistic (reading the
        rows is the cost here, not the arithmetic)."""
        if width_ns <= 0:
            raise ValueError(f"width_ns must be positive, got {width_ns}")
        a, b = to_ns(start), to_ns(end)
        if b < a:
            return []
        ids = [r[0] for r in self._read("SELECT id FROM series WHERE station = ? AND quantity = ?", (station, quantity))]
        if not ids:
            return []
        series = f"series IN ({','.join('?' * len(ids))})"
        n = (b - a) // width_ns + 1
        if n > SUMMARY_MAX_RANGES:
            rows = self._read(
                f"SELECT (time_ns - ?) / ? AS k, count(value), min(value), max(value), sum(value) FROM samples "
                f"WHERE {series} AND time_ns BETWEEN ? AND ? AND value IS NOT NULL GROUP BY k ORDER BY k",
                (a, width_ns, *ids, a, b))
            return [Bucket(a + k * width_ns, c, lo, hi, total, total / c) for k, c, lo, hi, total in rows]
        sql = (f"SELECT count(value), min(value), max(value), sum(value) FROM samples WHERE {series} "
               "AND time_ns >= ? AND time_ns <= ?")
        out = []
        # A connection of its own (kept for the next summary): a chart's series are summarised
        # side by side, and sqlite3 lets go of the GIL while it steps through the index.
        with self._reader_lock:
            db = self._idle_readers.pop() if self._idle_readers else None
        try:
            if db is None:
                db = connect_readonly(self.path, busy_timeout_s=30)
            cur = db.cursor()
            for k in range(n):
                lo_t = a + k * width_ns
                c, lo, hi, total = cur.execute(sql, (*ids, lo_t, min(lo_t + width_ns - 1, b))).fetchone()
                if c:
                    out.append(Bucket(lo_t, c, lo, hi, total, total / c))
        except sqlite3.Error as e:
            raise StoreUnavailable(f"cannot read {self.path}: {e}") from None
        finally:
            if db is not None:
                with self._reader_lock:
                    if len(self._idle_readers) < 4:
                        self._idle_readers.append(db)
                        db = None
                if db is not None:
                    db.close()
        return out

    def latest_readings(self, since: datetime) -> list[LatestReading]:
        """``StationState``: each series' newest row is one step down its (series, time)
        index; the newest per (station, quantity) wins."""
        out: dict[tuple[str, str], LatestReading] = {}
        for sid, st, q in self._read("SELECT id, station, quantity FROM series"):
            for t, v, f in self._read("SELECT time_ns, value, flags FROM samples WHERE series = ? AND time_ns >= ? "
                                      "ORDER BY time_ns DESC LIMIT 1", (sid, to_ns(since))):
                old = out.get((st, q))
                if old is None or t > old.time_ns:
                    out[(st, q)] = LatestReading(st, q, t, v, f or "")
        return sorted(out.values(), key=lambda x: (x.station, x.quantity))

    def device_statuses(self) -> list[DeviceStatus]:
        """``StationState``: the ``device_status`` rows with the ``calibration`` rows of each."""
        cals: dict[str, list[SensorCalibration]] = {}
        for device, sensor, station, performed, due in self._read(
                "SELECT device, sensor, station, performed, due FROM calibration ORDER BY device, sensor"):
            cals.setdefault(device, []).append(SensorCalibration(
                sensor=sensor, performed=date.fromisoformat(performed), due=date.fromisoformat(due), station=station))
        return [DeviceStatus(d, st, t, state, bv, sig, spool, dropped, cv, av, clock, tuple(cals[d]) if d in cals
                             else None)
                for d, st, t, state, bv, sig, spool, dropped, cv, av, clock in self._read(
                    "SELECT device, station, received_ns, state, battery_v, signal_dbm, spool_depth, dropped, "
                    "config_version, agent_version, clock FROM device_status ORDER BY station, device")]

    def check_writable(self) -> None:
        """Take the write lock on a connection of its own, and let it go (``Probing``)."""
        probe_write_lock(self.path)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            for db in self._idle_readers:
                db.close()
            self._idle_readers.clear()


def _filters(time_col: str, start: datetime | None, end: datetime | None,
             **eq: str | None) -> tuple[str, list]:
    """The ``WHERE`` clause (or "") and its parameters: ``col = ?`` for every given value,
    ``time_col`` within ``start`` and ``end`` (both inclusive) where given."""
    where: list[str] = []
    params: list[str | int] = []
    for col, v in eq.items():
        if v is not None:
            where.append(f"{col} = ?")
            params.append(v)
    for op, t in ((">=", start), ("<=", end)):
        if t is not None:
            where.append(f"{time_col} {op} ?")
            params.append(to_ns(t))
    return (" WHERE " + " AND ".join(where) if where else ""), params


def probe_write_lock(path: Path, timeout_s: float = 2.0) -> None:
    """StoreUnavailable unless ``path`` (an existing SQLite file) takes a write lock within
    ``timeout_s``: a full disk, a read-only mount or a writer stuck holding the lock."""
    if not path.exists():
        raise StoreUnavailable(f"{path} does not exist")
    try:
        db = connect(path, busy_timeout_s=timeout_s)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        finally:
            db.close()
    except sqlite3.Error as e:
        raise StoreUnavailable(f"cannot write {path}: {e}") from None


def _has_epochs(db: sqlite3.Connection) -> bool:
    return "epoch" in columns(db, "messages")


def _convert_messages_table(db: sqlite3.Connection) -> None:
    """Give a ``messages`` table from before epochs its ``epoch`` (0) and ``digest`` (unknown)
    columns and the key (device, epoch, seq), in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if _has_epochs(db):                        # another process converted it meanwhile
            db.execute("COMMIT")
            return
        db.execute("ALTER TABLE messages RENAME TO messages_before_epochs")
        db.execute(MESSAGES_TABLE)
        db.execute("INSERT INTO messages SELECT device, 0, seq, received_ns, n, NULL FROM messages_before_epochs")
        db.execute("DROP TABLE messages_before_epochs")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _convert_readings_table(db: sqlite3.Connection) -> None:
    """Convert a store file of the first layout (one wide ``readings`` table), in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("DROP INDEX IF EXISTS readings_station_time")
        db.execute("ALTER TABLE readings RENAME TO readings_wide")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT OR IGNORE INTO series (station, device, sensor, quantity, unit) "
                   "SELECT DISTINCT station, device, sensor, quantity, unit FROM readings_wide")
        db.execute("INSERT INTO samples SELECT r.id, w.time_ns, w.value, w.flags, w.seq FROM readings_wide AS w "
                   "JOIN series AS r USING (station, device, sensor, quantity, unit) ORDER BY w.rowid")
        db.execute("DROP TABLE readings_wide")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
