"""Trace visits: the crew's visits to structures of the storm-sewer network while tracing an
illicit discharge up from its outfall, each a ``tracing`` entry of the case's thread with
what was found at the structure: flow present or absent, odour, colour, and field tests.

A visit narrows the suspect reach (``network.bisect``): flow present at a manhole puts the
source upstream of it; no flow puts it between the manhole and the last point where flow
was seen. The records are append-only like the rest of ``compliance.db``: a visit recorded
in error is corrected by a later visit at the same structure (the latest one counts).

Field tests are compared with the town's screening thresholds (``compliance.labs``: the
same table the lab results are judged by, ``screening-thresholds.yaml`` overriding it),
plus :data:`FIELD_THRESHOLDS` for what that table lacks. Temperature is recorded, not
judged: its meaning is relative (warmer than the stream, than the next manhole)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from .errors import ComplianceError
from .labs import Threshold, compare


class Flow(str, Enum):
    PRESENT = "present"
    ABSENT = "absent"


class Indicator(str, Enum):
    """The field tests a tracing crew runs, with the units each may be recorded in."""
    AMMONIA = "ammonia"            # as N
    SURFACTANTS = "surfactants"    # as MBAS (detergents)
    FLUORIDE = "fluoride"
    POTASSIUM = "potassium"
    TEMPERATURE = "temperature"
    E_COLI = "E. coli"

    @property
    def units(self) -> tuple[str, ...]:
        return UNITS[self]


UNITS: dict[Indicator, tuple[str, ...]] = {
    Indicator.AMMONIA: ("mg/L",), Indicator.SURFACTANTS: ("mg/L",), Indicator.FLUORIDE: ("mg/L",),
    Indicator.POTASSIUM: ("mg/L",), Indicator.TEMPERATURE: ("°C", "°F"),
    Indicator.E_COLI: ("CFU/100 mL", "MPN/100 mL"),
}

# What the screening thresholds (compliance.labs.DEFAULT_THRESHOLDS) lack, for field tests.
FIELD_THRESHOLDS: tuple[Threshold, ...] = (
    Threshold.builtin(parameter="potassium", limit=20.0, unit="mg/L",
                      source="LaMotte, StormWatch MS4 test kit manual, p. 6, 'Action Level' table: potassium >= 20 mg/L "
                             "(the industrial benchmark of the Center for Watershed Protection's IDDE guidance manual, Brown, "
                             "Caraco & Pitt, 2004, as that kit restates it)"),
)


@dataclass(frozen=True)
class FieldTest:
    indicator: Indicator
    value: float
    unit: str
    verdict: str = ""              # exceeds | below | no_threshold (set when read back)
    threshold: str | None = None   # the threshold's label, e.g. "ammonia >= 0.5 mg/L"

    def __post_init__(self) -> None:
        if self.unit not in self.indicator.units:
            raise ComplianceError(f"{self.indicator.value}: unit {self.unit!r} is not one of "
                                  f"{', '.join(self.indicator.units)}")
        if self.value != self.value or self.value in (float("inf"), float("-inf")):
            raise ComplianceError(f"{self.indicator.value}: {self.value} is not a number")
        if self.value < 0 and self.indicator is not Indicator.TEMPERATURE:
            raise ComplianceError(f"{self.indicator.value}: {self.value:g} {self.unit} is below zero")


@dataclass(frozen=True)
class TraceVisit:
    entry_id: int
    case_id: int
    structure: str
    at: datetime
    by: str
    flow: Flow
    odour: str | None
    colour: str | None
    notes: str
    tests: tuple[FieldTest, ...] = ()

    @property
    def exceeds(self) -> tuple[FieldTest, ...]:
        return tuple(t for t in self.tests if t.verdict == "exceeds")


def judge(test: FieldTest, thresholds: tuple[Threshold, ...]) -> FieldTest:
    """The test with its verdict against the town's thresholds (the first that it exceeds,
    else the first that applies)."""
    if test.indicator is Indicator.TEMPERATURE:
        return FieldTest(test.indicator, test.value, test.unit, "no_threshold", None)
    table = thresholds + tuple(f for f in FIELD_THRESHOLDS if not any(f.names() & t.names() for t in thresholds))
    got = compare(test.indicator.value, test.value, test.unit, censor="", qualifier="", dl=None, thresholds=table)
    best = next((c for c in got if c.verdict == "exceeds"), got[0])
    return FieldTest(test.indicator, test.value, test.unit, best.verdict,
                     best.threshold.label if best.threshold is not None else None)


def write(conn: sqlite3.Connection, entry_id: int, structure: str, flow: Flow, odour: str | None,
          colour: str | None, tests: tuple[FieldTest, ...]) -> None:
    """The visit's own rows, inside the transaction that adds its thread entry."""
    conn.execute("INSERT INTO trace_visits (entry_id, structure, flow, odour, colour) VALUES (?,?,?,?,?)",
                 (entry_id, structure, flow.value, odour, colour))
    conn.executemany("INSERT INTO field_tests (entry_id, indicator, value, unit) VALUES (?,?,?,?)",
                     [(entry_id, t.indicator.value, t.value, t.unit) for t in tests])


def read(conn: sqlite3.Connection, case_id: int, thresholds: tuple[Threshold, ...]) -> list[TraceVisit]:
    """The case's trace visits, in the order they were made."""
    from .store import t
    out = []
    rows = conn.execute("SELECT e.id, e.case_id, e.at, e.by, e.notes, v.structure, v.flow, v.odour, v.colour "
                        "FROM trace_visits v JOIN case_entries e ON e.id = v.entry_id WHERE e.case_id = ? "
                        "ORDER BY e.at, e.id", (case_id,)).fetchall()
    for r in rows:
        tests = tuple(judge(FieldTest(Indicator(x[0]), x[1], x[2]), thresholds) for x in conn.execute(
            "SELECT indicator, value, unit FROM field_tests WHERE entry_id = ? ORDER BY rowid", (r[0],)))
        out.append(TraceVisit(r[0], r[1], r[5], t(r[2]), r[3], Flow(r[6]), r[7], r[8], r[4], tests))
    return out


def observations(visits: list[TraceVisit]) -> tuple[list[str], list[str]]:
    """(structures where flow was seen, structures found dry), the latest visit at each
    structure counting (a later visit corrects an earlier one)."""
    latest: dict[str, Flow] = {}
    for v in visits:
        latest[v.structure] = v.flow
    return ([s for s, f in latest.items() if f is Flow.PRESENT], [s for s, f in latest.items() if f is Flow.ABSENT])


__all__ = ["Flow", "Indicator", "FieldTest", "TraceVisit", "FIELD_THRESHOLDS", "judge", "write", "read",
           "observations"]
