"""The durable notification queue (SQLite, in the incident database).

Every notification is a row *before* anything is sent; a row is marked sent only after
the channel accepted it. Retries back off (15 s, 30 s, 1 min … capped at 5 min) and never
give up on a retryable error; a permanent error marks the row failed and keeps it.

The unique key (ref, recipient, channel, stage) — ``ref`` is ``incident:<id>`` or
``digest:<local day>`` — makes queuing idempotent: exactly one row, hence one delivery,
per (incident, recipient, channel, stage), across restarts.

Statuses: pending → sent | failed; pending → held (cap or notice) → digested (its
digest row carries it); pending → cancelled (superseded: e.g. an escalation after the
acknowledgement, a recovery after a re-open). No status means "dropped".

The one window left: the channel accepted a message and the process died before the row
was marked sent. It is sent again after the restart; emails carry a Message-ID derived
from the key so the duplicate is recognisable.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable

from ...sqlite import create_schema, inserted_id, transaction
from ..incidents.model import from_iso, iso
from ..notifiers.base import Notification, Recipient

SCHEMA = """
CREATE TABLE IF NOT EXISTS notification_queue (
    id INTEGER PRIMARY KEY,
    ref TEXT NOT NULL,
    incident_id INTEGER,
    recipient TEXT NOT NULL,
    role TEXT NOT NULL,
    address TEXT NOT NULL,
    channel TEXT NOT NULL,
    stage TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'held', 'digested', 'cancelled')),
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    held_at TEXT,
    sent_at TEXT,
    last_error TEXT,
    digest_id INTEGER,
    UNIQUE (ref, recipient, channel, stage)
);
CREATE INDEX IF NOT EXISTS queue_due ON notification_queue (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS queue_recipient ON notification_queue (recipient, channel, status, sent_at);
CREATE INDEX IF NOT EXISTS queue_incident ON notification_queue (incident_id, stage);
CREATE TABLE IF NOT EXISTS delivery_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

BACKLOG_NOTE = "held for the backlog summary: due before ms4watch first ran"
"""A held row's note when its item fell due before the server first ran: such rows wait for
the one backlog summary (``Dispatcher.summarise_backlog``), never for the daily digest."""

BACKOFF_FIRST = timedelta(seconds=15)
BACKOFF_MAX = timedelta(minutes=5)


def backoff(attempts: int, first: timedelta = BACKOFF_FIRST, longest: timedelta = BACKOFF_MAX) -> timedelta:
    """Wait after the ``attempts``-th failed attempt: ``first`` (15 s) doubling, at most
    ``longest`` (5 min)."""
    return min(first * (2 ** min(max(attempts - 1, 0), 30)), longest)


@dataclass(frozen=True)
class QueuedNotification:
    id: int
    ref: str
    incident_id: int | None
    recipient: Recipient
    channel: str
    stage: str
    priority: str
    status: str
    attempts: int
    next_attempt_at: datetime
    created_at: datetime
    held_at: datetime | None
    sent_at: datetime | None
    last_error: str | None
    payload: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.ref}|{self.recipient.name}|{self.channel}|{self.stage}"

    def notification(self) -> Notification:
        p = self.payload
        return Notification(
            id=self.id, key=self.key, channel=self.channel, stage=self.stage, recipient=self.recipient,
            incident=p.get("incident"), created_at=iso(self.created_at), station_name=p.get("station_name", ""),
            timezone=p.get("timezone", "UTC"), ack_url=p.get("ack_url"), items=p.get("items", []),
            routed_to=p.get("routed_to", []), threshold=p.get("threshold"))


