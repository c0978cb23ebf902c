"""The logger's durable spool (SQLite): every reading is here before it is published, and
leaves only when the broker has acknowledged the message that carried it.

Two stages, both in one file:

* ``pending`` — readings taken, not yet in a message;
* ``outbox`` — formed messages with their sequence number, awaiting the broker's PUBACK.

Forming a message moves readings from pending to outbox and takes the next sequence number
in one transaction (the live path, :meth:`Spool.append_formed`: readings taken while the
uplink is connected and nothing older waits go straight into their message in the
transaction that stores them), so a message re-sent after a crash or a lost PUBACK carries the same
``seq`` and ingest can drop the duplicate. Bounded: past ``max_readings`` the policy drops
the oldest pending readings (counted in ``dropped``) or refuses new ones.

The spool's ``epoch`` is drawn at random (1 … 2^31 − 1) when the spool file is created and
kept in it, so it survives reboots; a logger whose spool is lost (reflashed, a new SD card,
a replacement unit under the same device id) starts again at seq 1 in a new epoch, and
ingest, whose duplicate filter is (device, epoch, seq), stores its messages.

The file is the logger's account's alone (0600, whatever the umask): SQLite gives its WAL
and shared-memory files the database's mode, so they are too.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

from ..contract.firmware import SpoolPolicy
from ..contract.wire import encode_readings
from ..sqlite import Synchronous, connect
from .drivers.base import RawReading
from .errors import EdgeError

SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT, time_ns INTEGER NOT NULL, sensor TEXT NOT NULL,
    quantity TEXT NOT NULL, value REAL, unit TEXT NOT NULL, flags TEXT NOT NULL, station TEXT);
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, n INTEGER NOT NULL, payload BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, payload BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('next_seq', 1), ('dropped', 0), ('taken', 0), ('pending', 0);
"""


class OutMessage(NamedTuple):
    seq: int
    n: int
    payload: bytes


