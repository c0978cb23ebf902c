"""``/account``: one's own password and API tokens; for a town's admin, the town's users
(taking one's role here away, revoking a token). ``ms4watch users`` does the same at a
terminal."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..deps import MAX_ID, CurrentActor, Services, base_path, render, start_session
from ..errors import UserError
from ..roles import Actor, Permission
from ..services import Workbench

router = APIRouter(include_in_schema=False)
TokenId = Annotated[int, Path(ge=1, le=MAX_ID, description="the API token's id")]
UserPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$", description="a user name")]
DONE = {"password": "Password changed; every other session of yours has ended.", "revoked": "Token revoked.",
        "removed": "User removed from this town."}


@router.get("/account")
async def account(request: Request, actor: CurrentActor, services: Services, done: str | None = None) -> Response:
    return await _page(request, actor, services, notice=DONE.get(done or ""))


async def _page(request: Request, actor: Actor, services: Workbench, *, status: int = 200, notice: str | None = None,
                error: str | None = None) -> Response:
    tokens = await run_in_threadpool(services.accounts.tokens, actor)
    members = (await run_in_threadpool(services.accounts.members, actor)
               if actor.may(Permission.MANAGE_USERS) else None)
    return render(request, "account.html", status, title="Account", actor=actor, tokens=tokens, members=members,
                  notice=notice, error=error, now=services.users.clock())


@router.post("/account/password")
async def change_password(request: Request, actor: CurrentActor, services: Services,
                          current: Annotated[str, Form(max_length=1000)], new: Annotated[str, Form(max_length=1000)],
                          repeat: Annotated[str, Form(max_length=1000)]) -> Response:
    if new != repeat:
        return await _page(request, actor, services, status=400, error="the new password and its repeat differ")
    try:
        sid = await run_in_threadpool(services.accounts.change_password, actor, current, new)
    except UserError as e:   # too weak
        return await _page(request, actor, services, status=400, error=str(e))
    start_session(request, sid)
    return RedirectResponse(f"{base_path(request)}/account?done=password", status_code=303)


@router.post("/account/tokens/{tid}/revoke")
async def revoke_token(request: Request, tid: TokenId, actor: CurrentActor, services: Services) -> Response:
    await run_in_threadpool(services.accounts.revoke_token, actor, tid)
    return RedirectResponse(f"{base_path(request)}/account?done=revoked", status_code=303)


@router.post("/users/{username}/remove")
async def remove_user(request: Request, username: UserPath, actor: CurrentActor, services: Services) -> Response:
    await run_in_threadpool(services.accounts.remove_member, actor, username)
    return RedirectResponse(f"{base_path(request)}/account?done=removed", status_code=303)
