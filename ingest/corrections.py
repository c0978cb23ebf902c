"""Drift corrections of stored readings: kept apart from the readings, audited, reversible.

A correction (:class:`~ms4watch.contract.drift.DriftCorrection`: fouling and drift measured
at a service visit, prorated over the interval since the previous one) is stored in the
town's ``corrections.db`` (``DATA_DIR`` for one town, ``DATA_DIR/<municipality>/`` in a
coalition: a station id two towns both use is two stations) with who entered it, when and
why, and the calibration record it came from. The readings in the store are never
changed: :class:`CorrectedReadings` applies the corrections in force when they are read
back, so the same store answers raw or corrected, and says which (``basis``). A correction is never deleted: it is *reverted*, with who, when
and why, and stops applying. The audit log is append-only (SQLite triggers refuse any
change to it), as is a correction's content; only its reverted_* fields may be set, once.

Several corrections of one sensor may not overlap in time (a reading is corrected once);
revert the old one first.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np

from ..contract.calibration import CalibrationRecord
from ..contract.drift import MAX_ALLOWABLE_PCT, Basis, CorrectionKind, DriftCorrection, correct_arrays
from ..contract.errors import Ms4Error
from ..contract.timeutil import to_ns
from ..contract.wire import CanonicalReading
from ..sqlite import connect, inserted_id
from .stores.base import ReadingsSource

log = logging.getLogger(__name__)

__all__ = ["Correction", "CorrectionError", "CorrectionStore", "CorrectedReadings", "correction_from_record",
           "split_shared", "town_corrections"]
FILE = "corrections.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY, station TEXT NOT NULL, quantity TEXT NOT NULL, sensor TEXT,
    t0_ns INTEGER NOT NULL, t1_ns INTEGER NOT NULL, fouling REAL NOT NULL, fouling_kind TEXT NOT NULL,
    drift REAL NOT NULL, drift_kind TEXT NOT NULL, max_allowable_pct REAL, record TEXT,
    created_by TEXT NOT NULL, created_at_ns INTEGER NOT NULL, why TEXT NOT NULL,
    reverted_by TEXT, reverted_at_ns INTEGER, reverted_why TEXT);
CREATE INDEX IF NOT EXISTS corrections_series ON corrections (station, quantity, t0_ns);
CREATE TABLE IF NOT EXISTS correction_audit (
    id INTEGER PRIMARY KEY, correction_id INTEGER NOT NULL REFERENCES corrections (id), at_ns INTEGER NOT NULL,
    who TEXT NOT NULL, action TEXT NOT NULL, why TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS correction_audit_no_update BEFORE UPDATE ON correction_audit
    BEGIN SELECT RAISE(ABORT, 'the correction audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS correction_audit_no_delete BEFORE DELETE ON correction_audit
    BEGIN SELECT RAISE(ABORT, 'the correction audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS corrections_no_delete BEFORE DELETE ON corrections
    BEGIN SELECT RAISE(ABORT, 'a correction is reverted, never deleted'); END;
CREATE TRIGGER IF NOT EXISTS corrections_only_revert BEFORE UPDATE ON corrections
    WHEN OLD.reverted_at_ns IS NOT NULL OR NEW.station IS NOT OLD.station OR NEW.quantity IS NOT OLD.quantity
      OR NEW.sensor IS NOT OLD.sensor OR NEW.t0_ns IS NOT OLD.t0_ns OR NEW.t1_ns IS NOT OLD.t1_ns
      OR NEW.fouling IS NOT OLD.fouling OR NEW.drift IS NOT OLD.drift OR NEW.fouling_kind IS NOT OLD.fouling_kind
      OR NEW.drift_kind IS NOT OLD.drift_kind OR NEW.max_allowable_pct IS NOT OLD.max_allowable_pct
      OR NEW.created_by IS NOT OLD.created_by OR NEW.why IS NOT OLD.why
    BEGIN SELECT RAISE(ABORT, 'a correction only changes by being reverted, once'); END;
"""


