"""The one way this package opens SQLite: every database (the logger's spool, the embedded
store and the server's spool, the corrections, ``incidents.db``, ``workbench.db``,
``compliance.db``, the report overrides, ``network.db``) is opened by :func:`connect`, so
each has the same settings, chosen once here:

* ``journal_mode=WAL`` — readers never wait for the writer nor the writer for them, and
  several processes (``serve``, the CLI, ``calibrate`` beside the logger's agent) share a file.
* ``synchronous=FULL`` unless a store says otherwise — in WAL mode a commit is on disk
  (the WAL fsynced) when it returns, so what a store acknowledged (a reading to the broker,
  a notification queued, a person's record saved) survives a power cut. ``NORMAL`` syncs
  only at checkpoints: the last commits may be lost in a power cut, the file is never
  corrupted; a store takes it only where losing them is harmless (the demo's and the
  benchmark's logger spool, the spool's own acknowledgements, the incident database's
  transactions of the alert engine's events, which a re-feed raises again: fsynced before
  the engine's checkpoint).
* ``foreign_keys=ON`` — the ``REFERENCES`` the schemas declare are enforced. One store
  opts out: the embedded store's ``samples.series``, whose ids it takes from ``series`` in
  the same transaction, would cost each stored reading a look-up (~20 % of inserting
  200,000 samples, measured), on ingest's hot path.
* ``busy_timeout`` (sqlite3's ``timeout``) — a writer waits this long for another
  process's write lock instead of failing at once (10 s unless the store says otherwise).
* ``isolation_level=None`` — Python opens no transaction behind the code's back: a
  statement on its own commits at once, several commit together in :func:`transaction`
  (``BEGIN IMMEDIATE``: the write lock taken up front, so two writers never deadlock on an
  upgrade).
* ``check_same_thread=False`` — each store guards its connection with its own lock.

:func:`connect_readonly` opens a file read-only (a reader beside the writer, a tool that
must not create or change a file); :func:`backup` copies a live database.

A leaf: it imports nothing of ours, so every package but the contract (which imports
nothing of ours at all) may use it; the logger's spool does. No module outside this one
calls ``sqlite3.connect`` (``tests/test_sqlite.py`` checks).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing, contextmanager
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ["Synchronous", "connect", "connect_readonly", "transaction", "create_schema", "inserted_id", "columns",
           "backup"]

DEFAULT_BUSY_TIMEOUT_S = 10.0
"""How long a connection waits for another's write lock before ``database is locked`` [s]."""

RowFactory = Callable[[sqlite3.Cursor, tuple[Any, ...]], Any]


class Synchronous(str, Enum):
    """``PRAGMA synchronous`` in WAL mode: when a commit reaches the disk."""

    FULL = "FULL"       # every commit fsynced: what was acknowledged survives a power cut
    NORMAL = "NORMAL"   # fsynced at checkpoints: a power cut may lose the last commits, never the file

    @classmethod
    def of(cls, value: "str | Synchronous") -> "Synchronous":
        """``value`` (any case) as a member; ValueError naming the accepted ones."""
        try:
            return cls(str(value.value if isinstance(value, Synchronous) else value).upper())
        except ValueError:
            raise ValueError(f"synchronous must be FULL or NORMAL, got {value!r}") from None


def connect(path: str | Path, *, synchronous: str | Synchronous = Synchronous.FULL,
            busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, row_factory: RowFactory | None = None,
            foreign_keys: bool = True) -> sqlite3.Connection:
    """Open (creating it and its folder) the database at ``path`` for reading and writing,
    with the settings of the module docstring. ``row_factory``: e.g. ``sqlite3.Row``;
    ``foreign_keys``: False only for a store that says why. sqlite3.Error or OSError when it cannot."""
    mode = Synchronous.of(synchronous)
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={mode.value}")
        conn.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
    except BaseException:
        conn.close()
        raise
    if row_factory is not None:
        conn.row_factory = row_factory
    return conn


def connect_readonly(path: str | Path, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                     row_factory: RowFactory | None = None, immutable: bool = False) -> sqlite3.Connection:
    """Open an existing database read-only (``mode=ro``: never created, never written).
    ``immutable``: a file nothing else changes (a backup), read without any lock."""
    uri = Path(path).absolute().as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")
    conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, check_same_thread=False)
    if row_factory is not None:
        conn.row_factory = row_factory
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; inside an open transaction it simply joins it."""
    if conn.in_transaction:
        yield conn
        return
    try:
        conn.execute("BEGIN IMMEDIATE")   # inside: an exception as it returns leaves nothing open
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def create_schema(conn: sqlite3.Connection, script: str) -> None:
    """Run a schema script (``CREATE … IF NOT EXISTS`` statements) in one transaction: on a new
    database one commit — one fsync with ``synchronous=FULL`` — instead of one per statement
    (a fresh data directory's ~90 made serve's start ~0.3 s longer), and never half a schema."""
    try:
        conn.executescript(f"BEGIN IMMEDIATE;\n{script}\nCOMMIT;")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid an INSERT just made (``lastrowid``, which sqlite3 types as optional)."""
    if cur.lastrowid is None:
        raise sqlite3.ProgrammingError("no row was inserted")
    return cur.lastrowid


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (empty when there is no such table): what a store
    opening a file made by an older version checks before adding a column."""
    return {str(r[0]) for r in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))}


def backup(src: str | Path, dst: str | Path, *, busy_timeout_s: float = 30.0) -> None:
    """Copy the live database ``src`` into ``dst`` with SQLite's online backup (a consistent
    snapshot while other processes write it); ``src`` is opened read-only."""
    with closing(connect_readonly(src, busy_timeout_s=busy_timeout_s)) as s, closing(sqlite3.connect(dst)) as d:
        s.backup(d)
