"""The home page: what needs attention today first (overdue, due today, due this week,
alerting now, ended and not reviewed: ``services/attention.py``), then the status board
(every station coloured by its state; a map of the stations and construction sites with
coordinates), what is unresolved by kind, and whether the server is well."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from .. import mapview
from ..deps import CurrentActor, Services, render
from ..services import attention
from ..services.incidents import ACTIVE
from ..services.stations import ORDER

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class Pin:
    """A point on the map: what it links to, its label, its tooltip, its colour class."""

    href: str
    label: str
    title: str
    css: str


@router.get("/")
def home(request: Request, actor: CurrentActor, services: Services) -> Response:
    counts = services.desk.counts(actor)
    active = services.desk.list(actor, states=ACTIVE, limit=100_000)
    newest = sorted((v for v in active if v.incident.state is ACTIVE[0]),
                    key=lambda v: (v.incident.start, v.incident.id), reverse=True)[:10]
    board = services.stations.board(actor)
    tasks = attention.inspection_tasks(services.inspections.due(actor))
    if services.compliance is not None:
        tasks += attention.deadline_tasks(services.compliance.board(actor).running)
    alerting = sorted((v for v in active if v.incident.policy.escalates and not v.incident.suppressed),
                      key=lambda v: (v.incident.start, v.incident.id), reverse=True)
    now = services.inspections.clock()
    todo = attention.gather(now, services.tz, tasks, alerting, services.desk.unreviewed(actor))
    located = [(lat, lon,
                Pin(f"/stations/{s.station.id}", s.station.id,
                    f"{s.station.name} ({s.station.id}): {', '.join(x.value for x in s.states) or 'reporting'}",
                    f"pin {s.state.css}"))
               for s in board.located if (lat := s.station.lat) is not None and (lon := s.station.lon) is not None]
    today = now.astimezone(services.tz).date()
    located += [(c.lat, c.lon, Pin(f"/inspections?site={c.id}", c.id,
                                   f"{c.name} ({c.id}): construction site{'' if c.active_on(today) else ', not active'}",
                                   "site"))
                for c in services.registry.construction_sites if c.lat is not None and c.lon is not None]
    view = mapview.build(located, tiles=services.settings.web.map_tiles)
    return render(request, "home.html", title="Status", actor=actor, counts=counts, newest=newest,
                  checks=services.health.checks(), board=board, states=ORDER, map=view, todo=todo)


@router.get("/favicon.ico")
def favicon() -> Response:
    return RedirectResponse("/static/icon.svg", status_code=301)
