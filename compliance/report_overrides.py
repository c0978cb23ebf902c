"""Counts of the annual report stated by hand: a count the records cannot give (fines
assessed, the town's own oversight inspections when kept on paper) or one the town corrects.
Each is a row of its own (who, when, the value, why), never changed nor deleted (SQLite
triggers); the latest for a line is the one the report prints, beside the count of the
records, and the workbench writes its audit log entry too.

The table lives in ``compliance.db`` beside the records it speaks about.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field

from ..contract.text import NOT_BLANK
from ..sqlite import connect, inserted_id, transaction
from .errors import ComplianceError

SCHEMA = """
CREATE TABLE IF NOT EXISTS report_overrides (
    id INTEGER PRIMARY KEY,
    year INTEGER NOT NULL,
    line TEXT NOT NULL,                   -- the summary line's id, e.g. 'fines' or 'inspections:late'
    value INTEGER NOT NULL CHECK (value >= 0),
    reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    recorded_by TEXT NOT NULL,
    recorded_at TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS report_overrides_no_update BEFORE UPDATE ON report_overrides
BEGIN SELECT RAISE(ABORT, 'report overrides are never changed'); END;
CREATE TRIGGER IF NOT EXISTS report_overrides_no_delete BEFORE DELETE ON report_overrides
BEGIN SELECT RAISE(ABORT, 'report overrides are kept'); END;
"""


class OverrideIn(BaseModel):
    """A count stated by hand, as the workbench's form or the API gives it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    line: str = Field(min_length=1, max_length=80, pattern=r"^[a-z_]+(:[A-Za-z0-9_ .-]+)?$",
                      description="the summary line, e.g. fines_construction or inspections:late")
    value: int = Field(ge=0, le=1_000_000)
    reason: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK,
                        description="where the count comes from, or why the records' count is wrong")


@dataclass(frozen=True)
class Override:
    id: int
    year: int
    line: str
    value: int
    reason: str
    recorded_by: str
    recorded_at: datetime


class ReportOverrides:
    def __init__(self, path: str | Path, clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)):
        self.conn = connect(path, row_factory=sqlite3.Row)
        self.clock = clock
        self._lock = threading.RLock()
        with self._lock:
            self.conn.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def add(self, *, year: int, line: str, value: int, reason: str, by: str) -> Override:
        if value < 0:
            raise ComplianceError(f"value: a count is 0 or more, not {value}")
        if not reason.strip():
            raise ComplianceError("reason: say why the count differs from the records (or where it comes from)")
        at = self.clock().astimezone(timezone.utc)
        with self._lock, transaction(self.conn):
            cur = self.conn.execute("INSERT INTO report_overrides (year, line, value, reason, recorded_by, recorded_at)"
                                    " VALUES (?,?,?,?,?,?)", (year, line, value, reason.strip(), by, at.isoformat()))
            return Override(inserted_id(cur), year, line, value, reason.strip(), by, at)

    def history(self, year: int) -> list[Override]:
        with self._lock:
            rows = self.conn.execute("SELECT * FROM report_overrides WHERE year = ? ORDER BY id", (year,)).fetchall()
        return [Override(r["id"], r["year"], r["line"], r["value"], r["reason"], r["recorded_by"],
                         datetime.fromisoformat(r["recorded_at"])) for r in rows]

    def latest(self, year: int) -> dict[str, Override]:
        return {o.line: o for o in self.history(year)}


__all__ = ["Override", "OverrideIn", "ReportOverrides"]
