"""``/api/v1/storms``: the storms at the town's gauges, newest first (CSV too)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ...csvout import csv_response
from ...deps import CurrentActor, Services
from ...schemas import ERRORS, StormOut

router = APIRouter(prefix="/api/v1", tags=["storms"], responses=ERRORS)
CSV: dict[int | str, dict] = {200: {"content": {"text/csv": {}}, "description": "CSV, a header row, times in the town's zone"}}
Gauge = Annotated[str | None, Query(max_length=64, description="a rain gauge id")]
Qualifying = Annotated[bool, Query(description="only qualifying storms (the town's rules.storm_min_depth_in or more)")]
Days = Annotated[int, Query(ge=1, le=1100, description="storms of the last this many days")]
COLUMNS = ["gauge", "gauge_name", "start", "end", "last_rain", "depth_in", "qualifying", "duration_h",
           "peak_i15_in_h", "peak_i60_in_h", "sites"]


@router.get("/storms", summary="Storms at the town's rain gauges, newest first")
def storms(actor: CurrentActor, services: Services, gauge: Gauge = None, qualifying: Qualifying = False,
           days: Days = 365) -> list[StormOut]:
    return [StormOut.of(s) for s in services.storms.list(actor, gauge=gauge, qualifying_only=qualifying, days=days)]


@router.get("/storms.csv", summary="Storms as CSV", response_class=Response, responses=CSV)
def storms_csv(actor: CurrentActor, services: Services, gauge: Gauge = None, qualifying: Qualifying = False,
               days: Days = 365) -> Response:
    rows = []
    for s in services.storms.list(actor, gauge=gauge, qualifying_only=qualifying, days=days):
        d = StormOut.of(s).model_dump()
        d["sites"] = " ".join(d["sites"])
        rows.append([d[c] for c in COLUMNS])
    return csv_response(f"storms-{services.municipality}.csv", COLUMNS, rows, services.tz)
