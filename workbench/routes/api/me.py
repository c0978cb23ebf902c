"""``/api/v1/me``: who the token or session is, and its role here; revoking an API token."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from starlette.concurrency import run_in_threadpool

from ...deps import MAX_ID, CurrentActor, Services
from ...schemas import ERRORS, ErrorOut, MeOut

router = APIRouter(prefix="/api/v1", tags=["me"], responses=ERRORS)


@router.get("/me", summary="Who is asking, and their role in this municipality")
def me(actor: CurrentActor) -> MeOut:
    return MeOut(username=actor.username, name=actor.name, role=actor.role.value, municipality=actor.municipality)


@router.post("/tokens/{tid}/revoke", summary="Revoke an API token: one's own, or (an admin) a member's of this town",
             status_code=204, responses={404: {"model": ErrorOut, "description": "no such token"}})
async def revoke_token(tid: Annotated[int, Path(ge=1, le=MAX_ID, description="the token's id")], actor: CurrentActor,
                       services: Services) -> None:
    await run_in_threadpool(services.accounts.revoke_token, actor, tid)
