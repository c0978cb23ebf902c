"""Construction-site inspection reports: what Schenectady ch. 148 Art. I asks the
licensed/certified professional to record at each inspection, items (1)–(6), the
professional's certification, and photos (the marked-up site map among them).

A report is never changed or deleted (SQLite triggers); a photo may be added to it later
(the API's two-step upload). Recording one is also recording the inspection: the
inspection service closes the site's due items, in the incident database and the alert
engine alike (``services/inspections.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...contract.text import NOT_BLANK
from ...sqlite import inserted_id, transaction
from ...contract.when import RecordTime
from .photos import Photo
from .table import RecordTable, append_only

PROVISION = ("Schenectady ch. 148 Art. I, construction inspections, subsection B: during each inspection the "
             "licensed/certified professional shall record items (1) to (6)")

# (field, number, what the form asks, the law's words)
ITEMS: tuple[tuple[str, str, str, str], ...] = (
    ("disturbed_areas", "(1)", "Disturbed areas and drainage pathways; areas to be disturbed or worked in the next "
     "14 days",
     "On a site map, indicate the extent of all disturbed site areas and drainage pathways. Indicate site areas that "
     "are expected to undergo initial disturbance or significant site work within the next fourteen-day period"),
    ("stabilized_areas", "(2)", "Areas stabilised, temporarily or permanently",
     "Indicate on a site map all areas of the site that have undergone temporary or permanent stabilization"),
    ("idle_areas", "(3)", "Disturbed areas with no active work in the previous 14 days",
     "Indicate all disturbed site areas that have not undergone active site work during the previous fourteen-day "
     "period"),
    ("sediment_pct", "(4)", "Sediment accumulation, % of the sediment storage volume",
     "Inspect all sediment control practices and record the approximate degree of sediment accumulation as a "
     "percentage of the sediment storage volume"),
    ("maintenance", "(5)", "Maintenance needs; erosion, deposition and ponding found",
     "Inspect all erosion and sediment control practices and record all maintenance requirements, such as verifying "
     "the integrity of barrier or diversion systems and containment systems. Identify any evidence of rill or gully "
     "erosion occurring on slopes and any loss of stabilizing vegetation or seeding/mulching. Document any excessive "
     "deposition of sediment or ponding water along barrier or diversion systems. Record the depth of sediment "
     "within containment structures, any erosion near outlet and overflow structures, and verify the ability of "
     "rock filters around perforated riser pipes to pass water"),
    ("deficiencies", "(6)", "Deficiencies in carrying out the SWPPP",
     "All deficiencies that are identified with the implementation of the SWPPP"),
)

# ch. 148 § 148-5, "licensed/certified professional"; the closing words follow the law's own
# SWPPP certification ("true, accurate, and complete").
CERTIFICATION = (
    "I certify that I am a licensed/certified professional — a person currently licensed to practice engineering or "
    "landscape architecture in New York State, or a Certified Professional in Erosion and Sediment Control (CPESC) — "
    "that I conducted this inspection of the site at the time stated, and that the information recorded in this "
    "report is, to the best of my knowledge and belief, true, accurate, and complete.")


class Credential(str, enum.Enum):
    """What makes the inspector a licensed/certified professional (ch. 148 definitions)."""

    PE = "pe"          # licensed to practice engineering in New York State
    RLA = "rla"        # licensed to practice landscape architecture in New York State
    CPESC = "cpesc"    # Certified Professional in Erosion and Sediment Control

    @property
    def label(self) -> str:
        return {"pe": "NYS licensed professional engineer", "rla": "NYS licensed landscape architect",
                "cpesc": "CPESC"}[self.value]


Text = Field(min_length=1, max_length=4000, pattern=NOT_BLANK)


class ReportIn(BaseModel):
    """An inspection report as the form or the API gives it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    site: str = Field(min_length=1, max_length=64, description="construction site id")
    at: RecordTime = Field(description="when the site was inspected (with its UTC offset, 2000-2100)")
    inspector: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK,
                           description="the licensed/certified professional who inspected")
    credential: Credential
    license_no: str = Field(min_length=1, max_length=64, pattern=NOT_BLANK,
                            description="licence or CPESC certification number")
    disturbed_areas: str = Text
    stabilized_areas: str = Text
    idle_areas: str = Text
    sediment_pct: float = Field(ge=0, le=100, allow_inf_nan=False,
                                description="approximate sediment accumulation [% of the sediment storage volume]")
    sediment_note: str | None = Field(default=None, max_length=4000, description="per practice, if several")
    maintenance: str = Text
    deficiencies: str = Text
    certified: Literal[True] = Field(description="the inspector makes the certification (the report's "
                                                 "`certification` text): required")


@dataclass(frozen=True)
class InspectionReport:
    id: int
    municipality: str
    site: str
    at: datetime
    inspector: str
    credential: Credential
    license_no: str
    disturbed_areas: str
    stabilized_areas: str
    idle_areas: str
    sediment_pct: float
    sediment_note: str | None
    maintenance: str
    deficiencies: str
    certification: str
    recorded_by: str
    recorded_at: datetime
    photos: tuple[Photo, ...] = ()
    closed: tuple[int, ...] = ()        # incidents the inspection resolved


