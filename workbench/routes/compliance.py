"""Compliance records, as pages: illicit-discharge cases (open one from an incident or a
complaint; its thread of visits with photos and files, samples with their custody, lab
results imported from CSV, notices; closure with verification), notices of violation and
stop-work orders (the letter as PDF, delivery and appeal events), responsible parties,
release reports, SWPPP reviews, the deadline board; evidence packets for a case or an
incident. Writes are forms: the role is checked first, a mistake shows the page again
with the reason."""

from __future__ import annotations

from typing import Annotated, Any, Callable, TypeVar

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from ...compliance.inputs import (CaseIn, CustodyIn, EntryIn, NoticeEventIn, NoticeIn, PartyIn, ReleaseEventIn,
                                  ReleaseIn, SampleIn, SwpppEventIn, SwpppIn)
from ...compliance.labs import QUALIFIERS
from ...compliance.laws import LAWS
from ...compliance.store import METHODS, ROLES
from ..deps import MAX_ID, CurrentActor, IncidentId, Services, Sha256, base_path, parse_when, render
from ..errors import NotFound, WorkbenchError
from ..services.compliance import Refused
from ..roles import Actor, Permission
from .stations import Values

router = APIRouter(include_in_schema=False)
CaseId = Annotated[int, Path(ge=1, le=MAX_ID, description="the case's id")]
NoticeId = Annotated[int, Path(ge=1, le=MAX_ID, description="the notice's id")]
SampleId = Annotated[int, Path(ge=1, le=MAX_ID, description="the sample's id")]
ReleaseId = Annotated[int, Path(ge=1, le=MAX_ID, description="the release's id")]
SwpppId = Annotated[int, Path(ge=1, le=MAX_ID, description="the SWPPP review's id")]

TIMES = {"observed_at", "at", "taken_at", "issued_at", "known_at", "called_at", "received_at"}
BOOLS = {"dry_weather", "flow_observed", "commercial", "deviates"}
LISTS = {"requirements", "provisions"}


def desk(services: Services):
    if services.compliance is None:
        raise NotFound("compliance records are not kept by this server")
    return services.compliance


Model = TypeVar("Model", bound=BaseModel)


def from_form(model: type[Model], form: Any, tz: Any, extra: dict[str, Any] | None = None) -> Model:
    """A form's fields into the model: local times, ticked boxes, empty fields left out;
    ``extra``: fields the caller assembled from several inputs (a notice's recipients)."""
    data: dict[str, Any] = dict(extra or {})
    for name in model.model_fields:
        if name in data:
            continue
        if name in LISTS:
            data[name] = [str(v) for v in form.getlist(name) if str(v).strip()]
            continue
        raw = form.get(name)
        if raw is None or isinstance(raw, UploadFile):
            continue
        raw = str(raw).strip()
        if raw == "":
            continue
        if name in TIMES:
            try:
                data[name] = parse_when(raw, tz)
            except ValueError:
                data[name] = raw   # the model names the field
        elif name in BOOLS:
            data[name] = raw.lower() in ("on", "yes", "true", "1")
        else:
            data[name] = raw
    return model.model_validate(data)


def problems(e: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in x['loc']) or 'form'}: {x['msg'].removeprefix('Value error, ')}"
                     for x in e.errors()[:6])


async def _files(form: Any, name: str) -> list[tuple[str, bytes]]:
    out = []
    for f in form.getlist(name):
        if isinstance(f, UploadFile) and f.filename:
            out.append((f.filename, await f.read()))
    return out


