"""Inspections, as pages: what is due (a countdown to each deadline), the form that records
an inspection report (the six items of Schenectady ch. 148, the professional's
certification, photos taken with the phone), recent reports; a report's page; its photos
(only to a user of the report's town)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from ..deps import CurrentActor, ReportId, Services, Sha256, base_path, parse_when, render
from ..errors import Conflict, WorkbenchError
from ..records import CERTIFICATION, ITEMS, Credential, ReportIn
from ..records.inspections import PROVISION
from ..roles import Permission
from ..services.inspections import MAX_PHOTOS

router = APIRouter(include_in_schema=False)
FIELDS = ("site", "at", "inspector", "credential", "license_no", "disturbed_areas", "stabilized_areas", "idle_areas",
          "sediment_pct", "sediment_note", "maintenance", "deficiencies", "certified")


def _page(request: Request, actor, services, status: int = 200, *, form: dict | None = None,
          error: str | None = None, site: str = "") -> Response:
    desk = services.inspections
    now = desk.clock()
    return render(request, "inspections.html", status, title="Inspections", actor=actor, due=desk.due(actor),
                  closed=desk.closed(actor, limit=10), reports=desk.list(actor, limit=20), sites=desk.sites(),
                  items=ITEMS, certification=CERTIFICATION, provision=PROVISION, credentials=list(Credential),
                  may_record=actor.may(Permission.RECORD_INSPECTION), now=now, max_photos=MAX_PHOTOS,
                  form=form or {"site": site, "inspector": actor.name,
                                "at": now.astimezone(services.tz).strftime("%Y-%m-%dT%H:%M")},
                  error=error)


@router.get("/inspections")
def inspections(request: Request, actor: CurrentActor, services: Services,
                site: Annotated[str, Query(max_length=64)] = "") -> Response:
    return _page(request, actor, services, site=site)


@router.post("/inspections")
async def record(request: Request, actor: CurrentActor, services: Services) -> Response:
    """A multipart form (photos) or a plain one; a mistake shows the form again, filled in."""
    form = await request.form()
    given = {k: str(form.get(k) or "").strip() for k in FIELDS}
    photos: list[tuple[str, bytes]] = []
    for f in form.getlist("photos"):
        if isinstance(f, UploadFile) and f.filename:
            photos.append((f.filename, await f.read()))
    if given["certified"] not in ("on", "true", "1", "yes"):
        return _page(request, actor, services, 400, form=given,
                     error="the inspector's certification is required: tick it, or do not record the report")
    try:
        report = ReportIn.model_validate({
            **{k: v for k, v in given.items() if k not in ("at", "certified", "sediment_note")},
            "at": parse_when(given["at"], services.tz) if given["at"] else None,
            "sediment_note": given["sediment_note"] or None,
            "certified": True})
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in x['loc']) or 'form'}: "
                             f"{x['msg'].removeprefix('Value error, ')}" for x in e.errors()[:6])
        return _page(request, actor, services, 400, form=given, error=problems)
    except ValueError as e:
        return _page(request, actor, services, 400, form=given, error=f"at: {e}")
    try:
        done = await run_in_threadpool(services.inspections.record, actor, report, photos)
    except (Conflict, WorkbenchError) as e:
        if e.status in (401, 403, 404):
            raise
        return _page(request, actor, services, e.status, form=given, error=str(e))
    return RedirectResponse(f"{base_path(request)}/inspections/{done.report.id}?recorded=1", status_code=303)


@router.get("/inspections/{rid}")
def report(request: Request, rid: ReportId, actor: CurrentActor, services: Services,
           recorded: Annotated[int, Query(ge=0, le=1)] = 0) -> Response:
    r = services.inspections.get(actor, rid)
    closed = []
    for iid in r.closed:
        try:
            closed.append(services.desk.get(actor, iid).incident)
        except WorkbenchError:
            pass
    items = {i.incident.id: i for i in services.inspections.closed(actor, limit=200)}
    site = next((s for s in services.registry.construction_sites if s.id == r.site), None)
    return render(request, "report.html", title=f"Inspection report {rid}", actor=actor, r=r, site=site,
                  labels=ITEMS, closed=closed, engine={i: items[i] for i in r.closed if i in items},
                  recorded=bool(recorded), may_record=actor.may(Permission.RECORD_INSPECTION),
                  taken=services.field.photos_taken(actor, "inspection", rid) if services.field else {})


@router.get("/inspections/{rid}/photos/{sha}")
async def photo(rid: ReportId, sha: Sha256, actor: CurrentActor, services: Services) -> Response:
    p, data = await run_in_threadpool(services.inspections.photo, actor, rid, sha)
    disposition = "inline" if p.shown_inline else "attachment"
    name = "".join(c if 32 <= ord(c) < 127 and c not in '"\\;' else "_" for c in p.name) or sha[:12]
    return Response(data, media_type=p.media_type,
                    headers={"Cache-Control": "private, max-age=86400, immutable",
                             "Content-Disposition": f'{disposition}; filename="{name}"'})
