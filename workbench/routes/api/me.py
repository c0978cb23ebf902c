"""``/api/v1/me``: who the token or session is, and its role here."""

from __future__ import annotations

from fastapi import APIRouter

from ...deps import CurrentActor
from ...schemas import ERRORS, MeOut

router = APIRouter(prefix="/api/v1", tags=["me"], responses=ERRORS)


@router.get("/me", summary="Who is asking, and their role in this municipality")
def me(actor: CurrentActor) -> MeOut:
    return MeOut(username=actor.username, name=actor.name, role=actor.role.value, municipality=actor.municipality)
