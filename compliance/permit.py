"""The MS4 general permit the annual report answers to: its name, its reporting year, and
the certification its signatory makes.

New York's SPDES General Permit for Stormwater Discharges from Municipal Separate Storm
Sewer Systems, **GP-0-24-001** (effective 3 January 2024, replacing GP-0-15-003), moved the
reporting year to **3 January – 2 January** (it was 10 March – 9 March), with the annual
report due **1 April** after the year ends and an interim progress certification every six
months. Source read: the permit's summary by Walden Environmental Engineering, "NYSDEC Issues
New MS4 General Permit (GP-0-24-001)", 8 February 2024; the permit's own text was not found
in the sources searched, so the year's first day is configurable (registry
``annual_report.year_starts``) and this reading is stated in docs/compliance.md.

The certification is the one 40 CFR 122.22(d) prescribes for every NPDES (and so SPDES)
report, signed by a principal executive officer or ranking elected official or a duly
authorized representative (40 CFR 122.22(a)(3), (b)).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo

from ..contract.timeutil import parse_month_day


@dataclass(frozen=True)
class Permit:
    id: str
    title: str
    year_starts: tuple[int, int]        # (month, day): the reporting year's first day
    report_due: tuple[int, int]         # (month, day) after the year ends
    source: str


GP_0_24_001 = Permit(
    id="GP-0-24-001",
    title="NYSDEC SPDES General Permit for Stormwater Discharges from Municipal Separate Storm Sewer Systems (MS4s)",
    year_starts=(1, 3), report_due=(4, 1),
    source="reporting year 3 January - 2 January, annual report due 1 April (GP-0-24-001, effective 3 January 2024)")

PERMITS = {p.id: p for p in (GP_0_24_001,)}
DEFAULT = GP_0_24_001

CERTIFICATION = (
    "I certify under penalty of law that this document and all attachments were prepared under my direction or "
    "supervision in accordance with a system designed to assure that qualified personnel properly gather and "
    "evaluate the information submitted. Based on my inquiry of the person or persons who manage the system, or "
    "those persons directly responsible for gathering the information, the information submitted is, to the best "
    "of my knowledge and belief, true, accurate, and complete. I am aware that there are significant penalties for "
    "submitting false information, including the possibility of fine and imprisonment for knowing violations.")
CERTIFICATION_SOURCE = "40 CFR 122.22(d)"


@dataclass(frozen=True)
class ReportingYear:
    """Reporting year ``year``: from ``starts`` (month, day) in ``year``, 00:00 in the town's
    zone, to the same instant a year later (exclusive)."""

    year: int
    starts: tuple[int, int]
    tz: tzinfo

    @property
    def start(self) -> datetime:
        return datetime(self.year, *self.starts, tzinfo=self.tz)

    @property
    def end(self) -> datetime:
        return datetime(self.year + 1, *self.starts, tzinfo=self.tz)

    @classmethod
    def containing(cls, t: datetime, starts: tuple[int, int], tz: tzinfo) -> "ReportingYear":
        local = t.astimezone(tz)
        year = local.year if (local.month, local.day) >= starts else local.year - 1
        return cls(year, starts, tz)


__all__ = ["Permit", "GP_0_24_001", "PERMITS", "DEFAULT", "CERTIFICATION", "CERTIFICATION_SOURCE",
           "parse_month_day", "ReportingYear"]
