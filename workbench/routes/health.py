"""``/health`` (liveness) and ``/health/ready`` (broker, store, delivery queue): anyone
learns whether the server is ready; which part failed, and the broker's address, only
those who may read the metrics (``routes/metrics.py``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ..deps import Services
from ..services.health import Check
from .metrics import operator

router = APIRouter(tags=["operations"])


@router.get("/health", summary="Liveness: the process serves requests")
def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/health/ready", summary="Readiness: broker connected, store writable, delivery queue not stuck",
            responses={503: {"description": "some check failed; the body says which to an operator"}})
async def ready(request: Request, services: Services) -> JSONResponse:
    checks = await run_in_threadpool(services.health.checks)
    details = await run_in_threadpool(operator, request, services)
    return readiness(all(c.ok for c in checks), checks if details else None)


def readiness(ok: bool, shown: list[Check] | None) -> JSONResponse:
    """``shown``: the checks the asker may see (None: only whether all are ok)."""
    body: dict = {"status": "ready" if ok else "not ready"}
    if shown is not None:
        body["checks"] = {c.name: {"ok": c.ok, "detail": c.detail} for c in shown}
    return JSONResponse(body, status_code=200 if ok else 503)
