"""Source tracing on a case, as a form on the case's page: a trace visit at a structure of
the town's map (flow present or absent, odour, colour, field tests). The case page shows the
visits, the suspect reach and the next structure to open (``services.tracing``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...compliance.inputs import TraceVisitIn
from ..deps import CurrentActor, Services
from ..errors import NotFound
from ..roles import Permission
from .compliance import CaseId, _case_page, _write

router = APIRouter(include_in_schema=False)


def tracing(services: Any):
    if services.tracing is None:
        raise NotFound("source tracing is not kept by this server")
    return services.tracing


@router.post("/cases/{cid}/trace-visits")
async def add_trace_visit(request: Request, cid: CaseId, actor: CurrentActor, services: Services) -> Response:
    t = tracing(services)
    return await _write(request, actor, services, Permission.RECORD_CASE, "case.trace_visit", f"case:{cid}",
                        TraceVisitIn, lambda body: t.record_visit(actor, cid, body),
                        lambda v: f"/cases/{cid}#trace",
                        lambda st, err: _case_page(request, actor, services, cid, st, error=err))
