"""``/api/v1`` for compliance records: cases (list, one, open, add to the thread, import lab
results, the source trace and its visits), responsible parties, notices of violation (issue, record delivery and appeal
events, the letter), releases, the deadline board (JSON, CSV), the annual report's counts."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, File, Path, Query, UploadFile
from fastapi.responses import Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ....compliance.inputs import CaseIn, EntryIn, NoticeEventIn, NoticeIn, PartyIn, ReleaseIn, TraceVisitIn
from ...csvout import csv_response
from ...deps import MAX_ID, CurrentActor, Services
from ...schemas import BAD, CONFLICT, ERRORS, TOO_LARGE, DueOut, ErrorOut
from ..compliance import desk

router = APIRouter(prefix="/api/v1", tags=["compliance"], responses=ERRORS)
NOT_FOUND: dict[int | str, dict] = {404: {"model": ErrorOut, "description": "no such record"}}
CSV: dict[int | str, dict] = {200: {"content": {"text/csv": {}}, "description": "CSV, a header row, times in the town's zone"}}
CaseId = Annotated[int, Path(ge=1, le=MAX_ID, description="the case's id")]
NoticeId = Annotated[int, Path(ge=1, le=MAX_ID, description="the notice's id")]


class AttachmentOut(BaseModel):
    sha256: str
    media_type: str
    size: int
    name: str
    kind: str


class EntryOut(BaseModel):
    id: int
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
    attachments: list[AttachmentOut]


class CaseOut(BaseModel):
    id: int
    number: str
    status: str
    origin: str
    incident_id: int | None
    outfall: str | None
    location: str
    description: str
    reporter: str | None
    observed_at: datetime
    opened_by: str
    opened_at: datetime
    finding: str | None
    entries: list[EntryOut]

    @classmethod
    def of(cls, c: Any) -> "CaseOut":
        return cls(id=c.id, number=c.number, status=c.status, origin=c.origin, incident_id=c.incident_id,
                   outfall=c.outfall, location=c.location, description=c.description, reporter=c.reporter,
                   observed_at=c.observed_at, opened_by=c.opened_by, opened_at=c.opened_at, finding=c.finding,
                   entries=[EntryOut(id=e.id, kind=e.kind, at=e.at, by=e.by, notes=e.notes, location=e.location,
                                     dry_weather=e.dry_weather, flow_observed=e.flow_observed, finding=e.finding,
                                     outcome=e.outcome, verification=e.verification, recorded_by=e.recorded_by,
                                     attachments=[AttachmentOut(sha256=a.sha256, media_type=a.media_type, size=a.size,
                                                                name=a.name, kind=a.kind) for a in e.attachments])
                            for e in c.entries])


class ImportedOut(BaseModel):
    case: CaseOut
    results: int


class PartyOut(BaseModel):
    id: int
    name: str
    address: str


class ClockEventOut(BaseModel):
    kind: str
    at: datetime
    reference: str | None
    outcome: str | None
    note: str | None
    recipient_id: int | None = Field(default=None, description="a delivery: to which recipient")


class RecipientOut(BaseModel):
    id: int = Field(description="0: the addressee of a notice recorded before notices had recipients")
    party: PartyOut
    role: str
    method: str
    reference: str | None
    delivered_at: datetime | None


class CitedOut(BaseModel):
    key: str
    citation: str
    title: str
    text: str
    section_inferred: bool
    remedies: str


class LetterOut(BaseModel):
    href: str
    pdf_sha256: str | None = Field(description="the letter as served, frozen at issue (None: issued before letters "
                                               "were kept)")
    facts_sha256: str | None
    facts: dict[str, Any] | None


class ProvisionOut(BaseModel):
    key: str
    citation: str
    title: str
    text: str
    section_inferred: bool
    remedies: list[str]


class LawOut(BaseModel):
    key: str
    title: str
    provisions: list[ProvisionOut]


class DeadlineOut(BaseModel):
    key: str
    record: str
    number: str
    label: str
    who: str
    start: datetime | None = Field(description="when the event it runs from happened; null while pending")
    due: datetime | None = Field(description="the instant it runs out (for a period of days the local midnight "
                                             "ending due_day); null while pending")
    due_day: date | None = Field(description="the last day (the day every channel names)")
    awaiting: str | None = Field(None, description="a clock whose starting event is not yet recorded: its period in "
                                                   "words instead of a day (\"within 15 days of receipt of this "
                                                   "notice\")")
    when: DueOut
    state: str
    met_at: datetime | None
    closed: str | None
    provision: str
    actionable: bool
    immediately: bool = Field(False, description="due immediately (a hazardous release): due at `start`, met by "
                                                 "the notification recorded, never 'met late'")
    met_after_seconds: int | None = Field(None, description="for an 'immediately' clock: how long after `start` "
                                                            "it was met")

    @classmethod
    def of(cls, d: Any, now: datetime) -> "DeadlineOut":
        return cls(key=d.key, record=d.record, number=d.number, label=d.label, who=d.who, start=d.start, due=d.due,
                   due_day=d.when.last_day, when=DueOut.of(d.when), awaiting=d.awaiting, state=d.state(now), met_at=d.met_at,
                   closed=d.closed, provision=d.rule.provision,
                   actionable=d.actionable, immediately=d.immediate,
                   met_after_seconds=int(d.elapsed.total_seconds()) if d.elapsed is not None else None)


class NoticeOut(BaseModel):
    id: int
    number: str
    kind: str
    law: str
    case_id: int | None
    party: PartyOut
    recipients: list[RecipientOut]
    status: str
    place: str
    violation: str
    provisions: list[CitedOut]
    requirements: list[str]
    remedy: str
    remediation_days: int | None
    violation_since: date
    prior_violations: list[date]
    issued_at: datetime
    corrects: int | None
    corrected_by: int | None
    events: list[ClockEventOut]
    deadlines: list[DeadlineOut]
    letter: str
    served: LetterOut


class ReleaseOut(BaseModel):
    id: int
    number: str
    law: str
    kind: str
    material: str
    location: str
    known_at: datetime
    events: list[ClockEventOut]
    deadlines: list[DeadlineOut]


def _notice(d, n) -> NoticeOut:
    from ....compliance.laws import LAWS
    from ....compliance.letters import cited, remedies_for
    p = d.store.party(n.party_id)
    now = d.clock()
    lw = LAWS[n.law]
    parties = d.parties_of(n)
    frozen = d.frozen(n)
    return NoticeOut(id=n.id, number=n.number, kind=n.kind, law=n.law, case_id=n.case_id,
                     party=PartyOut(id=p.id, name=p.name, address=p.address), status=n.status,
                     recipients=[RecipientOut(id=r.id, party=PartyOut(id=r.party_id, name=parties[r.party_id].name,
                                                                      address=parties[r.party_id].address),
                                              role=r.role, method=r.method, reference=r.reference,
                                              delivered_at=(n.delivered_to(r).at if n.delivered_to(r) else None))
                                 for r in n.recipients],
                     place=n.place, violation=n.violation,
                     provisions=[CitedOut(key=x.key, citation=lw.cite(x), title=x.title, text=x.text,
                                          section_inferred=x.inferred, remedies=remedies_for(n, x)) for x in cited(n)],
                     requirements=list(n.requirements), remedy=n.remedy, remediation_days=n.remediation_days,
                     violation_since=n.violation_since, prior_violations=list(n.prior), issued_at=n.issued_at,
                     corrects=n.corrects, corrected_by=n.corrected_by[0] if n.corrected_by else None,
                     events=[ClockEventOut(kind=e.kind, at=e.at, reference=e.reference, outcome=e.outcome, note=e.note,
                                      recipient_id=e.recipient_id) for e in n.events],
                     deadlines=[DeadlineOut.of(x, now) for x in d.deadlines_of(f"notice:{n.id}")],
                     letter=f"/notices/{n.id}/letter.pdf",
                     served=LetterOut(href=f"/notices/{n.id}/letter.pdf",
                                      pdf_sha256=frozen.pdf_sha256 if frozen else None,
                                      facts_sha256=frozen.facts_sha256 if frozen else None,
                                      facts=frozen.facts if frozen else None))


def _release(d, r) -> ReleaseOut:
    now = d.clock()
    return ReleaseOut(id=r.id, number=r.number, law=r.law, kind=r.kind, material=r.material, location=r.location,
                      known_at=r.known_at, events=[ClockEventOut(kind=e.kind, at=e.at, reference=None, outcome=None,
                                                            note=e.note) for e in r.events],
                      deadlines=[DeadlineOut.of(x, now) for x in d.deadlines_of(f"release:{r.id}")])


@router.get("/cases", summary="Illicit-discharge cases, newest first")
def cases(actor: CurrentActor, services: Services) -> list[CaseOut]:
    return [CaseOut.of(c) for c in desk(services).cases(actor)]


@router.get("/cases/{cid}", summary="One case and its thread", responses=NOT_FOUND)
def case(cid: CaseId, actor: CurrentActor, services: Services) -> CaseOut:
    return CaseOut.of(desk(services).case(actor, cid))


@router.post("/cases", summary="Open a case (from an incident, a complaint or a screening; role inspector or higher)",
             status_code=201, responses={**NOT_FOUND, **CONFLICT, **BAD})
async def open_case(actor: CurrentActor, services: Services, body: CaseIn) -> CaseOut:
    return CaseOut.of(await run_in_threadpool(desk(services).open_case, actor, body))


@router.post("/cases/{cid}/entries", summary="Add a visit or note to a case's thread (photos: the pages' form)",
             status_code=201, responses={**NOT_FOUND, **CONFLICT, **BAD})
async def add_entry(cid: CaseId, actor: CurrentActor, services: Services, body: EntryIn) -> CaseOut:
    return CaseOut.of(await run_in_threadpool(desk(services).add_entry, actor, cid, body))


class FieldTestOut(BaseModel):
    indicator: str
    value: float
    unit: str
    verdict: str = Field(description="exceeds | below | no_threshold (the town's screening thresholds)")
    threshold: str | None


class TraceVisitOut(BaseModel):
    entry_id: int
    structure: str
    at: datetime
    by: str
    flow: str = Field(description="present | absent")
    odour: str | None
    colour: str | None
    notes: str
    field_tests: list[FieldTestOut]


class ParcelOut(BaseModel):
    id: str
    structure: str = Field(description="the catch basin, inlet or structure its runoff enters")
    drainage_area: str | None = Field(description="the drainage area it lies in, if any")


class TraceOut(BaseModel):
    """A case's source trace over the town's map (docs/network.md)."""
    outfall: str | None = Field(description="the case's outfall on the map; null: not on it, or no map")
    note: str | None = Field(description="why there is no plan")
    suspect_pipes: list[str]
    suspect_length_ft: float | None
    next_structure: str | None = Field(description="the structure to open next; null: walk the suspect pipes")
    suspect_parcels: list[ParcelOut] = Field(description="the parcels draining to the suspect reach (when the "
                                                         "town's map has a parcel layer)")
    visits: list[TraceVisitOut]

    @classmethod
    def of(cls, t: Any) -> "TraceOut":
        return cls(outfall=t.outfall, note=t.why_not, suspect_pipes=t.suspect_pipes,
                   suspect_length_ft=t.plan.suspect_length_ft if t.plan else None, next_structure=t.next_structure,
                   suspect_parcels=[ParcelOut(id=x.id, structure=x.structure, drainage_area=x.drainage_area)
                                    for x in t.suspect_parcels],
                   visits=[TraceVisitOut(entry_id=v.entry_id, structure=v.structure, at=v.at, by=v.by,
                                         flow=v.flow.value, odour=v.odour, colour=v.colour, notes=v.notes,
                                         field_tests=[FieldTestOut(indicator=x.indicator.value, value=x.value,
                                                                   unit=x.unit, verdict=x.verdict,
                                                                   threshold=x.threshold) for x in v.tests])
                           for v in t.visits])


def _tracing(services: Any):
    from ..tracing import tracing
    return tracing(services)


@router.get("/cases/{cid}/trace", summary="A case's source trace: its visits, the suspect reach, the next structure",
            responses=NOT_FOUND)
def trace(cid: CaseId, actor: CurrentActor, services: Services) -> TraceOut:
    return TraceOut.of(_tracing(services).of_case(actor, cid))


@router.post("/cases/{cid}/trace-visits", summary="Record a trace visit at a structure of the town's map (role "
             "inspector or higher); the trace as it now stands", status_code=201,
             responses={**NOT_FOUND, **CONFLICT, **BAD})
async def add_trace_visit(cid: CaseId, actor: CurrentActor, services: Services, body: TraceVisitIn) -> TraceOut:
    t = _tracing(services)
    await run_in_threadpool(t.record_visit, actor, cid, body)
    return TraceOut.of(await run_in_threadpool(t.of_case, actor, cid))


@router.post("/cases/{cid}/labs", summary="Import a lab's results (CSV): all rows or none, each bad line named",
             status_code=201, responses={**NOT_FOUND, **CONFLICT, **BAD, **TOO_LARGE})
async def import_labs(cid: CaseId, actor: CurrentActor, services: Services,
                      file: Annotated[UploadFile, File(description="the lab's CSV")]) -> ImportedOut:
    d = desk(services)
    data = await file.read()
    c, n = await run_in_threadpool(d.import_lab_results, actor, cid, file.filename or "lab.csv", data)
    return ImportedOut(case=CaseOut.of(c), results=n)


@router.post("/parties", summary="Record a responsible party (owner or operator, postal address; role smo)",
             status_code=201, responses={**CONFLICT, **BAD})
async def add_party(actor: CurrentActor, services: Services, body: PartyIn) -> PartyOut:
    p = await run_in_threadpool(desk(services).add_party, actor, body)
    return PartyOut(id=p.id, name=p.name, address=p.address)


@router.get("/laws", summary="The local laws the town issues notices under, each with the provisions a notice can cite")
def laws(actor: CurrentActor, services: Services) -> list[LawOut]:
    from ....compliance.laws import LAWS
    d = desk(services)
    d.check_read(actor)
    return [LawOut(key=k, title=LAWS[k].title,
                   provisions=[ProvisionOut(key=p.key, citation=LAWS[k].cite(p), title=p.title, text=p.text,
                                            section_inferred=p.inferred, remedies=list(p.remedies))
                               for p in LAWS[k].provisions]) for k in d.laws]


@router.get("/notices", summary="Notices of violation and stop-work orders, newest first")
def notices(actor: CurrentActor, services: Services) -> list[NoticeOut]:
    d = desk(services)
    return [_notice(d, n) for n in d.notices(actor)]


@router.get("/notices/{nid}", summary="One notice: its record, deadlines, the letter's address", responses=NOT_FOUND)
def notice(nid: NoticeId, actor: CurrentActor, services: Services) -> NoticeOut:
    d = desk(services)
    return _notice(d, d.notice(actor, nid))


@router.post("/notices", summary="Issue a notice of violation or a stop-work order (role smo)", status_code=201,
             responses={**NOT_FOUND, **CONFLICT, **BAD})
async def issue_notice(actor: CurrentActor, services: Services, body: NoticeIn) -> NoticeOut:
    d = desk(services)
    return _notice(d, await run_in_threadpool(d.issue_notice, actor, body))


@router.post("/notices/{nid}/events", summary="Record a notice's delivery, appeal, hearing, decision or compliance "
                                              "(role smo)", status_code=201, responses={**NOT_FOUND, **CONFLICT, **BAD})
async def notice_event(nid: NoticeId, actor: CurrentActor, services: Services, body: NoticeEventIn) -> NoticeOut:
    d = desk(services)
    return _notice(d, await run_in_threadpool(d.notice_event, actor, nid, body))


@router.get("/releases", summary="Releases reported, newest first, with their notification deadlines")
def releases(actor: CurrentActor, services: Services) -> list[ReleaseOut]:
    d = desk(services)
    return [_release(d, r) for r in d.releases(actor)]


@router.post("/releases", summary="Record a reported release (role inspector or higher)", status_code=201,
             responses={**NOT_FOUND, **CONFLICT, **BAD})
async def add_release(actor: CurrentActor, services: Services, body: ReleaseIn) -> ReleaseOut:
    d = desk(services)
    return _release(d, await run_in_threadpool(d.add_release, actor, body))


@router.get("/deadlines", summary="Every clock of the compliance records, the nearest due first")
def deadlines(actor: CurrentActor, services: Services,
              running: Annotated[bool, Query(description="only the clocks still running")] = False) -> list[DeadlineOut]:
    b = desk(services).board(actor)
    return [DeadlineOut.of(x, b.now) for x in (b.running if running else b.deadlines)]


COLUMNS = ["number", "label", "who", "start", "due", "due_day", "awaiting", "state", "met_at", "met_after_seconds", "closed",
           "provision", "record"]


@router.get("/deadlines.csv", summary="The deadline board as CSV", response_class=Response, responses=CSV)
def deadlines_csv(actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    b = d.board(actor)
    rows = [[getattr(DeadlineOut.of(x, b.now), c) for c in COLUMNS] for x in b.deadlines]
    return csv_response(f"deadlines-{services.municipality}.csv", COLUMNS, rows, services.tz)


class CountOut(BaseModel):
    line: str = Field(description="the line's id (what a count stated by hand names)")
    mcm: int | None = Field(description="the minimum control measure (3, 4), or none")
    section: str
    label: str
    count: int | None = Field(description="the count reported: stated by hand if it was, else the records'; "
                                          "null for a line stated by hand only and not yet stated")
    records: int | None = Field(description="the count of the records behind the line (null: none are kept)")
    column: str | None
    value: str | None


class AnnualOut(BaseModel):
    permit: str
    year: int
    start: datetime
    end: datetime
    as_of: datetime
    counts: list[CountOut]


@router.get("/reports/annual/{year}", summary="The annual report's counts for a reporting year (GP-0-24-001: from "
                                           "3 January)")
def annual(year: Annotated[int, Path(ge=2000, le=2100)], actor: CurrentActor, services: Services) -> AnnualOut:
    r = desk(services).annual_report(actor, year)
    return AnnualOut(permit=r.permit.id, year=year, start=r.start, end=r.end, as_of=r.as_of,
                     counts=[CountOut(line=ln.id, mcm=ln.mcm, section=ln.section or ln.id, label=ln.label,
                                      count=ln.reported, records=ln.computed, column=ln.column, value=ln.value)
                             for ln in r.lines()])
