"""The evidence packet of an incident or a case: a PDF to read, and a zip with the data
behind it — the readings as CSV and their chart as PNG for each incident, the samples,
custody and lab results, the case's thread and the notices as CSV, every record as JSON,
the notices' letters, the PDF itself — and ``SHA256SUMS`` (``sha256sum -c`` reads it), so
the packet can be shown to be unaltered.

Built twice from the same records, every file is byte-identical: the JSON has sorted keys,
rows are in a stable order, times are UTC, the chart's window of an open incident is fixed
(its first three days), matplotlib's PNG carries no date, the PDFs are built in reportlab's
invariant mode, and the zip's entries carry a fixed time (1980-01-01) in name order. The
packet says which records it holds; it does not say when it was built.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Any, Callable

from ..alerts.kinds.params import param_lines, threshold_words
from ..alerts.incidents.due import incident_due
from ..contract import duetext
from ..contract.csvfile import csv_text
from . import pdf
from .laws import LAWS
from .letters import cited, day
from .store import Case, Notice, Party, Sample

if TYPE_CHECKING:
    from ..alerts.incidents.model import AuditEntry, Incident
    from ..alerts.kinds.runoff import Runoff
    from .traces import TraceVisit

ZIP_TIME = (1980, 1, 1, 0, 0, 0)
MARGIN = timedelta(hours=1)
MAX_WINDOW = timedelta(days=3)


@dataclass
class IncidentEvidence:
    incident: Incident
    station_name: str
    audit: list[AuditEntry]                # its acknowledgements, resolution
    readings: Any = None                   # a DataFrame (time index, one column per series) or None
    threshold: dict[str, Any] | None = None
    provision_text: str = ""
    what: str = ""                         # the kind in the town's words (alerts/kinds/: describe)
    rule: str = ""                         # its rule in a sentence, with the town's numbers
    runoff: "Runoff | None" = None         # where its runoff goes on the town's map (alerts/kinds/runoff.py)

    @property
    def values(self) -> str:
        """``raw`` (as stored) or ``corrected`` (drift corrections in force applied): what the
        readings, their CSV and chart hold."""
        return str(getattr(self.readings, "attrs", {}).get("values", "raw")) if self.readings is not None else "raw"


@dataclass
class TraceEvidence:
    """A case's source trace: the visits (compliance.traces.TraceVisit) and what they leave."""
    outfall: str | None                    # the case's outfall on the town's map
    visits: list[TraceVisit]
    suspect_pipes: list[str]
    suspect_length_ft: float | None
    next_structure: str | None
    note: str | None = None                # why there is no plan (no map, outfall not on it)

    def summary(self) -> str:
        if self.note:
            return f"No trace plan: {self.note}."
        if not self.suspect_pipes:
            return "No pipe is left suspect: the visits contradict each other or the map's directions are wrong."
        left = f"Suspect reach: {', '.join(self.suspect_pipes)} ({self.suspect_length_ft or 0:,.0f} ft)."
        return left + (f" Next structure to open: {self.next_structure}." if self.next_structure
                       else f" No structure splits it: walk the pipes {', '.join(self.suspect_pipes)}.")


def _tests_text(v: TraceVisit) -> str:
    return "; ".join(f"{t.indicator.value} {t.value:g} {t.unit}" + (f" (exceeds {t.threshold})" if t.verdict == "exceeds"
                                                                     else "") for t in v.tests)


@dataclass
class Packet:
    title: str
    subject: str                           # "case-IDDE-2026-001" / "incident-12"
    tz: tzinfo
    timezone_name: str
    incidents: list[IncidentEvidence] = field(default_factory=list)
    case: Case | None = None
    samples: list[Sample] = field(default_factory=list)
    notices: list[tuple[Notice, Party, bytes]] = field(default_factory=list)   # with the letter's PDF
    inspections: list[Any] = field(default_factory=list)                        # InspectionReport
    provisions: list[tuple[str, str]] = field(default_factory=list)            # (provision, its words)
    trace: TraceEvidence | None = None


def window(inc: Incident) -> tuple[datetime, datetime]:
    """The readings to draw: the episode with an hour either side, an open one's first three days."""
    start = inc.start
    if inc.kind == "inspection_due":
        ev = inc.event
        start = datetime.fromisoformat(str(ev.get("storm_start") or inc.start.isoformat()).replace("Z", "+00:00")) \
            - timedelta(hours=12)
    end = inc.end or (start + MAX_WINDOW)
    return start - MARGIN, min(end + MARGIN, start - MARGIN + MAX_WINDOW)