async def _write(request: Request, actor: Actor, services: Any, permission: Permission, action: str, target: str,
                 model: type[BaseModel] | None, call: Callable[[Any], Any], done: Callable[[Any], str],
                 again: Callable[[int, str], Response]) -> Response:
    """The role first (audited), then the form, then the service; a mistake shows ``again``."""
    d = desk(services)
    await run_in_threadpool(d.check, actor, permission, action, target)
    form = await request.form()
    try:
        body = from_form(model, form, services.tz) if model is not None else form
    except ValidationError as e:
        return again(400, problems(e))
    try:
        out = await call(body) if _is_coro(call) else await run_in_threadpool(call, body)
    except WorkbenchError as e:
        if e.status in (401, 403, 404):
            raise
        return again(e.status, str(e))
    return RedirectResponse(base_path(request) + done(out), status_code=303)


def _is_coro(fn: Callable) -> bool:
    import inspect
    return inspect.iscoroutinefunction(fn)


# -- cases ----------------------------------------------------------------------------------------
def _cases_page(request: Request, actor: Actor, services: Any, status: int = 200, *, error: str | None = None,
                incident: int | None = None) -> Response:
    d = desk(services)
    inc = None
    if incident:
        try:
            inc = services.desk.get(actor, incident).incident
        except WorkbenchError:
            inc = None
    now = d.clock().astimezone(services.tz)
    existing = d.of_incident(actor, inc.id)[0] if inc is not None else []
    return render(request, "cases.html", status, title="Cases", actor=actor, cases=d.cases(actor), incident=inc,
                  existing=existing,
                  outfalls=services.registry.outfalls, error=error, now=now,
                  may_record=actor.may(Permission.RECORD_CASE))


@router.get("/cases")
def cases(request: Request, actor: CurrentActor, services: Services,
          incident: Annotated[int, Query(ge=0, le=MAX_ID)] = 0) -> Response:
    return _cases_page(request, actor, services, incident=incident or None)


