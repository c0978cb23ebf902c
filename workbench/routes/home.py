"""The home page: what is unresolved, by kind, and whether the server is well."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ..deps import CurrentActor, Services, render
from ..services.incidents import ACTIVE

router = APIRouter(include_in_schema=False)


@router.get("/")
def home(request: Request, actor: CurrentActor, services: Services) -> Response:
    counts = services.desk.counts(actor)
    newest = services.desk.list(actor, states=(ACTIVE[0],), limit=10)
    return render(request, "home.html", title="Status", actor=actor, counts=counts, newest=newest,
                  checks=services.health.checks())


@router.get("/favicon.ico")
def favicon() -> Response:
    return RedirectResponse("/static/icon.svg", status_code=301)