class DeliveryQueue:
    def __init__(self, conn: sqlite3.Connection, *, retry_first: timedelta = BACKOFF_FIRST,
                 retry_max: timedelta = BACKOFF_MAX):
        if not timedelta(0) < retry_first <= retry_max:
            raise ValueError(f"retry waits must satisfy 0 < first <= max, got {retry_first} and {retry_max}")
        self.conn = conn
        self.retry_first = retry_first
        self.retry_max = retry_max
        _rename_old_table(conn)
        create_schema(conn, SCHEMA)

    def enqueue(self, *, ref: str, incident_id: int | None, recipient: Recipient, channel: str, stage: str,
                priority: str, payload: dict[str, Any], now: datetime, not_before: datetime | None = None,
                held: bool = False, reason: str | None = None, backlog: bool = False) -> int | None:
        """Store one notification; returns its id, or None if that key was already queued.
        ``held``: into the digest (``reason`` why); ``backlog``: held for the backlog summary.

        A cancelled row with the same key comes back to life (a recovery superseded by a
        re-open, then due again when the incident closes a second time).
        """
        when = iso(max(now, not_before) if not_before else now)
        held = held or backlog
        status = "held" if held else "pending"
        note = BACKLOG_NOTE if backlog else f"held for the digest: {reason}" if held and reason else None
        with transaction(self.conn):
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO notification_queue (ref, incident_id, recipient, role, address, channel, stage, priority,"
                " status, payload, next_attempt_at, created_at, held_at, last_error)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (ref, incident_id, recipient.name, recipient.role, recipient.address, channel, stage, priority,
                 status, json.dumps(payload, default=str), when, iso(now), iso(now) if held else None, note))
            if cur.rowcount:
                return inserted_id(cur)
            cur = self.conn.execute(
                "UPDATE notification_queue SET status = ?, payload = ?, next_attempt_at = ?, held_at = ?, last_error = ?"
                " WHERE ref = ? AND recipient = ? AND channel = ? AND stage = ? AND status = 'cancelled'"
                " RETURNING id",
                (status, json.dumps(payload, default=str), when, iso(now) if held else None, note,
                 ref, recipient.name, channel, stage))
            row = cur.fetchone()
            return int(row["id"]) if row else None

    # -- state changes --------------------------------------------------------------------
    def mark_sent(self, oid: int, now: datetime) -> None:
        self._set(oid, "status = 'sent', sent_at = ?, attempts = attempts + 1, last_error = NULL", iso(now))

    def retry(self, oid: int, now: datetime, error: str) -> datetime:
        row = self.get(oid)
        attempts = row.attempts + 1
        when = now + backoff(attempts, self.retry_first, self.retry_max)
        self._set(oid, "attempts = ?, next_attempt_at = ?, last_error = ?", attempts, iso(when), error[:500])
        return when

    def defer(self, oid: int, until: datetime, reason: str) -> None:
        self._set(oid, "next_attempt_at = ?, last_error = ?", iso(until), f"deferred: {reason}")

    def hold(self, oid: int, now: datetime, reason: str) -> None:
        self._set(oid, "status = 'held', held_at = ?, last_error = ?", iso(now), f"held for the digest: {reason}")

    def fail(self, oid: int, now: datetime, error: str) -> None:
        self._set(oid, "status = 'failed', attempts = attempts + 1, last_error = ?, sent_at = NULL",
                  f"{iso(now)}: {error}"[:500])

    def cancel(self, oid: int, reason: str) -> None:
        self._set(oid, "status = 'cancelled', last_error = ?", f"cancelled: {reason}")

    def cancel_pending(self, incident_id: int, stage: str, reason: str) -> int:
        with transaction(self.conn):
            cur = self.conn.execute(
                "UPDATE notification_queue SET status = 'cancelled', last_error = ? WHERE incident_id = ? AND stage = ?"
                " AND status IN ('pending', 'held')", (f"cancelled: {reason}", incident_id, stage))
            return cur.rowcount

    def mark_digested(self, ids: Iterable[int], digest_id: int) -> None:
        with transaction(self.conn):
            self.conn.executemany("UPDATE notification_queue SET status = 'digested', digest_id = ? WHERE id = ? AND status = 'held'",
                                  [(digest_id, i) for i in ids])

    def _set(self, oid: int, assignments: str, *args: Any) -> None:
        with transaction(self.conn):
            self.conn.execute(f"UPDATE notification_queue SET {assignments} WHERE id = ?", (*args, oid))

    # -- reading --------------------------------------------------------------------------
    def get(self, oid: int) -> QueuedNotification:
        row = self.conn.execute("SELECT * FROM notification_queue WHERE id = ?", (oid,)).fetchone()
        if row is None:
            raise KeyError(oid)
        return _row(row)

    def due(self, now: datetime, limit: int = 200) -> list[QueuedNotification]:
        """Pending rows whose time has come, most urgent first, then oldest first."""
        rows = self.conn.execute(
            "SELECT * FROM notification_queue WHERE status = 'pending' AND next_attempt_at <= ?"
            " ORDER BY CASE priority WHEN 'urgent' THEN 0 WHEN 'deadline' THEN 1 ELSE 2 END, id LIMIT ?",
            (iso(now), limit)).fetchall()
        return [_row(r) for r in rows]

    def sent_between(self, recipient: str, channel: str, start: datetime, end: datetime) -> int:
        """How many messages went to ``recipient`` over ``channel`` in [start, end), summaries
        (digest, backlog) not counted."""
        return int(self.conn.execute(
            "SELECT COUNT(*) FROM notification_queue WHERE recipient = ? AND channel = ? AND status = 'sent'"
            " AND stage NOT IN ('digest', 'backlog') AND sent_at >= ? AND sent_at < ?",
            (recipient, channel, iso(start), iso(end))).fetchone()[0])

    def held(self, *, backlog: bool = False) -> list[QueuedNotification]:
        """Rows held for the digest, or (``backlog``) for the backlog summary."""
        rows = self.conn.execute("SELECT * FROM notification_queue WHERE status = 'held' AND "
                                 f"last_error IS {'' if backlog else 'NOT '}? ORDER BY id", (BACKLOG_NOTE,)).fetchall()
        return [_row(r) for r in rows]

    def first_run(self, default: datetime) -> datetime:
        """When the server first ran on this database: recorded as ``default`` the first time
        it is asked, the recorded time ever after."""
        with transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO delivery_meta VALUES ('first_run', ?)", (iso(default),))
            row = self.conn.execute("SELECT value FROM delivery_meta WHERE key = 'first_run'").fetchone()
        return from_iso(row[0])  # type: ignore[return-value]

    def for_incident(self, incident_id: int, stage: str | None = None) -> list[QueuedNotification]:
        q = "SELECT * FROM notification_queue WHERE incident_id = ?" + (" AND stage = ?" if stage else "") + " ORDER BY id"
        rows = self.conn.execute(q, (incident_id, stage) if stage else (incident_id,)).fetchall()
        return [_row(r) for r in rows]

    def all(self, status: str | None = None) -> list[QueuedNotification]:
        q = "SELECT * FROM notification_queue" + (" WHERE status = ?" if status else "") + " ORDER BY id"
        return [_row(r) for r in self.conn.execute(q, (status,) if status else ()).fetchall()]

    def counts(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self.conn.execute("SELECT status, COUNT(*) FROM notification_queue GROUP BY status")}

    def oldest_due(self, now: datetime) -> datetime | None:
        """When the longest-waiting pending row fell due (None: nothing pending is due):
        how far delivery is behind."""
        row = self.conn.execute("SELECT MIN(next_attempt_at) FROM notification_queue WHERE status = 'pending'"
                                " AND next_attempt_at <= ?", (iso(now),)).fetchone()
        return from_iso(row[0])

    def waiting(self, now: datetime) -> tuple[int, datetime | None]:
        """The rows delivery owes now: pending and due, or pending after a failed attempt
        (retrying, whenever their next attempt is), with when the longest-waiting of them
        began to wait: its due time, or for one being retried its queuing (the first due
        time is not kept). A row deferred or scheduled for later (an escalation, quiet hours)
        and not yet tried is not owed yet."""
        row = self.conn.execute(
            "SELECT COUNT(*), MIN(CASE WHEN attempts = 0 THEN next_attempt_at ELSE created_at END)"
            " FROM notification_queue WHERE status = 'pending' AND (next_attempt_at <= ? OR attempts > 0)",
            (iso(now),)).fetchone()
        return int(row[0]), from_iso(row[1])


