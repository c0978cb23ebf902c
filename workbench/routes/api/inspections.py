"""``/api/v1/inspections``: the items due (CSV), the reports (CSV), one report, recording a
report (JSON: the six items, the credential and the certification; it closes the site's
due items in the incident database and the alert engine), adding a photo to a report
(multipart, one file per call)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Query, Request, UploadFile
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ...csvout import csv_response
from ...deps import CurrentActor, ReportId, Services, base_path
from ...records import ReportIn
from ...schemas import (BAD, CONFLICT, ERRORS, TOO_LARGE, DueItemOut, ErrorOut, IncidentOut, RecordedOut, ReportOut)

router = APIRouter(prefix="/api/v1/inspections", tags=["inspections"], responses=ERRORS)
CSV: dict[int | str, dict] = {200: {"content": {"text/csv": {}}, "description": "CSV, a header row, times in the town's zone"}}
NOT_FOUND: dict[int | str, dict] = {404: {"model": ErrorOut, "description": "no such report or site"}}
Site = Annotated[str | None, Query(max_length=64, description="a construction site id")]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]
DUE_COLUMNS = ["incident", "code", "state", "site", "site_name", "reason", "gauge", "deadline", "resolved_at",
               "resolved_by", "engine_closed_at"]
REPORT_COLUMNS = ["site", "at", "inspector", "credential", "license_no", "disturbed_areas", "stabilized_areas",
                  "idle_areas", "sediment_pct", "sediment_note", "maintenance", "deficiencies", "recorded_by",
                  "recorded_at", "photos", "closed_incidents", "id"]


Resolved = Annotated[bool, Query(description="the items resolved lately instead (newest first, at most `limit`)")]


def _items(actor, services, resolved: bool, limit: int):
    desk = services.inspections
    return desk.closed(actor, limit=limit) if resolved else desk.due(actor)


@router.get("/due", summary="Inspection items not yet resolved, the nearest deadline first")
def due(actor: CurrentActor, services: Services, resolved: Resolved = False, limit: Limit = 100) -> list[DueItemOut]:
    return [DueItemOut.of(d) for d in _items(actor, services, resolved, limit)]


@router.get("/due.csv", summary="The items due (or resolved lately) as CSV", response_class=Response, responses=CSV)
def due_csv(actor: CurrentActor, services: Services, resolved: Resolved = False, limit: Limit = 1000) -> Response:
    rows = [[getattr(DueItemOut.of(d), c) for c in DUE_COLUMNS] for d in _items(actor, services, resolved, limit)]
    name = "resolved" if resolved else "due"
    return csv_response(f"inspections-{name}-{services.municipality}.csv", DUE_COLUMNS, rows, services.tz)


@router.get("", summary="Inspection reports, newest first")
def reports(request: Request, actor: CurrentActor, services: Services, site: Site = None, limit: Limit = 100,
            offset: Offset = 0) -> list[ReportOut]:
    return [ReportOut.of(r, base_path(request)) for r in services.inspections.list(actor, site=site, limit=limit,
                                                                                   offset=offset)]


@router.get(".csv", summary="Inspection reports as CSV (the first columns are what `ms4watch replay --inspections` "
                            "reads: site, time as `at`, inspector)", response_class=Response, responses=CSV)
def reports_csv(actor: CurrentActor, services: Services, site: Site = None,
                limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000) -> Response:
    rows = []
    for r in services.inspections.list(actor, site=site, limit=limit):
        d = ReportOut.of(r).model_dump()
        d["photos"] = " ".join(p["sha256"] for p in d["photos"])
        d["closed_incidents"] = " ".join(str(i) for i in d["closed_incidents"])
        rows.append([d[c] for c in REPORT_COLUMNS])
    header = ["site", "time"] + REPORT_COLUMNS[2:]
    return csv_response(f"inspections-{services.municipality}.csv", header, rows, services.tz)


@router.get("/{rid}", summary="One inspection report", responses=NOT_FOUND)
def report(request: Request, rid: ReportId, actor: CurrentActor, services: Services) -> ReportOut:
    return ReportOut.of(services.inspections.get(actor, rid), base_path(request))


@router.post("", summary="Record an inspection report (role inspector or higher): it resolves the site's due "
                         "items and closes the alert engine's", status_code=201,
             responses={**NOT_FOUND, **CONFLICT, **BAD})
async def record(request: Request, actor: CurrentActor, services: Services, body: ReportIn) -> RecordedOut:
    done = await run_in_threadpool(services.inspections.record, actor, body, [])
    return RecordedOut(report=ReportOut.of(done.report, base_path(request)),
                       closed=[IncidentOut.of(services.desk.view(i)) for i in done.closed])


@router.post("/{rid}/photos", summary="Add a photo to a report (JPEG, PNG, WebP or HEIC; role inspector or higher)",
             status_code=201, responses={**NOT_FOUND, **CONFLICT, **BAD, **TOO_LARGE})
async def add_photo(request: Request, rid: ReportId, actor: CurrentActor, services: Services,
                    photo: Annotated[UploadFile, File(description="the image")]) -> ReportOut:
    data = await photo.read()
    r = await run_in_threadpool(services.inspections.add_photo, actor, rid, photo.filename or "", data)
    return ReportOut.of(r, base_path(request))
