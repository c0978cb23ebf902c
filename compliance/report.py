"""The MS4 annual report for a reporting year, counted from the records themselves: every
count is the number of rows of its section, and every row names the record behind it
(an outfall of the inventory, a case, an incident, a notice, a SWPPP, a calibration record).

The permit and its year (:mod:`.permit`): NYSDEC's GP-0-24-001 reporting year runs 3 January
to 2 January, so reporting year 2026 is 3 January 2026 00:00 to 3 January 2027 00:00 in the
town's zone; the registry's ``annual_report`` names another permit's first day
(``year_starts: "03-10"`` for GP-0-15-003's 10 March). A year not over is counted to ``now``.
The permittee (registry ``permittee``: name, SPDES number, contact, who certifies) and the
40 CFR 122.22(d) certification with its signature block head the report.

Sections (each a CSV; the HTML and PDF summary link or list them), by minimum control measure:

MCM 3, illicit discharge detection and elimination

* ``outfalls`` — the outfall inventory: every outfall of the town's imported storm-sewer map,
  monitored or not, with its receiving water and the registry station attached to it, then
  the registry's outfalls the map lacks (``source``); without a map, every outfall of the
  registry (``monitored``: a flow reading in the year). The summary says which;
* ``screened`` — outfalls screened: dry-weather field screenings of cases, and, when the town
  counts it (registry ``annual_report.continuous_monitoring_screens``), the outfalls whose
  flow was monitored continuously in the year (``method``);
* ``flagged`` — outfalls flagged: a dry-weather-flow incident (not an approved or exempt
  flow), or a dry-weather screening that found flow;
* ``complaints`` — complaints received (cases opened from a complaint);
* ``illicit_found`` / ``illicit_eliminated`` — cases with an illicit discharge or
  connection found; cases closed with it eliminated (verified);
* ``idde_enforcement`` — notices of violation under the illicit-discharge law, with their
  status and outcome;
* ``traces`` — cases traced up the network in the year: their trace visits at structures
  (:mod:`.traces`), where flow was seen and where the pipe was dry (the latest visit at each
  structure), and the case's finding.

MCM 4, construction site stormwater runoff control

* ``construction_sites`` — sites active in the year; ``swppp_reviews`` — SWPPPs received or
  decided in the year, with their outcome; ``storms`` — qualifying storms;
* ``inspections`` — each required self-inspection (after a storm, routine) due in the year,
  on time, late, missed or not yet due, judged by the inspections recorded with the engine's
  own rule (:mod:`.required_inspections`: only an inspection after the item opened closes it);
* ``inspection_reports`` — the qualified inspectors' reports filed on the workbench;
* ``construction_enforcement`` — notices of violation and stop-work orders under the
  construction law, with their status and outcome.

Beside them: ``enforcement`` (every notice), ``notices_withdrawn`` (those withdrawn, with the
reason, or replaced by a correction: listed, not counted; the correction counts), ``calibrations_done`` / ``calibrations_overdue``
and ``uptime`` (the monitoring itself).

Counts the records cannot give (fines assessed; the town's own oversight inspections of
construction sites) are lines stated by hand, and any count may be overridden: each override
is a record of its own (:mod:`.report_overrides`), printed beside the count of the records.

A notice's status is read in one place, :func:`notice_status`; a withdrawn notice, or one
replaced by a correction, is listed but not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from datetime import date, datetime, timedelta, tzinfo
from html import escape
from typing import TYPE_CHECKING, Any, Callable, Iterator
from pathlib import Path

from ..alerts.kinds.units import inches
from ..contract.csvfile import csv_text
from . import pdf
from .permit import CERTIFICATION, CERTIFICATION_SOURCE, DEFAULT, PERMITS, Permit, ReportingYear
from .required_inspections import judge_all
from .traces import observations
from .uptime import count_hours

if TYPE_CHECKING:
    from ..contract.registry import Permittee, Registry
    from .report_overrides import Override, ReportOverrides
    from .store import Case, ComplianceStore, Entry, Notice

SECTIONS: list[tuple[str, str]] = [
    ("outfalls", "Outfalls in the inventory"),
    ("screened", "Outfalls screened"),
    ("flagged", "Outfalls flagged (dry-weather flow)"),
    ("complaints", "Complaints received"),
    ("illicit_found", "Illicit discharges found"),
    ("illicit_eliminated", "Illicit discharges eliminated"),
    ("idde_enforcement", "Enforcement under the illicit-discharge law"),
    ("traces", "Source traces (trace visits at structures)"),
    ("construction_sites", "Construction sites active"),
    ("swppp_reviews", "SWPPP reviews"),
    ("storms", "Qualifying storms"),           # the town's threshold is added where the report is built
    ("inspections", "Required inspections"),
    ("inspection_reports", "Inspection reports filed (operators' qualified inspectors)"),
    ("construction_enforcement", "Enforcement under the construction law"),
    ("enforcement", "Enforcement actions"),
    ("notices_withdrawn", "Notices withdrawn or replaced by a correction (not counted)"),
    ("calibrations_done", "Calibrations done"),
    ("calibrations_overdue", "Calibrations overdue"),
    ("uptime", "Monitoring uptime per station"),
]
MCM3 = ("outfalls", "screened", "flagged", "complaints", "illicit_found", "illicit_eliminated", "idde_enforcement",
        "traces")
MCM4 = ("construction_sites", "swppp_reviews", "storms", "inspections", "inspection_reports",
        "construction_enforcement")
# The laws' MCM: the illicit-discharge laws (MCM 3) and the construction law (MCM 4).
IDDE_LAWS = ("ramapo-218", "schenectady-148-II")
CONSTRUCTION_LAWS = ("schenectady-148-I",)
# Lines no record gives: stated by hand (an override), blank until then.
BY_HAND: list[tuple[str, int, str]] = [
    ("fines_idde", 3, "Fines and penalties assessed (illicit discharges)"),
    ("oversight_inspections", 4, "Town oversight inspections of construction sites"),
    ("fines_construction", 4, "Fines and penalties assessed (construction)"),
]
TITLES = dict(SECTIONS)


@dataclass
class Section:
    key: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]
    links: list[str | None] = field(default_factory=list)     # the record page behind each row

    @property
    def count(self) -> int:
        """Rows that count (a withdrawn notice is listed, with ``counted`` False)."""
        return sum(1 for r in self.rows if r.get("counted", True))

    def by(self, column: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            if not r.get("counted", True):
                continue
            out[str(r[column])] = out.get(str(r[column]), 0) + 1
        return dict(sorted(out.items()))

    def csv(self) -> bytes:
        return csv_text(self.columns, ([r[c].isoformat() if isinstance(r.get(c), (datetime, date)) else r.get(c)
                                        for c in self.columns] for r in self.rows)).encode("utf-8")


@dataclass(frozen=True)
class Line:
    """One line of the summary: the count of its section's rows (``column`` = ``value`` when
    given), or a count stated by hand (no section); ``override`` the latest stated by hand."""

    id: str
    mcm: int | None
    label: str
    section: str | None
    computed: int | None
    column: str | None = None
    value: str | None = None
    override: Override | None = None
    note: str | None = None          # where the count is from, when it is not plain
    @property
    def reported(self) -> int | None:
        return self.override.value if self.override is not None else self.computed


@dataclass
class AnnualReport:
    municipality: str
    year: int
    start: datetime
    end: datetime
    as_of: datetime
    sections: dict[str, Section]
    permit: Permit = DEFAULT
    permittee: Permittee | None = None
    overrides: dict[str, Override] = field(default_factory=dict)     # line id -> its latest Override
    history: list[Override] = field(default_factory=list)            # every override of the year
    screening_counts_monitoring: bool = False
    outfalls_from: str = "registry"        # "map": the imported storm-sewer map's outfalls; "registry"

    def lines(self) -> list[Line]:
        """The summary, MCM 3, MCM 4, then the monitoring itself."""
        s, o = self.sections, self.overrides
        out: list[Line] = []

        def add(lid: str, mcm: int | None, label: str, section: str | None, n: int | None,
                col: str | None = None, val: str | None = None) -> None:
            out.append(Line(lid, mcm, label, section, n, col, val, o.get(lid),
                            OUTFALLS_FROM[self.outfalls_from] if lid == "outfalls" else None))

        def of(key: str, mcm: int | None, breakdown: str | None = None, words: Callable[[str], str] = str) -> None:
            add(key, mcm, s[key].title, key, s[key].count)
            if breakdown:
                for v, n in s[key].by(breakdown).items():
                    add(f"{key}:{v}", mcm, f"{s[key].title}: {words(v)}", key, n, breakdown, v)

        hand = {k: (m, label) for k, m, label in BY_HAND}
        for key in MCM3:
            of(key, 3, "kind" if key == "idde_enforcement" else None)
        add("fines_idde", 3, hand["fines_idde"][1], None, None)
        for key in MCM4:
            of(key, 4, {"inspections": "status", "construction_enforcement": "kind", "swppp_reviews": "status"}.get(key),
               lambda v: v.replace("_", " "))
            if key == "inspections":
                add("oversight_inspections", 4, hand["oversight_inspections"][1], None, None)
        add("fines_construction", 4, hand["fines_construction"][1], None, None)
        of("enforcement", None, "kind")
        for key in ("calibrations_done", "calibrations_overdue"):
            of(key, None)
        add("uptime", None, "Stations monitored", "uptime", s["uptime"].count)
        return out

    def counts(self) -> list[tuple[str, str, int | None, str | None, str | None]]:
        """(section, label, reported count, column, value) of every line with a section."""
        return [(ln.section or ln.id, ln.label, ln.reported, ln.column, ln.value) for ln in self.lines()]


def notice_status(n: Notice) -> str:
    """A notice's status in the report: the one place it is read. (A ``status`` the notice
    carries wins: the notices' own status column, when it comes, replaces the events.)"""
    own = getattr(n, "status", None)
    if own:
        return str(getattr(own, "value", own))
    for kind, status in (("withdrawn", "withdrawn"), ("lifted", "lifted"), ("complied", "complied"),
                         ("decided", "decided"), ("appeal_filed", "appealed"), ("delivered", "served"),
                         ("mailed", "served"), ("posted", "served")):
        if n.first(kind) is not None:
            return status
    return "issued"