class CorrectionError(Ms4Error):
    """A correction that cannot be stored or reverted as asked."""


@dataclass(frozen=True)
class Correction:
    id: int
    station: str
    quantity: str
    sensor: str | None
    correction: DriftCorrection
    record: str | None
    created_by: str
    created_at_ns: int
    why: str
    reverted_by: str | None = None
    reverted_at_ns: int | None = None
    reverted_why: str | None = None

    @property
    def active(self) -> bool:
        return self.reverted_at_ns is None


@dataclass(frozen=True)
class AuditEntry:
    correction_id: int
    at_ns: int
    who: str
    action: str
    why: str


class CorrectionStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = connect(self.path, busy_timeout_s=30)
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def add(self, station: str, quantity: str, correction: DriftCorrection, *, by: str, why: str,
            sensor: str | None = None, record: str | None = None, now_ns: int | None = None) -> Correction:
        """Store ``correction`` of (station, quantity[, sensor]), who and why; refused when it
        overlaps one in force for the same sensor."""
        if not by.strip() or not why.strip():
            raise CorrectionError("a correction needs who (--by) and why (--why)")
        c = correction
        limit = c.max_allowable_pct if c.max_allowable_pct is not None else MAX_ALLOWABLE_PCT.get(quantity)
        now = now_ns if now_ns is not None else time.time_ns()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                clash = self._db.execute(
                    "SELECT id FROM corrections WHERE station = ? AND quantity = ? AND reverted_at_ns IS NULL "
                    "AND (sensor IS NULL OR ? IS NULL OR sensor = ?) AND t0_ns < ? AND t1_ns > ?",
                    (station, quantity, sensor, sensor, c.t1_ns, c.t0_ns)).fetchone()
                if clash:
                    raise CorrectionError(f"correction {clash[0]} of {station} {quantity} covers part of this interval; "
                                          f"revert it first (ms4watch corrections revert {clash[0]})")
                cur = self._db.execute(
                    "INSERT INTO corrections (station, quantity, sensor, t0_ns, t1_ns, fouling, fouling_kind, drift, "
                    "drift_kind, max_allowable_pct, record, created_by, created_at_ns, why) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (station, quantity, sensor, c.t0_ns, c.t1_ns, c.fouling, c.fouling_kind.value, c.drift,
                     c.drift_kind.value, limit, record, by.strip(), now, why.strip()))
                cid = inserted_id(cur)
                self._db.execute("INSERT INTO correction_audit (correction_id, at_ns, who, action, why) "
                                 "VALUES (?,?,?,?,?)", (cid, now, by.strip(), "added", why.strip()))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return self.get(cid)

    def revert(self, cid: int, *, by: str, why: str, now_ns: int | None = None) -> Correction:
        """Stop applying correction ``cid``; it stays, with who reverted it, when and why."""
        if not by.strip() or not why.strip():
            raise CorrectionError("reverting needs who (--by) and why (--why)")
        now = now_ns if now_ns is not None else time.time_ns()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT reverted_at_ns FROM corrections WHERE id = ?", (cid,)).fetchone()
                if row is None:
                    raise CorrectionError(f"no correction {cid}")
                if row[0] is not None:
                    raise CorrectionError(f"correction {cid} is reverted already")
                self._db.execute("UPDATE corrections SET reverted_by = ?, reverted_at_ns = ?, reverted_why = ? "
                                 "WHERE id = ?", (by.strip(), now, why.strip(), cid))
                self._db.execute("INSERT INTO correction_audit (correction_id, at_ns, who, action, why) "
                                 "VALUES (?,?,?,?,?)", (cid, now, by.strip(), "reverted", why.strip()))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return self.get(cid)

    def adopt(self, rec: dict[str, Any], audit: Sequence[tuple]) -> int:
        """Take a correction row (and its audit rows) from another file as it is: its id when
        free here. Returns its id here."""
        cols = [c for c in rec if c != "id"]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                free = self._db.execute("SELECT 1 FROM corrections WHERE id = ?", (rec["id"],)).fetchone() is None
                names = (["id"] if free else []) + cols
                cur = self._db.execute(f"INSERT INTO corrections ({', '.join(names)}) VALUES "
                                       f"({', '.join('?' * len(names))})",
                                       ([rec["id"]] if free else []) + [rec[c] for c in cols])
                cid = inserted_id(cur)
                self._db.executemany("INSERT INTO correction_audit (correction_id, at_ns, who, action, why) "
                                     "VALUES (?,?,?,?,?)", [(cid, *a[1:]) for a in audit])
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return cid

    def get(self, cid: int) -> Correction:
        rows = self._select("WHERE id = ?", (cid,))
        if not rows:
            raise CorrectionError(f"no correction {cid}")
        return rows[0]

    def list(self, *, station: str | None = None, quantity: str | None = None,
             include_reverted: bool = True) -> list[Correction]:
        where, params = [], []
        for col, v in (("station", station), ("quantity", quantity)):
            if v is not None:
                where.append(f"{col} = ?")
                params.append(v)
        if not include_reverted:
            where.append("reverted_at_ns IS NULL")
        return self._select(("WHERE " + " AND ".join(where)) if where else "", tuple(params))

    def in_force(self, station: str, quantity: str, start_ns: int, end_ns: int) -> builtins.list[Correction]:
        return self._select("WHERE station = ? AND quantity = ? AND reverted_at_ns IS NULL AND t1_ns >= ? "
                            "AND t0_ns <= ?", (station, quantity, start_ns, end_ns))

    def audit(self, cid: int) -> builtins.list[AuditEntry]:
        with self._lock:
            rows = self._db.execute("SELECT correction_id, at_ns, who, action, why FROM correction_audit "
                                    "WHERE correction_id = ? ORDER BY id", (cid,)).fetchall()
        return [AuditEntry(*r) for r in rows]

    def _select(self, where: str, params: tuple) -> builtins.list[Correction]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, station, quantity, sensor, t0_ns, t1_ns, fouling, fouling_kind, drift, drift_kind, "
                f"max_allowable_pct, record, created_by, created_at_ns, why, reverted_by, reverted_at_ns, reverted_why "
                f"FROM corrections {where} ORDER BY t0_ns, id", params).fetchall()
        return [Correction(r[0], r[1], r[2], r[3], DriftCorrection(r[4], r[5], r[6], r[8], CorrectionKind(r[7]),
                                                                   CorrectionKind(r[9]), r[10]),
                           r[11], r[12], r[13], r[14], r[15], r[16], r[17]) for r in rows]


