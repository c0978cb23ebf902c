"""One SQLite file holds incidents, their audit log and the notification queue, so an
incident change and the notifications it causes commit together or not at all."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating) the database in WAL mode; several processes may share it."""
    p = Path(path)
    if str(path) != ":memory:":
        p.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=10.0, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")  # a notification stored is a notification kept
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
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


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid an INSERT just made (``lastrowid``, which sqlite3 types as optional)."""
    if cur.lastrowid is None:
        raise sqlite3.ProgrammingError("no row was inserted")
    return cur.lastrowid
