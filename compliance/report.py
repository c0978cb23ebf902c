"""The annual report for the MS4 permit year, counted from the records themselves: every
count is the number of rows of its section, and every row names the record behind it
(an outfall of the inventory, a case, an incident, a notice, a calibration record).

The permit year: NYSDEC's MS4 reporting period runs 10 March to 9 March, so permit year
2026 is 10 March 2026 00:00 to 10 March 2027 00:00 in the town's zone (``start_md`` to
use another, e.g. (1, 1) for the calendar year). A year not over is counted to ``now``.

Sections (each a CSV, the HTML and PDF summary link or list them):

* ``outfalls`` — the outfall inventory (the registry's outfalls, what the workbench shows);
* ``screened`` — outfalls screened in dry weather (screening visits of cases, dry);
* ``flagged`` — outfalls flagged: a dry-weather-flow incident (not an approved or exempt
  flow), or a dry-weather screening that found flow;
* ``illicit_found`` / ``illicit_eliminated`` — cases with an illicit discharge or
  connection found; cases closed with it eliminated (verified);
* ``construction_sites`` — sites active in the year; ``storms`` — qualifying storms;
* ``inspections`` — each required inspection (after a storm, routine) due in the year, on
  time, late, missed or not yet due, judged by the inspections recorded;
* ``enforcement`` — notices of violation and stop-work orders issued, by kind and law;
* ``calibrations_done`` / ``calibrations_overdue`` — calibration records of the year;
  sensors past their due day at the year's end (or now);
* ``uptime`` — per station, the share of the year's hours with a reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from html import escape
from typing import Any, Callable

from ..contract.csvfile import csv_text
from . import pdf

SECTIONS: list[tuple[str, str]] = [
    ("outfalls", "Outfalls in the inventory"),
    ("screened", "Outfalls screened in dry weather"),
    ("flagged", "Outfalls flagged (dry-weather flow)"),
    ("illicit_found", "Illicit discharges found"),
    ("illicit_eliminated", "Illicit discharges eliminated"),
    ("construction_sites", "Construction sites active"),
    ("storms", "Qualifying storms (>= 0.5 in)"),
    ("inspections", "Required inspections"),
    ("enforcement", "Enforcement actions"),
    ("calibrations_done", "Calibrations done"),
    ("calibrations_overdue", "Calibrations overdue"),
    ("uptime", "Monitoring uptime per station"),
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
        return len(self.rows)

    def by(self, column: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[str(r[column])] = out.get(str(r[column]), 0) + 1
        return dict(sorted(out.items()))

    def csv(self) -> bytes:
        return csv_text(self.columns, ([r[c].isoformat() if isinstance(r.get(c), (datetime, date)) else r.get(c)
                                        for c in self.columns] for r in self.rows)).encode("utf-8")


@dataclass
class AnnualReport:
    municipality: str
    year: int
    start: datetime
    end: datetime
    as_of: datetime
    sections: dict[str, Section]

    def counts(self) -> list[tuple[str, str, int, str | None, str | None]]:
        """(section, label, count, column, value): the summary lines; a count with a column is
        the rows of its section whose column has that value."""
        s = self.sections
        out: list[tuple[str, str, int, str | None, str | None]] = [
            (k, TITLES[k], s[k].count, None, None) for k, _ in SECTIONS if k not in ("inspections", "enforcement",
                                                                                   "uptime")]
        out.append(("inspections", "Required inspections", s["inspections"].count, None, None))
        for status, n in s["inspections"].by("status").items():
            out.append(("inspections", f"Required inspections {status.replace('_', ' ')}", n, "status", status))
        out.append(("enforcement", "Enforcement actions", s["enforcement"].count, None, None))
        for kind, n in s["enforcement"].by("kind").items():
            out.append(("enforcement", f"Enforcement actions: {kind}", n, "kind", kind))
        out.append(("uptime", "Stations monitored", s["uptime"].count, None, None))
        return out


def permit_year(year: int, tz: Any, start_md: tuple[int, int] = (3, 10)) -> tuple[datetime, datetime]:
    start = datetime(year, *start_md, tzinfo=tz)
    return start, datetime(year + 1, *start_md, tzinfo=tz)


def _in(t: datetime | None, start: datetime, end: datetime) -> bool:
    return t is not None and start <= t < end


def build(*, registry: Any, store: Any, incidents: Any, year: int, now: datetime, calibrations: Any = None,
          readings: Any = None, start_md: tuple[int, int] = (3, 10), stations: Callable[[], list[Any]] | None = None
          ) -> AnnualReport:
    tz = registry.tz
    start, end = permit_year(year, tz, start_md)
    upto = min(end, max(now + timedelta(microseconds=1), start))    # what is recorded at ``now`` counts
    S: dict[str, Section] = {}
    cases = store.cases()

    def entries(kind: str):
        for c in cases:
            for e in c.entries:
                if e.kind == kind and _in(e.at, start, upto):
                    yield c, e

    S["outfalls"] = Section("outfalls", TITLES["outfalls"], ["outfall", "name", "receiving_water", "pipe_diameter_in",
                                                             "pipe_material", "lat", "lon"],
                            [{"outfall": o.id, "name": o.name, "receiving_water": o.receiving_water,
                              "pipe_diameter_in": o.pipe_diameter_in,
                              "pipe_material": getattr(o.pipe_material, "value", o.pipe_material),
                              "lat": o.lat, "lon": o.lon} for o in sorted(registry.outfalls, key=lambda o: o.id)],
                            [f"/outfalls/{o.id}" for o in sorted(registry.outfalls, key=lambda o: o.id)])
    inventory = {o.id for o in registry.outfalls}
    screened: dict[str, list[tuple[Any, Any]]] = {}
    for c, e in entries("screening"):
        if e.dry_weather and c.outfall in inventory:
            screened.setdefault(c.outfall, []).append((c, e))
    S["screened"] = Section("screened", TITLES["screened"], ["outfall", "screenings", "first", "last", "cases",
                                                             "flow_observed"],
                            [{"outfall": o, "screenings": len(v), "first": min(e.at for _, e in v).astimezone(tz),
                              "last": max(e.at for _, e in v).astimezone(tz),
                              "cases": " ".join(sorted({c.number for c, _ in v})),
                              "flow_observed": any(e.flow_observed for _, e in v)} for o, v in sorted(screened.items())],
                            [f"/cases/{v[0][0].id}" for _, v in sorted(screened.items())])
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
    S["storms"] = Section("storms", TITLES["storms"], ["incident", "gauge", "start", "end", "depth_in"],
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
    for i in items:
        done = sorted(t for t in inspected.get(i.subject, []) if t >= i.start)
        at = done[0] if done else None
        if at is not None:
            status = "on_time" if at <= i.deadline else "late"
        else:
            status = "missed" if i.deadline <= now else "not_yet_due"
        rows.append({"incident": i.id, "site": i.subject, "reason": i.event.get("reason") or "storm",
                     "due": i.deadline.astimezone(tz), "inspected_at": at.astimezone(tz) if at else None,
                     "status": status})
    S["inspections"] = Section("inspections", TITLES["inspections"], ["incident", "site", "reason", "due",
                                                                      "inspected_at", "status"], rows,
                               [f"/incidents/{r['incident']}" for r in rows])
    acts = sorted([n for n in store.notices() if _in(n.issued_at, start, upto)], key=lambda n: (n.issued_at, n.id))
    S["enforcement"] = Section("enforcement", TITLES["enforcement"], ["notice", "kind", "law", "issued_at", "place",
                                                                      "party"],
                               [{"notice": n.number, "kind": "notice of violation" if n.kind == "nov"
                                 else "stop-work order", "law": n.law, "issued_at": n.issued_at.astimezone(tz),
                                 "place": n.place, "party": store.party(n.party_id).name} for n in acts],
                               [f"/notices/{n.id}" for n in acts])
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
    uptime = []
    hours = max(1, int((upto - start).total_seconds() // 3600))
    for st in (stations() if stations else []):
        with_data = _hours_with_readings(readings, st.id, st.quantity, start, upto) if readings is not None else 0
        uptime.append({"station": st.id, "name": st.name, "quantity": st.quantity, "hours": hours,
                       "hours_with_readings": with_data, "uptime_pct": round(100.0 * with_data / hours, 1)})
    S["uptime"] = Section("uptime", TITLES["uptime"], ["station", "name", "quantity", "hours", "hours_with_readings",
                                                       "uptime_pct"], uptime,
                          [f"/stations/{r['station']}" for r in uptime])
    return AnnualReport(registry.municipality, year, start, end, upto.astimezone(tz), S)


def _hours_with_readings(readings: Any, station: str, quantity: str, start: datetime, end: datetime) -> int:
    width = 3_600_000_000_000
    if hasattr(readings, "summary"):
        buckets = readings.summary(station, quantity, start, end - timedelta(microseconds=1), width,
                                   frozenset({"count"}))
    else:
        from ..ingest.sinks.summary import summarise
        from ..contract.timeutil import to_ns
        buckets = summarise(readings.readings(station, quantity, start, end - timedelta(microseconds=1)),
                            to_ns(start), width)
    return sum(1 for b in buckets if (b.count or 0) > 0)


# -- rendering ------------------------------------------------------------------------------------
def html(r: AnnualReport, base: str = "") -> str:
    """A readable summary: every count links to its section's records."""
    y = f"{base}/reports/annual/{r.year}"
    out = [f"<p class=\"muted\">{escape(r.municipality)}, permit year {r.year}: {r.start:%Y-%m-%d} to "
           f"{(r.end - timedelta(days=1)):%Y-%m-%d}{' (counted to ' + r.as_of.strftime('%Y-%m-%d %H:%M %Z') + ')' if r.as_of < r.end else ''}."
           f" <a href=\"{y}.pdf\">PDF</a></p>", "<table class=\"table report\"><tbody>"]
    for key, label, n, col, val in r.counts():
        q = f"?{col}={escape(val)}" if col else ""
        out.append(f"<tr id=\"count-{key}{'-' + escape(val.replace(' ', '-')) if val else ''}\"><td data-label=\"\">"
                   f"{escape(label)}</td><td data-label=\"Count\"><a class=\"count\" href=\"{y}/{key}{q}\">{n}</a></td>"
                   f"<td data-label=\"CSV\"><a href=\"{y}/{key}.csv\" download>CSV</a></td></tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def report_pdf(r: AnnualReport) -> bytes:
    st = pdf.styles()
    story: list = [pdf.para(f"{r.municipality} — MS4 annual report", st["small"]),
                   pdf.para(f"Permit year {r.year}", st["title"]),
                   pdf.para(f"{r.start:%B %d, %Y} to {(r.end - timedelta(days=1)):%B %d, %Y}"
                            + (f" (counted to {r.as_of:%Y-%m-%d %H:%M %Z})" if r.as_of < r.end else "")
                            + ". Every count is the number of records listed under it; each section is also a CSV.",
                            st["p"]),
                   pdf.table([["", "Count"]] + [[label, n] for _, label, n, _, _ in r.counts()], widths=[380, 80])]
    for key, title in SECTIONS:
        s = r.sections[key]
        story.append(pdf.para(f"{title}: {s.count}", st["h"]))
        if s.rows:
            cols = s.columns[:6]
            story.append(pdf.table([cols] + [[_cell(row.get(c)) for c in cols] for row in s.rows[:500]]))
            if s.count > 500:
                story.append(pdf.para(f"… and {s.count - 500} more in {key}.csv", st["small"]))
    return pdf.build(story, title=f"MS4 annual report {r.year}", footer=f"{r.municipality} — permit year {r.year}")


def standalone_html(r: AnnualReport) -> str:
    """The summary as a file beside the section CSVs (each count links to its CSV)."""
    rows = "\n".join(f"<tr><td>{escape(label)}</td><td><a href=\"{key}.csv\">{n}</a></td></tr>"
                     for key, label, n, _, _ in r.counts())
    return (f"<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>MS4 annual report {r.year}</title>"
            f"<h1>{escape(r.municipality)}: MS4 annual report, permit year {r.year}</h1>"
            f"<p>{r.start:%Y-%m-%d} to {(r.end - timedelta(days=1)):%Y-%m-%d}"
            + (f" (counted to {r.as_of:%Y-%m-%d %H:%M %Z})" if r.as_of < r.end else "") +
            ". Each count links to the records behind it (CSV); <a href=\"report.pdf\">PDF</a>.</p>"
            f"<table>{rows}</table></html>\n")


def write(r: AnnualReport, out: "Path") -> list["Path"]:
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


__all__ = ["AnnualReport", "Section", "SECTIONS", "build", "permit_year", "html", "report_pdf", "standalone_html",
           "write"]
