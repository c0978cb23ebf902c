"""``/api/v1/outfalls`` (the inventory; CSV) and ``/api/v1/approvals``: approved discharges
and exempt flows, the registry's and those recorded here (CSV: the file ``ms4watch replay
--approvals`` reads); record one (a window and a reason; one without an end is refused),
withdraw one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ...csvout import csv_response
from ...deps import CurrentActor, OutfallPath, Services, SuppressionId
from ...schemas import CONFLICT, ERRORS, ErrorOut, OutfallOut, SuppressionIn, SuppressionOut, WithdrawIn
from ...services.inventory import Listed

router = APIRouter(prefix="/api/v1", tags=["outfalls"], responses=ERRORS)
CSV: dict[int | str, dict] = {200: {"content": {"text/csv": {}}, "description": "CSV, a header row, times in the town's zone"}}
NOT_FOUND: dict[int | str, dict] = {404: {"model": ErrorOut, "description": "no such outfall or record"}}
OUTFALL_COLUMNS = ["id", "name", "lat", "lon", "receiving_water", "pipe_diameter_in", "pipe_material", "rain_gauges",
                   "flow_floor_gpm"]
# the first columns are what `ms4watch replay --approvals` reads
SUPPRESSION_COLUMNS = ["kind", "outfall", "from", "to", "flow", "reason", "withdrawn_at", "source", "id",
                       "recorded_by", "recorded_at", "withdrawn_by", "withdrawn_note"]


@router.get("/outfalls", summary="The outfall inventory")
def outfalls(actor: CurrentActor, services: Services) -> list[OutfallOut]:
    return [OutfallOut.of(o) for o in services.inventory.outfalls(actor)]


@router.get("/outfalls.csv", summary="The outfall inventory as CSV", response_class=Response, responses=CSV)
def outfalls_csv(actor: CurrentActor, services: Services) -> Response:
    rows = []
    for o in services.inventory.outfalls(actor):
        d = OutfallOut.of(o).model_dump()
        d["rain_gauges"] = " ".join(d["rain_gauges"])
        rows.append([d[c] for c in OUTFALL_COLUMNS])
    return csv_response(f"outfalls-{services.municipality}.csv", OUTFALL_COLUMNS, rows, services.tz)


@router.get("/outfalls/{oid}", summary="One outfall", responses=NOT_FOUND)
def outfall(oid: OutfallPath, actor: CurrentActor, services: Services) -> OutfallOut:
    return OutfallOut.of(services.inventory.outfall(actor, oid))


Outfall = Annotated[str | None, Query(max_length=64, description="one outfall's only")]


@router.get("/approvals", summary="Approved discharges and exempt flows: the registry's and those recorded here")
def approvals(actor: CurrentActor, services: Services, outfall: Outfall = None) -> list[SuppressionOut]:
    return [SuppressionOut.of(x) for x in services.inventory.suppressions(actor, outfall or None)]


@router.get("/approvals.csv", summary="Approvals and exempt flows as CSV (`ms4watch replay --approvals` reads it)",
            response_class=Response, responses=CSV)
def approvals_csv(actor: CurrentActor, services: Services, outfall: Outfall = None) -> Response:
    def row(x: Listed) -> list:
        o = SuppressionOut.of(x)
        return [o.kind.value, o.outfall, o.start, o.end, o.flow, o.reason, o.withdrawn_at, o.source, o.id,
                o.recorded_by, o.recorded_at, o.withdrawn_by, o.withdrawn_note]
    return csv_response(f"approvals-{services.municipality}.csv", SUPPRESSION_COLUMNS,
                        [row(x) for x in services.inventory.suppressions(actor, outfall or None)], services.tz)


@router.post("/approvals", summary="Record an approved discharge or an exempt flow for a window, with a reason "
                                   "(role smo or higher); it suppresses the alerts it covers at once",
             status_code=201, responses={**NOT_FOUND, **CONFLICT})
def record(actor: CurrentActor, services: Services, body: SuppressionIn) -> SuppressionOut:
    r = services.inventory.record(actor, kind=body.kind, outfall=body.outfall, start=body.start, end=body.end,
                                  reason=body.reason, flow=body.flow)
    return SuppressionOut.of(Listed(r.kind, r.outfall, r.start, r.end, r.flow, r.reason, r))


@router.post("/approvals/{sid}/withdraw", summary="Withdraw a recorded one, saying why (role smo or higher)",
             responses={**NOT_FOUND, **CONFLICT})
def withdraw(sid: SuppressionId, actor: CurrentActor, services: Services, body: WithdrawIn) -> SuppressionOut:
    r = services.inventory.withdraw(actor, sid, body.note)
    return SuppressionOut.of(Listed(r.kind, r.outfall, r.start, r.end, r.flow, r.reason, r))