@router.post("/cases")
async def open_case(request: Request, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    return await _write(request, actor, services, Permission.RECORD_CASE, "case.open", "cases", CaseIn,
                        lambda body: d.open_case(actor, body), lambda c: f"/cases/{c.id}",
                        lambda st, err: _cases_page(request, actor, services, st, error=err))


def _case_page(request: Request, actor: Actor, services: Any, cid: int, status: int = 200, *,
               error: str | None = None) -> Response:
    d = desk(services)
    samples = d.samples(actor, case_id=cid)
    case = d.case(actor, cid)
    notices = d.store.notices(case_id=cid)
    incident = None
    if case.incident_id:
        try:
            incident = services.desk.get(actor, case.incident_id).incident
        except WorkbenchError:
            incident = None
    now = d.clock().astimezone(services.tz)
    trace = services.tracing.of_case(actor, cid) if services.tracing is not None else None
    return render(request, "case.html", status, title=f"Case {case.number}", actor=actor, case=case, samples=samples,
                  notices=notices, incident=incident, error=error, now=now, qualifiers=QUALIFIERS, trace=trace,
                  outfall=next((o for o in services.registry.outfalls if o.id == case.outfall), None),
                  may_record=actor.may(Permission.RECORD_CASE), may_enforce=actor.may(Permission.ENFORCE))


@router.get("/cases/{cid}")
def case(request: Request, cid: CaseId, actor: CurrentActor, services: Services) -> Response:
    return _case_page(request, actor, services, cid)


@router.post("/cases/{cid}/entries")
async def add_entry(request: Request, cid: CaseId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)

    async def call(body: EntryIn):
        if body.kind == "closure":     # the page closes a case through its confirmation step only
            raise Refused("kind: close a case with its own form (a note, then a confirmation)")
        form = await request.form()
        photos, files = await _files(form, "photos"), await _files(form, "files")
        return await run_in_threadpool(d.add_entry, actor, cid, body, photos, files)
    return await _write(request, actor, services, Permission.RECORD_CASE, "case.entry", f"case:{cid}", EntryIn, call,
                        lambda c: f"/cases/{cid}#entry-{c.entries[-1].id}",
                        lambda st, err: _case_page(request, actor, services, cid, st, error=err))


@router.post("/cases/{cid}/close")
async def close_case(request: Request, cid: CaseId, actor: CurrentActor, services: Services) -> Response:
    """Two steps: the outcome, how it was verified and a note, then a page that shows what
    closing means and asks to confirm (as withdrawing a notice does)."""
    d = desk(services)
    await run_in_threadpool(d.check, actor, Permission.RECORD_CASE, "case.close", f"case:{cid}")
    form = await request.form()
    again = lambda st, err: _case_page(request, actor, services, cid, st, error=err)  # noqa: E731
    try:
        body = from_form(EntryIn, form, services.tz, {"kind": "closure"})
    except ValidationError as e:
        return again(400, problems(e))
    if not body.outcome or not (body.verification or "").strip():
        return again(400, "a closure needs its outcome and how it was verified")
    case = d.case(actor, cid)
    if str(form.get("confirm") or "") != "yes":
        fields = {k: str(form.get(k) or "") for k in ("at", "by", "outcome", "verification", "notes", "location")}
        return render(request, "case_close.html", title=f"Close case {case.number}?", actor=actor, case=case,
                      body=body, fields=fields)
    try:
        await run_in_threadpool(d.add_entry, actor, cid, body)
    except WorkbenchError as e:
        if e.status in (401, 403, 404):
            raise
        return again(e.status, str(e))
    return RedirectResponse(base_path(request) + f"/cases/{cid}", status_code=303)


@router.post("/cases/{cid}/samples")
async def add_sample(request: Request, cid: CaseId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    return await _write(request, actor, services, Permission.RECORD_CASE, "sample.record", f"case:{cid}", SampleIn,
                        lambda body: d.add_sample(actor, cid, body), lambda s: f"/cases/{cid}#sample-{s.id}",
                        lambda st, err: _case_page(request, actor, services, cid, st, error=err))


@router.post("/samples/{smp}/custody")
async def add_custody(request: Request, smp: SampleId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)

    def again(st: int, err: str) -> Response:
        s = d.sample(actor, smp)
        return _case_page(request, actor, services, s.case_id or (s.cases[0] if s.cases else 0), st, error=err) \
            if (s.case_id or s.cases) else render(request, "error.html", st, title="Not done", message=err)

    def back(s) -> str:
        cid = s.case_id or (s.cases[0] if s.cases else None)
        return f"/cases/{cid}#sample-{s.id}" if cid else "/cases"
    return await _write(request, actor, services, Permission.RECORD_CASE, "sample.custody", f"sample:{smp}", CustodyIn,
                        lambda body: d.add_custody(actor, smp, body), back, again)


@router.post("/cases/{cid}/labs")
async def import_labs(request: Request, cid: CaseId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)

    async def call(form: Any):
        files = await _files(form, "file")
        name, data = files[0] if files else ("", b"")
        return await run_in_threadpool(d.import_lab_results, actor, cid, name, data)
    return await _write(request, actor, services, Permission.RECORD_CASE, "lab.import", f"case:{cid}", None, call,
                        lambda out: f"/cases/{cid}?imported={out[1]}#samples",
                        lambda st, err: _case_page(request, actor, services, cid, st, error=err))


@router.get("/cases/{cid}/files/{sha}")
async def case_file(cid: CaseId, sha: Sha256, actor: CurrentActor, services: Services) -> Response:
    att, data = await run_in_threadpool(desk(services).attachment, actor, cid, sha)
    disposition = "inline" if att.kind == "photo" and att.shown_inline else "attachment"
    name = "".join(c if 32 <= ord(c) < 127 and c not in '"\\;' else "_" for c in att.name) or sha[:12]
    return Response(data, media_type=att.media_type if disposition == "inline" else "application/octet-stream",
                    headers={"Cache-Control": "private, max-age=86400, immutable",
                             "Content-Disposition": f'{disposition}; filename="{name}"'})


# -- parties and notices --------------------------------------------------------------------------
def _notices_page(request: Request, actor: Actor, services: Any, status: int = 200, *,
                  error: str | None = None) -> Response:
    d = desk(services)
    now = d.clock().astimezone(services.tz)
    case_id = request.query_params.get("case")
    correct = request.query_params.get("correct")
    correcting = None
    if correct and correct.isascii() and correct.isdigit() and len(correct) <= 15 and actor.may(Permission.ENFORCE):
        try:
            correcting = d.notice(actor, int(correct))
        except WorkbenchError:
            correcting = None
    return render(request, "notices.html", status, title="Enforcement", actor=actor, notices=d.notices(actor),
                  parties={p.id: p for p in d.parties(actor)}, laws=[LAWS[k] for k in d.laws], error=error, now=now,
                  cases=d.store.cases(), case_id=int(case_id) if case_id and case_id.isascii() and case_id.isdigit() else None,
                  correct_id=correcting.id if correcting else None, correcting=correcting, roles=ROLES,
                  methods=METHODS,
                  sites=services.registry.construction_sites, outfalls=services.registry.outfalls,
                  may_enforce=actor.may(Permission.ENFORCE))


def notice_form(form: Any, tz: Any) -> NoticeIn:
    """The issue form: the addressee and whoever else it goes to (``also_role:<party>``), the
    provisions ticked (``law:key``) and the remedial measures written for each of them."""
    addressee = str(form.get("party_id") or "").strip()
    recipients: list[dict[str, Any]] = []
    if addressee:
        recipients.append({"party_id": addressee, "role": str(form.get("role") or "responsible person"),
                           "method": str(form.get("method") or "certified_mail"),
                           "reference": str(form.get("reference") or "").strip() or None})
    for name in form.keys():
        if name.startswith("also_role:") and str(form.get(name) or "").strip():
            pid = name.split(":", 1)[1]
            if pid != addressee:
                recipients.append({"party_id": pid, "role": str(form.get(name)), "method": "certified_mail",
                                   "reference": str(form.get(f"also_ref:{pid}") or "").strip() or None})
    ticked = [str(v) for v in form.getlist("provisions") if str(v).strip()]
    remedies = {ref: str(form.get(f"remedy:{ref}") or "").strip() for ref in ticked}
    # a box ticked under another law than the one chosen is refused by the service, by name
    return from_form(NoticeIn, form, tz, extra={"recipients": recipients, "provisions": ticked,
                                                "remedies": {k: v for k, v in remedies.items() if v}})


@router.get("/notices")
def notices(request: Request, actor: CurrentActor, services: Services) -> Response:
    return _notices_page(request, actor, services)


@router.post("/parties")
async def add_party(request: Request, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    case = str((await request.form()).get("case") or "")     # the case chosen on the notice form stays chosen
    keep = f"&case={case}" if case.isascii() and case.isdigit() and len(case) <= 15 else ""
    return await _write(request, actor, services, Permission.ENFORCE, "party.add", "parties", PartyIn,
                        lambda body: d.add_party(actor, body), lambda p: f"/notices?party={p.id}{keep}#issue",
                        lambda st, err: _notices_page(request, actor, services, st, error=err))


@router.post("/notices")
async def issue_notice(request: Request, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    await run_in_threadpool(d.check, actor, Permission.ENFORCE, "notice.issue", "notices")
    form = await request.form()
    try:
        body = notice_form(form, services.tz)
    except ValidationError as e:
        return _notices_page(request, actor, services, 400, error=problems(e))
    try:
        n = await run_in_threadpool(d.issue_notice, actor, body)
    except WorkbenchError as e:
        if e.status in (401, 403, 404):
            raise
        return _notices_page(request, actor, services, e.status, error=str(e))
    return RedirectResponse(base_path(request) + f"/notices/{n.id}", status_code=303)


def _notice_page(request: Request, actor: Actor, services: Any, nid: int, status: int = 200, *,
                 error: str | None = None) -> Response:
    d = desk(services)
    n = d.notice(actor, nid)
    now = d.clock().astimezone(services.tz)
    case = d.store.case(n.case_id) if n.case_id else None
    return render(request, "notice.html", status, title=f"Notice {n.number}", actor=actor, n=n, law=LAWS[n.law],
                  case=case, outfall=n.outfall or (case.outfall if case else None),
                  party=d.store.party(n.party_id), parties=d.parties_of(n), sections=d.sections(n),
                  deadlines=d.deadlines_of(f"notice:{nid}"), frozen=d.frozen(n), withdrawn=n.first("withdrawn"),
                  replaces=d.store.notice(n.corrects) if n.corrects else None,
                  history=d.store.notices(party_id=n.party_id), error=error, now=now,
                  may_enforce=actor.may(Permission.ENFORCE))


@router.get("/notices/{nid}")
def notice(request: Request, nid: NoticeId, actor: CurrentActor, services: Services) -> Response:
    return _notice_page(request, actor, services, nid)


@router.get("/notices/{nid}/letter.pdf")
async def letter(nid: NoticeId, actor: CurrentActor, services: Services) -> Response:
    n, data = await run_in_threadpool(desk(services).letter, actor, nid)
    return Response(data, media_type="application/pdf",
                    headers={"Content-Disposition": f'inline; filename="{n.number}.pdf"'})


@router.post("/notices/{nid}/events")
async def notice_event(request: Request, nid: NoticeId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)

    def call(body: NoticeEventIn):
        if body.kind == "withdrawn":   # the page withdraws through its confirmation step only
            raise Refused("kind: withdraw a notice with its own form (a reason, then a confirmation)")
        return d.notice_event(actor, nid, body)
    return await _write(request, actor, services, Permission.ENFORCE, "notice.event", f"notice:{nid}", NoticeEventIn,
                        call, lambda n: f"/notices/{nid}",
                        lambda st, err: _notice_page(request, actor, services, nid, st, error=err))


@router.post("/notices/{nid}/withdraw")
async def withdraw_notice(request: Request, nid: NoticeId, actor: CurrentActor, services: Services) -> Response:
    """Two steps: the reason, then a page that shows what withdrawing means and asks to confirm."""
    d = desk(services)
    await run_in_threadpool(d.check, actor, Permission.ENFORCE, "notice.withdrawn", f"notice:{nid}")
    form = await request.form()
    reason = str(form.get("reason") or "").strip()
    n = d.notice(actor, nid)
    if not reason:
        return _notice_page(request, actor, services, nid, 400, error="reason: why the notice is withdrawn")
    if len(reason) > 4000:
        return _notice_page(request, actor, services, nid, 400, error="reason: at most 4000 characters")
    if str(form.get("confirm") or "") != "yes":
        return render(request, "notice_withdraw.html", title=f"Withdraw {n.number}?", actor=actor, n=n,
                      party=d.store.party(n.party_id), reason=reason)
    try:
        await run_in_threadpool(d.withdraw, actor, nid, reason)
    except WorkbenchError as e:
        if e.status in (401, 403, 404):
            raise
        return _notice_page(request, actor, services, nid, e.status, error=str(e))
    return RedirectResponse(base_path(request) + f"/notices/{nid}", status_code=303)


# -- releases -------------------------------------------------------------------------------------
def _releases_page(request: Request, actor: Actor, services: Any, status: int = 200, *,
                   error: str | None = None) -> Response:
    d = desk(services)
    now = d.clock().astimezone(services.tz)
    rels = d.releases(actor)
    return render(request, "releases.html", status, title="Releases", actor=actor, releases=rels,
                  deadlines={r.id: d.deadlines_of(f"release:{r.id}") for r in rels},
                  laws=[LAWS[k] for k in d.laws if LAWS[k].release_notice], outfalls=services.registry.outfalls,
                  error=error, now=now, may_record=actor.may(Permission.RECORD_CASE))


@router.get("/releases")
def releases(request: Request, actor: CurrentActor, services: Services) -> Response:
    return _releases_page(request, actor, services)


@router.post("/releases")
async def add_release(request: Request, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    return await _write(request, actor, services, Permission.RECORD_CASE, "release.record", "releases", ReleaseIn,
                        lambda body: d.add_release(actor, body), lambda r: f"/releases#release-{r.id}",
                        lambda st, err: _releases_page(request, actor, services, st, error=err))


@router.post("/releases/{rel}/events")
async def release_event(request: Request, rel: ReleaseId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    return await _write(request, actor, services, Permission.RECORD_CASE, "release.event", f"release:{rel}",
                        ReleaseEventIn, lambda body: d.release_event(actor, rel, body),
                        lambda r: f"/releases#release-{r.id}",
                        lambda st, err: _releases_page(request, actor, services, st, error=err))


# -- SWPPP reviews --------------------------------------------------------------------------------
def _swppp_page(request: Request, actor: Actor, services: Any, status: int = 200, *,
                error: str | None = None) -> Response:
    d = desk(services)
    now = d.clock().astimezone(services.tz)
    plans = d.swppps(actor)
    return render(request, "swppp.html", status, title="SWPPP reviews", actor=actor, plans=plans,
                  deadlines={s.id: d.deadlines_of(f"swppp:{s.id}") for s in plans},
                  sites=services.registry.construction_sites, error=error, now=now,
                  may_enforce=actor.may(Permission.ENFORCE))


@router.get("/swppp")
def swppps(request: Request, actor: CurrentActor, services: Services) -> Response:
    return _swppp_page(request, actor, services)


@router.post("/swppp")
async def add_swppp(request: Request, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    return await _write(request, actor, services, Permission.ENFORCE, "swppp.receive", "swppp", SwpppIn,
                        lambda body: d.add_swppp(actor, body), lambda s: f"/swppp#swppp-{s.id}",
                        lambda st, err: _swppp_page(request, actor, services, st, error=err))


@router.post("/swppp/{sw}/events")
async def swppp_event(request: Request, sw: SwpppId, actor: CurrentActor, services: Services) -> Response:
    d = desk(services)
    return await _write(request, actor, services, Permission.ENFORCE, "swppp.event", f"swppp:{sw}", SwpppEventIn,
                        lambda body: d.swppp_event(actor, sw, body), lambda s: f"/swppp#swppp-{s.id}",
                        lambda st, err: _swppp_page(request, actor, services, st, error=err))


# -- the deadline board ---------------------------------------------------------------------------
@router.get("/deadlines")
def deadlines(request: Request, actor: CurrentActor, services: Services) -> Response:
    board = desk(services).board(actor)
    return render(request, "deadlines.html", title="Deadlines", actor=actor, board=board, now=board.now)


# -- evidence packets -----------------------------------------------------------------------------
@router.get("/cases/{cid}/packet.{fmt}")
async def case_packet(cid: CaseId, fmt: Annotated[str, Path(pattern="^(pdf|zip)$")], actor: CurrentActor,
                      services: Services, values: Values = "raw") -> Response:
    name, data = await run_in_threadpool(desk(services).packet, actor, fmt, case_id=cid,
                                         corrected=values == "corrected")
    return _download(name, data, fmt)


@router.get("/incidents/{iid}/packet.{fmt}")
async def incident_packet(iid: IncidentId, fmt: Annotated[str, Path(pattern="^(pdf|zip)$")], actor: CurrentActor,
                          services: Services, values: Values = "raw") -> Response:
    name, data = await run_in_threadpool(desk(services).packet, actor, fmt, incident_id=iid,
                                         corrected=values == "corrected")
    return _download(name, data, fmt)


def _download(name: str, data: bytes, fmt: str) -> Response:
    kind = "application/pdf" if fmt == "pdf" else "application/zip"
    disposition = "inline" if fmt == "pdf" else "attachment"
    return Response(data, media_type=kind, headers={"Content-Disposition": f'{disposition}; filename="{name}"'})
