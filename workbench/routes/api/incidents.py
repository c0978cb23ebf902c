"""``/api/v1/incidents``: list (filters as the page's), get (with audit and notifications),
acknowledge, resolve; CSV exports of the incidents table and an incident's tables."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ...deps import CurrentActor, IncidentId, Services
from ...csvout import csv_response
from ...schemas import CONFLICT, ERRORS, NOT_FOUND, AcknowledgeIn, IncidentDetailOut, IncidentOut, ResolveIn
from ...services.incidents import ACTIVE
from ....alerts.incidents import State

router = APIRouter(prefix="/api/v1/incidents", tags=["incidents"], responses=ERRORS)

States = Annotated[list[State] | None, Query(description="any of these states (repeatable); default open and "
                                                         "acknowledged")]
Kind = Annotated[str | None, Query(max_length=64, description="e.g. dry_weather_flow")]
Subject = Annotated[str | None, Query(max_length=64, description="outfall, pair, site or gauge id")]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]
CSV: dict[int | str, dict] = {200: {"content": {"text/csv": {}}, "description": "CSV, a header row, times in the town's zone"}}

COLUMNS = ["id", "code", "kind", "subject", "station_name", "state", "priority", "opened_at", "start", "end",
           "deadline", "acknowledged_at", "acknowledged_by", "resolved_at", "resolved_by", "resolution",
           "suppressed", "episodes", "provision"]


@router.get("", summary="Incidents, newest first")
def list_incidents(actor: CurrentActor, services: Services, state: States = None, kind: Kind = None,
                   subject: Subject = None, limit: Limit = 100, offset: Offset = 0) -> list[IncidentOut]:
    views = services.desk.list(actor, states=tuple(state or ACTIVE), kind=kind, subject=subject, limit=limit,
                               offset=offset)
    return [IncidentOut.of(v) for v in views]


@router.get(".csv", summary="The incidents table as CSV", response_class=Response, responses=CSV)
def incidents_csv(actor: CurrentActor, services: Services, state: States = None, kind: Kind = None,
                  subject: Subject = None, limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000,
                  offset: Offset = 0) -> Response:
    views = services.desk.list(actor, states=tuple(state or ACTIVE), kind=kind, subject=subject, limit=limit,
                               offset=offset)
    rows = []
    for v in views:
        out = IncidentOut.of(v)
        rows.append([getattr(out, c) for c in COLUMNS])
    return csv_response(f"incidents-{services.municipality}.csv", COLUMNS, rows, services.tz)


@router.get("/{iid}", summary="One incident, its audit log and its notifications", responses=NOT_FOUND)
def get_incident(iid: IncidentId, actor: CurrentActor, services: Services) -> IncidentDetailOut:
    return IncidentDetailOut.of(services.desk.detail(actor, iid))


@router.get("/{iid}/audit.csv", summary="An incident's audit log as CSV", response_class=Response,
            responses={**CSV, **NOT_FOUND})
def audit_csv(iid: IncidentId, actor: CurrentActor, services: Services) -> Response:
    d = services.desk.detail(actor, iid)
    return csv_response(f"incident-{iid}-audit.csv", ["at", "who", "how", "action", "note"],
                        [[a.at, a.who, a.how, a.action, a.note] for a in d.audit], services.tz)


@router.get("/{iid}/notifications.csv", summary="An incident's notifications as CSV", response_class=Response,
            responses={**CSV, **NOT_FOUND})
def notifications_csv(iid: IncidentId, actor: CurrentActor, services: Services) -> Response:
    d = services.desk.detail(actor, iid)
    return csv_response(f"incident-{iid}-notifications.csv",
                        ["id", "stage", "recipient", "role", "channel", "status", "attempts", "created_at",
                         "sent_at", "last_error"],
                        [[n.id, n.stage, n.recipient.name, n.recipient.role, n.channel, n.status, n.attempts,
                          n.created_at, n.sent_at, n.last_error] for n in d.notifications], services.tz)


@router.post("/{iid}/acknowledge", summary="Acknowledge (role inspector or higher)",
             responses={**NOT_FOUND, **CONFLICT})
def acknowledge(iid: IncidentId, actor: CurrentActor, services: Services,
                body: AcknowledgeIn | None = None) -> IncidentOut:
    return IncidentOut.of(services.desk.acknowledge(actor, iid, body.note if body else None))


@router.post("/{iid}/resolve", summary="Resolve with a note saying why (role smo or higher)",
             responses={**NOT_FOUND, **CONFLICT})
def resolve(iid: IncidentId, actor: CurrentActor, services: Services, body: ResolveIn) -> IncidentOut:
    return IncidentOut.of(services.desk.resolve(actor, iid, body.note))
