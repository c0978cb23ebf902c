"""The API's public shapes (separate from the stores' own records)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ..alerts.incidents import AuditEntry, Priority, State
from .services.incidents import IncidentDetail, IncidentView


class ErrorOut(BaseModel):
    detail: str


class IncidentOut(BaseModel):
    id: int
    code: str = Field(description="the acknowledge code an SMS reply carries")
    kind: str
    what: str = Field(description="the kind in a few words")
    subject: str = Field(description="outfall, turbidity pair, construction site or rain gauge id")
    station_name: str
    state: State
    priority: Priority
    opened_at: datetime
    start: datetime
    end: datetime | None
    deadline: datetime | None
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    resolved_at: datetime | None
    resolved_by: str | None
    resolution: str | None
    suppressed: str | None = Field(description="why nobody was notified (an approved discharge), if so")
    episodes: int
    provision: str = Field(description="the provision of the law the rule implements")
    params: dict[str, Any] = Field(description="the rule's parameters (thresholds) when it fired")
    threshold: dict[str, Any] | None

    @classmethod
    def of(cls, view: IncidentView) -> "IncidentOut":
        i = view.incident
        return cls(id=i.id, code=i.code, kind=i.kind, what=i.policy.what, subject=i.subject,
                   station_name=view.station_name, state=i.state, priority=i.priority, opened_at=i.opened_at,
                   start=i.start, end=i.end, deadline=i.deadline, acknowledged_at=i.acknowledged_at,
                   acknowledged_by=i.acknowledged_by, resolved_at=i.resolved_at, resolved_by=i.resolved_by,
                   resolution=i.resolution, suppressed=i.suppressed, episodes=i.episodes, provision=i.provision,
                   params=view.params, threshold=view.threshold)


class AuditOut(BaseModel):
    at: datetime
    who: str
    how: str
    action: str
    note: str | None

    @classmethod
    def of(cls, a: AuditEntry) -> "AuditOut":
        return cls(at=a.at, who=a.who, how=a.how, action=a.action, note=a.note)


class NotificationOut(BaseModel):
    id: int
    stage: str
    channel: str
    recipient: str
    role: str
    status: str
    attempts: int
    created_at: datetime
    sent_at: datetime | None
    last_error: str | None


class IncidentDetailOut(BaseModel):
    incident: IncidentOut
    event: dict[str, Any] = Field(description="the alert engine's latest event for the incident")
    audit: list[AuditOut]
    notifications: list[NotificationOut]

    @classmethod
    def of(cls, d: IncidentDetail) -> "IncidentDetailOut":
        return cls(incident=IncidentOut.of(d.view), event=d.view.incident.event,
                   audit=[AuditOut.of(a) for a in d.audit],
                   notifications=[NotificationOut(id=n.id, stage=n.stage, channel=n.channel,
                                                  recipient=n.recipient.name, role=n.recipient.role, status=n.status,
                                                  attempts=n.attempts, created_at=n.created_at, sent_at=n.sent_at,
                                                  last_error=n.last_error) for n in d.notifications])


class AcknowledgeIn(BaseModel):
    note: str | None = Field(default=None, max_length=2000)


class ResolveIn(BaseModel):
    note: str = Field(min_length=1, max_length=2000, pattern=r"\S", description="why it is resolved (required)")


class MeOut(BaseModel):
    username: str
    name: str
    role: str
    municipality: str


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no session and no valid API token"},
    403: {"model": ErrorOut, "description": "the role is too small, or a session's CSRF token is missing"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut, "description": "no such incident"}}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ErrorOut, "description": "not possible in its state"}}

__all__ = ["ErrorOut", "IncidentOut", "AuditOut", "NotificationOut", "IncidentDetailOut", "AcknowledgeIn",
           "ResolveIn", "MeOut", "ERRORS", "NOT_FOUND", "CONFLICT"]
