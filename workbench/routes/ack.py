"""The acknowledge link in an alert email: ``GET /ack/<token>`` shows the incident and a
form; ``POST`` (a name, a note) acknowledges. The signed, expiring token is the authority
(``auth/links.py``); a GET never changes anything (mail scanners follow links)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ...alerts.incidents import State
from ..deps import Services, client_address, render
from ..errors import Conflict

router = APIRouter(include_in_schema=False)
Token = Annotated[str, Path(max_length=400)]


@router.get("/ack/{token}")
def ack_page(request: Request, token: Token, services: Services) -> Response:
    iid = services.links.incident_id(token)
    view = services.desk.linked(iid)
    return render(request, "ack.html", title=f"Acknowledge incident {iid}", view=view, inc=view.incident,
                  open=view.incident.state is State.OPEN or view.unreviewed)


@router.post("/ack/{token}")
async def ack(request: Request, token: Token, services: Services, by: Annotated[str, Form(max_length=200)] = "",
              note: Annotated[str, Form(max_length=2000)] = "") -> Response:
    iid = services.links.incident_id(token)
    if not by.strip():
        view = services.desk.linked(iid)
        return render(request, "ack.html", 400, title=f"Acknowledge incident {iid}", view=view, inc=view.incident,
                      open=view.incident.state is State.OPEN or view.unreviewed,
                      error="Say who acknowledges: type your name.")
    try:
        view = await run_in_threadpool(lambda: services.desk.acknowledge_by_link(
            iid, by=by, note=note.strip() or None, address=client_address(request),
            municipality=services.municipality))
    except Conflict as e:
        return render(request, "error.html", 409, title="Not acknowledged", message=str(e))
    return render(request, "ack_done.html", title="Acknowledged", view=view, inc=view.incident)
