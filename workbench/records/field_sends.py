"""Records sent from the field form (``/field/``), each by its idempotency key.

A phone queues an inspection or an outfall visit while it has no signal and sends it when
it is back online; a send can be lost on the way back (the answer never arrives) and is
then sent again with the same key. The key is stored unique with the first result — the
record made (status 201) or the conflict that refused it (409: a case closed meanwhile, a
site no longer active, the item inspected by someone else) — so a resend answers that
first result and never makes a second record. A send claims its key first
(``field_claims``): if the server stops after the record is made and before its result is
kept, the claim stays and a resend is refused with that said, not made a second time. Kept in ``workbench.db``; never changed.

Each photo's time and position as the phone took them (EXIF is not read: the phone says
when and where it was) are kept here beside the record they came with.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ...sqlite import transaction
from .table import RecordTable, append_only

KEY_PATTERN = r"^[A-Za-z0-9_-]{16,80}$"

SCHEMA = """
CREATE TABLE IF NOT EXISTS field_sends (
    municipality TEXT NOT NULL,
    key TEXT NOT NULL,                   -- the phone's idempotency key for the record
    kind TEXT NOT NULL CHECK (kind IN ('inspection', 'visit')),
    status INTEGER NOT NULL,             -- the first answer: 201 made, 404/409 refused
    result TEXT NOT NULL,                -- that answer's body (JSON)
    photos TEXT NOT NULL,                -- each photo's sha256, time and position (JSON)
    sent_by TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (municipality, key)
);
CREATE TABLE IF NOT EXISTS field_claims (   -- a send under way: its record may be made before its result is kept
    municipality TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    sent_by TEXT NOT NULL,
    claimed_at TEXT NOT NULL,
    PRIMARY KEY (municipality, key)
);
""" + append_only("field_sends", changed="a field send is never changed", deleted="a field send is kept")


@dataclass(frozen=True)
class FieldSend:
    key: str
    kind: str
    status: int
    result: dict[str, Any]
    photos: list[dict[str, Any]]
    sent_by: str
    received_at: datetime


class FieldSends(RecordTable):
    SCHEMA = SCHEMA

    def get(self, municipality: str, key: str) -> FieldSend | None:
        with self._lock:
            r = self.conn.execute("SELECT * FROM field_sends WHERE municipality = ? AND key = ?",
                                  (municipality, key)).fetchone()
        return _send(r) if r else None

    def claim(self, municipality: str, key: str, *, kind: str, by: str) -> tuple[str, str] | None:
        """Claim ``key`` before its record is made: None if claimed now, else the earlier claim
        that never finished (who, when; the server stopped between the record and its result)."""
        now = self.clock().astimezone(timezone.utc).isoformat(timespec="seconds")
        with self._lock, transaction(self.conn):
            done = self.conn.execute("INSERT OR IGNORE INTO field_claims VALUES (?,?,?,?,?)",
                                     (municipality, key, kind, by, now)).rowcount
            if done:
                return None
            r = self.conn.execute("SELECT sent_by, claimed_at FROM field_claims WHERE municipality = ? AND key = ?",
                                  (municipality, key)).fetchone()
            return r["sent_by"], r["claimed_at"]

    def release(self, municipality: str, key: str) -> None:
        """The send made nothing (refused before any record): the key may be sent again."""
        with self._lock, transaction(self.conn):
            self.conn.execute("DELETE FROM field_claims WHERE municipality = ? AND key = ?", (municipality, key))

    def add(self, municipality: str, key: str, *, kind: str, status: int, result: dict[str, Any],
            photos: list[dict[str, Any]], by: str) -> FieldSend:
        """The first result for ``key`` (its claim ends); a key already kept keeps its own (returned)."""
        now = self.clock().astimezone(timezone.utc).isoformat(timespec="seconds")
        with self._lock, transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO field_sends VALUES (?,?,?,?,?,?,?,?)",
                              (municipality, key, kind, status, json.dumps(result, default=str),
                               json.dumps(photos, default=str), by, now))
            self.conn.execute("DELETE FROM field_claims WHERE municipality = ? AND key = ?", (municipality, key))
            found = self.get(municipality, key)
        assert found is not None
        return found

    def photos_of(self, municipality: str, kind: str, record_id: int) -> dict[str, dict[str, Any]]:
        """Each photo's time and position (by its SHA-256) of the records sent from the field
        that made inspection report ``record_id`` (kind ``inspection``) or a visit in case
        ``record_id`` (kind ``visit``)."""
        field = "$.report" if kind == "inspection" else "$.case"
        with self._lock:
            rows = self.conn.execute("SELECT photos FROM field_sends WHERE municipality = ? AND kind = ? AND status = 201"
                                     " AND json_extract(result, ?) = ?", (municipality, kind, field, record_id)).fetchall()
        return {p["sha256"]: p for r in rows for p in json.loads(r[0]) if p.get("sha256")}

    def count(self, municipality: str) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM field_sends WHERE municipality = ?",
                                         (municipality,)).fetchone()[0])


def _send(r: sqlite3.Row) -> FieldSend:
    return FieldSend(r["key"], r["kind"], int(r["status"]), json.loads(r["result"]), json.loads(r["photos"]),
                     r["sent_by"], datetime.fromisoformat(r["received_at"]))


__all__ = ["FieldSend", "FieldSends", "KEY_PATTERN"]
