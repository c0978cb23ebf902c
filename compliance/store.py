"""The town's compliance records in ``compliance.db`` (DATA_DIR, or DATA_DIR/<town>/ in a
coalition): responsible parties and where they answer for, illicit-discharge cases and
their thread of visits (with photos and files), samples with their chain of custody, lab
results, notices of violation and stop-work orders with what happened to them, release
reports, SWPPP reviews.

Every table is append-only (SQLite triggers refuse UPDATE and DELETE): a record's state
is what its later rows say — a case is closed by a closure entry, a notice is delivered,
appealed, decided or complied with by its events. Who did what is also in the workbench's
audit log (the services write both). Times are stored as UTC ISO text.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import date, datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, overload

from ..sqlite import columns, connect, create_schema, inserted_id, transaction
from .errors import ComplianceError, NoSuchRecord

if TYPE_CHECKING:
    from .labs import Threshold
    from .traces import TraceVisit

TABLES = ("parties", "party_links", "cases", "case_entries", "attachments", "samples", "sample_links", "custody",
          "lab_imports", "lab_results", "notices", "notice_events", "notice_recipients", "notice_letters",
          "releases", "release_events", "swppp", "swppp_events", "trace_visits", "field_tests")

SCHEMA = """
CREATE TABLE IF NOT EXISTS parties (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL, phone TEXT, email TEXT,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS party_links (      -- who answers for a place, as owner or operator, since when
    id INTEGER PRIMARY KEY, party_id INTEGER NOT NULL REFERENCES parties (id),
    place TEXT NOT NULL CHECK (place IN ('outfall', 'site', 'case', 'property')), place_id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner', 'operator', 'developer', 'applicant', 'contractor')),
    since TEXT NOT NULL, recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS party_links_place ON party_links (place, place_id);
CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE,
    origin TEXT NOT NULL CHECK (origin IN ('incident', 'complaint', 'screening')),
    incident_id INTEGER, outfall TEXT, location TEXT NOT NULL, description TEXT NOT NULL,
    reporter TEXT, reporter_contact TEXT, observed_at TEXT NOT NULL,
    opened_by TEXT NOT NULL, opened_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS case_entries (     -- the case's thread: visits, notes, closure
    id INTEGER PRIMARY KEY, case_id INTEGER NOT NULL REFERENCES cases (id),
    kind TEXT NOT NULL CHECK (kind IN ('screening', 'tracing', 'sampling', 'follow_up', 'note', 'closure')),
    at TEXT NOT NULL, by TEXT NOT NULL, notes TEXT NOT NULL, location TEXT,
    dry_weather INTEGER, flow_observed INTEGER,
    finding TEXT CHECK (finding IS NULL OR finding IN ('illicit_discharge', 'illicit_connection', 'exempt_flow',
                                                        'no_flow', 'source_not_found')),
    outcome TEXT CHECK (outcome IS NULL OR outcome IN ('eliminated', 'exempt', 'not_found', 'referred')),
    verification TEXT, recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS case_entries_case ON case_entries (case_id, at);
CREATE TABLE IF NOT EXISTS attachments (
    entry_id INTEGER NOT NULL REFERENCES case_entries (id), sha256 TEXT NOT NULL, media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('photo', 'file')),
    PRIMARY KEY (entry_id, sha256));
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, station TEXT NOT NULL, taken_at TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('logger', 'field')), event_key TEXT UNIQUE,
    device TEXT, bottle INTEGER, trigger TEXT, volume_ml REAL, collected_by TEXT NOT NULL,
    episode TEXT, incident_id INTEGER, case_id INTEGER REFERENCES cases (id), note TEXT,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sample_links (    -- a sample linked to a case after it was recorded
    sample_id INTEGER NOT NULL REFERENCES samples (id), case_id INTEGER NOT NULL REFERENCES cases (id),
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL, PRIMARY KEY (sample_id, case_id));
CREATE TABLE IF NOT EXISTS custody (
    id INTEGER PRIMARY KEY, sample_id INTEGER NOT NULL REFERENCES samples (id), at TEXT NOT NULL,
    relinquished_by TEXT NOT NULL, received_by TEXT NOT NULL, lab TEXT, note TEXT,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lab_imports (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, lab TEXT, rows INTEGER NOT NULL,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lab_results (
    id INTEGER PRIMARY KEY, import_id INTEGER NOT NULL REFERENCES lab_imports (id),
    sample_id INTEGER NOT NULL REFERENCES samples (id), line INTEGER NOT NULL,
    parameter TEXT NOT NULL, value REAL, unit TEXT NOT NULL, value_std REAL, std_unit TEXT,
    method TEXT NOT NULL, detection_limit REAL, dl_std REAL, qualifier TEXT NOT NULL DEFAULT '',
    censor TEXT NOT NULL DEFAULT '' CHECK (censor IN ('', '<', '>')), analysed_at TEXT,
    threshold TEXT, verdict TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notices (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, kind TEXT NOT NULL CHECK (kind IN ('nov', 'stop_work')),
    law TEXT NOT NULL, case_id INTEGER REFERENCES cases (id), site TEXT, outfall TEXT,
    party_id INTEGER NOT NULL REFERENCES parties (id), place TEXT NOT NULL, violation TEXT NOT NULL,
    requirements TEXT NOT NULL, remedy TEXT NOT NULL, remediation_days INTEGER,
    violation_since TEXT NOT NULL, prior TEXT NOT NULL, issued_at TEXT NOT NULL, issued_by TEXT NOT NULL,
    signatory TEXT NOT NULL, recorded_at TEXT NOT NULL,
    provisions TEXT NOT NULL DEFAULT '[]',     -- the catalogue's keys (provisions.py) the notice cites
    remedies TEXT NOT NULL DEFAULT '{}',       -- provision key -> the remedial measures the notice sets for it
    corrects INTEGER REFERENCES notices (id)); -- a correction names the notice it corrects
CREATE TABLE IF NOT EXISTS notice_events (
    id INTEGER PRIMARY KEY, notice_id INTEGER NOT NULL REFERENCES notices (id),
    kind TEXT NOT NULL CHECK (kind IN ('mailed', 'posted', 'delivered', 'appeal_filed', 'hearing_held', 'decided',
                                       'decision_filed', 'complied', 'lifted', 'withdrawn')),
    at TEXT NOT NULL, reference TEXT, outcome TEXT, note TEXT, recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL,
    recipient_id INTEGER REFERENCES notice_recipients (id));  -- delivery to one recipient (NULL: the addressee)
CREATE TABLE IF NOT EXISTS notice_recipients (   -- § 148-18A: operator/landowner, applicant, all contractors
    id INTEGER PRIMARY KEY, notice_id INTEGER NOT NULL REFERENCES notices (id),
    party_id INTEGER NOT NULL REFERENCES parties (id), role TEXT NOT NULL, method TEXT NOT NULL, reference TEXT,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL, UNIQUE (notice_id, party_id));
CREATE TABLE IF NOT EXISTS notice_letters (      -- the letter as served: frozen at issue
    notice_id INTEGER PRIMARY KEY REFERENCES notices (id), pdf BLOB NOT NULL, pdf_sha256 TEXT NOT NULL,
    facts TEXT NOT NULL, facts_sha256 TEXT NOT NULL, made_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS releases (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, law TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('hazardous', 'non_hazardous')), material TEXT NOT NULL,
    location TEXT NOT NULL, outfall TEXT, party_id INTEGER REFERENCES parties (id), case_id INTEGER,
    known_at TEXT NOT NULL, reported_by TEXT NOT NULL, commercial INTEGER NOT NULL, note TEXT,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS release_events (
    id INTEGER PRIMARY KEY, release_id INTEGER NOT NULL REFERENCES releases (id),
    kind TEXT NOT NULL CHECK (kind IN ('called', 'written', 'emergency_dispatch')),
    at TEXT NOT NULL, note TEXT, recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trace_visits (      -- a tracing entry made at a structure of the network (traces.py)
    entry_id INTEGER PRIMARY KEY REFERENCES case_entries (id), structure TEXT NOT NULL,
    flow TEXT NOT NULL CHECK (flow IN ('present', 'absent')), odour TEXT, colour TEXT);
CREATE TABLE IF NOT EXISTS field_tests (       -- a trace visit's field tests, in the unit read
    entry_id INTEGER NOT NULL REFERENCES trace_visits (entry_id), indicator TEXT NOT NULL, value REAL NOT NULL,
    unit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS swppp (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, site TEXT NOT NULL, title TEXT NOT NULL,
    party_id INTEGER REFERENCES parties (id), received_at TEXT NOT NULL, deviates INTEGER NOT NULL,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS swppp_events (
    id INTEGER PRIMARY KEY, swppp_id INTEGER NOT NULL REFERENCES swppp (id),
    kind TEXT NOT NULL CHECK (kind IN ('complete', 'incomplete', 'revised', 'decided', 'extended')),
    at TEXT NOT NULL, outcome TEXT, days INTEGER, note TEXT, recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
""" + "".join(
    f"CREATE TRIGGER IF NOT EXISTS {t}_no_update BEFORE UPDATE ON {t} "
    f"BEGIN SELECT RAISE(ABORT, 'compliance records are never changed ({t})'); END;\n"
    f"CREATE TRIGGER IF NOT EXISTS {t}_no_delete BEFORE DELETE ON {t} "
    f"BEGIN SELECT RAISE(ABORT, 'compliance records are kept ({t})'); END;\n" for t in TABLES)


def iso(dt: datetime) -> str:
    if dt.tzinfo is None:
        raise ComplianceError(f"a time without a UTC offset: {dt.isoformat()}")
    return dt.astimezone(timezone.utc).isoformat(timespec="seconds")


@overload
def t(text: str) -> datetime: ...
@overload
def t(text: None) -> None: ...
@overload
def t(text: str | None) -> datetime | None: ...
def t(text: str | None) -> datetime | None:
    """A stored ISO time back to a datetime; a NULL column stays None."""
    return None if text is None else datetime.fromisoformat(text)


# -- records ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Party:
    id: int
    name: str
    address: str
    phone: str | None
    email: str | None
    recorded_by: str
    recorded_at: datetime


@dataclass(frozen=True)
class PartyLink:
    id: int
    party_id: int
    place: str
    place_id: str
    role: str
    since: datetime
    recorded_by: str


@dataclass(frozen=True)
class Attachment:
    entry_id: int
    sha256: str
    media_type: str
    size: int
    name: str
    kind: str

    @property
    def shown_inline(self) -> bool:
        return self.media_type in ("image/jpeg", "image/png", "image/webp")


@dataclass(frozen=True)
class Entry:
    id: int
    case_id: int
    kind: str
    at: datetime
    by: str
    notes: str
    location: str | None
    dry_weather: bool | None
    flow_observed: bool | None
    finding: str | None
    outcome: str | None
    verification: str | None
    recorded_by: str
    recorded_at: datetime
    attachments: tuple[Attachment, ...] = ()


@dataclass(frozen=True)
class Case:
    id: int
    number: str
    origin: str
    incident_id: int | None
    outfall: str | None
    location: str
    description: str
    reporter: str | None
    reporter_contact: str | None
    observed_at: datetime
    opened_by: str
    opened_at: datetime
    entries: tuple[Entry, ...] = ()

    @property
    def closure(self) -> Entry | None:
        return next((e for e in self.entries if e.kind == "closure"), None)

    @property
    def status(self) -> str:
        return "closed" if self.closure else "open"

    @property
    def finding(self) -> str | None:
        found = [e.finding for e in self.entries if e.finding]
        return found[-1] if found else None


@dataclass(frozen=True)
class Custody:
    id: int
    sample_id: int
    at: datetime
    relinquished_by: str
    received_by: str
    lab: str | None
    note: str | None
    recorded_by: str


@dataclass(frozen=True)
class LabResult:
    id: int
    import_id: int
    sample_id: int
    line: int
    parameter: str
    value: float | None
    unit: str
    value_std: float | None
    std_unit: str | None
    method: str
    detection_limit: float | None
    dl_std: float | None
    qualifier: str
    censor: str
    analysed_at: datetime | None
    threshold: str | None
    verdict: str


@dataclass(frozen=True)
class Sample:
    id: int
    number: str
    station: str
    taken_at: datetime
    source: str
    event_key: str | None
    device: str | None
    bottle: int | None
    trigger: str | None
    volume_ml: float | None
    collected_by: str
    episode: str | None
    incident_id: int | None
    case_id: int | None
    note: str | None
    recorded_by: str
    recorded_at: datetime
    cases: tuple[int, ...] = ()
    custody: tuple[Custody, ...] = ()
    results: tuple[LabResult, ...] = ()


@dataclass(frozen=True)
class ClockEvent:
    """One event of a notice, release or SWPPP review."""

    id: int
    kind: str
    at: datetime
    reference: str | None = None
    outcome: str | None = None
    note: str | None = None
    days: int | None = None
    recorded_by: str = ""
    recipient_id: int | None = None   # a notice's delivery: to which recipient (None: the addressee)


ROLES = ("operator", "landowner", "owner", "applicant", "developer", "contractor", "subcontractor",
         "responsible person")
METHODS = ("certified_mail", "posting", "personal_service", "first_class_mail")


@dataclass(frozen=True)
class Recipient:
    """One person a notice is sent to (§ 148-18A: the operator/landowner, the applicant and all
    contractors; § 218-44A, § 148-32A: the responsible person), how, and the article number."""

    id: int                   # 0: the addressee of a notice recorded before notices had recipients
    party_id: int
    role: str
    method: str
    reference: str | None = None


# What a letter states, as data: JSON (made by letters.notice_facts, stored as text, read back by json.loads).
Facts = dict[str, Any]


@dataclass(frozen=True)
class FrozenLetter:
    """The letter as served: its PDF and the facts it states, each with its SHA-256, made once
    at issue. Reprints and evidence packets use these bytes."""

    notice_id: int
    pdf: bytes
    pdf_sha256: str
    facts: Facts
    facts_sha256: str
    made_at: datetime


@dataclass(frozen=True)
class Notice:
    id: int
    number: str
    kind: str
    law: str
    case_id: int | None
    site: str | None
    outfall: str | None
    party_id: int
    place: str
    violation: str
    requirements: tuple[str, ...]
    remedy: str
    remediation_days: int | None
    violation_since: date
    prior: tuple[date, ...]
    issued_at: datetime
    issued_by: str
    signatory: str
    events: tuple[ClockEvent, ...] = ()
    provisions: tuple[str, ...] = ()            # the catalogue's keys; () before notices named them
    remedies: tuple[tuple[str, str], ...] = ()  # (provision key, remedial measures) the notice sets
    corrects: int | None = None                 # the notice this one corrects
    recipients: tuple[Recipient, ...] = ()      # the addressee first
    corrected_by: tuple[int, str] | None = None  # (id, number) of the notice that corrects this one

    def first(self, kind: str) -> ClockEvent | None:
        return next((e for e in self.events if e.kind == kind), None)

    def last(self, kind: str) -> ClockEvent | None:
        found = [e for e in self.events if e.kind == kind]
        return found[-1] if found else None

    def delivered_to(self, r: Recipient) -> ClockEvent | None:
        """When ``r`` received the notice (the first delivery recorded for them; a delivery
        recorded without a recipient is the addressee's)."""
        primary = bool(self.recipients) and r == self.recipients[0]
        return next((e for e in self.events if e.kind == "delivered"
                     and (e.recipient_id == r.id or (primary and e.recipient_id is None))), None)

    def events_of(self, r: Recipient) -> tuple[ClockEvent, ...]:
        primary = bool(self.recipients) and r == self.recipients[0]
        return tuple(e for e in self.events if e.recipient_id == r.id or (primary and e.recipient_id is None
                                                                            and e.kind in ("mailed", "posted",
                                                                                           "delivered")))

    @property
    def withdrawn(self) -> ClockEvent | None:
        return self.first("withdrawn")

    @property
    def status(self) -> str:
        """withdrawn, corrected, complied, lifted (a stop-work order), appealed, or in force."""
        if self.first("withdrawn"):
            return "withdrawn"
        if self.corrected_by is not None:
            return f"corrected by {self.corrected_by[1]}"
        for kind, word in (("withdrawn", "withdrawn"), ("lifted", "lifted"), ("complied", "complied")):
            if self.first(kind):
                return word
        decided = self.last("decided")
        if decided is not None:
            return f"decided: {decided.outcome}"
        return "appealed" if self.first("appeal_filed") else "in force"


@dataclass(frozen=True)
class Release:
    id: int
    number: str
    law: str
    kind: str
    material: str
    location: str
    outfall: str | None
    party_id: int | None
    case_id: int | None
    known_at: datetime
    reported_by: str
    commercial: bool
    note: str | None
    recorded_by: str
    events: tuple[ClockEvent, ...] = ()

    def first(self, kind: str) -> ClockEvent | None:
        return next((e for e in self.events if e.kind == kind), None)


@dataclass(frozen=True)
class Swppp:
    id: int
    number: str
    site: str
    title: str
    party_id: int | None
    received_at: datetime
    deviates: bool
    recorded_by: str
    events: tuple[ClockEvent, ...] = ()

    def last(self, kind: str) -> ClockEvent | None:
        found = [e for e in self.events if e.kind == kind]
        return found[-1] if found else None


# -- the store ----------------------------------------------------------------------------------
class ComplianceStore:
    def __init__(self, path: str | Path, clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc), *,
                 tz: tzinfo = timezone.utc):
        """``tz``: the municipality's zone; a record number's year is the local year there."""
        self.path = Path(path)
        self.tz = tz
        self.conn = connect(path, row_factory=sqlite3.Row)
        self._lock = threading.RLock()
        self.clock = clock
        with self._lock:
            self._migrate()
            create_schema(self.conn, SCHEMA)

    # Columns added since a table was first created: a compliance.db made by an older version
    # gains them (with their defaults) when it is opened; no row is changed.
    ADDED = {"notices": (("provisions", "TEXT NOT NULL DEFAULT '[]'"), ("remedies", "TEXT NOT NULL DEFAULT '{}'"),
                         ("corrects", "INTEGER REFERENCES notices (id)")),
             "notice_events": (("recipient_id", "INTEGER REFERENCES notice_recipients (id)"),)}

    def _migrate(self) -> None:
        with transaction(self.conn):
            for table, added in self.ADDED.items():
                have = columns(self.conn, table)
                if not have:
                    continue   # a new database: SCHEMA creates the table whole
                for name, decl in added:
                    if name not in have:
                        self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def _now(self) -> str:
        return iso(self.clock())

    def _number(self, table: str, prefix: str, at: datetime) -> str:
        year = at.astimezone(self.tz).year   # the town's year: 22:00 on 31 December is not next year
        n = self.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE number LIKE ?", (f"{prefix}-{year}-%",)).fetchone()[0]
        return f"{prefix}-{year}-{n + 1:03d}"

    def _insert(self, table: str, values: dict[str, Any]) -> int:
        cols = ", ".join(values)
        cur = self.conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' * len(values))})",
                                tuple(values.values()))
        return inserted_id(cur)

    # -- parties ------------------------------------------------------------------------------
    def add_party(self, *, name: str, address: str, phone: str | None, email: str | None, by: str) -> Party:
        with self._lock, transaction(self.conn):
            pid = self._insert("parties", {"name": name, "address": address, "phone": phone, "email": email,
                                           "recorded_by": by, "recorded_at": self._now()})
        return self.party(pid)

    def link_party(self, party_id: int, *, place: str, place_id: str, role: str, since: datetime, by: str) -> PartyLink:
        self.party(party_id)
        with self._lock, transaction(self.conn):
            lid = self._insert("party_links", {"party_id": party_id, "place": place, "place_id": place_id,
                                               "role": role, "since": iso(since), "recorded_by": by,
                                               "recorded_at": self._now()})
            r = self.conn.execute("SELECT * FROM party_links WHERE id = ?", (lid,)).fetchone()
        return _link(r)

    def party(self, pid: int) -> Party:
        with self._lock:
            r = self.conn.execute("SELECT * FROM parties WHERE id = ?", (pid,)).fetchone()
        if r is None:
            raise NoSuchRecord(f"no responsible party {pid}")
        return Party(r["id"], r["name"], r["address"], r["phone"], r["email"], r["recorded_by"], t(r["recorded_at"]))

    def parties(self) -> list[Party]:
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM parties ORDER BY name, id")]
        return [self.party(i) for i in ids]

    def links(self, *, party_id: int | None = None, place: str | None = None,
              place_id: str | None = None) -> list[PartyLink]:
        where, args = [], []
        for col, v in (("party_id", party_id), ("place", place), ("place_id", place_id)):
            if v is not None:
                where.append(f"{col} = ?")
                args.append(v)
        with self._lock:
            rows = self.conn.execute("SELECT * FROM party_links" + (" WHERE " + " AND ".join(where) if where else "")
                                     + " ORDER BY since, id", args).fetchall()
        return [_link(r) for r in rows]

    # -- cases --------------------------------------------------------------------------------
    def open_case(self, *, origin: str, incident_id: int | None, outfall: str | None, location: str,
                  description: str, reporter: str | None, reporter_contact: str | None, observed_at: datetime,
                  by: str) -> Case:
        with self._lock, transaction(self.conn):
            now = self.clock()
            cid = self._insert("cases", {
                "number": self._number("cases", "IDDE", now), "origin": origin, "incident_id": incident_id,
                "outfall": outfall, "location": location, "description": description, "reporter": reporter,
                "reporter_contact": reporter_contact, "observed_at": iso(observed_at), "opened_by": by,
                "opened_at": iso(now)})
        return self.case(cid)

    def add_entry(self, case_id: int, *, kind: str, at: datetime, by: str, notes: str, location: str | None = None,
                  dry_weather: bool | None = None, flow_observed: bool | None = None, finding: str | None = None,
                  outcome: str | None = None, verification: str | None = None, recorded_by: str,
                  attachments: Iterable[tuple[str, str, int, str, str]] = (),
                  then: Callable[[sqlite3.Connection, int], None] | None = None) -> Entry:
        """``attachments``: (sha256, media_type, bytes, name, kind) of files already kept;
        ``then``: writes rows of the entry's own (a trace visit's) in the same transaction."""
        with self._lock, transaction(self.conn):
            eid = self._insert("case_entries", {
                "case_id": case_id, "kind": kind, "at": iso(at), "by": by, "notes": notes, "location": location,
                "dry_weather": None if dry_weather is None else int(dry_weather),
                "flow_observed": None if flow_observed is None else int(flow_observed), "finding": finding,
                "outcome": outcome, "verification": verification, "recorded_by": recorded_by,
                "recorded_at": self._now()})
            for a in attachments:
                self.conn.execute("INSERT OR IGNORE INTO attachments VALUES (?,?,?,?,?,?)", (eid, *a))
            if then is not None:
                then(self.conn, eid)
        return next(e for e in self.case(case_id).entries if e.id == eid)

    def case(self, cid: int) -> Case:
        with self._lock:
            r = self.conn.execute("SELECT * FROM cases WHERE id = ?", (cid,)).fetchone()
            if r is None:
                raise NoSuchRecord(f"no case {cid}")
            entries = []
            for e in self.conn.execute("SELECT * FROM case_entries WHERE case_id = ? ORDER BY at, id", (cid,)):
                atts = tuple(Attachment(a["entry_id"], a["sha256"], a["media_type"], a["bytes"], a["name"], a["kind"])
                             for a in self.conn.execute("SELECT * FROM attachments WHERE entry_id = ? ORDER BY rowid",
                                                        (e["id"],)))
                entries.append(Entry(e["id"], e["case_id"], e["kind"], t(e["at"]), e["by"], e["notes"], e["location"],
                                     _bool(e["dry_weather"]), _bool(e["flow_observed"]), e["finding"], e["outcome"],
                                     e["verification"], e["recorded_by"], t(e["recorded_at"]), atts))
        return Case(r["id"], r["number"], r["origin"], r["incident_id"], r["outfall"], r["location"], r["description"],
                    r["reporter"], r["reporter_contact"], t(r["observed_at"]), r["opened_by"], t(r["opened_at"]),
                    tuple(entries))

    def trace_visits(self, case_id: int, thresholds: tuple[Threshold, ...]) -> list[TraceVisit]:
        """The case's trace visits (:mod:`.traces`), their field tests judged by ``thresholds``."""
        from . import traces
        with self._lock:
            return traces.read(self.conn, case_id, thresholds)

    def cases(self, *, outfall: str | None = None, incident_id: int | None = None) -> list[Case]:
        """Newest first."""
        where, args = [], []
        for col, v in (("outfall", outfall), ("incident_id", incident_id)):
            if v is not None:
                where.append(f"{col} = ?")
                args.append(v)
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM cases" + (" WHERE " + " AND ".join(where)
                                                                              if where else "") + " ORDER BY id DESC",
                                                   args)]
        return [self.case(i) for i in ids]

    # -- samples, custody, lab results ----------------------------------------------------------
    def add_sample(self, *, station: str, taken_at: datetime, source: str, collected_by: str, by: str,
                   event_key: str | None = None, device: str | None = None, bottle: int | None = None,
                   trigger: str | None = None, volume_ml: float | None = None, episode: str | None = None,
                   incident_id: int | None = None, case_id: int | None = None, note: str | None = None) -> Sample | None:
        """A sample record; None when ``event_key`` (a logger's bottle record) is recorded already."""
        with self._lock, transaction(self.conn):
            if event_key is not None and self.conn.execute("SELECT 1 FROM samples WHERE event_key = ?",
                                                           (event_key,)).fetchone():
                return None
            sid = self._insert("samples", {
                "number": self._number("samples", "S", taken_at), "station": station, "taken_at": iso(taken_at),
                "source": source, "event_key": event_key, "device": device, "bottle": bottle, "trigger": trigger,
                "volume_ml": volume_ml, "collected_by": collected_by, "episode": episode, "incident_id": incident_id,
                "case_id": case_id, "note": note, "recorded_by": by, "recorded_at": self._now()})
        return self.sample(sid)

    def link_sample(self, sample_id: int, case_id: int, *, by: str) -> None:
        with self._lock, transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO sample_links VALUES (?,?,?,?)",
                              (sample_id, case_id, by, self._now()))

    def add_custody(self, sample_id: int, *, at: datetime, relinquished_by: str, received_by: str, lab: str | None,
                    note: str | None, by: str) -> Custody:
        with self._lock, transaction(self.conn):
            cid = self._insert("custody", {"sample_id": sample_id, "at": iso(at), "relinquished_by": relinquished_by,
                                           "received_by": received_by, "lab": lab, "note": note, "recorded_by": by,
                                           "recorded_at": self._now()})
        return next(c for c in self.sample(sample_id).custody if c.id == cid)

    def add_lab_results(self, *, name: str, sha256: str, lab: str | None, rows: list[dict[str, Any]], by: str) -> int:
        """One import, all its rows or none (one transaction). Returns the import's id."""
        with self._lock, transaction(self.conn):
            iid = self._insert("lab_imports", {"name": name, "sha256": sha256, "lab": lab, "rows": len(rows),
                                               "recorded_by": by, "recorded_at": self._now()})
            for row in rows:
                self._insert("lab_results", {"import_id": iid, **row})
        return iid

    def imported(self, sha256: str) -> int | None:
        with self._lock:
            r = self.conn.execute("SELECT id FROM lab_imports WHERE sha256 = ?", (sha256,)).fetchone()
        return None if r is None else int(r[0])

    def sample(self, sid: int) -> Sample:
        with self._lock:
            r = self.conn.execute("SELECT * FROM samples WHERE id = ?", (sid,)).fetchone()
            if r is None:
                raise NoSuchRecord(f"no sample {sid}")
            cases = tuple(x[0] for x in self.conn.execute("SELECT case_id FROM sample_links WHERE sample_id = ? "
                                                          "ORDER BY case_id", (sid,)))
            custody = tuple(Custody(c["id"], c["sample_id"], t(c["at"]), c["relinquished_by"], c["received_by"],
                                    c["lab"], c["note"], c["recorded_by"])
                            for c in self.conn.execute("SELECT * FROM custody WHERE sample_id = ? ORDER BY at, id",
                                                       (sid,)))
            results = tuple(_result(x) for x in self.conn.execute(
                "SELECT * FROM lab_results WHERE sample_id = ? ORDER BY import_id, line", (sid,)))
        return Sample(r["id"], r["number"], r["station"], t(r["taken_at"]), r["source"], r["event_key"], r["device"],
                      r["bottle"], r["trigger"], r["volume_ml"], r["collected_by"], r["episode"], r["incident_id"],
                      r["case_id"], r["note"], r["recorded_by"], t(r["recorded_at"]), cases, custody, results)

    def sample_by_number(self, number: str) -> Sample | None:
        with self._lock:
            r = self.conn.execute("SELECT id FROM samples WHERE number = ?", (number,)).fetchone()
        return None if r is None else self.sample(int(r[0]))

    def samples(self, *, case_id: int | None = None, incident_id: int | None = None,
                station: str | None = None) -> list[Sample]:
        """Newest first. ``case_id``: the case's own, those linked to it, and its incident's."""
        where: list[str] = []
        args: list[int | str] = []
        if case_id is not None:
            case = self.case(case_id)
            where.append("(case_id = ? OR id IN (SELECT sample_id FROM sample_links WHERE case_id = ?)"
                         + (" OR incident_id = ?" if case.incident_id else "") + ")")
            args += [case_id, case_id] + ([case.incident_id] if case.incident_id else [])
        if incident_id is not None:
            where.append("incident_id = ?")
            args.append(incident_id)
        if station is not None:
            where.append("station = ?")
            args.append(station)
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM samples" + (" WHERE " + " AND ".join(where)
                                                                                if where else "")
                                                   + " ORDER BY taken_at DESC, id DESC", args)]
        return [self.sample(i) for i in ids]

    # -- notices --------------------------------------------------------------------------------
    def issue_notice(self, *, kind: str, law: str, case_id: int | None, site: str | None, outfall: str | None,
                     party_id: int, place: str, violation: str, requirements: list[str], remedy: str,
                     remediation_days: int | None, violation_since: date, prior: list[date], issued_at: datetime,
                     by: str, signatory: str, provisions: Iterable[str] = (),
                     remedies: dict[str, str] | None = None, recipients: Iterable[Recipient] = (),
                     corrects: int | None = None,
                     letter: Callable[[Notice], tuple[bytes, Facts]] | None = None) -> Notice:
        """A notice, its recipients (``party_id`` first, as the addressee) and — ``letter`` given —
        the letter as served, frozen in the same transaction: all or nothing."""
        self.party(party_id)
        recipients = list(recipients)
        extra = [r for r in recipients if r.party_id != party_id]
        addressee = next((r for r in recipients if r.party_id == party_id), None)
        for r in extra:
            self.party(r.party_id)
        if corrects is not None:
            self.notice(corrects)
        with self._lock, transaction(self.conn):
            now = self._now()
            nid = self._insert("notices", {
                "number": self._number("notices", "NOV" if kind == "nov" else "SWO", issued_at), "kind": kind,
                "law": law, "case_id": case_id, "site": site, "outfall": outfall, "party_id": party_id,
                "place": place, "violation": violation, "requirements": json.dumps(requirements), "remedy": remedy,
                "remediation_days": remediation_days, "violation_since": violation_since.isoformat(),
                "prior": json.dumps([d.isoformat() for d in prior]), "issued_at": iso(issued_at), "issued_by": by,
                "signatory": signatory, "recorded_at": now, "provisions": json.dumps(list(provisions)),
                "remedies": json.dumps(remedies or {}), "corrects": corrects})
            first = addressee or Recipient(0, party_id, "responsible person", "certified_mail")
            for r in [first, *extra]:
                self._insert("notice_recipients", {"notice_id": nid, "party_id": r.party_id, "role": r.role,
                                                   "method": r.method, "reference": r.reference,
                                                   "recorded_by": by, "recorded_at": now})
            if letter is not None:
                pdf, facts = letter(self.notice(nid))
                text = json.dumps(facts, sort_keys=True, ensure_ascii=False, default=str)
                self._insert("notice_letters", {"notice_id": nid, "pdf": pdf,
                                                "pdf_sha256": hashlib.sha256(pdf).hexdigest(), "facts": text,
                                                "facts_sha256": hashlib.sha256(text.encode()).hexdigest(),
                                                "made_at": now})
        return self.notice(nid)

    def notice_letter(self, nid: int) -> FrozenLetter | None:
        """The letter frozen at issue; None for a notice issued before letters were kept."""
        with self._lock:
            r = self.conn.execute("SELECT * FROM notice_letters WHERE notice_id = ?", (nid,)).fetchone()
        if r is None:
            return None
        return FrozenLetter(r["notice_id"], bytes(r["pdf"]), r["pdf_sha256"], json.loads(r["facts"]),
                            r["facts_sha256"], t(r["made_at"]))

    def notice_event(self, notice_id: int, *, kind: str, at: datetime, by: str, reference: str | None = None,
                     outcome: str | None = None, note: str | None = None, recipient_id: int | None = None) -> Notice:
        with self._lock, transaction(self.conn):
            self._insert("notice_events", {"notice_id": notice_id, "kind": kind, "at": iso(at), "reference": reference,
                                           "outcome": outcome, "note": note, "recorded_by": by,
                                           "recorded_at": self._now(), "recipient_id": recipient_id})
        return self.notice(notice_id)

    def notice(self, nid: int) -> Notice:
        with self._lock:
            r = self.conn.execute("SELECT * FROM notices WHERE id = ?", (nid,)).fetchone()
            if r is None:
                raise NoSuchRecord(f"no notice {nid}")
            events = tuple(ClockEvent(e["id"], e["kind"], t(e["at"]), e["reference"], e["outcome"], e["note"], None,
                                 e["recorded_by"], e["recipient_id"])
                           for e in self.conn.execute("SELECT * FROM notice_events WHERE notice_id = ? ORDER BY at, id",
                                                      (nid,)))
            recipients = tuple(Recipient(x["id"], x["party_id"], x["role"], x["method"], x["reference"])
                               for x in self.conn.execute("SELECT * FROM notice_recipients WHERE notice_id = ? "
                                                          "ORDER BY id", (nid,)))
            by = self.conn.execute("SELECT id, number FROM notices WHERE corrects = ? ORDER BY id LIMIT 1",
                                   (nid,)).fetchone()
        if not recipients:   # recorded before notices had recipients: the party it was issued to
            recipients = (Recipient(0, r["party_id"], "responsible person", "certified_mail"),)
        return Notice(r["id"], r["number"], r["kind"], r["law"], r["case_id"], r["site"], r["outfall"], r["party_id"],
                      r["place"], r["violation"], tuple(json.loads(r["requirements"])), r["remedy"],
                      r["remediation_days"], date.fromisoformat(r["violation_since"]),
                      tuple(date.fromisoformat(d) for d in json.loads(r["prior"])), t(r["issued_at"]), r["issued_by"],
                      r["signatory"], events, tuple(json.loads(r["provisions"])),
                      tuple(json.loads(r["remedies"]).items()), r["corrects"], recipients,
                      (by[0], by[1]) if by else None)

    def corrections_of(self, nid: int) -> list[Notice]:
        with self._lock:
            ids = [x[0] for x in self.conn.execute("SELECT id FROM notices WHERE corrects = ? ORDER BY id", (nid,))]
        return [self.notice(i) for i in ids]

    def notices(self, *, case_id: int | None = None, party_id: int | None = None) -> list[Notice]:
        """Newest first. ``party_id``: the notices it is the addressee or a recipient of."""
        where, args = [], []
        if case_id is not None:
            where.append("case_id = ?")
            args.append(case_id)
        if party_id is not None:
            where.append("(party_id = ? OR id IN (SELECT notice_id FROM notice_recipients WHERE party_id = ?))")
            args += [party_id, party_id]
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM notices" + (" WHERE " + " AND ".join(where)
                                                                                if where else "") + " ORDER BY id DESC",
                                                   args)]
        return [self.notice(i) for i in ids]

    # -- releases -------------------------------------------------------------------------------
    def add_release(self, *, law: str, kind: str, material: str, location: str, outfall: str | None,
                    party_id: int | None, case_id: int | None, known_at: datetime, reported_by: str,
                    commercial: bool, note: str | None, by: str) -> Release:
        with self._lock, transaction(self.conn):
            rid = self._insert("releases", {
                "number": self._number("releases", "REL", known_at), "law": law, "kind": kind, "material": material,
                "location": location, "outfall": outfall, "party_id": party_id, "case_id": case_id,
                "known_at": iso(known_at), "reported_by": reported_by, "commercial": int(commercial), "note": note,
                "recorded_by": by, "recorded_at": self._now()})
        return self.release(rid)

    def release_event(self, release_id: int, *, kind: str, at: datetime, note: str | None, by: str) -> Release:
        with self._lock, transaction(self.conn):
            self._insert("release_events", {"release_id": release_id, "kind": kind, "at": iso(at), "note": note,
                                            "recorded_by": by, "recorded_at": self._now()})
        return self.release(release_id)

    def release(self, rid: int) -> Release:
        with self._lock:
            r = self.conn.execute("SELECT * FROM releases WHERE id = ?", (rid,)).fetchone()
            if r is None:
                raise NoSuchRecord(f"no release {rid}")
            events = tuple(ClockEvent(e["id"], e["kind"], t(e["at"]), note=e["note"], recorded_by=e["recorded_by"])
                           for e in self.conn.execute("SELECT * FROM release_events WHERE release_id = ? "
                                                      "ORDER BY at, id", (rid,)))
        return Release(r["id"], r["number"], r["law"], r["kind"], r["material"], r["location"], r["outfall"],
                       r["party_id"], r["case_id"], t(r["known_at"]), r["reported_by"], bool(r["commercial"]),
                       r["note"], r["recorded_by"], events)

    def releases(self) -> list[Release]:
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM releases ORDER BY known_at DESC, id DESC")]
        return [self.release(i) for i in ids]

    # -- SWPPP reviews --------------------------------------------------------------------------
    def add_swppp(self, *, site: str, title: str, party_id: int | None, received_at: datetime, deviates: bool,
                  by: str) -> Swppp:
        with self._lock, transaction(self.conn):
            sid = self._insert("swppp", {"number": self._number("swppp", "SWPPP", received_at), "site": site,
                                         "title": title, "party_id": party_id, "received_at": iso(received_at),
                                         "deviates": int(deviates), "recorded_by": by, "recorded_at": self._now()})
        return self.swppp(sid)

    def swppp_event(self, swppp_id: int, *, kind: str, at: datetime, by: str, outcome: str | None = None,
                    days: int | None = None, note: str | None = None) -> Swppp:
        with self._lock, transaction(self.conn):
            self._insert("swppp_events", {"swppp_id": swppp_id, "kind": kind, "at": iso(at), "outcome": outcome,
                                          "days": days, "note": note, "recorded_by": by, "recorded_at": self._now()})
        return self.swppp(swppp_id)

    def swppp(self, sid: int) -> Swppp:
        with self._lock:
            r = self.conn.execute("SELECT * FROM swppp WHERE id = ?", (sid,)).fetchone()
            if r is None:
                raise NoSuchRecord(f"no SWPPP review {sid}")
            events = tuple(ClockEvent(e["id"], e["kind"], t(e["at"]), outcome=e["outcome"], note=e["note"], days=e["days"],
                                 recorded_by=e["recorded_by"])
                           for e in self.conn.execute("SELECT * FROM swppp_events WHERE swppp_id = ? ORDER BY at, id",
                                                      (sid,)))
        return Swppp(r["id"], r["number"], r["site"], r["title"], r["party_id"], t(r["received_at"]),
                     bool(r["deviates"]), r["recorded_by"], events)

    def swppps(self) -> list[Swppp]:
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM swppp ORDER BY received_at DESC, id DESC")]
        return [self.swppp(i) for i in ids]


def _bool(v: int | None) -> bool | None:
    return None if v is None else bool(v)


def _link(r: sqlite3.Row) -> PartyLink:
    return PartyLink(r["id"], r["party_id"], r["place"], r["place_id"], r["role"], t(r["since"]), r["recorded_by"])


def _result(x: sqlite3.Row) -> LabResult:
    return LabResult(x["id"], x["import_id"], x["sample_id"], x["line"], x["parameter"], x["value"], x["unit"],
                     x["value_std"], x["std_unit"], x["method"], x["detection_limit"], x["dl_std"], x["qualifier"],
                     x["censor"], t(x["analysed_at"]), x["threshold"], x["verdict"])


__all__ = ["ComplianceStore", "Party", "PartyLink", "Case", "Entry", "Attachment", "Sample", "Custody", "LabResult",
           "Notice", "Recipient", "FrozenLetter", "Release", "Swppp", "ClockEvent", "iso", "ROLES", "METHODS"]