class Spool:
    def __init__(self, path: str | Path, device: str, *, max_readings: int = 5_000_000,
                 policy: SpoolPolicy = SpoolPolicy.DROP_OLDEST, synchronous: str = "FULL"):
        self.path = Path(path)
        self.device = device
        self.max_readings = max_readings
        self.policy = policy
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))   # made 0600, not 0644 & ~umask
            if self.path.stat().st_uid == os.geteuid():
                self.path.chmod(0o600)                                    # a spool made before: narrowed
            self._db = connect(self.path, synchronous=synchronous, busy_timeout_s=30)
            self._synchronous = Synchronous.of(synchronous).value
            self._db.executescript(SCHEMA)
            # a spool from before epochs gets one too; its formed messages keep epoch 0
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('epoch', ?)", (secrets.randbelow(2**31 - 1) + 1,))
        except (sqlite3.Error, OSError) as e:
            raise EdgeError(f"cannot open spool {self.path}: {e}") from None
        # Mirrors of what the uplink asks many times a second (kept with the rows, under _lock).
        self._reload_mirrors()
        self.epoch: int = self._meta("epoch")
        self._events_n = self._db.execute("SELECT count(*) FROM events").fetchone()[0]
        # Another process (``ms4watch calibrate``) may add events to this file: SQLite's
        # data_version changes when another connection commits, and then they are counted again.
        self._data_version = self._db.execute("PRAGMA data_version").fetchone()[0]

    def _reload_mirrors(self) -> None:
        """The in-memory figures from the file (at open, and after a transaction failed)."""
        self._pending_n = self._meta("pending")
        self._last_seq = self._meta("next_seq") - 1   # the newest formed message's seq
        self._outbox_bound = self._outbox_sum()       # ≥ the readings in the outbox (acks not counted)

    def _outbox_sum(self) -> int:
        return self._db.execute("SELECT coalesce(sum(n), 0) FROM outbox").fetchone()[0]

    def _meta(self, key: str) -> int:
        return self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()[0]

    def append(self, readings: Iterable[RawReading], station: str | None = None) -> int:
        """Store readings durably (one transaction). Returns how many were kept."""
        return self.append_formed(readings, 0, station)[0]

    def append_formed(self, readings: Iterable[RawReading], max_readings: int,
                      station: str | None = None) -> tuple[int, OutMessage | None]:
        """:meth:`append`, but when no reading waits in ``pending`` and these fit in one message
        of ``max_readings``, they go straight into a numbered message in the same transaction
        (the live path: one synced transaction a sample, not two, and no trip through
        ``pending``). ``max_readings`` 0 (offline): readings wait in ``pending`` to leave in
        full batches. Returns (readings kept, the message formed or None)."""
        rows = [(r.time_ns, r.sensor, r.quantity, r.value, r.unit, r.flags, station) for r in readings]
        if not rows:
            return 0, None
        with self._lock:
            with self._tx():
                over = self._pending_n + self._outbox_bound + len(rows) - self.max_readings
                if over > 0:   # the bound counts acknowledged messages too: the real figure
                    self._outbox_bound = self._outbox_sum()
                    over = self._pending_n + self._outbox_bound + len(rows) - self.max_readings
                if over > 0:
                    if self.policy is SpoolPolicy.REFUSE_NEW:
                        kept = max(0, len(rows) - over)
                        self._bump("dropped", len(rows) - kept)
                        rows = rows[:kept]
                    else:
                        cur = self._db.execute(
                            "DELETE FROM pending WHERE id IN (SELECT id FROM pending ORDER BY id LIMIT ?)", (over,))
                        self._bump("dropped", cur.rowcount)
                        self._bump("pending", -cur.rowcount)
                        self._pending_n -= cur.rowcount
                if not self._pending_n and 0 < len(rows) <= max_readings:
                    return len(rows), self._put_message(rows, taken=len(rows))
                self._bump("taken", len(rows))
                self._db.executemany("INSERT INTO pending (time_ns, sensor, quantity, value, unit, flags, station) "
                                     "VALUES (?,?,?,?,?,?,?)", [(*r[:5], ",".join(r[5]), r[6]) for r in rows])
                self._bump("pending", len(rows))
            self._pending_n += len(rows)
            return len(rows), None

    def form_message(self, max_readings: int, after_id: int = 0) -> OutMessage | None:
        """Move up to ``max_readings`` oldest pending readings (with id > ``after_id``: the
        live lane) into one numbered message."""
        with self._lock:
            with self._tx():
                rows = self._db.execute("SELECT id, time_ns, sensor, quantity, value, unit, flags, station "
                                        "FROM pending WHERE id > ? ORDER BY id LIMIT ?",
                                        (after_id, max_readings)).fetchall()
                if not rows:
                    return None
                message = self._put_message([(t, s, q, v, u, f.split(",") if f else [], st)
                                             for _, t, s, q, v, u, f, st in rows])
                self._db.execute("DELETE FROM pending WHERE id > ? AND id <= ?", (after_id, rows[-1][0]))
                self._bump("pending", -len(rows))
            self._pending_n -= len(rows)
            return message

    def _put_message(self, rows: list[tuple], taken: int = 0) -> OutMessage:
        """In a transaction: ``rows`` (time_ns, sensor, quantity, value, unit, flags, station)
        as the next numbered message in the outbox, counting ``taken`` new readings in the
        same statement as the seq."""
        seq = self._last_seq + 1
        payload = encode_readings(self.device, seq, rows, epoch=self.epoch)
        self._db.execute("INSERT INTO outbox VALUES (?,?,?)", (seq, len(rows), payload))
        self._db.execute("UPDATE meta SET value = CASE key WHEN 'taken' THEN value + ? ELSE ? END "
                         "WHERE key IN ('taken', 'next_seq')", (taken, seq + 1))
        self._last_seq = seq
        self._outbox_bound += len(rows)
        return OutMessage(seq, len(rows), payload)

    def unsent(self, after_seq: int, limit: int) -> list[OutMessage]:
        """Formed messages with seq > ``after_seq`` still awaiting their PUBACK, oldest first."""
        if after_seq >= self._last_seq:
            return []
        with self._lock:
            return [OutMessage(*r) for r in self._db.execute(
                "SELECT seq, n, payload FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit))]

    def ack(self, seq: int) -> None:
        """The broker has the message: forget it.

        Not synced to disk on its own (the next transaction that is carries it): an
        acknowledgement lost in a power cut only sends the message again, with its seq and
        payload, and ingest drops the duplicate. One fsync a message less (bench_edge)."""
        with self._lock:
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                self._db.execute("DELETE FROM outbox WHERE seq=?", (seq,))
            finally:
                self._db.execute(f"PRAGMA synchronous={self._synchronous}")

    def depth(self) -> int:
        """Readings not yet acknowledged by the broker (pending + in formed messages)."""
        with self._lock:
            return self._depth_locked()

    def _depth_locked(self) -> int:
        return self._pending_n + self._outbox_sum()

    def pending(self) -> int:
        """Readings taken and not yet in a message."""
        return self._pending_n

    def newest_pending_id(self) -> int:
        with self._lock:
            return self._db.execute("SELECT coalesce(max(id), 0) FROM pending").fetchone()[0]

    # -- events (bottle records, command acknowledgements, config results) ---------------------
    def add_event(self, payload: bytes) -> None:
        with self._lock:
            self._db.execute("INSERT INTO events (payload) VALUES (?)", (payload,))
            self._events_n += 1

    def events(self, after_id: int, limit: int) -> list[tuple[int, bytes]]:
        if not self._events_n:
            with self._lock:
                version = self._db.execute("PRAGMA data_version").fetchone()[0]
                if version == self._data_version:
                    return []
                self._data_version = version
                self._events_n = self._db.execute("SELECT count(*) FROM events").fetchone()[0]
            if not self._events_n:
                return []
        with self._lock:
            return self._db.execute("SELECT id, payload FROM events WHERE id > ? ORDER BY id LIMIT ?",
                                    (after_id, limit)).fetchall()

    def ack_event(self, event_id: int) -> None:
        with self._lock:
            if self._db.execute("DELETE FROM events WHERE id=?", (event_id,)).rowcount:
                self._events_n -= 1

    def remember(self, key: str, value: int) -> None:
        """Keep a number across restarts (the agent: the digest of the last remote config)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", ("x:" + key, value))

    def recall(self, key: str) -> int | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", ("x:" + key,)).fetchone()
        return None if row is None else row[0]

    @property
    def dropped(self) -> int:
        with self._lock:
            return self._meta("dropped")

    @property
    def taken(self) -> int:
        with self._lock:
            return self._meta("taken")

    def _bump(self, key: str, n: int) -> None:
        self._db.execute("UPDATE meta SET value = value + ? WHERE key=?", (n, key))

    @contextmanager
    def _tx(self) -> Iterator[None]:
        """One transaction; on any failure (the commit's too) rolled back, and the in-memory
        figures read again from the file. ``BEGIN`` is inside the ``try``: an exception raised
        just as it returns (a signal's) must not leave the transaction open."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self._reload_mirrors()
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

