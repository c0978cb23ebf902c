"""Stations, as pages: the list (state, newest reading, battery, signal, calibration; CSV),
a station's page (its status, open incidents, the chart of any window, its calibration runs
and drift corrections, reverting one), the chart itself (SVG, drawn on the server from
buckets the store summarises), the chart's data as CSV, and the calibrations."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ...contract.timeutil import from_ns
from .. import svgchart
from ..csvout import csv_response
from ..deps import CorrectionId, CurrentActor, Pixels, Services, StationPath, base_path, parse_when, render
from ..errors import WorkbenchError
from ..roles import Permission
from ..services.stations import window_of

router = APIRouter(include_in_schema=False)

Days = Annotated[int | None, Query(ge=1, le=1100, description="the window: this many days up to now")]
When = Annotated[str, Query(max_length=40, description="YYYY-MM-DD, YYYY-MM-DDTHH:MM (local) or ISO 8601")]
Values = Annotated[Literal["raw", "corrected"], Query(description="raw readings (default) or with the drift "
                                                                  "corrections in force applied")]
PRESETS = (1, 7, 30, 90, 365)


def window(services, start: str, end: str, days: int | None) -> tuple[datetime, datetime]:
    """The chart's window from the query: start/end, else ``days`` up to now (7 by default)."""
    tz = services.tz

    def when(name: str, text: str, **kw: bool) -> datetime:
        try:
            return parse_when(text, tz, **kw)
        except ValueError as e:
            raise WorkbenchError(f"{name}: {e}") from None

    try:
        if start or end:
            now = services.stations.clock()
            a = when("start", start) if start else None
            b = when("end", end, end=True) if end else now
            if a is None:
                a = b - timedelta(days=days or 7)
            return window_of(a, b)
        b = services.stations.clock()
        return window_of(b - timedelta(days=days or 7), b)
    except ValueError as e:
        raise WorkbenchError(f"window: {e}") from None


@router.get("/stations")
def stations(request: Request, actor: CurrentActor, services: Services) -> Response:
    board = services.stations.board(actor)
    return render(request, "stations.html", title="Stations", actor=actor, board=board)


@router.get("/stations/{sid}")
def station(request: Request, sid: StationPath, actor: CurrentActor, services: Services, start: When = "",
            end: When = "", days: Days = None, values: Values = "raw") -> Response:
    st = services.stations.status(actor, sid)
    history, why_none = services.stations.calibration_history(actor, station=sid)
    corrections = services.corrections.of_station(actor, sid) if services.corrections else []
    a, b = window(services, start, end, days)
    query = request.url.query
    return render(request, "station.html", title=st.station.name, actor=actor, s=st, start=a, end=b,
                  presets=PRESETS, days=days if not (start or end) else None, query=query,
                  start_text=start, end_text=end, history=history, why_none=why_none,
                  corrections=corrections, may_correct=actor.may(Permission.CORRECT_DATA), values=values)


@router.post("/stations/{sid}/corrections/{cid}/revert")
def revert_correction(request: Request, sid: StationPath, cid: CorrectionId, actor: CurrentActor,
                      services: Services, why: Annotated[str, Form(max_length=2000)] = "") -> Response:
    if services.corrections is None:
        raise WorkbenchError("this server keeps no corrections")
    services.corrections.revert(actor, cid, why)
    return RedirectResponse(f"{base_path(request)}/stations/{sid}#corrections", status_code=303)


@router.get("/stations/{sid}/chart.svg")
async def chart(sid: StationPath, actor: CurrentActor, services: Services, start: When = "", end: When = "",
                days: Days = None, w: Pixels = 800, values: Values = "raw") -> Response:
    a, b = window(services, start, end, days)
    plot = w - svgchart.LEFT - svgchart.RIGHT
    c = await run_in_threadpool(services.stations.chart, actor, sid, a, b, plot, False, values == "corrected")
    return Response(svgchart.render(c, services.tz, width=w), media_type="image/svg+xml",
                    headers={"Cache-Control": "private, max-age=30"})


@router.get("/stations/{sid}/readings.csv")
async def chart_csv(sid: StationPath, actor: CurrentActor, services: Services, start: When = "", end: When = "",
                    days: Days = None, w: Pixels = 800, values: Values = "raw") -> Response:
    """The chart's data: each bucket's count, least, greatest, mean (and rain's sum); the
    ``values`` column says raw or corrected, per series."""
    a, b = window(services, start, end, days)
    c = await run_in_threadpool(services.stations.chart, actor, sid, a, b, w - svgchart.LEFT - svgchart.RIGHT, True,
                                values == "corrected")
    rows = []
    for line in c.lines:
        basis = c.basis.get(line.label, "raw")
        rows += [[line.label, from_ns(x.start_ns), x.count, x.min, x.max, x.mean, "", basis] for x in line.buckets]
    rows += [["rain", from_ns(x.start_ns), x.count, x.min, x.max, "", x.sum, c.basis.get("rain", "raw")]
             for x in c.rain]
    return csv_response(f"{sid}-{a:%Y%m%d}-{b:%Y%m%d}{'-corrected' if values == 'corrected' else ''}.csv",
                        ["series", "bucket_start", "readings", "min", "max", "mean", "sum", "values"], rows,
                        services.tz)


@router.get("/calibrations")
def calibrations(request: Request, actor: CurrentActor, services: Services) -> Response:
    rows = services.stations.calibrations(actor)
    history, why_none = services.stations.calibration_history(actor)
    return render(request, "calibrations.html", title="Calibrations", actor=actor, rows=rows, history=history,
                  why_none=why_none, names={s.id: s.name for s in services.stations.stations.values()})