def _counted(n: Notice) -> bool:
    """An enforcement action the report counts: not withdrawn, not replaced by a correction
    (the correction is counted in its place)."""
    return n.first("withdrawn") is None and getattr(n, "corrected_by", None) is None


def _notice_outcome(n: Notice) -> str:
    d = n.last("decided")
    if d is not None and d.outcome:
        return f"appeal {d.outcome}"
    c = n.first("complied")
    if c is not None:
        return f"complied {c.at:%Y-%m-%d}"
    lifted = n.first("lifted")
    if lifted is not None:
        return f"lifted {lifted.at:%Y-%m-%d}"
    return ""


def permit_year(year: int, tz: tzinfo, start_md: tuple[int, int] = DEFAULT.year_starts) -> tuple[datetime, datetime]:
    y = ReportingYear(year, start_md, tz)
    return y.start, y.end


def _in(t: datetime | None, start: datetime, end: datetime) -> bool:
    return t is not None and start <= t < end


def build(*, registry: Registry, store: ComplianceStore, incidents: Any, year: int, now: datetime, calibrations: Any = None,
          readings: Any = None, start_md: tuple[int, int] | None = None,
          stations: Callable[[], list[Any]] | None = None, reports: Any = None, overrides: ReportOverrides | None = None,
          hours_with_readings: Callable[[str, str, datetime, datetime], int] | None = None,
          map_outfalls: list[MapOutfall] | None = None) -> AnnualReport:
    """``start_md``: the reporting year's first day (month, day); None: the registry's
    ``annual_report.year_starts`` (GP-0-24-001's 3 January by default). ``reports``: the
    workbench's inspection reports (``list(municipality, limit=)``), None where not at hand;
    ``overrides``: the counts stated by hand (:class:`.report_overrides.ReportOverrides`);
    ``hours_with_readings``: the uptime's count (:class:`.uptime.HoursWithReadings`, kept by a
    long-lived caller between reports), None: counted from ``readings`` in full. ``map_outfalls``:
    the outfalls of the town's imported storm-sewer map (``network.monitored.inventory``), the
    inventory when given (None: the registry's)."""
    tz = registry.tz
    settings = getattr(registry, "annual_report", None)
    if start_md is None:
        start_md = settings.starts if settings is not None else DEFAULT.year_starts
    permit = PERMITS.get(getattr(settings, "permit", DEFAULT.id), DEFAULT)
    start, end = permit_year(year, tz, start_md)
    upto = min(end, max(now + timedelta(microseconds=1), start))    # what is recorded at ``now`` counts
    S: dict[str, Section] = {}
    cases = store.cases()

    def entries(kind: str) -> Iterator[tuple[Case, Entry]]:
        for c in cases:
            for e in c.entries:
                if e.kind == kind and _in(e.at, start, upto):
                    yield c, e

    hours = max(1, int((upto - start).total_seconds() // 3600))
    if hours_with_readings is None:
        hours_with_readings = partial(count_hours, readings)
    flow_hours: dict[str, int] = {}
    uptime = []
    for st in (stations() if stations else []):
        with_data = hours_with_readings(st.id, st.quantity, start, upto) if readings is not None else 0
        uptime.append({"station": st.id, "name": st.name, "quantity": st.quantity, "hours": hours,
                       "hours_with_readings": with_data, "uptime_pct": round(100.0 * with_data / hours, 1)})
        if st.quantity == "flow":
            flow_hours[st.id] = with_data

    S["outfalls"], outfalls_from = _outfall_inventory(registry, map_outfalls, flow_hours)
    inventory = {o.id for o in registry.outfalls}
    screened: dict[str, list[tuple[Case, Entry]]] = {}
    for c, e in entries("screening"):
        if e.dry_weather and c.outfall is not None and c.outfall in inventory:
            screened.setdefault(c.outfall, []).append((c, e))
    continuous = bool(getattr(settings, "continuous_monitoring_screens", False))
    monitored = {o: h for o, h in flow_hours.items() if h > 0 and o in inventory} if continuous else {}
    rows: list[dict[str, Any]] = []
    links: list[str | None] = []
    for o in sorted(set(screened) | set(monitored)):
        v = screened.get(o, [])
        method = " + ".join(m for m, on in (("field screening", bool(v)), ("continuous monitoring", o in monitored))
                            if on)
        rows.append({"outfall": o, "screenings": len(v), "first": min(e.at for _, e in v).astimezone(tz) if v else None,
                     "last": max(e.at for _, e in v).astimezone(tz) if v else None,
                     "cases": " ".join(sorted({c.number for c, _ in v})),
                     "flow_observed": any(e.flow_observed for _, e in v) if v else None,
                     "monitored_hours": monitored.get(o), "method": method})
        links.append(f"/cases/{v[0][0].id}" if v else f"/outfalls/{o}")
    S["screened"] = Section("screened", TITLES["screened"], ["outfall", "screenings", "first", "last", "cases",
                                                             "flow_observed", "monitored_hours", "method"], rows, links)
    dwf = [i for i in incidents.list(kind="dry_weather_flow", limit=1_000_000)
           if _in(i.start, start, upto) and not i.suppressed]
    flagged: dict[str, list[str]] = {}
    for i in sorted(dwf, key=lambda i: i.id):
        flagged.setdefault(i.subject, []).append(f"incident {i.id}")
    for o, v in screened.items():
        for c, e in v:
            if e.flow_observed:
                flagged.setdefault(o, []).append(f"screening {c.number} {e.at.astimezone(tz):%Y-%m-%d}")
    S["flagged"] = Section("flagged", TITLES["flagged"], ["outfall", "incidents", "screenings_with_flow", "because"],
                           [{"outfall": o, "incidents": sum(1 for x in v if x.startswith("incident")),
                             "screenings_with_flow": sum(1 for x in v if x.startswith("screening")),
                             "because": "; ".join(v)} for o, v in sorted(flagged.items())],
                           [f"/incidents?kind=dry_weather_flow&subject={o}&state=all" for o in sorted(flagged)])
    complaints = sorted([c for c in cases if c.origin == "complaint" and _in(c.observed_at, start, upto)],
                        key=lambda c: (c.observed_at, c.id))
    S["complaints"] = Section("complaints", TITLES["complaints"], ["case", "outfall", "location", "observed_at",
                                                                   "description", "status", "finding"],
                              [{"case": c.number, "outfall": c.outfall, "location": c.location,
                                "observed_at": c.observed_at.astimezone(tz), "description": c.description,
                                "status": c.status, "finding": c.finding} for c in complaints],
                              [f"/cases/{c.id}" for c in complaints])
    found = []
    for c in cases:
        hits = [e for e in c.entries if e.finding in ("illicit_discharge", "illicit_connection") and _in(e.at, start, upto)]
        if hits:
            found.append((c, hits[0]))
    found.sort(key=lambda x: x[1].at)
    S["illicit_found"] = Section("illicit_found", TITLES["illicit_found"], ["case", "outfall", "finding", "at",
                                                                           "location"],
                                 [{"case": c.number, "outfall": c.outfall, "finding": e.finding,
                                   "at": e.at.astimezone(tz), "location": e.location or c.location} for c, e in found],
                                 [f"/cases/{c.id}" for c, _ in found])
    gone = sorted([(c, c.closure) for c in cases if c.closure is not None and c.closure.outcome == "eliminated"
                   and _in(c.closure.at, start, upto)], key=lambda x: x[1].at)
    S["illicit_eliminated"] = Section("illicit_eliminated", TITLES["illicit_eliminated"],
                                      ["case", "outfall", "closed_at", "verification"],
                                      [{"case": c.number, "outfall": c.outfall, "closed_at": e.at.astimezone(tz),
                                        "verification": e.verification} for c, e in gone],
                                      [f"/cases/{c.id}" for c, _ in gone])
    traced = []
    for c in cases:
        visits = [v for v in store.trace_visits(c.id, ()) if _in(v.at, start, upto)]
        if visits:
            traced.append((c, visits))
    traced.sort(key=lambda x: (x[1][0].at, x[0].id))
    rows = []
    for c, visits in traced:
        flow_at, dry_at = observations(visits)
        rows.append({"case": c.number, "outfall": c.outfall, "visits": len(visits),
                     "first": visits[0].at.astimezone(tz), "last": visits[-1].at.astimezone(tz),
                     "structures": " ".join(dict.fromkeys(v.structure for v in visits)),
                     "flow_at": " ".join(flow_at), "dry_at": " ".join(dry_at), "finding": c.finding,
                     "status": c.status})
    S["traces"] = Section("traces", TITLES["traces"], ["case", "outfall", "visits", "first", "last", "structures",
                                                       "flow_at", "dry_at", "finding", "status"], rows,
                          [f"/cases/{c.id}#trace" for c, _ in traced])
    first, last = start.date(), (upto - timedelta(microseconds=1)).astimezone(tz).date()
    sites = [s for s in sorted(registry.construction_sites, key=lambda s: s.id)
             if s.active_from <= last and (s.active_to is None or s.active_to >= first)]
    S["construction_sites"] = Section("construction_sites", TITLES["construction_sites"],
                                      ["site", "name", "active_from", "active_to", "rain_gauges"],
                                      [{"site": s.id, "name": s.name, "active_from": s.active_from,
                                        "active_to": s.active_to, "rain_gauges": " ".join(s.rain_gauges)}
                                       for s in sites], [None for _ in sites])
    storms = sorted([i for i in incidents.list(kind="storm", limit=1_000_000) if _in(i.start, start, upto)],
                    key=lambda i: (i.start, i.id))
    S["storms"] = Section("storms", f"Qualifying storms (>= {inches(registry.rules.storm_min_depth_in)})",
                          ["incident", "gauge", "start", "end", "depth_in"],
                          [{"incident": i.id, "gauge": i.subject, "start": i.start.astimezone(tz),
                            "end": i.end.astimezone(tz) if i.end else None, "depth_in": i.event.get("depth_in")}
                           for i in storms], [f"/incidents/{i.id}" for i in storms])
    inspected: dict[str, list[datetime]] = {}
    for _, site, at, _, _ in incidents.store.inspections_after(0):
        inspected.setdefault(site, []).append(at)
    items = sorted([i for i in incidents.list(kind="inspection_due", limit=1_000_000)
                    if i.deadline is not None and _in(i.deadline, start, end) and i.resolution != "retracted"],
                   key=lambda i: (i.deadline, i.id))
    rows = []
    for i, j in zip(items, judge_all(registry, items, inspected, now)):
        rows.append({"incident": i.id, "site": i.subject, "reason": i.event.get("reason") or "storm",
                     "opened": j.opened.astimezone(tz), "due": j.due.astimezone(tz),
                     "inspected_at": j.closed.astimezone(tz) if j.closed else None, "status": j.status.words})
    S["inspections"] = Section("inspections", TITLES["inspections"], ["incident", "site", "reason", "opened", "due",
                                                                      "inspected_at", "status"], rows,
                               [f"/incidents/{r['incident']}" for r in rows])
    issued = sorted([n for n in store.notices() if _in(n.issued_at, start, upto)], key=lambda n: (n.issued_at, n.id))
    acts = [n for n in issued if _counted(n)]
    withdrawn = [n for n in issued if not _counted(n)]
    columns = ["notice", "kind", "law", "mcm", "issued_at", "place", "party", "status", "outcome", "counted"]

    def notice_rows(ns: list[Notice]) -> list[dict[str, Any]]:
        out = []
        for n in ns:
            status = notice_status(n)
            out.append({"notice": n.number, "kind": "notice of violation" if n.kind == "nov" else "stop-work order",
                        "law": n.law, "mcm": 3 if n.law in IDDE_LAWS else 4 if n.law in CONSTRUCTION_LAWS else None,
                        "issued_at": n.issued_at.astimezone(tz), "place": n.place,
                        "party": store.party(n.party_id).name, "status": status, "outcome": _notice_outcome(n),
                        "counted": _counted(n)})
        return out
    for key, ns in (("enforcement", acts), ("idde_enforcement", [n for n in acts if n.law in IDDE_LAWS]),
                    ("construction_enforcement", [n for n in acts if n.law in CONSTRUCTION_LAWS])):
        S[key] = Section(key, TITLES[key], columns, notice_rows(ns), [f"/notices/{n.id}" for n in ns])

    def withdrawal_row(n: Notice) -> dict[str, Any]:
        w = n.first("withdrawn")
        return {"notice": n.number, "kind": "notice of violation" if n.kind == "nov" else "stop-work order",
                "law": n.law, "issued_at": n.issued_at.astimezone(tz), "party": store.party(n.party_id).name,
                "status": notice_status(n), "at": w.at.astimezone(tz) if w else None,
                "reason": w.note if w else None, "counted": False}
    S["notices_withdrawn"] = Section("notices_withdrawn", TITLES["notices_withdrawn"],
                                     ["notice", "kind", "law", "issued_at", "party", "status", "at", "reason", "counted"],
                                     [withdrawal_row(n) for n in withdrawn], [f"/notices/{n.id}" for n in withdrawn])
    plans = []
    for p in store.swppps():
        decided = p.last("decided")
        if _in(p.received_at, start, upto) or any(_in(e.at, start, upto) for e in p.events):
            plans.append((p, decided))
    plans.sort(key=lambda x: (x[0].received_at, x[0].id))
    S["swppp_reviews"] = Section("swppp_reviews", TITLES["swppp_reviews"],
                                 ["swppp", "site", "title", "received_at", "status", "outcome", "decided_at"],
                                 [{"swppp": p.number, "site": p.site, "title": p.title,
                                   "received_at": p.received_at.astimezone(tz),
                                   "status": (p.events[-1].kind if p.events else "received"),
                                   "outcome": d.outcome if d is not None else None,
                                   "decided_at": d.at.astimezone(tz) if d is not None else None} for p, d in plans],
                                 [f"/swppp#swppp-{p.id}" for p, _ in plans])
    filed = []
    if reports is not None:
        filed = sorted([r for r in reports.list(registry.municipality, limit=1_000_000) if _in(r.at, start, upto)],
                       key=lambda r: (r.at, r.id))
    S["inspection_reports"] = Section("inspection_reports", TITLES["inspection_reports"],
                                      ["report", "site", "at", "inspector", "credential", "deficiencies"],
                                      [{"report": r.id, "site": r.site, "at": r.at.astimezone(tz),
                                        "inspector": r.inspector, "credential": getattr(r.credential, "value",
                                                                                        r.credential),
                                        "deficiencies": r.deficiencies} for r in filed],
                                      [f"/inspections/{r.id}" for r in filed])
    done_rows, overdue_rows = [], []
    if calibrations is not None and hasattr(calibrations, "calibration_history"):
        recs = sorted(calibrations.calibration_history(start=start, end=upto), key=lambda r: (r.performed, r.id))
        done_rows = [{"record": r.id, "station": r.station, "device": r.device, "sensor": r.sensor,
                      "performed": r.performed.astimezone(tz), "result": getattr(r.result, "value", r.result),
                      "technician": r.technician, "next_due": r.next_due} for r in recs]
        states = calibrations.calibrations_due(upto, warn_days=14)
        overdue_rows = [{"station": c.station, "device": c.device, "sensor": c.sensor, "performed": c.performed,
                         "due": c.due, "days_overdue": -c.days_left}
                        for c in sorted(states, key=lambda c: (c.due, c.station, c.sensor))
                        if getattr(c.state, "value", c.state) == "overdue"]
    S["calibrations_done"] = Section("calibrations_done", TITLES["calibrations_done"],
                                     ["record", "station", "device", "sensor", "performed", "result", "technician",
                                      "next_due"], done_rows, [f"/stations/{r['station']}" for r in done_rows])
    S["calibrations_overdue"] = Section("calibrations_overdue", TITLES["calibrations_overdue"],
                                        ["station", "device", "sensor", "performed", "due", "days_overdue"],
                                        overdue_rows, [f"/stations/{r['station']}" for r in overdue_rows])
    S["uptime"] = Section("uptime", TITLES["uptime"], ["station", "name", "quantity", "hours", "hours_with_readings",
                                                       "uptime_pct"], uptime,
                          [f"/stations/{r['station']}" for r in uptime])
    latest = overrides.latest(year) if overrides is not None else {}
    history = overrides.history(year) if overrides is not None else []
    return AnnualReport(registry.municipality, year, start, end, upto.astimezone(tz),
                        {k: S[k] for k, _ in SECTIONS}, permit, getattr(registry, "permittee", None), latest, history,
                        continuous, outfalls_from)


OUTFALL_COLUMNS = ["outfall", "name", "receiving_water", "pipe_diameter_in", "pipe_material", "lat", "lon", "monitored",
                   "station", "source"]


@dataclass(frozen=True)
class MapOutfall:
    """An outfall of the town's imported storm-sewer map, as the inventory lists it
    (``network.monitored.inventory`` makes them): its receiving water, position and the
    widest pipe into it, and the registry stations attached to it."""

    id: str
    receiving_water: str | None
    lat: float | None
    lon: float | None
    pipe_diameter_in: float | None
    pipe_material: str | None
    stations: tuple[str, ...] = ()


def _outfall_inventory(registry: Registry, map_outfalls: list[MapOutfall] | None,
                       flow_hours: dict[str, int]) -> tuple[Section, str]:
    """The town's outfalls: every outfall of the imported map, monitored or not (the
    registry's values where the map has none), with the registry stations attached to it;
    then the registry's outfalls the map lacks, kept and marked. Without a map (or one with
    no outfall), the registry's. Returns the section and where it is from (``map`` or
    ``registry``)."""
    reg = {o.id: o for o in registry.outfalls}
    rows: list[dict[str, Any]] = []
    links: list[str | None] = []

    def registry_row(o: Any, source: str) -> None:
        rows.append({"outfall": o.id, "name": o.name, "receiving_water": o.receiving_water,
                     "pipe_diameter_in": o.pipe_diameter_in,
                     "pipe_material": getattr(o.pipe_material, "value", o.pipe_material), "lat": o.lat, "lon": o.lon,
                     "monitored": flow_hours.get(o.id, 0) > 0, "station": o.id, "source": source})
        links.append(f"/outfalls/{o.id}")

    if not map_outfalls:
        for o in sorted(reg.values(), key=lambda o: o.id):
            registry_row(o, "registry")
        return Section("outfalls", TITLES["outfalls"], OUTFALL_COLUMNS, rows, links), "registry"
    for m in sorted(map_outfalls, key=lambda m: m.id):
        ids = sorted(i for i in m.stations if i in reg)
        first = reg[ids[0]] if ids else None
        rows.append({"outfall": m.id, "name": first.name if first else None,
                     "receiving_water": m.receiving_water or (first.receiving_water if first else None),
                     "pipe_diameter_in": _whole(m.pipe_diameter_in or (first.pipe_diameter_in if first else None)),
                     "pipe_material": m.pipe_material or (first.pipe_material.value if first and first.pipe_material
                                                          else None),
                     "lat": m.lat, "lon": m.lon, "monitored": any(flow_hours.get(i, 0) > 0 for i in ids),
                     "station": " ".join(ids), "source": "map"})
        links.append(f"/outfalls/{ids[0]}" if ids else f"/network/trace/{m.id}")
    attached = {i for m in map_outfalls for i in m.stations}
    for o in sorted((o for o in reg.values() if o.id not in attached), key=lambda o: o.id):
        registry_row(o, "registry (not on the map)")
    return Section("outfalls", TITLES["outfalls"], OUTFALL_COLUMNS, rows, links), "map"


def _whole(v: float | None) -> float | int | None:
    """12.0 -> 12 (a diameter as the town writes it)."""
    return int(v) if v is not None and float(v).is_integer() else v


# -- rendering ------------------------------------------------------------------------------------
BLANK = "(to be filled in)"
GROUPS = [(3, "MCM 3 — Illicit discharge detection and elimination"),
          (4, "MCM 4 — Construction site stormwater runoff control"),
          (None, "Monitoring and enforcement, all measures")]


def identification(r: AnnualReport) -> list[tuple[str, str]]:
    """The report's first lines: the permit, the year, who files it (blanks to fill in by hand)."""
    p = r.permittee
    contact = ", ".join(x for x in (getattr(p, "contact_name", None), getattr(p, "contact_title", None),
                                    getattr(p, "phone", None), getattr(p, "email", None)) if x)
    return [("Permit", f"{r.permit.id}, {r.permit.title}"),
            ("Reporting year", f"{r.year}: {r.start:%B %-d, %Y} to {(r.end - timedelta(days=1)):%B %-d, %Y}"
             + (f" (counted to {r.as_of:%Y-%m-%d %H:%M %Z})" if r.as_of < r.end else "")),
            ("Permittee", getattr(p, "name", None) or r.municipality),
            ("SPDES permit ID", getattr(p, "spdes_id", None) or BLANK),
            ("Mailing address", getattr(p, "address", None) or BLANK),
            ("Contact", contact or BLANK)]


def signature_block(r: AnnualReport) -> list[tuple[str, str]]:
    p = r.permittee
    return [("Name", getattr(p, "certifying_official", None) or BLANK),
            ("Title", getattr(p, "certifying_title", None) or BLANK),
            ("Signature", "_" * 32), ("Date", "_" * 16)]


OUTFALLS_FROM = {"map": "counted from the town's storm-sewer map: every outfall, monitored or not",
                 "registry": "counted from the registry: no storm-sewer map imported"}


def _note(ln: Line) -> str:
    if ln.override is None:
        return (ln.note or "") if ln.section else "stated by hand; no record kept here"
    o = ln.override
    was = f"records: {ln.computed}; " if ln.computed is not None else ""
    return f"{was}stated by {o.recorded_by} on {o.recorded_at:%Y-%m-%d}: {o.reason}"


def html(r: AnnualReport, base: str = "", csrf: str | None = None) -> str:
    """A readable summary: every count links to its section's records; ``csrf``: the page's
    token, for the form that states a count by hand (none: no form)."""
    y = f"{base}/reports/annual/{r.year}"
    out = ["<table class=\"table ident\"><tbody>"]
    out += [f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in identification(r)]
    out.append(f"</tbody></table><p class=\"muted\"><a href=\"{y}.pdf\">PDF</a></p>")
    lines = r.lines()
    for mcm, heading in GROUPS:
        out.append(f"<h2>{escape(heading)}</h2><table class=\"table report\"><tbody>")
        for ln in (x for x in lines if x.mcm == mcm):
            rid = "count-" + escape(ln.id.replace(":", "-").replace(" ", "-"))
            shown = "—" if ln.reported is None else str(ln.reported)
            if ln.section:
                q = f"?{ln.column}={escape(ln.value or '')}" if ln.column else ""
                cell = f"<a class=\"count\" href=\"{y}/{ln.section}{q}\">{shown}</a>"
                csv_cell = f"<a href=\"{y}/{ln.section}.csv\" download>CSV</a>"
            else:
                cell, csv_cell = f"<span class=\"count\">{shown}</span>", ""
            note = _note(ln)
            out.append(f"<tr id=\"{rid}\"><td data-label=\"\">{escape(ln.label)}"
                       + (f" <span class=\"muted\">({escape(note)})</span>" if note else "")
                       + f"</td><td data-label=\"Count\">{cell}</td><td data-label=\"CSV\">{csv_cell}</td></tr>")
        out.append("</tbody></table>")
    if csrf is not None:
        opts = "".join(f"<option value=\"{escape(ln.id)}\">{escape(ln.label)}</option>" for ln in lines)
        out.append(f"<h2>State a count by hand</h2><form method=\"post\" action=\"{y}/overrides\" class=\"form\">"
                   f"<input type=\"hidden\" name=\"csrf\" value=\"{escape(csrf)}\">"
                   f"<label>Line <select name=\"line\">{opts}</select></label>"
                   "<label>Count <input name=\"value\" type=\"number\" min=\"0\" required></label>"
                   "<label>Why (the source, or why the records are wrong) <input name=\"reason\" required></label>"
                   "<button>Record</button></form>")
    if r.history:
        out.append("<h3>Counts stated by hand</h3><ul class=\"list overrides\">")
        out += [f"<li>{o.recorded_at:%Y-%m-%d %H:%M} {escape(o.recorded_by)}: {escape(o.line)} = {o.value} "
                f"({escape(o.reason)})</li>" for o in r.history]
        out.append("</ul>")
    out.append(f"<h2>Certification</h2><p>{escape(CERTIFICATION)} <span class=\"muted\">({CERTIFICATION_SOURCE})</span></p>"
               "<table class=\"table signature\"><tbody>"
               + "".join(f"<tr><th>{k}</th><td>{escape(v)}</td></tr>" for k, v in signature_block(r))
               + "</tbody></table>")
    return "\n".join(out)


def report_pdf(r: AnnualReport) -> bytes:
    st = pdf.styles()
    story: list[pdf.Flowable] = [pdf.para(f"{r.municipality} — MS4 annual report", st["small"]),
                   pdf.para(f"{r.permit.id} annual report, reporting year {r.year}", st["title"]),
                   pdf.table([[k, v] for k, v in identification(r)], widths=[110, 350]),
                   pdf.para("Every count is the number of records listed under it; each section is also a CSV. "
                            "A count stated by hand says by whom and why.", st["p"])]
    lines = r.lines()
    for mcm, heading in GROUPS:
        story.append(pdf.para(heading, st["h"]))
        story.append(pdf.table([["", "Count", "Note"]] + [[ln.label, "—" if ln.reported is None else ln.reported,
                                                           _note(ln)] for ln in lines if ln.mcm == mcm],
                               widths=[250, 50, 160]))
    story.append(pdf.para("Certification", st["h"]))
    story.append(pdf.para(f"{CERTIFICATION} ({CERTIFICATION_SOURCE})", st["p"]))
    story.append(pdf.table([[k, v] for k, v in signature_block(r)], widths=[110, 350]))
    for key, _ in SECTIONS:
        s = r.sections[key]
        story.append(pdf.para(f"{s.title}: {s.count}", st["h"]))
        if s.rows:
            cols = s.columns[:7]
            story.append(pdf.table([cols] + [[_cell(row.get(c)) for c in cols] for row in s.rows[:500]]))
            if len(s.rows) > 500:
                story.append(pdf.para(f"… and {len(s.rows) - 500} more in {key}.csv", st["small"]))
    return pdf.build(story, title=f"MS4 annual report {r.year}",
                     footer=f"{r.municipality} — {r.permit.id} reporting year {r.year}")


def standalone_html(r: AnnualReport) -> str:
    """The summary as a file beside the section CSVs (each count links to its CSV)."""
    ident = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in identification(r))
    body = []
    lines = r.lines()
    for mcm, heading in GROUPS:
        rows = "\n".join(f"<tr><td>{escape(ln.label)}</td><td>"
                         + (f"<a href=\"{ln.section}.csv\">{'—' if ln.reported is None else ln.reported}</a>"
                            if ln.section else ('—' if ln.reported is None else str(ln.reported)))
                         + f"</td><td>{escape(_note(ln))}</td></tr>" for ln in lines if ln.mcm == mcm)
        body.append(f"<h2>{escape(heading)}</h2><table>{rows}</table>")
    sig = "".join(f"<tr><th>{k}</th><td>{escape(v)}</td></tr>" for k, v in signature_block(r))
    return (f"<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>MS4 annual report {r.year}</title>"
            f"<h1>{escape(r.municipality)}: {r.permit.id} annual report, reporting year {r.year}</h1>"
            f"<table>{ident}</table>"
            "<p>Each count links to the records behind it (CSV); <a href=\"report.pdf\">PDF</a>.</p>"
            + "".join(body) +
            f"<h2>Certification</h2><p>{escape(CERTIFICATION)} ({CERTIFICATION_SOURCE})</p><table>{sig}</table>"
            "</html>\n")


def write(r: AnnualReport, out: Path) -> list[Path]:
    """<section>.csv for every section, report.html, report.pdf into ``out``."""
    from pathlib import Path
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for key, s in r.sections.items():
        (out / f"{key}.csv").write_bytes(s.csv())
        written.append(out / f"{key}.csv")
    (out / "report.html").write_text(standalone_html(r), encoding="utf-8")
    (out / "report.pdf").write_bytes(report_pdf(r))
    return written + [out / "report.html", out / "report.pdf"]


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M")
    return str(v)


__all__ = ["AnnualReport", "Line", "Section", "SECTIONS", "BY_HAND", "build", "permit_year", "notice_status", "html",
           "report_pdf", "standalone_html", "write", "identification", "signature_block"]
