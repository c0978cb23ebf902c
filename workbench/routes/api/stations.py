"""``/api/v1/stations``: the status board (every station, its state and why, its newest
reading, battery, signal, calibration; CSV), one station, its readings over a window
summarised in buckets (what its chart draws); ``/api/v1/calibrations`` (CSV too) and
``/api/v1/calibrations/history``: every calibration run of the last three years (CSV too);
a station's drift corrections, and reverting one (role smo)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ....contract.calibration import CalibrationRecord
from ....contract.timeutil import from_ns
from ....contract.when import AnyTime
from ...csvout import csv_response
from ...deps import CorrectionId, CurrentActor, Services, StationPath
from ...errors import StoreDown, WorkbenchError
from ...schemas import (CONFLICT, ERRORS, CorrectionOut, RevertIn, BandOut, BucketOut, CalibrationOut, ErrorOut, ReadingsOut, SeriesOut, StationOut,
                        ThresholdOut)
from ...services.stations import EARLIEST, clamp_window
from ..stations import Days, Values

router = APIRouter(prefix="/api/v1", tags=["stations"], responses=ERRORS)
CSV: dict[int | str, dict] = {200: {"content": {"text/csv": {}}, "description": "CSV, a header row, times in the town's zone"}}
NO_STATION: dict[int | str, dict] = {404: {"model": ErrorOut, "description": "no such station"}}
UNAVAILABLE: dict[int | str, dict] = {503: {"model": ErrorOut, "description": "the store does not answer"}}
COLUMNS = ["id", "name", "kind", "quantity", "subject", "state", "states", "reasons", "latest_at", "latest_value",
           "battery_v", "signal_dbm", "calibration_due", "lat", "lon", "open_incidents"]


@router.get("/stations", summary="Every station with its state (alerting, stale, not evaluable, calibration "
                                 "overdue, reporting)")
def stations(actor: CurrentActor, services: Services) -> list[StationOut]:
    return [StationOut.of(s) for s in services.stations.board(actor).stations]


@router.get("/stations.csv", summary="The stations as CSV", response_class=Response, responses=CSV)
def stations_csv(actor: CurrentActor, services: Services) -> Response:
    rows = []
    for s in services.stations.board(actor).stations:
        o = StationOut.of(s)
        d = o.model_dump()
        d["states"] = "; ".join(x.value for x in o.states)
        d["reasons"] = "; ".join(o.reasons)
        d["open_incidents"] = " ".join(str(i) for i in o.open_incidents)
        d["state"] = o.state.value
        rows.append([d[c] for c in COLUMNS])
    return csv_response(f"stations-{services.municipality}.csv", COLUMNS, rows, services.tz)


@router.get("/stations/{sid}", summary="One station", responses=NO_STATION)
def station(sid: StationPath, actor: CurrentActor, services: Services) -> StationOut:
    return StationOut.of(services.stations.status(actor, sid))


Instant = Annotated[AnyTime | None, Query(description="ISO 8601, 2000-2100; without an offset: the town's local time")]
Buckets = Annotated[int, Query(ge=10, le=5000, description="how many buckets the window is cut into")]


@router.get("/stations/{sid}/readings", summary="A window of its readings in equal buckets (least, greatest, mean; "
                                                "rain's sum), its thresholds, storms and alert episodes",
            description="The window: `start` to `end` (default now), else the `days` (default 7) up to `end`. It is "
                        "taken in order, within 1970–2262 and at most 1,100 days ending at `end`; the answer says "
                        "which window it is.",
            responses=NO_STATION)
async def readings(sid: StationPath, actor: CurrentActor, services: Services, start: Instant = None,
                   end: Instant = None, days: Days = None, buckets: Buckets = 800, values: Values = "raw") -> ReadingsOut:
    tz = services.tz
    b = (end if end.tzinfo else end.replace(tzinfo=tz)) if end else services.stations.clock()
    a = (start if start.tzinfo else start.replace(tzinfo=tz)) if start else None
    if a is None:
        a = b - timedelta(days=days or 7) if b > EARLIEST + timedelta(days=days or 7) else EARLIEST
    a, b = clamp_window(a, b)
    c = await run_in_threadpool(services.stations.chart, actor, sid, a, b, buckets, True, values == "corrected")

    def out(xs) -> list[BucketOut]:
        return [BucketOut(start=from_ns(x.start_ns), count=x.count, min=x.min, max=x.max, mean=x.mean, sum=x.sum)
                for x in xs]

    return ReadingsOut(station=sid, start=a, end=b, bucket_s=c.width_ns / 1e9, unit=c.unit,
                       series=[SeriesOut(label=ln.label, buckets=out(ln.buckets), values=c.basis.get(ln.label, "raw"))
                               for ln in c.lines],
                       rain=out(c.rain), rain_values=c.basis.get("rain", "raw"), notes=list(c.notes),
                       thresholds=[ThresholdOut(label=t.label, value=t.value) for t in c.thresholds],
                       bands=[BandOut(kind=x.kind, start=from_ns(x.start_ns), end=from_ns(x.end_ns), label=x.label)
                              for x in c.bands])


@router.get("/calibrations", summary="Every sensor's calibration the loggers report, soonest due first",
            tags=["stations"])
def calibrations(actor: CurrentActor, services: Services) -> list[CalibrationOut]:
    return [CalibrationOut.of(c) for c in services.stations.calibrations(actor)]


@router.get("/calibrations.csv", summary="Calibrations as CSV", response_class=Response, responses=CSV)
def calibrations_csv(actor: CurrentActor, services: Services) -> Response:
    cols = ["station", "device", "sensor", "performed", "due", "days_left", "overdue"]
    return csv_response(f"calibrations-{services.municipality}.csv", cols,
                        [[getattr(c, k) for k in cols] for c in services.stations.calibrations(actor)], services.tz)



def _history(actor, services, station: str | None, sensor: str | None) -> list[CalibrationRecord]:
    records, why_none = services.stations.calibration_history(actor, station=station, sensor=sensor)
    if why_none is not None and why_none.startswith("the store does not answer"):
        raise StoreDown(why_none)
    return records


HistoryStation = Annotated[str | None, Query(max_length=64, description="only this station's sensors")]
HistorySensor = Annotated[str | None, Query(max_length=64, description="only this sensor id")]


@router.get("/calibrations/history", summary="Every calibration run (one record per `ms4watch calibrate` run, pass or "
            "fail) of the last three years, newest first", responses={**NO_STATION, **UNAVAILABLE})
def calibration_history(actor: CurrentActor, services: Services, station: HistoryStation = None,
                        sensor: HistorySensor = None) -> list[CalibrationRecord]:
    return _history(actor, services, station, sensor)


HISTORY_COLUMNS = ["performed", "station", "device", "sensor", "quantity", "unit", "procedure", "technician", "result",
                   "as_found", "as_left", "standards", "fit", "next_due", "problems", "id"]


@router.get("/calibrations/history.csv", summary="The calibration history as CSV (one row per run)",
            response_class=Response, responses={**CSV, **NO_STATION, **UNAVAILABLE})
def calibration_history_csv(actor: CurrentActor, services: Services, station: HistoryStation = None,
                            sensor: HistorySensor = None) -> Response:
    def points(ps) -> str:
        return "; ".join(f"{p.label}: {p.reading:g} vs {p.reference:g} ({'ok' if p.ok else 'FAIL'})" for p in ps)

    def fit(f) -> str:
        return (f"slope {f.slope:g} offset {f.offset:g}" if f.kind.value == "linear"
                else "piecewise " + " ".join(f"({a:g}, {b:g})" for a, b in f.points))

    rows = [[r.performed, r.station, r.device, r.sensor, r.quantity.value, r.unit, r.procedure.value, r.technician,
             r.result.value, points(r.as_found), points(r.as_left), "; ".join(x.label() for x in r.standards),
             fit(r.fit), r.next_due, "; ".join(r.problems), r.id] for r in _history(actor, services, station, sensor)]
    return csv_response(f"calibration-history-{services.municipality}.csv", HISTORY_COLUMNS, rows, services.tz)


def _corrections(services):
    if services.corrections is None:
        raise WorkbenchError("this server keeps no corrections")
    return services.corrections


@router.get("/stations/{sid}/corrections", summary="The station's drift corrections (USGS TM 1-D3), reverted ones "
            "too, newest interval first", responses=NO_STATION)
def corrections(sid: StationPath, actor: CurrentActor, services: Services) -> list[CorrectionOut]:
    return [CorrectionOut.of(v.correction) for v in _corrections(services).of_station(actor, sid)]


@router.post("/corrections/{cid}/revert", summary="Stop applying a drift correction (role smo); it stays in the "
             "record with who, when and why", responses={404: {"model": ErrorOut, "description": "no such "
                                                              "correction"}, **CONFLICT})
def revert_correction(cid: CorrectionId, actor: CurrentActor, services: Services, body: RevertIn) -> CorrectionOut:
    return CorrectionOut.of(_corrections(services).revert(actor, cid, body.why))
