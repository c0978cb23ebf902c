"""Storms, as a page: every storm at the town's gauges, newest first (filter by gauge,
qualifying only, how far back; CSV)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from ...alerts.kinds.units import duration
from ..deps import CurrentActor, Services, render

router = APIRouter(include_in_schema=False)
Gauge = Annotated[str, Query(max_length=64)]
Days = Annotated[int, Query(ge=1, le=1100)]


@router.get("/storms")
def storms(request: Request, actor: CurrentActor, services: Services, gauge: Gauge = "", qualifying: bool = False,
           days: Days = 365) -> Response:
    rows = services.storms.list(actor, gauge=gauge or None, qualifying_only=qualifying, days=days)
    query = request.url.query
    return render(request, "storms.html", title="Storms", actor=actor, rows=rows, gauge=gauge, qualifying=qualifying,
                  days=days, gauges=services.registry.rain_gauges,
                  csv_url="/api/v1/storms.csv" + (f"?{query}" if query else ""),
                  qualifying_in=float(services.registry.rules.storm_min_depth_in),
                  after_storm=duration(services.registry.rules.inspection_after_storm))