def _u(dt: datetime | None) -> str | None:
    return None if dt is None else dt.astimezone(timezone.utc).isoformat()


def _csv(header: list[str], rows: list[list[Any]]) -> bytes:
    return csv_text(header, ([_u(v) if isinstance(v, datetime) else v for v in r] for r in rows)).encode("utf-8")


def _incident_json(ev: IncidentEvidence, tz_name: str) -> dict[str, Any]:
    i = ev.incident
    due = incident_due(i.kind, i.deadline, i.event, tz_name)
    return {"id": i.id, "kind": i.kind, "what": ev.what or i.kind.replace("_", " "), "rule": ev.rule,
            "subject": i.subject, "station_name": ev.station_name, "code": i.code,
            "state": i.state.value, "start": _u(i.start), "end": _u(i.end), "deadline": _u(i.deadline),
            "due": duetext.as_json(due) if due is not None else None,
            "opened_at": _u(i.opened_at), "acknowledged_at": _u(i.acknowledged_at),
            "acknowledged_by": i.acknowledged_by, "resolved_at": _u(i.resolved_at), "resolved_by": i.resolved_by,
            "resolution": i.resolution, "suppressed": i.suppressed, "provision": i.provision,
            "provision_text": ev.provision_text, "rule_params": i.event.get("params", {}), "threshold": ev.threshold,
            "readings_values": ev.values,
            "audit": [{"at": _u(a.at), "who": a.who, "how": a.how, "action": a.action, "note": a.note}
                      for a in ev.audit],
            **({"runoff": ev.runoff.as_json()} if ev.runoff is not None else {})}   # no map: as before


def _sample_json(s: Sample) -> dict[str, Any]:
    return {"number": s.number, "station": s.station, "taken_at": _u(s.taken_at), "source": s.source,
            "device": s.device, "bottle": s.bottle, "trigger": s.trigger, "volume_ml": s.volume_ml,
            "collected_by": s.collected_by, "episode": s.episode, "incident_id": s.incident_id,
            "case_id": s.case_id,
            "custody": [{"at": _u(c.at), "relinquished_by": c.relinquished_by, "received_by": c.received_by,
                         "lab": c.lab, "note": c.note} for c in s.custody],
            "results": [{"parameter": r.parameter, "value": r.value, "unit": r.unit, "censor": r.censor,
                         "method": r.method, "detection_limit": r.detection_limit, "qualifier": r.qualifier,
                         "value_in_threshold_unit": r.value_std, "threshold": r.threshold, "verdict": r.verdict,
                         "analysed_at": _u(r.analysed_at)} for r in s.results]}


def _notice_json(n: Notice, p: Party, letter: bytes) -> dict[str, Any]:
    lw = LAWS[n.law]
    return {"number": n.number, "kind": n.kind, "law": n.law, "party": {"name": p.name, "address": p.address},
            "status": n.status, "provisions": [lw.cite(x) for x in cited(n)],
            "recipients": [{"party_id": r.party_id, "role": r.role, "method": r.method, "reference": r.reference}
                           for r in n.recipients],
            "corrects": n.corrects, "letter_sha256": hashlib.sha256(letter).hexdigest(),
            "place": n.place, "violation": n.violation, "requirements": list(n.requirements), "remedy": n.remedy,
            "remediation_days": n.remediation_days, "violation_since": n.violation_since.isoformat(),
            "prior_violations": [d.isoformat() for d in n.prior], "issued_at": _u(n.issued_at),
            "issued_by": n.issued_by,
            "events": [{"kind": e.kind, "at": _u(e.at), "reference": e.reference, "outcome": e.outcome,
                        "note": e.note, "recipient_id": e.recipient_id} for e in n.events]}