def _row(r: sqlite3.Row) -> QueuedNotification:
    return QueuedNotification(
        id=r["id"], ref=r["ref"], incident_id=r["incident_id"],
        recipient=Recipient(r["recipient"], r["role"], r["address"]), channel=r["channel"], stage=r["stage"],
        priority=r["priority"], status=r["status"], attempts=r["attempts"],
        next_attempt_at=from_iso(r["next_attempt_at"]), created_at=from_iso(r["created_at"]),  # type: ignore[arg-type]
        held_at=from_iso(r["held_at"]), sent_at=from_iso(r["sent_at"]), last_error=r["last_error"],
        payload=json.loads(r["payload"]))


def _rename_old_table(conn: sqlite3.Connection) -> None:
    """An incident database from before the rename keeps its rows: ``outbox`` becomes
    ``notification_queue`` (its indexes are made anew)."""
    old = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'").fetchone()
    new = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'notification_queue'").fetchone()
    if old and not new:
        with transaction(conn):
            for idx in ("outbox_due", "outbox_recipient", "outbox_incident"):
                conn.execute(f"DROP INDEX IF EXISTS {idx}")
            conn.execute("ALTER TABLE outbox RENAME TO notification_queue")


__all__ = ["DeliveryQueue", "QueuedNotification", "backoff", "BACKOFF_FIRST", "BACKOFF_MAX", "BACKLOG_NOTE"]
