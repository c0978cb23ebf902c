"""Incidents, as pages: the list (filter by state, kind, subject; acknowledge), an
incident's page (chart, rule and thresholds, provision, notifications, audit; acknowledge,
resolve with a note). Writes are forms that redirect back (no JavaScript needed)."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ...alerts.events import AlertKind
from ...alerts.incidents import State
from .. import svgchart
from ..deps import CurrentActor, IncidentId, Pixels, Services, base_path, render
from ..roles import Permission
from ..services.incidents import ACTIVE

router = APIRouter(include_in_schema=False)

StateFilter = Literal["active", "open", "acknowledged", "resolved", "all"]
STATES: dict[str, tuple[State, ...]] = {"active": ACTIVE, "open": (State.OPEN,), "acknowledged": (State.ACKNOWLEDGED,),
                                        "resolved": (State.RESOLVED,), "all": tuple(State)}
PAGE = 100


@router.get("/incidents")
def incidents(request: Request, actor: CurrentActor, services: Services, state: StateFilter = "active",
              kind: Annotated[str, Query(max_length=64)] = "", subject: Annotated[str, Query(max_length=64)] = "",
              page: Annotated[int, Query(ge=1, le=10_000)] = 1) -> Response:
    rows = services.desk.list(actor, states=STATES[state], kind=kind, subject=subject, limit=PAGE + 1,
                              offset=(page - 1) * PAGE)
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    if state == "active" and page == 1:     # an episode that ended, not reviewed, is not done with
        rows = services.desk.unreviewed(actor, kind=kind, subject=subject) + rows
    reg = services.registry
    subjects = sorted({x.id for coll in (reg.outfalls, reg.turbidity_pairs, reg.construction_sites, reg.rain_gauges)
                       for x in coll})
    query = request.url.query
    return render(request, "incidents.html", title="Incidents", actor=actor, rows=rows,
                  more=more, page=page, state=state, kind=kind, subject=subject,
                  kinds=[k.value for k in AlertKind if k is not AlertKind.INSPECTION_OVERDUE], subjects=subjects,
                  states=list(STATES), csv_url=_csv_url(state, kind, subject),
                  may_ack=actor.may(Permission.ACKNOWLEDGE), back=request.url.path + (f"?{query}" if query else ""))


def _csv_url(state: str, kind: str, subject: str) -> str:
    """The API's CSV of what the page shows: its states spelled out (the API knows no
    ``all``; ``active`` is its default)."""
    states = [] if state == "active" else [("state", st.value) for st in STATES[state]]
    query = urlencode(states + [(k, v) for k, v in (("kind", kind), ("subject", subject)) if v])
    return "/api/v1/incidents.csv" + (f"?{query}" if query else "")


@router.get("/incidents/{iid}")
def incident(request: Request, iid: IncidentId, actor: CurrentActor, services: Services) -> Response:
    return _incident_page(request, actor, services, iid)


def _incident_page(request: Request, actor, services, iid: int, status: int = 200, *,
                   error: str | None = None) -> Response:
    d = services.desk.detail(actor, iid)
    corrected = services.corrections is not None and services.corrections.any_in_force()
    cases, notices = services.compliance.of_incident(actor, iid) if services.compliance is not None else ([], [])
    return render(request, "incident.html", status, title=f"Incident {iid}", actor=actor, d=d, inc=d.view.incident,
                  error=error,
                  corrected_available=corrected, cases=cases, notices=notices,
                  may_ack=actor.may(Permission.ACKNOWLEDGE), may_resolve=actor.may(Permission.RESOLVE),
                  has_chart=services.desk.charts is not None)


@router.get("/incidents/{iid}/chart.png")
async def chart(iid: IncidentId, actor: CurrentActor, services: Services) -> Response:
    png = await run_in_threadpool(services.desk.chart_png, actor, iid)
    if png is None:   # an image all the same: the page shows it in the chart's place
        return Response(NO_READINGS_SVG, media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=60"})
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=60"})


@router.get("/incidents/{iid}/chart.svg")
async def chart_svg(iid: IncidentId, actor: CurrentActor, services: Services, w: Pixels = 800) -> Response:
    """The page's chart: SVG from the PNG's readings, drawn in tens of milliseconds."""
    c = await run_in_threadpool(services.desk.chart_svg, actor, iid, w - svgchart.LEFT - svgchart.RIGHT)
    body = NO_READINGS_SVG if c is None else svgchart.render(c, services.tz, width=w)
    return Response(body, media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=60"})


NO_READINGS_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 120"><rect width="800" height="120" '
                   'fill="#f5f7f9"/><text x="400" y="66" font-family="sans-serif" font-size="22" fill="#5f6b76" '
                   'text-anchor="middle">No readings are stored for this episode.</text></svg>')


def _back(request: Request, url: str | None, iid: int) -> str:
    return url if url and url.startswith("/") and not url.startswith("//") else f"{base_path(request)}/incidents/{iid}"


@router.post("/incidents/{iid}/acknowledge")
def acknowledge(request: Request, iid: IncidentId, actor: CurrentActor, services: Services,
                note: Annotated[str, Form(max_length=2000)] = "",
                back: Annotated[str, Form(max_length=2000)] = "") -> Response:
    services.desk.acknowledge(actor, iid, note.strip() or None)
    return RedirectResponse(_back(request, back, iid), status_code=303)


@router.post("/incidents/{iid}/resolve")
def resolve(request: Request, iid: IncidentId, actor: CurrentActor, services: Services,
            note: Annotated[str, Form(max_length=2000)] = "", confirm: Annotated[str, Form(max_length=8)] = "",
            back: Annotated[str, Form(max_length=2000)] = "") -> Response:
    """Two steps: a note saying why, then a page that shows what resolving means and asks to
    confirm (as withdrawing a notice does)."""
    view = services.desk.may_resolve(actor, iid)
    if not note.strip():
        return _incident_page(request, actor, services, iid, 400, error="note: say why it is resolved")
    if confirm != "yes" and view.incident.state is not State.RESOLVED:    # resolved: refused below, not asked
        return render(request, "incident_resolve.html", title=f"Resolve incident {iid}?", actor=actor, view=view,
                      inc=view.incident, note=note.strip(), back=back)
    services.desk.resolve(actor, iid, note.strip())
    return RedirectResponse(_back(request, back, iid), status_code=303)
