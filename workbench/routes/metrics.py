"""``/metrics`` for Prometheus (text exposition format): for the networks and the bearer
token the settings name, or an API token of the town's admin (``auth/operators.py``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..auth.operators import Operators
from ..deps import Services, client_address
from ..errors import Forbidden, NotAuthenticated
from ..roles import Permission
from ..services import Workbench
from ..services.metrics import CONTENT_TYPE

router = APIRouter(tags=["operations"])
REFUSED = ("the server's metrics: an API token of an admin of this town, web.metrics_token, or a request from "
           "web.metrics_networks")


def bearer_of(request: Request) -> str | None:
    """``Authorization: Bearer <token>``'s token. Read here, not declared as a security
    scheme: ``/health/ready`` answers anyone, and says more to an operator."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def operator(request: Request, services: Workbench) -> bool:
    """Whether the request may read this town's operational data (metrics, readiness details)."""
    address = client_address(request)
    token = bearer_of(request)
    if Operators(services.settings.web).allows(address=address, bearer=token):
        return True
    if token is None:
        return False
    try:
        actor = services.accounts.by_token(token, address)
    except Forbidden:           # a user of another town
        return False
    return actor is not None and actor.may(Permission.READ_METRICS)


def refuse(request: Request) -> None:
    if bearer_of(request) is None:
        raise NotAuthenticated(REFUSED)
    raise Forbidden(REFUSED)


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, services: Services) -> Response:
    if not await run_in_threadpool(operator, request, services):
        refuse(request)
    return Response(await run_in_threadpool(services.metrics.render), media_type=CONTENT_TYPE)
