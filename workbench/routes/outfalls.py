"""The outfall inventory, as pages: the outfalls (coordinates, receiving water, pipe size and
material, the gauges that serve them; CSV), an outfall's page (its approvals and exempt
flows, its incidents), and the approvals and exempt flows: the registry's and those
recorded here with a window and a reason (record, withdraw)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from ..deps import CurrentActor, OutfallPath, Services, SuppressionId, base_path, parse_when, render
from ..errors import Conflict, NotFound
from ..records import SuppressionKind
from ..roles import Permission
from ..services.incidents import ACTIVE
from ..services.inventory import EXEMPT_FLOWS, Listed

router = APIRouter(include_in_schema=False)
Text = Annotated[str, Form(max_length=2000)]
Short = Annotated[str, Form(max_length=200)]


@router.get("/outfalls")
def outfalls(request: Request, actor: CurrentActor, services: Services) -> Response:
    inv = services.inventory
    now = inv.clock()
    active: dict[str, list[Listed]] = {}
    for x in inv.suppressions(actor):
        if x.covers(now):
            active.setdefault(x.outfall, []).append(x)
    return render(request, "outfalls.html", title="Outfalls", actor=actor, outfalls=inv.outfalls(actor),
                  active=active, gauges={g.id: g.name or g.id for g in services.registry.rain_gauges})


@router.get("/outfalls/{oid}")
def outfall(request: Request, oid: OutfallPath, actor: CurrentActor, services: Services) -> Response:
    inv = services.inventory
    of = inv.outfall(actor, oid)
    incidents = services.desk.list(actor, states=ACTIVE, subject=oid, limit=50)
    cases, notices = services.compliance.of_outfall(actor, oid) if services.compliance is not None else ([], [])
    return render(request, "outfall.html", title=of.name, actor=actor, of=of, rows=inv.suppressions(actor, oid),
                  now=inv.clock(), incidents=incidents, cases=cases, notices=notices, **_form_context(services, actor, {"outfall": oid}))


def _form_context(services, actor, form: dict, error: str | None = None) -> dict:
    now = services.inventory.clock().astimezone(services.tz)
    return {"form": {"start": now.strftime("%Y-%m-%dT%H:%M"), **form}, "error": error,
            "kinds": list(SuppressionKind), "exempt_flows": EXEMPT_FLOWS,
            "may_record": actor.may(Permission.RECORD_APPROVAL), "all_outfalls": services.registry.outfalls}


@router.get("/approvals")
def approvals(request: Request, actor: CurrentActor, services: Services,
              outfall: Annotated[str, Query(max_length=64)] = "") -> Response:
    return _approvals(request, actor, services, form={"outfall": outfall})


def _approvals(request: Request, actor, services, status: int = 200, *, form: dict, error: str | None = None):
    inv = services.inventory
    return render(request, "approvals.html", status, title="Approvals and exempt flows", actor=actor,
                  rows=inv.suppressions(actor), now=inv.clock(), **_form_context(services, actor, form, error))


@router.post("/approvals")
def record(request: Request, actor: CurrentActor, services: Services, kind: Short, outfall: Short, start: Short = "",
           end: Short = "", flow: Short = "", reason: Text = "", back: Text = "") -> Response:
    given = {"kind": kind, "outfall": outfall, "start": start, "end": end, "flow": flow, "reason": reason}
    try:
        try:
            k = SuppressionKind(kind)
        except ValueError:
            raise Conflict(f"kind: expected one of {', '.join(x.value for x in SuppressionKind)}") from None
        try:
            a = parse_when(start, services.tz) if start.strip() else None
            b = parse_when(end, services.tz) if end.strip() else None
        except ValueError as e:
            raise Conflict(f"from/until: {e}") from None
        services.inventory.record(actor, kind=k, outfall=outfall, start=a, end=b, reason=reason, flow=flow)
    except (Conflict, NotFound) as e:
        if actor.may(Permission.RECORD_APPROVAL):
            return _approvals(request, actor, services, e.status, form=given, error=str(e))
        raise
    to = back if back.startswith("/") and not back.startswith("//") else f"{base_path(request)}/approvals"
    return RedirectResponse(to, status_code=303)


@router.post("/approvals/{sid}/withdraw")
def withdraw(request: Request, sid: SuppressionId, actor: CurrentActor, services: Services, note: Text = "") -> Response:
    try:
        services.inventory.withdraw(actor, sid, note)
    except Conflict as e:
        return _approvals(request, actor, services, 409, form={}, error=str(e))
    return RedirectResponse(f"{base_path(request)}/approvals", status_code=303)

