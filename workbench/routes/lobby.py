"""A coalition's root: log in once, choose a town (straight to it when there is one),
log out; ``/health`` and ``/health/ready`` across the towns. Each town's pages are under
``/t/<municipality>/``, each town's API under ``/t/<municipality>/api/v1``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..deps import check_csrf, client_address, render, session_id, start_session
from ..errors import Forbidden, NotAuthenticated, RateLimited
from ..services.lobby import Lobby
from ..services.metrics import CONTENT_TYPE, render_towns
from .health import readiness
from .metrics import bearer_of, refuse

router = APIRouter(include_in_schema=False)


def _lobby(request: Request) -> Lobby:
    return request.app.state.lobby


def _local(next_url: str | None) -> str:
    if next_url and next_url.startswith("/") and not next_url.startswith("//") and "\\" not in next_url:
        return next_url
    return "/"


@router.get("/")
def choose(request: Request) -> Response:
    lobby = _lobby(request)
    sid = session_id(request)
    user = lobby.user(sid) if sid else None
    if user is None:
        return RedirectResponse("/login?next=/", status_code=303)
    towns = lobby.memberships(user)
    if len(towns) == 1:
        return RedirectResponse(f"/t/{towns[0].municipality}/", status_code=303)
    return render(request, "towns.html", title="Choose a town", municipality="", towns=(),
                  memberships=towns, user=user, lobby_user=user)


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    return render(request, "login.html", title="Log in", municipality="", towns=(), next=_local(next), username="")


@router.post("/login")
async def login(request: Request, username: Annotated[str, Form(max_length=200)],
                password: Annotated[str, Form(max_length=1000)],
                next: Annotated[str | None, Form(max_length=2000)] = None) -> Response:
    await check_csrf(request)
    lobby = _lobby(request)
    try:
        user, towns = await run_in_threadpool(lobby.login, username, password, address=client_address(request))
    except (NotAuthenticated, RateLimited, Forbidden) as e:
        headers = {"Retry-After": str(e.retry_after_s)} if isinstance(e, RateLimited) else None
        return render(request, "login.html", e.status, headers=headers, title="Log in", municipality="", towns=(),
                      next=_local(next), username=username, error=str(e))
    start_session(request, await run_in_threadpool(lobby.users.sessions.start, user.id))
    target = _local(next)
    if target == "/" and len(towns) == 1:
        target = f"/t/{towns[0].municipality}/"
    return RedirectResponse(target, status_code=303)


@router.post("/logout")
async def logout(request: Request) -> Response:
    await check_csrf(request)
    sid = session_id(request)
    if sid:
        await run_in_threadpool(_lobby(request).logout, sid, client_address(request))
    request.session.clear()
    return RedirectResponse("/login", status_code=303)


@router.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """The metrics, labelled ``municipality``, of every town the asker may read: all of them
    for an operator (``web.metrics_networks``, ``web.metrics_token``), a user's API token
    the towns where the user is admin."""
    lobby = _lobby(request)
    readable = await run_in_threadpool(lobby.operated_towns, client_address(request), bearer_of(request))
    if not readable:
        refuse(request)
    towns = {m: lobby.towns[m].metrics for m in readable}
    return Response(await run_in_threadpool(render_towns, towns), media_type=CONTENT_TYPE)


@router.get("/health/ready")
async def ready(request: Request) -> JSONResponse:
    """Whether every town is ready; the checks of the towns the asker may read."""
    lobby = _lobby(request)
    checks = await run_in_threadpool(lobby.checks)
    readable = await run_in_threadpool(lobby.operated_towns, client_address(request), bearer_of(request))
    shown = [c for c in checks if c.name.split(": ", 1)[0] in readable]
    return readiness(all(c.ok for c in checks), shown if readable else None)
