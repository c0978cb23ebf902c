"""Logins the server can end: each login is a row in ``workbench.db`` (``sessions``) and
the signed cookie carries only its random id (256 bits; the table keeps its SHA-256).

A cookie copied before a logout, a password change or a user's disabling is refused from
then on: the row is ended, and a request is served only for a session that is not ended,
younger than ``web.session_max_age`` and of an enabled user.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from typing import Callable

from ...sqlite import create_schema, transaction

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    id_hash TEXT NOT NULL UNIQUE,     -- SHA-256 of the id the cookie carries
    user_id INTEGER NOT NULL REFERENCES users (id),
    created_at TEXT NOT NULL,
    ended_at TEXT,
    ended_why TEXT                    -- logout, password changed, user disabled, ...
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id, ended_at);
"""


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


class SessionStore:
    """Sessions in the users' database (same connection and lock as the users)."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, clock: Callable[[], datetime]):
        self.conn = conn
        self._lock = lock
        self.clock = clock
        with lock:
            create_schema(conn, SCHEMA)

    def start(self, user_id: int) -> str:
        """A new session for the user; its id (for the cookie) is returned once."""
        session_id = secrets.token_urlsafe(32)
        with self._lock, transaction(self.conn):
            self.conn.execute("INSERT INTO sessions (id_hash, user_id, created_at) VALUES (?,?,?)",
                              (_hash(session_id), user_id, _iso(self.clock())))
            # ended and expired sessions are not kept beyond a month
            self.conn.execute("DELETE FROM sessions WHERE created_at < ?", (_iso(self.clock() - timedelta(days=31)),))
        return session_id

    def user_id(self, session_id: str, max_age: timedelta) -> int | None:
        """The user of a live session: not ended, younger than ``max_age``."""
        if not isinstance(session_id, str) or len(session_id) > 200:
            return None
        with self._lock:
            row = self.conn.execute("SELECT user_id, created_at FROM sessions WHERE id_hash = ? AND ended_at IS NULL",
                                    (_hash(session_id),)).fetchone()
        if row is None or self.clock() - datetime.fromisoformat(row["created_at"]) > max_age:
            return None
        return int(row["user_id"])

    def end(self, session_id: str, why: str) -> None:
        with self._lock, transaction(self.conn):
            self.conn.execute("UPDATE sessions SET ended_at = ?, ended_why = ? WHERE id_hash = ? AND ended_at IS NULL",
                              (_iso(self.clock()), why, _hash(session_id)))

    def end_all(self, user_id: int, why: str) -> int:
        """End every live session of the user; how many were live."""
        with self._lock, transaction(self.conn):
            cur = self.conn.execute("UPDATE sessions SET ended_at = ?, ended_why = ?"
                                    " WHERE user_id = ? AND ended_at IS NULL", (_iso(self.clock()), why, user_id))
            return cur.rowcount


__all__ = ["SessionStore"]
