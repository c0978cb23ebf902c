"""The incident store: one incident per episode, open → acknowledged → resolved, and an
append-only audit log (who, when, how, note) that SQLite triggers refuse to change.

Re-opening within the hold-off (default 30 min between one episode's end and the next
one's start, same kind and subject) merges into the same incident instead of opening a
new one, so a flapping sensor makes one incident, not twenty.
"""

from __future__ import annotations

import builtins
import json
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Iterable

from ..events import AlertEvent, AlertKind, AlertEventStatus
from ..kinds.units import duration
from ...sqlite import create_schema, inserted_id, transaction
from .errors import IncidentError
from .model import AuditEntry, Incident, Priority, State, episode_key, event_start, from_iso, iso, policy_for, subject_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS incidents (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,            -- episode key of the first episode
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,               -- outfall / pair / site / gauge id
    code TEXT NOT NULL UNIQUE,           -- acknowledge code (SMS reply, link)
    state TEXT NOT NULL CHECK (state IN ('open', 'acknowledged', 'resolved')),
    priority TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    start TEXT NOT NULL,
    "end" TEXT,
    deadline TEXT,
    acknowledged_at TEXT, acknowledged_by TEXT,
    resolved_at TEXT, resolved_by TEXT, resolution TEXT,
    suppressed TEXT,
    episodes INTEGER NOT NULL DEFAULT 1,
    event TEXT NOT NULL,                 -- the latest event, JSON
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS incidents_subject ON incidents (kind, subject, start);
CREATE INDEX IF NOT EXISTS incidents_state ON incidents (state);
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY,
    incident_id INTEGER NOT NULL REFERENCES incidents (id),
    start TEXT NOT NULL,
    "end" TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    incident_id INTEGER NOT NULL REFERENCES incidents (id),
    at TEXT NOT NULL,
    who TEXT NOT NULL,
    how TEXT NOT NULL,
    action TEXT NOT NULL,
    note TEXT
);
CREATE INDEX IF NOT EXISTS audit_incident ON audit (incident_id, id);
CREATE TABLE IF NOT EXISTS inspections (   -- every inspection recorded (the law's records)
    id INTEGER PRIMARY KEY,
    site TEXT NOT NULL,
    at TEXT NOT NULL,
    who TEXT NOT NULL,
    how TEXT NOT NULL,
    note TEXT,
    recorded_at TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""

_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud, typed on a phone
CODE_LENGTH = 5
SYSTEM = "ms4watch"


@dataclass(frozen=True)
class Change:
    """What one event did to the store; the facade turns it into notifications."""

    incident: Incident | None
    opened: bool = False        # a new incident
    merged: bool = False        # a new episode merged into an existing incident (re-opened)
    closed: bool = False        # resolved automatically because the episode closed
    unsuppressed: bool = False  # was suppressed, is not any more
    retracted: bool = False     # the engine withdrew the event (late data): resolved as retracted
    ignored: str | None = None  # why nothing was stored (e.g. a non-qualifying storm)
    deadline_moved: datetime | None = None  # a compliance deadline's due time changed: the one it had


class IncidentStore:
    def __init__(self, conn: sqlite3.Connection, *, hold_off: timedelta = timedelta(minutes=30),
                 tz: tzinfo = timezone.utc):
        """``tz``: the municipality's zone, for the times of the event record kept with each
        incident (what notifications quote)."""
        if hold_off < timedelta(0):
            raise ValueError(f"hold_off must not be negative, got {hold_off}")
        self.conn = conn
        self.hold_off = hold_off
        self.tz = tz
        create_schema(conn, SCHEMA)

    # -- events ---------------------------------------------------------------------------

    def _local(self, dt: datetime) -> str:
        """A time in an audit note as the SMO reads it: ``Mon 2026-06-01 11:30 EDT``."""
        return f"{dt.astimezone(self.tz):%a %Y-%m-%d %H:%M %Z}"
    def apply_event(self, event: AlertEvent, now: datetime) -> Change:
        """Create or update the incident of the event's episode. Idempotent per event."""
        kind = event.kind
        if kind is AlertKind.STORM and not event.fields.get("qualifying"):
            return Change(None, ignored="storm below the qualifying depth")
        key = episode_key(event)
        subject = subject_of(event)
        start = event_start(event)
        end = event.instant("end")
        closed_by_inspection = kind is AlertKind.INSPECTION_DUE and any(
            event.fields.get(f) for f in ("inspected_at", "closed_at", "end"))
        suppressed = event.fields.get("suppressed") or None
        retracted = event.status is AlertEventStatus.RETRACTED
        record = json.dumps(event.to_dict(self.tz), default=str)
        deadline = event.instant("due") if kind in (AlertKind.INSPECTION_DUE, AlertKind.COMPLIANCE_DEADLINE) else None
        with transaction(self.conn):
            row = self.conn.execute("SELECT incident_id, \"end\" FROM episodes WHERE key = ?", (key,)).fetchone()
            if retracted:
                if row is None:
                    return Change(None, ignored="retracted before it was ever reported")
                return self._retract(row["incident_id"], record, now)
            if row is not None:
                moved_to = deadline if kind is AlertKind.COMPLIANCE_DEADLINE else None
                return self._update(row["incident_id"], key, record, end, suppressed, closed_by_inspection, now,
                                    moved_to)
            merge_into = self._merge_candidate(kind, subject, start, suppressed)
            if merge_into is not None:
                return self._merge(merge_into, key, record, start, end, suppressed, now)
            return self._open(key, kind, subject, record, start, end, deadline, suppressed, closed_by_inspection, now)

    def _open(self, key: str, kind: AlertKind, subject: str, record: str, start: datetime, end: datetime | None,
              deadline: datetime | None, suppressed: str | None, closed_by_inspection: bool, now: datetime) -> Change:
        pol = policy_for(kind)
        for _ in range(20):
            code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code.isdigit():
                continue   # all digits would read as an incident id
            try:
                cur = self.conn.execute(
                    "INSERT INTO incidents (key, kind, subject, code, state, priority, opened_at, start, \"end\","
                    " deadline, suppressed, event, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, kind.value, subject, code, State.OPEN.value, pol.priority.value, iso(now), iso(start),
                     iso(end) if end else None, iso(deadline) if deadline else None, suppressed, record, iso(now)))
                break
            except sqlite3.IntegrityError as e:
                if "code" not in str(e):
                    raise
        else:  # pragma: no cover - 32**5 codes
            raise IncidentError("could not draw a unique acknowledge code")
        iid = inserted_id(cur)
        self.conn.execute("INSERT INTO episodes (key, incident_id, start, \"end\") VALUES (?,?,?,?)",
                          (key, iid, iso(start), iso(end) if end else None))
        note = f"{pol.what} at {subject} since {self._local(start)}"
        if suppressed:
            note += f"; suppressed: {suppressed} (no notification)"
        self._audit(iid, now, SYSTEM, "alert engine", "opened", note)
        closed = False
        if closed_by_inspection:
            self._resolve_row(iid, now, SYSTEM, "inspection recorded", "inspection", "inspection recorded by the engine")
            closed = True
        elif end is not None and kind is not AlertKind.INSPECTION_DUE:
            self._resolve_row(iid, now, SYSTEM, "alert engine", "auto", f"episode ended {self._local(end)}")
            closed = True
        return Change(self.get(iid), opened=True, closed=closed)

    def _update(self, iid: int, key: str, record: str, end: datetime | None, suppressed: str | None,
                closed_by_inspection: bool, now: datetime, deadline: datetime | None = None) -> Change:
        """``deadline``: a compliance deadline's due time as the record now computes it (a
        delivery, an extension, a newer plan moves it); the incident follows it, so reminders
        and the overdue notice use the deadline in force."""
        inc = self.get(iid)
        was_suppressed = inc.suppressed
        moved = None
        if deadline is not None and inc.deadline is not None and deadline != inc.deadline:
            moved = inc.deadline
            self.conn.execute("UPDATE incidents SET deadline = ? WHERE id = ?", (iso(deadline), iid))
            self._audit(iid, now, SYSTEM, "alert engine", "deadline moved",
                        f"deadline moved from {iso(inc.deadline)} to {iso(deadline)} by a later record")
        ep = self.conn.execute("SELECT \"end\" FROM episodes WHERE key = ?", (key,)).fetchone()
        newly_ended = end is not None and ep["end"] is None
        self.conn.execute("UPDATE episodes SET \"end\" = COALESCE(?, \"end\") WHERE key = ?",
                          (iso(end) if end else None, key))
        latest = self.conn.execute("SELECT key FROM episodes WHERE incident_id = ? ORDER BY start DESC LIMIT 1",
                                   (iid,)).fetchone()["key"]
        is_latest = latest == key
        self.conn.execute(
            "UPDATE incidents SET event = ?, suppressed = ?, \"end\" = CASE WHEN ? THEN COALESCE(?, \"end\") ELSE \"end\" END,"
            " updated_at = ? WHERE id = ?",
            (record, suppressed, is_latest, iso(end) if end else None, iso(now), iid))
        unsuppressed = bool(was_suppressed) and not suppressed and inc.state is not State.RESOLVED
        if was_suppressed != suppressed:
            self._audit(iid, now, SYSTEM, "alert engine", "suppression",
                        f"suppressed: {suppressed}" if suppressed else f"no longer suppressed (was: {was_suppressed})")
        closed = False
        if inc.state is not State.RESOLVED and is_latest:
            if closed_by_inspection:
                self._resolve_row(iid, now, SYSTEM, "inspection recorded", "inspection", "inspection recorded by the engine")
                closed = True
            elif newly_ended and inc.kind != AlertKind.INSPECTION_DUE.value:
                self._resolve_row(iid, now, SYSTEM, "alert engine", "auto", f"episode ended {self._local(end)}")  # type: ignore[arg-type]
                closed = True
        return Change(self.get(iid), closed=closed, unsuppressed=unsuppressed, deadline_moved=moved)

    def _retract(self, iid: int, record: str, now: datetime) -> Change:
        inc = self.get(iid)
        if inc.state is State.RESOLVED and inc.resolution == "retracted":
            return Change(inc)
        self.conn.execute("UPDATE incidents SET event = ?, updated_at = ? WHERE id = ?", (record, iso(now), iid))
        if inc.state is State.RESOLVED:
            self._audit(iid, now, SYSTEM, "alert engine", "retracted", "late data showed it did not happen")
            return Change(self.get(iid))
        self._resolve_row(iid, now, SYSTEM, "alert engine", "retracted", "late data showed it did not happen")
        return Change(self.get(iid), closed=True, retracted=True)

    def _merge_candidate(self, kind: AlertKind, subject: str, start: datetime, suppressed: str | None) -> int | None:
        if kind in (AlertKind.INSPECTION_DUE, AlertKind.STORM, AlertKind.CALIBRATION_DUE,
                    AlertKind.CALIBRATION_OVERDUE, AlertKind.COMPLIANCE_DEADLINE):
            return None  # each storm, each deadline and each sensor's calibration is its own item
        row = self.conn.execute(
            "SELECT id, \"end\", suppressed FROM incidents WHERE kind = ? AND subject = ? AND start <= ?"
            " ORDER BY start DESC LIMIT 1", (kind.value, subject, iso(start))).fetchone()
        if row is None:
            return None
        if (row["suppressed"] is None) != (suppressed is None):
            return None  # an approved discharge next to an unexplained one: keep them apart
        if row["end"] is None:
            return int(row["id"])  # still open: a second report of the same trouble
        gap = start - from_iso(row["end"])  # type: ignore[operator]
        return int(row["id"]) if gap <= self.hold_off else None

    def _merge(self, iid: int, key: str, record: str, start: datetime, end: datetime | None,
               suppressed: str | None, now: datetime) -> Change:
        inc = self.get(iid)
        self.conn.execute("INSERT INTO episodes (key, incident_id, start, \"end\") VALUES (?,?,?,?)",
                          (key, iid, iso(start), iso(end) if end else None))
        state = inc.state
        if inc.state is State.RESOLVED:
            state = State.ACKNOWLEDGED if inc.acknowledged_at else State.OPEN
        self.conn.execute(
            "UPDATE incidents SET state = ?, \"end\" = ?, episodes = episodes + 1, event = ?, suppressed = ?,"
            " resolved_at = CASE WHEN ? THEN NULL ELSE resolved_at END,"
            " resolved_by = CASE WHEN ? THEN NULL ELSE resolved_by END,"
            " resolution = CASE WHEN ? THEN NULL ELSE resolution END, updated_at = ? WHERE id = ?",
            (state.value, iso(end) if end else None, record, suppressed,
             inc.state is State.RESOLVED, inc.state is State.RESOLVED, inc.state is State.RESOLVED, iso(now), iid))
        self._audit(iid, now, SYSTEM, "alert engine", "reopened" if inc.state is State.RESOLVED else "merged",
                    f"new episode since {self._local(start)} within the {duration(self.hold_off)} hold-off")
        closed = False
        if end is not None:
            self._resolve_row(iid, now, SYSTEM, "alert engine", "auto", f"episode ended {self._local(end)}")
            closed = True
        return Change(self.get(iid), merged=True, closed=closed)

    # -- people ---------------------------------------------------------------------------
    def acknowledge(self, ref: int | str, *, by: str, how: str, now: datetime, note: str | None = None) -> Incident:
        """Acknowledge by id or by code. Acknowledging twice is harmless (the first one stands)."""
        if not by.strip():
            raise IncidentError("who acknowledges? (--by NAME)")
        with transaction(self.conn):
            inc = self.find(ref)
            if inc.state is State.RESOLVED:
                raise IncidentError(f"incident {inc.id} ({inc.code}) is already resolved")
            if inc.state is State.ACKNOWLEDGED:
                return inc
            self.conn.execute(
                "UPDATE incidents SET state = ?, acknowledged_at = ?, acknowledged_by = ?, updated_at = ? WHERE id = ?",
                (State.ACKNOWLEDGED.value, iso(now), by, iso(now), inc.id))
            self._audit(inc.id, now, by, how, "acknowledged", note)
            return self.get(inc.id)

    def review(self, ref: int | str, *, by: str, how: str, now: datetime, note: str | None = None) -> Incident:
        """Acknowledge, after the fact, an episode that ended by itself (resolution ``auto``)
        before anyone acknowledged it: the SMO has reviewed it. It stays resolved; reviewing
        twice is harmless (the first one stands)."""
        if not by.strip():
            raise IncidentError("who reviews? (--by NAME)")
        with transaction(self.conn):
            inc = self.find(ref)
            if inc.state is not State.RESOLVED or inc.resolution != "auto":
                raise IncidentError(f"incident {inc.id} ({inc.code}) did not end by itself: nothing to review")
            if inc.acknowledged_at is not None:
                return inc
            self.conn.execute("UPDATE incidents SET acknowledged_at = ?, acknowledged_by = ?, updated_at = ? WHERE id = ?",
                              (iso(now), by, iso(now), inc.id))
            self._audit(inc.id, now, by, how, "acknowledged", note or "reviewed after the episode ended")
            return self.get(inc.id)

    def resolve(self, ref: int | str, *, by: str, how: str, now: datetime, note: str) -> Incident:
        """Resolve by hand; a note saying why is required. An inspection item is resolved by
        recording the inspection (:meth:`record_inspection`), which this does for it."""
        if not by.strip():
            raise IncidentError("who resolves? (--by NAME)")
        if not note or not note.strip():
            raise IncidentError("resolving by hand needs a note saying why (--note)")
        with transaction(self.conn):
            inc = self.find(ref)
            if inc.state is State.RESOLVED:
                raise IncidentError(f"incident {inc.id} ({inc.code}) is already resolved")
            resolution = "inspection" if inc.kind == AlertKind.INSPECTION_DUE.value else "manual"
            self._resolve_row(inc.id, now, by, how, resolution, note)
            return self.get(inc.id)

    def record_inspection(self, site: str, *, at: datetime, by: str, now: datetime, note: str | None = None,
                          how: str = "cli") -> list[Incident]:
        """An inspection of ``site`` at ``at`` resolves every open inspection item of the site
        whose storm ended at or before ``at``. Returns the items it resolved."""
        if not by.strip():
            raise IncidentError("who inspected? (--by NAME)")
        with transaction(self.conn):
            self.conn.execute("INSERT INTO inspections (site, at, who, how, note, recorded_at) VALUES (?,?,?,?,?,?)",
                              (site, iso(at), by.strip(), how, note, iso(now)))
            rows = self.conn.execute(
                "SELECT id FROM incidents WHERE kind = 'inspection_due' AND subject = ? AND state != 'resolved'"
                " AND start <= ?", (site, iso(at))).fetchall()
            for r in rows:
                self._resolve_row(int(r["id"]), now, by, how, "inspection",
                                  f"inspection at {iso(at)}" + (f": {note}" if note else ""))
            return [self.get(int(r["id"])) for r in rows]

    # -- reading --------------------------------------------------------------------------
    def inspections_after(self, last_id: int) -> list[tuple[int, str, datetime, str, str | None]]:
        """Inspections recorded after ``last_id``: (id, site, at, who, note), oldest first —
        how a running server learns of one recorded with ``ms4watch incidents inspected``."""
        return [(int(r["id"]), r["site"], datetime.fromisoformat(r["at"]), r["who"], r["note"]) for r in self.conn.execute(
            "SELECT id, site, at, who, note FROM inspections WHERE id > ? ORDER BY id", (last_id,))]

    def get(self, iid: int) -> Incident:
        row = self.conn.execute("SELECT * FROM incidents WHERE id = ?", (iid,)).fetchone()
        if row is None:
            raise IncidentError(f"no incident {iid}")
        return _incident(row)

    def find(self, ref: int | str) -> Incident:
        """By id (a number) or by acknowledge code (letters and digits, any case)."""
        text = str(ref).strip()
        if text.isdigit():
            return self.get(int(text))
        try:
            return self.by_code(text)
        except IncidentError:
            raise IncidentError(f"no incident with id or code {text!r}") from None

    def by_code(self, code: str) -> Incident:
        """By acknowledge code only (any case)."""
        row = self.conn.execute("SELECT * FROM incidents WHERE code = ?", (code.strip().upper(),)).fetchone()
        if row is None:
            raise IncidentError(f"no incident with code {code.strip()!r}")
        return _incident(row)

    def list(self, states: Iterable[State] | None = None, limit: int = 1000, *, kind: str | None = None,
             subject: str | None = None, offset: int = 0) -> list[Incident]:
        """Newest first; ``kind`` and ``subject`` match exactly when given."""
        wanted = [s.value for s in (states or list(State))]
        where = f"state IN ({','.join('?' * len(wanted))})"
        args: list = list(wanted)
        for column, value in (("kind", kind), ("subject", subject)):
            if value is not None:
                where += f" AND {column} = ?"
                args.append(value)
        rows = self.conn.execute(f"SELECT * FROM incidents WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?",
                                 (*args, limit, offset)).fetchall()
        return [_incident(r) for r in rows]

    def audit(self, iid: int) -> builtins.list[AuditEntry]:
        rows = self.conn.execute("SELECT * FROM audit WHERE incident_id = ? ORDER BY id", (iid,)).fetchall()
        return [AuditEntry(r["id"], r["incident_id"], datetime.fromisoformat(r["at"]), r["who"], r["how"], r["action"], r["note"])
                for r in rows]

    def unacknowledged(self) -> builtins.list[Incident]:
        rows = self.conn.execute(
            "SELECT * FROM incidents WHERE state = 'open' AND suppressed IS NULL ORDER BY id").fetchall()
        return [_incident(r) for r in rows if policy_for(r["kind"]).escalates]

    def ended_unreviewed(self, limit: int = 1000) -> builtins.list[Incident]:
        """Episodes of alerting kinds that ended by themselves before anyone acknowledged
        them (not reviewed yet: :meth:`review`), the latest to begin first."""
        rows = self.conn.execute(
            "SELECT * FROM incidents WHERE state = 'resolved' AND resolution = 'auto' AND acknowledged_at IS NULL"
            " AND suppressed IS NULL ORDER BY start DESC, id DESC LIMIT ?", (limit,)).fetchall()
        return [_incident(r) for r in rows if policy_for(r["kind"]).escalates]

    def unresolved_counts(self) -> dict[tuple[str, str], int]:
        """Incidents not resolved, by (kind, state): open or acknowledged."""
        return {(r[0], r[1]): r[2] for r in self.conn.execute(
            "SELECT kind, state, COUNT(*) FROM incidents WHERE state IN ('open', 'acknowledged') GROUP BY kind, state")}

    def with_deadline(self) -> builtins.list[Incident]:
        rows = self.conn.execute(
            "SELECT * FROM incidents WHERE deadline IS NOT NULL AND state != 'resolved' AND suppressed IS NULL"
            " ORDER BY deadline").fetchall()
        return [_incident(r) for r in rows]

    # -- internals ------------------------------------------------------------------------
    def _resolve_row(self, iid: int, now: datetime, who: str, how: str, resolution: str, note: str | None) -> None:
        self.conn.execute(
            "UPDATE incidents SET state = 'resolved', resolved_at = ?, resolved_by = ?, resolution = ?, updated_at = ?"
            " WHERE id = ?", (iso(now), who, resolution, iso(now), iid))
        self._audit(iid, now, who, how, "resolved", note)

    def _audit(self, iid: int, now: datetime, who: str, how: str, action: str, note: str | None) -> None:
        self.conn.execute("INSERT INTO audit (incident_id, at, who, how, action, note) VALUES (?,?,?,?,?,?)",
                          (iid, iso(now), who, how, action, note))


def _incident(row: sqlite3.Row) -> Incident:
    return Incident(
        id=row["id"], key=row["key"], kind=row["kind"], subject=row["subject"], code=row["code"],
        state=State(row["state"]), priority=Priority(row["priority"]),
        opened_at=from_iso(row["opened_at"]), start=from_iso(row["start"]), end=from_iso(row["end"]),  # type: ignore[arg-type]
        deadline=from_iso(row["deadline"]), acknowledged_at=from_iso(row["acknowledged_at"]),
        acknowledged_by=row["acknowledged_by"], resolved_at=from_iso(row["resolved_at"]),
        resolved_by=row["resolved_by"], resolution=row["resolution"], suppressed=row["suppressed"],
        episodes=row["episodes"], event=json.loads(row["event"]))