def data_files(p: Packet, chart: Callable[[IncidentEvidence], bytes | None],
               readings_csv: Callable[[IncidentEvidence], bytes | None]) -> dict[str, bytes]:
    """Every file of the packet but the PDF and the manifest, by name."""
    files: dict[str, bytes] = {}
    for ev in p.incidents:
        i = ev.incident
        png = chart(ev)
        if png:
            files[f"incident-{i.id}/chart.png"] = png
        data = readings_csv(ev)
        if data:
            files[f"incident-{i.id}/readings.csv"] = data
        files[f"incident-{i.id}/acknowledgements.csv"] = _csv(
            ["at", "who", "how", "action", "note"], [[a.at, a.who, a.how, a.action, a.note] for a in ev.audit])
    samples = sorted(p.samples, key=lambda s: (s.taken_at, s.number))
    if samples:
        files["samples.csv"] = _csv(["sample", "station", "taken_at", "source", "device", "bottle", "trigger",
                                     "collected_by", "incident", "episode"],
                                    [[s.number, s.station, s.taken_at, s.source, s.device, s.bottle, s.trigger,
                                      s.collected_by, s.incident_id, s.episode] for s in samples])
        files["custody.csv"] = _csv(["sample", "at", "relinquished_by", "received_by", "lab", "note"],
                                    [[s.number, c.at, c.relinquished_by, c.received_by, c.lab, c.note]
                                     for s in samples for c in s.custody])
        files["lab-results.csv"] = _csv(["sample", "parameter", "censor", "value", "unit", "method",
                                         "detection_limit", "qualifier", "value_in_threshold_unit", "threshold",
                                         "verdict", "analysed_at"],
                                        [[s.number, r.parameter, r.censor, r.value, r.unit, r.method,
                                          r.detection_limit, r.qualifier, r.value_std, r.threshold, r.verdict,
                                          r.analysed_at] for s in samples for r in s.results])
    if p.case is not None:
        files["thread.csv"] = _csv(["at", "kind", "by", "location", "dry_weather", "flow_observed", "finding",
                                    "outcome", "verification", "notes", "attachments"],
                                   [[e.at, e.kind, e.by, e.location, e.dry_weather, e.flow_observed, e.finding,
                                     e.outcome, e.verification, e.notes,
                                     " ".join(f"{a.name or a.kind}:{a.sha256}" for a in e.attachments)]
                                    for e in p.case.entries])
    if p.trace is not None and p.trace.visits:
        files["trace-visits.csv"] = _csv(["at", "structure", "flow", "odour", "colour", "field_tests", "by", "notes"],
                                         [[v.at, v.structure, v.flow.value, v.odour, v.colour, _tests_text(v), v.by,
                                           v.notes] for v in p.trace.visits])
    if p.notices:
        files["notices.csv"] = _csv(["number", "kind", "law", "party", "issued_at", "status", "events"],
                                    [[n.number, n.kind, n.law, party.name, n.issued_at, n.status,
                                      "; ".join(f"{e.kind} {_u(e.at)}" for e in n.events)]
                                     for n, party, _ in p.notices])
        for n, _, letter in p.notices:
            files[f"letters/{n.number}.pdf"] = letter
    if p.inspections:
        files["inspections.csv"] = _csv(["report", "site", "at", "inspector", "credential", "license_no",
                                         "deficiencies"],
                                        [[r.id, r.site, r.at, r.inspector, r.credential.value, r.license_no,
                                          r.deficiencies] for r in p.inspections])
    record = {"packet": p.subject, "title": p.title, "timezone": p.timezone_name,
              "incidents": [_incident_json(ev, p.timezone_name) for ev in p.incidents],
              "case": None if p.case is None else {
                  "number": p.case.number, "origin": p.case.origin, "incident_id": p.case.incident_id,
                  "outfall": p.case.outfall, "location": p.case.location, "description": p.case.description,
                  "reporter": p.case.reporter, "observed_at": _u(p.case.observed_at), "status": p.case.status,
                  "entries": [{"kind": e.kind, "at": _u(e.at), "by": e.by, "notes": e.notes, "finding": e.finding,
                               "outcome": e.outcome, "verification": e.verification,
                               "attachments": [{"name": a.name, "sha256": a.sha256, "media_type": a.media_type}
                                               for a in e.attachments]} for e in p.case.entries]},
              "samples": [_sample_json(s) for s in samples],
              "notices": [_notice_json(n, party, letter) for n, party, letter in p.notices],
              "inspections": [{"id": r.id, "site": r.site, "at": _u(r.at), "inspector": r.inspector,
                               "deficiencies": r.deficiencies} for r in p.inspections],
              "provisions": [{"provision": a, "text": b} for a, b in p.provisions],
              "trace": None if p.trace is None else {
                  "outfall": p.trace.outfall, "note": p.trace.note, "suspect_pipes": p.trace.suspect_pipes,
                  "suspect_length_ft": p.trace.suspect_length_ft, "next_structure": p.trace.next_structure,
                  "visits": [{"at": _u(v.at), "structure": v.structure, "flow": v.flow.value, "odour": v.odour,
                              "colour": v.colour, "by": v.by, "notes": v.notes,
                              "field_tests": [{"indicator": t.indicator.value, "value": t.value, "unit": t.unit,
                                               "verdict": t.verdict, "threshold": t.threshold} for t in v.tests]}
                             for v in p.trace.visits]}}
    files["records.json"] = json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"
    return files


