"""What every record store of ``workbench.db`` shares: the connection and lock of the
database (one per workbench, passed in; opened by :func:`connect_workbench_db`), the clock
that stamps its rows, and its tables made on first open; and the triggers that keep a table
append-only."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, ClassVar

from ...sqlite import connect, create_schema


def connect_workbench_db(path: Path) -> sqlite3.Connection:
    """``workbench.db`` (users, sessions, the audit log, people's records), rows as
    ``sqlite3.Row``, with the package's SQLite settings (``ms4watch/sqlite.py``)."""
    return connect(path, row_factory=sqlite3.Row)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def append_only(table: str, *, changed: str, deleted: str) -> str:
    """The SQL of two triggers refusing an UPDATE (``changed``) and a DELETE (``deleted``) of
    ``table``, each with the message SQLite raises."""
    return (f"CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table}\n"
            f"BEGIN SELECT RAISE(ABORT, '{changed}'); END;\n"
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table}\n"
            f"BEGIN SELECT RAISE(ABORT, '{deleted}'); END;\n")


class RecordTable:
    """A record store on the workbench's database: ``SCHEMA`` is run (idempotently) when it opens."""

    SCHEMA: ClassVar[str]

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, clock: Callable[[], datetime] = utc_now):
        self.conn = conn
        self._lock = lock
        self.clock = clock
        with lock:
            create_schema(conn, self.SCHEMA)
