"""The home page: the status board (every station coloured by its state; a map of those
with coordinates), what is unresolved by kind, and whether the server is well."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from .. import mapview
from ..deps import CurrentActor, Services, render
from ..services.incidents import ACTIVE
from ..services.stations import ORDER

router = APIRouter(include_in_schema=False)


@router.get("/")
def home(request: Request, actor: CurrentActor, services: Services) -> Response:
    counts = services.desk.counts(actor)
    newest = services.desk.list(actor, states=(ACTIVE[0],), limit=10)
    board = services.stations.board(actor)
    located = [(s.station.lat, s.station.lon, s) for s in board.located]
    view = mapview.build(located, tiles=services.settings.web.map_tiles)
    return render(request, "home.html", title="Status", actor=actor, counts=counts, newest=newest,
                  checks=services.health.checks(), board=board, states=ORDER, map=view)


@router.get("/favicon.ico")
def favicon() -> Response:
    return RedirectResponse("/static/icon.svg", status_code=301)
