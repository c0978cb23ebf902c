"""The annual report for the MS4 permit year, as pages: the summary (every count links to
the records behind it), each section's records, each section as CSV, the PDF."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool

from ...compliance import report as rp
from ...compliance.report_overrides import OverrideIn
from ..deps import CurrentActor, Services, base_path, render
from ..errors import NotFound
from ..roles import Permission
from .compliance import _write, desk

router = APIRouter(include_in_schema=False)
Year = Annotated[int, Path(ge=2000, le=2100, description="the reporting year (GP-0-24-001: from 3 January)")]
Section = Annotated[str, Path(pattern="^[a-z_]{3,40}$")]


def permit_year_of(services) -> int:
    from ...compliance.permit import ReportingYear
    d = desk(services)
    return ReportingYear.containing(d.clock(), d.registry.annual_report.starts, services.tz).year


@router.get("/reports/annual")
def annual_now(request: Request, actor: CurrentActor, services: Services,
               year: Annotated[int, Query(ge=2000, le=2100)] = 0) -> Response:
    return RedirectResponse(f"{base_path(request)}/reports/annual/{year or permit_year_of(services)}", status_code=303)


@router.get("/reports/annual/{year}.pdf")
async def annual_pdf(year: Year, actor: CurrentActor, services: Services) -> Response:
    r = await run_in_threadpool(desk(services).annual_report, actor, year)
    data = await run_in_threadpool(rp.report_pdf, r)
    return Response(data, media_type="application/pdf",
                    headers={"Content-Disposition": f'inline; filename="ms4-annual-report-{year}.pdf"'})


@router.get("/reports/annual/{year}")
async def annual(request: Request, year: Year, actor: CurrentActor, services: Services) -> Response:
    r = await run_in_threadpool(desk(services).annual_report, actor, year)
    from ..deps import csrf_token
    return render(request, "annual.html", title=f"Annual report {year}", actor=actor, r=r, year=year,
                  summary=Markup(rp.html(r, base_path(request), csrf=csrf_token(request))))


@router.post("/reports/annual/{year}/overrides")
async def annual_override(request: Request, year: Year, actor: CurrentActor, services: Services) -> Response:
    """A count stated by hand: recorded, audited, printed beside the records' count."""
    d = desk(services)

    def again(status: int, error: str) -> Response:
        return render(request, "error.html", status, title="Not recorded", message=error)
    return await _write(request, actor, services, Permission.ENFORCE, "report.override", f"report:{year}", OverrideIn,
                        lambda body: d.override_count(actor, year, body),
                        lambda o: f"/reports/annual/{year}#count-{o.line.replace(':', '-').replace(' ', '-')}", again)


def _section(r, key: str):
    s = r.sections.get(key)
    if s is None:
        raise NotFound(f"no section {key!r} (sections: {', '.join(r.sections)})")
    return s


@router.get("/reports/annual/{year}/{section}.csv")
async def annual_csv(year: Year, section: Section, actor: CurrentActor, services: Services) -> Response:
    r = await run_in_threadpool(desk(services).annual_report, actor, year)
    s = _section(r, section)
    return Response(s.csv(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{r.municipality}-{year}-{section}.csv"'})


@router.get("/reports/annual/{year}/{section}")
async def annual_section(request: Request, year: Year, section: Section, actor: CurrentActor, services: Services,
                         status: Annotated[str, Query(max_length=40)] = "",
                         kind: Annotated[str, Query(max_length=40)] = "") -> Response:
    r = await run_in_threadpool(desk(services).annual_report, actor, year)
    s = _section(r, section)
    rows = list(zip(s.rows, s.links or [None] * len(s.rows)))
    for column, value in request.query_params.items():     # ?status=late, ?kind=..., any column of the section
        if column in s.columns:
            rows = [x for x in rows if str(x[0].get(column)) == value]
    return render(request, "annual_section.html", title=f"{s.title} — {year}", actor=actor, s=s, rows=rows, year=year,
                  fmt=lambda v: v.strftime("%Y-%m-%d %H:%M") if isinstance(v, datetime) else
                  (v.isoformat() if isinstance(v, date) else ("" if v is None else v)))