def split_shared(shared: Path, towns: Mapping[str, tuple[Path, Collection[str]]]) -> list[str]:
    """Move the corrections of a coalition's old shared ``DATA_DIR/corrections.db`` (one file,
    no municipality) into each town's own file: a correction goes to the one town whose
    registry has its station, with its audit log, its id kept where free. One whose station
    several towns (or none) have cannot be placed: it stays in the old file, renamed
    ``corrections.shared.db``, and a line says so (re-enter it with ``ms4watch corrections
    add --town``). ``towns``: municipality -> (its data directory, its station ids).
    Returns what was done, a line each."""
    old = connect(shared)     # read and write: closing it checkpoints its WAL into the file renamed below
    try:
        rows = old.execute("SELECT * FROM corrections ORDER BY id").fetchall()
        cols = [d[0] for d in old.execute("SELECT * FROM corrections LIMIT 0").description]
        audit = old.execute("SELECT correction_id, at_ns, who, action, why FROM correction_audit "
                            "ORDER BY id").fetchall()
    finally:
        old.close()
    report, placed = [], 0
    stores: dict[str, CorrectionStore] = {}
    try:
        for row in rows:
            rec = dict(zip(cols, row))
            owners = sorted(m for m, (_, stations) in towns.items() if rec["station"] in stations)
            if len(owners) != 1:
                report.append(f"{shared}: correction {rec['id']} of {rec['station']} {rec['quantity']} left in "
                              f"{shared.with_name('corrections.shared.db')}: its station is "
                              f"{'in ' + ', '.join(owners) if owners else 'in no town'}; re-enter it with "
                              "ms4watch corrections add --town")
                continue
            town = owners[0]
            if town not in stores:
                stores[town] = CorrectionStore(towns[town][0] / FILE)
            stores[town].adopt(rec, [a for a in audit if a[0] == rec["id"]])
            placed += 1
    finally:
        for s in stores.values():
            s.close()
    for suffix in ("", "-wal", "-shm"):
        src = shared.with_name(shared.name + suffix)
        if src.exists():
            src.rename(shared.with_name("corrections.shared.db" + suffix))
    report.insert(0, f"{shared}: {placed} of {len(rows)} corrections moved to their towns' folders")
    return report


