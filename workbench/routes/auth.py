"""Logging in and out (pages). The login form carries a CSRF token too (a pre-session one),
so another site cannot log a visitor into an account of its choosing."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..deps import CurrentActor, Services, base_path, check_csrf, client_address, render, session_id, start_session
from ..errors import NotAuthenticated, RateLimited

router = APIRouter(include_in_schema=False)


def _local(next_url: str | None, base: str = "") -> str:
    """Only a path of ours: never an open redirect."""
    if next_url and next_url.startswith("/") and not next_url.startswith("//") and "\\" not in next_url:
        return next_url
    return base + "/"


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    return render(request, "login.html", title="Log in", next=_local(next, base_path(request)), username="")


@router.post("/login")
async def login(request: Request, services: Services, username: Annotated[str, Form(max_length=200)],
                password: Annotated[str, Form(max_length=1000)],
                next: Annotated[str | None, Form(max_length=2000)] = None) -> Response:
    await check_csrf(request)
    try:
        actor = await run_in_threadpool(services.accounts.login, username, password, address=client_address(request))
    except (NotAuthenticated, RateLimited) as e:
        status = e.status
        headers = {"Retry-After": str(e.retry_after_s)} if isinstance(e, RateLimited) else None
        return render(request, "login.html", status, headers=headers, title="Log in",
                      next=_local(next, base_path(request)), username=username, error=str(e))
    start_session(request, await run_in_threadpool(services.accounts.start_session, actor))
    return RedirectResponse(_local(next, base_path(request)), status_code=303)


@router.post("/logout")
def logout(request: Request, actor: CurrentActor, services: Services) -> Response:
    services.accounts.logout(actor, session_id(request) or "")
    request.session.clear()
    return RedirectResponse(f"{base_path(request)}/login", status_code=303)