def packet_pdf(p: Packet, files: dict[str, bytes]) -> bytes:
    st = pdf.styles()
    story: list[pdf.Flowable] = [pdf.para("Evidence packet", st["small"]), pdf.para(p.title, st["title"]),
                   pdf.para(f"Times in {p.timezone_name}. The zip beside this PDF holds the data behind it; "
                            "SHA256SUMS lists the SHA-256 of every file (sha256sum -c SHA256SUMS).", st["small"])]
    tz = p.tz

    def t(dt: datetime | None) -> str:
        return dt.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z") if dt else ""
    if p.case is not None:
        c = p.case
        story += [pdf.para(f"Case {c.number} ({c.status})", st["h"]),
                  pdf.para(f"{c.description} — {c.location}; observed {t(c.observed_at)}; origin {c.origin}"
                           + (f", reported by {c.reporter}" if c.reporter else "") + ".", st["p"])]
        if c.entries:
            story.append(pdf.table([["When", "Kind", "By", "Notes", "Finding / outcome"]] +
                                   [[t(e.at), e.kind, e.by, e.notes + (f" ({len(e.attachments)} attachment(s))"
                                                                        if e.attachments else ""),
                                     " ".join(x for x in (e.finding, e.outcome, e.verification) if x)]
                                    for e in c.entries], widths=[75, 55, 70, 200, 110]))
    if p.trace is not None and (p.trace.visits or p.trace.outfall):
        tr = p.trace
        story.append(pdf.para(f"Source trace from outfall {tr.outfall}" if tr.outfall else "Source trace", st["h"]))
        story.append(pdf.para(tr.summary(), st["p"]))
        if tr.visits:
            story.append(pdf.table([["When", "Structure", "Flow", "Odour / colour", "Field tests", "By"]] +
                                   [[t(v.at), v.structure, v.flow.value, " / ".join(x or "-" for x in (v.odour, v.colour)),
                                     _tests_text(v), v.by] for v in tr.visits], widths=[75, 55, 40, 75, 190, 75]))
    for ev in p.incidents:
        i = ev.incident
        due = incident_due(i.kind, i.deadline, i.event, p.timezone_name)
        story += [pdf.para(f"Incident {i.id}: {ev.what or i.kind.replace('_', ' ')} at {ev.station_name} ({i.subject})",
                           st["h"]),
                  pdf.para(f"From {t(i.start)}" + (f" to {t(i.end)}" if i.end else " (open)") + f"; state {i.state.value}"
                           + (f"; due {duetext.short(due)}" if due is not None else "")
                           + (f", resolved by {i.resolved_by} ({i.resolution})" if i.resolved_by else "") + ".",
                           st["p"])]
        if ev.runoff is not None:
            story.append(pdf.para(f"{ev.runoff.label}: {ev.runoff.text}", st["p"]))
        if ev.rule:
            story.append(pdf.para(f"Rule: {ev.rule}", st["p"]))
        rule = i.event.get("params") or {}
        if rule or ev.threshold:
            words = [f"{label}: {value}" for label, value in param_lines(rule)]
            if ev.threshold:
                words.insert(0, f"Threshold: {threshold_words(ev.threshold)}")
            story.append(pdf.para("Rule and thresholds: " + "; ".join(words) + ".", st["p"]))
        if i.provision:
            story.append(pdf.para(f"Provision: {i.provision}", st["p"]))
        if ev.provision_text:
            story.append(pdf.para(f"\u201c{ev.provision_text}\u201d", st["quote"]))
        png = files.get(f"incident-{i.id}/chart.png")
        if png:
            story.append(pdf.image(png, 6.5))
            story.append(pdf.para("Readings corrected for fouling and drift (USGS TM 1-D3; raw values kept in the "
                                  "store)" if ev.values == "corrected" else "Readings as stored (raw values)",
                                  st["small"]))
        if ev.audit:
            story.append(pdf.table([["When", "Who", "How", "What", "Note"]] +
                                   [[t(a.at), a.who, a.how, a.action, a.note or ""] for a in ev.audit],
                                   widths=[80, 80, 70, 70, 210]))
    if p.inspections:
        story.append(pdf.para("Inspections", st["h"]))
        story.append(pdf.table([["Report", "Site", "When", "Inspector", "Deficiencies"]] +
                               [[r.id, r.site, t(r.at), f"{r.inspector} ({r.credential.value} {r.license_no})",
                                 r.deficiencies] for r in p.inspections], widths=[40, 50, 80, 130, 210]))
    if p.samples:
        story.append(pdf.para("Samples, custody and lab results", st["h"]))
        for s in sorted(p.samples, key=lambda s: (s.taken_at, s.number)):
            story.append(pdf.para(f"{s.number} at {s.station}, taken {t(s.taken_at)} ({s.source}"
                                  + (f", bottle {s.bottle}, {s.trigger}" if s.bottle else "") + f"), collected by "
                                  f"{s.collected_by}. Custody: " + ("; ".join(
                                      f"{t(c.at)} {c.relinquished_by} to {c.received_by}" + (f" ({c.lab})" if c.lab else "")
                                      for c in s.custody) or "none recorded") + ".", st["p"]))
            if s.results:
                story.append(pdf.table([["Parameter", "Result", "Method", "DL", "Qual.", "Threshold", "Verdict"]] +
                                       [[r.parameter, f"{r.censor}{'ND' if r.value is None else f'{r.value:g}'} {r.unit}",
                                         r.method, "" if r.detection_limit is None else f"{r.detection_limit:g}",
                                         r.qualifier, r.threshold or "", r.verdict.replace("_", " ")]
                                        for r in s.results], widths=[85, 80, 70, 40, 35, 110, 90]))
    if p.notices:
        story.append(pdf.para("Notices", st["h"]))
        story.append(pdf.table([["Notice", "Law", "To", "Issued", "Status", "Record"]] +
                               [[n.number, n.law, party.name, day(n.issued_at, tz), n.status,
                                 "; ".join(f"{e.kind.replace('_', ' ')} {e.at.astimezone(tz):%Y-%m-%d}"
                                           + (f" ({e.reference})" if e.reference else "") for e in n.events)]
                                for n, party, _ in p.notices], widths=[65, 75, 95, 65, 60, 150]))
    if p.provisions:
        story.append(pdf.para("The provisions", st["h"]))
        for prov, text in p.provisions:
            story += [pdf.para(prov, st["p"]), pdf.para(f"\u201c{text}\u201d", st["quote"])]
    story.append(pdf.para("Data files (SHA-256)", st["h"]))
    story.append(pdf.table([["File", "SHA-256"]] + [[n, hashlib.sha256(files[n]).hexdigest()] for n in sorted(files)],
                           widths=[170, 340]))
    return pdf.build(story, title=p.title, footer=f"{p.subject} — evidence packet")


def manifest(files: dict[str, bytes]) -> bytes:
    return "".join(f"{hashlib.sha256(files[n]).hexdigest()}  {n}\n" for n in sorted(files)).encode()


def packet_zip(files: dict[str, bytes], pdf_bytes: bytes, subject: str) -> bytes:
    every = dict(files)
    every["packet.pdf"] = pdf_bytes
    every["SHA256SUMS"] = manifest(every)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in sorted(every):
            info = zipfile.ZipInfo(f"{subject}/{name}", date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, every[name])
    return buf.getvalue()


def verify(zip_bytes: bytes) -> list[str]:
    """The files whose SHA-256 differs from the manifest's (empty: unaltered)."""
    bad = []
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as z:
        names = z.namelist()
        root = names[0].split("/", 1)[0]
        sums = z.read(f"{root}/SHA256SUMS").decode().splitlines()
        for line in sums:
            digest, name = line.split("  ", 1)
            if hashlib.sha256(z.read(f"{root}/{name}")).hexdigest() != digest:
                bad.append(name)
    return bad


__all__ = ["Packet", "IncidentEvidence", "data_files", "packet_pdf", "packet_zip", "manifest", "verify", "window"]