def town_corrections(settings: Any, municipality: str, report: Callable[[str], None] = log.warning) -> CorrectionStore:
    """The corrections of one town of ``settings`` (a ``ms4watch.settings.Settings``): its own
    file; in a coalition, an old shared file is split among the towns first (:func:`split_shared`)."""
    shared = settings.data_dir / FILE
    if settings.coalition and shared.exists():
        from ..contract.registry import load_registry
        regs = [load_registry(p) for p in settings.registry_paths()]
        for line in split_shared(shared, {r.municipality: (settings.town_data_dir(r.municipality), r.station_ids())
                                          for r in regs}):
            report(line)
    return CorrectionStore(settings.town_data_dir(municipality) / FILE)


class CorrectedReadings:
    """The readings port with the drift corrections in force applied (``basis = corrected``);
    the store's raw values are untouched. A correction naming a sensor applies to that
    sensor's readings only."""

    basis = Basis.CORRECTED

    def __init__(self, source: ReadingsSource, corrections: CorrectionStore):
        self.source = source
        self.corrections = corrections
        self.applied = False        # whether a correction changed any reading read through it so far

    def readings(self, station: str, quantity: str, start: datetime, end: datetime) -> list[CanonicalReading]:
        rows = self.source.readings(station, quantity, start, end)
        found = self.corrections.in_force(station, quantity, to_ns(start), to_ns(end))
        if not rows or not found:
            return rows
        out = list(rows)
        for sensor in {r.sensor for r in rows}:
            mine = [c for c in found if c.sensor in (None, sensor)]
            if not mine:
                continue
            idx = [i for i, r in enumerate(rows) if r.sensor == sensor and r.value is not None]
            t = np.array([rows[i].time_ns for i in idx], dtype=np.int64)
            v, f = correct_arrays(t, np.array([rows[i].value for i in idx], dtype=np.float64),
                                  np.array([rows[i].flags for i in idx], dtype=object), [c.correction for c in mine])
            for k, i in enumerate(idx):
                out[i] = rows[i]._replace(value=float(v[k]), flags=str(f[k]))
            self.applied = self.applied or bool(idx)
        return out


def correction_from_record(record: CalibrationRecord, t0_ns: int, typical: float,
                           max_allowable_pct: float | None = None) -> DriftCorrection:
    """The correction a calibration record measured, for the interval since ``t0_ns`` (the
    previous visit) to the run: fouling ``after - before`` (absolute), drift from the
    as-found point whose standard is nearest ``typical`` [unit] (the readings' usual level),
    as a share of the reading: ``100 · (standard - reading) / reading`` [%]."""
    fouling = 0.0
    if record.fouling is not None:
        fouling = record.fouling.after_cleaning - record.fouling.before_cleaning
    drift = 0.0
    points = [p for p in record.as_found if p.reading != 0]
    if points:
        p = min(points, key=lambda p: abs(p.reference - typical))
        drift = 100.0 * (p.reference - p.reading) / p.reading
    return DriftCorrection(t0_ns, to_ns(record.performed), fouling, round(drift, 6), CorrectionKind.ABSOLUTE,
                           CorrectionKind.PERCENT,
                           max_allowable_pct if max_allowable_pct is not None else
                           MAX_ALLOWABLE_PCT.get(record.quantity.value))
