"""``/health`` (liveness) and ``/health/ready`` (broker, store, delivery queue)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ..deps import Services

router = APIRouter(tags=["operations"])


@router.get("/health", summary="Liveness: the process serves requests")
def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/health/ready", summary="Readiness: broker connected, store writable, delivery queue not stuck",
            responses={503: {"description": "some check failed; the body says which"}})
async def ready(services: Services) -> JSONResponse:
    checks = await run_in_threadpool(services.health.checks)
    ok = all(c.ok for c in checks)
    return JSONResponse({"status": "ready" if ok else "not ready",
                         "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks}},
                        status_code=200 if ok else 503)
