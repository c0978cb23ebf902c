"""``/metrics`` for Prometheus (text exposition format)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..deps import Services
from ..services.metrics import CONTENT_TYPE

router = APIRouter(tags=["operations"])


@router.get("/metrics", include_in_schema=False)
async def metrics(services: Services) -> Response:
    return Response(await run_in_threadpool(services.metrics.render), media_type=CONTENT_TYPE)