SCHEMA = """
CREATE TABLE IF NOT EXISTS inspection_reports (
    id INTEGER PRIMARY KEY,
    municipality TEXT NOT NULL,
    site TEXT NOT NULL,
    at TEXT NOT NULL,
    inspector TEXT NOT NULL,
    credential TEXT NOT NULL CHECK (credential IN ('pe', 'rla', 'cpesc')),
    license_no TEXT NOT NULL,
    disturbed_areas TEXT NOT NULL,       -- (1)
    stabilized_areas TEXT NOT NULL,      -- (2)
    idle_areas TEXT NOT NULL,            -- (3)
    sediment_pct REAL NOT NULL CHECK (sediment_pct BETWEEN 0 AND 100),   -- (4)
    sediment_note TEXT,
    maintenance TEXT NOT NULL,           -- (5)
    deficiencies TEXT NOT NULL,          -- (6)
    certification TEXT NOT NULL,         -- the statement certified, word for word
    recorded_by TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS inspection_reports_site ON inspection_reports (municipality, site, at);
CREATE TABLE IF NOT EXISTS inspection_photos (
    report_id INTEGER NOT NULL REFERENCES inspection_reports (id),
    sha256 TEXT NOT NULL,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    added_by TEXT NOT NULL,
    added_at TEXT NOT NULL,
    PRIMARY KEY (report_id, sha256)
);
CREATE TABLE IF NOT EXISTS inspection_closures (
    report_id INTEGER NOT NULL REFERENCES inspection_reports (id),
    incident_id INTEGER NOT NULL,
    PRIMARY KEY (report_id, incident_id)
);
""" + append_only("inspection_reports", changed="an inspection report is never changed",
                         deleted="an inspection report is kept") \
    + append_only("inspection_photos", changed="an inspection photo is never changed", deleted="an inspection photo is kept")


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="seconds")


class InspectionReports(RecordTable):
    SCHEMA = SCHEMA

    def add(self, municipality: str, report: ReportIn, *, by: str, photos: list[Photo]) -> InspectionReport:
        now = _iso(self.clock())
        with self._lock, transaction(self.conn):
            cur = self.conn.execute(
                "INSERT INTO inspection_reports (municipality, site, at, inspector, credential, license_no,"
                " disturbed_areas, stabilized_areas, idle_areas, sediment_pct, sediment_note, maintenance,"
                " deficiencies, certification, recorded_by, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (municipality, report.site, _iso(report.at), report.inspector, report.credential.value,
                 report.license_no, report.disturbed_areas, report.stabilized_areas, report.idle_areas,
                 report.sediment_pct, report.sediment_note or None, report.maintenance, report.deficiencies,
                 CERTIFICATION, by, now))
            rid = inserted_id(cur)
            for p in photos:
                self._photo(rid, p, by, now)
            return self._get(rid)

    def add_photo(self, rid: int, photo: Photo, *, by: str) -> InspectionReport:
        with self._lock, transaction(self.conn):
            self._photo(rid, photo, by, _iso(self.clock()))
            return self._get(rid)

    def closed(self, rid: int, incident_ids: list[int]) -> None:
        with self._lock, transaction(self.conn):
            self.conn.executemany("INSERT OR IGNORE INTO inspection_closures VALUES (?,?)",
                                  [(rid, i) for i in incident_ids])

    def get(self, municipality: str, rid: int) -> InspectionReport | None:
        with self._lock:
            row = self.conn.execute("SELECT id FROM inspection_reports WHERE id = ? AND municipality = ?",
                                    (rid, municipality)).fetchone()
            return self._get(rid) if row else None

    def list(self, municipality: str, *, site: str | None = None, limit: int = 100,
             offset: int = 0) -> list[InspectionReport]:
        """Newest inspection first."""
        q = "SELECT id FROM inspection_reports WHERE municipality = ?" + (" AND site = ?" if site else "")
        args = (municipality, site) if site else (municipality,)
        with self._lock:
            ids = [r[0] for r in self.conn.execute(q + " ORDER BY at DESC, id DESC LIMIT ? OFFSET ?",
                                                   (*args, limit, offset))]
            return [self._get(i) for i in ids]

    def _photo(self, rid: int, p: Photo, by: str, at: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO inspection_photos VALUES (?,?,?,?,?,?,?)",
                          (rid, p.sha256, p.media_type, p.size, p.name, by, at))

    def _get(self, rid: int) -> InspectionReport:
        r = self.conn.execute("SELECT * FROM inspection_reports WHERE id = ?", (rid,)).fetchone()
        photos = tuple(Photo(p["sha256"], p["media_type"], p["bytes"], p["name"]) for p in self.conn.execute(
            "SELECT * FROM inspection_photos WHERE report_id = ? ORDER BY rowid", (rid,)))
        closed = tuple(c[0] for c in self.conn.execute(
            "SELECT incident_id FROM inspection_closures WHERE report_id = ? ORDER BY incident_id", (rid,)))
        return InspectionReport(
            r["id"], r["municipality"], r["site"], datetime.fromisoformat(r["at"]), r["inspector"],
            Credential(r["credential"]), r["license_no"], r["disturbed_areas"], r["stabilized_areas"],
            r["idle_areas"], r["sediment_pct"], r["sediment_note"], r["maintenance"], r["deficiencies"],
            r["certification"], r["recorded_by"], datetime.fromisoformat(r["recorded_at"]), photos, closed)


__all__ = ["InspectionReport", "InspectionReports", "ReportIn", "Credential", "ITEMS", "CERTIFICATION", "PROVISION"]
