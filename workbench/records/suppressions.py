"""Approved discharges and exempt flows recorded on the workbench (Ramapo ch. 218 and
Schenectady ch. 148 Art. II: written approval for a time window; exempt flows).

Each has an outfall, a window (``start`` < ``end``: one without an end is refused — a
permanent exempt flow belongs in the registry file) and a reason; a record is never
changed or deleted (SQLite triggers), only withdrawn once, with who and why. The alert
engine sees the records not withdrawn as part of the registry (:func:`with_recorded`),
``ms4watch replay --approvals`` reads them from this database or from their CSV export.
"""

from __future__ import annotations

import enum
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ...sqlite import connect_readonly, inserted_id, transaction
from ...contract.registry import ApprovedDischarge, ExemptFlow, Registry
from .table import RecordTable

SCHEMA = """
CREATE TABLE IF NOT EXISTS suppressions (
    id INTEGER PRIMARY KEY,
    municipality TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('approved_discharge', 'exempt_flow')),
    outfall TEXT NOT NULL,
    start TEXT NOT NULL,                 -- UTC ISO 8601
    "end" TEXT NOT NULL CHECK ("end" > start),
    flow TEXT,                           -- an exempt flow's kind (irrigation, foundation drain, ...)
    reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    recorded_by TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    withdrawn_by TEXT,
    withdrawn_at TEXT,
    withdrawn_note TEXT
);
CREATE INDEX IF NOT EXISTS suppressions_town ON suppressions (municipality, outfall);
CREATE TRIGGER IF NOT EXISTS suppressions_only_withdrawn BEFORE UPDATE ON suppressions
WHEN OLD.withdrawn_at IS NOT NULL OR NEW.withdrawn_at IS NULL OR NEW.id != OLD.id
  OR NEW.municipality != OLD.municipality OR NEW.kind != OLD.kind OR NEW.outfall != OLD.outfall
  OR NEW.start != OLD.start OR NEW."end" != OLD."end" OR NEW.flow IS NOT OLD.flow OR NEW.reason != OLD.reason
  OR NEW.recorded_by != OLD.recorded_by OR NEW.recorded_at != OLD.recorded_at
BEGIN SELECT RAISE(ABORT, 'a recorded approval or exempt flow is only ever withdrawn, once'); END;
CREATE TRIGGER IF NOT EXISTS suppressions_no_delete BEFORE DELETE ON suppressions
BEGIN SELECT RAISE(ABORT, 'recorded approvals and exempt flows are kept'); END;
"""


class SuppressionKind(str, enum.Enum):
    APPROVED_DISCHARGE = "approved_discharge"   # the SMO's written approval (a dye test, hydrant flushing)
    EXEMPT_FLOW = "exempt_flow"                 # a flow the law exempts, for a time (lawn irrigation, a pool drained)

    @property
    def label(self) -> str:
        return self.value.replace("_", " ")


@dataclass(frozen=True)
class Suppression:
    id: int
    municipality: str
    kind: SuppressionKind
    outfall: str
    start: datetime
    end: datetime
    flow: str | None
    reason: str
    recorded_by: str
    recorded_at: datetime
    withdrawn_by: str | None = None
    withdrawn_at: datetime | None = None
    withdrawn_note: str | None = None

    @property
    def active(self) -> bool:
        return self.withdrawn_at is None

    def for_registry(self) -> ApprovedDischarge | tuple[str, ExemptFlow]:
        if self.kind is SuppressionKind.APPROVED_DISCHARGE:
            return ApprovedDischarge.model_validate({"outfall": self.outfall, "from": self.start, "to": self.end,
                                                     "reason": self.reason})
        return self.outfall, ExemptFlow.model_validate({"kind": self.flow or "exempt flow", "note": self.reason,
                                                        "from": self.start, "to": self.end})


def with_recorded(registry: Registry, records: Iterable[Suppression]) -> Registry:
    """The registry the alert engine judges by: the file's, with the records not withdrawn.
    A record of an outfall the file no longer has is left out (the town removed it)."""
    outfalls = {o.id for o in registry.outfalls}
    discharges: list[ApprovedDischarge] = []
    exempt: list[tuple[str, ExemptFlow]] = []
    for r in records:
        if not r.active or r.outfall not in outfalls or r.municipality != registry.municipality:
            continue
        item = r.for_registry()
        if isinstance(item, ApprovedDischarge):
            discharges.append(item)
        else:
            exempt.append(item)
    return registry.with_suppressions(discharges, exempt)


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="seconds")


def _dt(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _row(r: sqlite3.Row) -> Suppression:
    return Suppression(r["id"], r["municipality"], SuppressionKind(r["kind"]), r["outfall"], _dt(r["start"]),  # type: ignore[arg-type]
                       _dt(r["end"]), r["flow"], r["reason"], r["recorded_by"], _dt(r["recorded_at"]),  # type: ignore[arg-type]
                       r["withdrawn_by"], _dt(r["withdrawn_at"]), r["withdrawn_note"])


class SuppressionStore(RecordTable):
    SCHEMA = SCHEMA

    def add(self, *, municipality: str, kind: SuppressionKind, outfall: str, start: datetime, end: datetime,
            reason: str, by: str, flow: str | None = None) -> Suppression:
        """Checked by the caller (the service): the outfall, the window, the reason."""
        with self._lock, transaction(self.conn):
            cur = self.conn.execute(
                "INSERT INTO suppressions (municipality, kind, outfall, start, \"end\", flow, reason, recorded_by,"
                " recorded_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (municipality, kind.value, outfall, _iso(start), _iso(end), flow, reason.strip(), by,
                 _iso(self.clock())))
            return self._get(inserted_id(cur))

    def withdraw(self, sid: int, *, by: str, note: str) -> Suppression:
        with self._lock, transaction(self.conn):
            self.conn.execute("UPDATE suppressions SET withdrawn_by = ?, withdrawn_at = ?, withdrawn_note = ?"
                              " WHERE id = ?", (by, _iso(self.clock()), note.strip(), sid))
            return self._get(sid)

    def get(self, municipality: str, sid: int) -> Suppression | None:
        """The record, if it is this town's."""
        with self._lock:
            r = self.conn.execute("SELECT * FROM suppressions WHERE id = ? AND municipality = ?",
                                  (sid, municipality)).fetchone()
        return _row(r) if r else None

    def list(self, municipality: str, *, outfall: str | None = None) -> list[Suppression]:
        """The town's records, newest window first."""
        q = "SELECT * FROM suppressions WHERE municipality = ?" + (" AND outfall = ?" if outfall else "")
        with self._lock:
            rows = self.conn.execute(q + " ORDER BY start DESC, id DESC",
                                     (municipality, outfall) if outfall else (municipality,)).fetchall()
        return [_row(r) for r in rows]

    def _get(self, sid: int) -> Suppression:
        return _row(self.conn.execute("SELECT * FROM suppressions WHERE id = ?", (sid,)).fetchone())


def load_suppressions(db: Path, municipality: str) -> list[Suppression]:
    """A town's records read-only from ``workbench.db`` (the server at start, ``ms4watch
    replay``); none when the database or its table does not exist yet."""
    if not Path(db).exists():
        return []
    conn = connect_readonly(db, row_factory=sqlite3.Row)
    try:
        rows = conn.execute("SELECT * FROM suppressions WHERE municipality = ? ORDER BY id", (municipality,)).fetchall()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []
        raise
    finally:
        conn.close()
    return [_row(r) for r in rows]


__all__ = ["Suppression", "SuppressionKind", "SuppressionStore", "with_recorded", "load_suppressions"]
