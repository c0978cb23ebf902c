"""The API's public shapes (separate from the stores' own records)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..contract.text import NOT_BLANK
from ..alerts.incidents import AuditEntry, Priority, State
from ..contract import duetext
from ..contract.registry import Outfall, PipeMaterial
from ..contract.timeutil import from_ns
from ..contract.when import RecordTime
from ..ingest.corrections import Correction
from .records import Credential, InspectionReport, SuppressionKind
from .services.incidents import IncidentDetail, IncidentView
from .services.inspections import DueItem
from .services.inventory import Listed
from .services.stations import Calibration, StationStatus
from .services.stations import State as StationState
from .services.storms import Storm


class ErrorOut(BaseModel):
    detail: str


class OfficeClosureOut(BaseModel):
    day: date
    name: str


class DueOut(BaseModel):
    """A due date (``contract/due.py``), as every channel shows it (``contract/duetext.py``)."""

    form: Literal["end_of_day", "instant", "pending"] = Field(
        description="end_of_day: due by the end of last_day in the town's zone; instant: at ends_at; pending: "
                    "runs from an event not yet recorded (no day yet)")
    last_day: date | None = Field(description="the last day of the period (the day to name)")
    ends_at: datetime | None = Field(description="the instant it runs out: for end_of_day the local midnight ending "
                                                 "last_day (done before it is on time)")
    text: str = Field(description="as the board shows it: 'Wed 2026-06-17 (end of day)'")
    provision: str
    runs_from: str = Field(description="the event it runs from: 'issuance of the notice'")
    start: datetime | None
    period: str = Field(description="'15 days', '3 business days', '24 h', 'immediately'")
    moved_from: date | None = Field(description="the day the period ended on before General Construction Law "
                                                "§ 25-a extended it to the next business day")
    office_closures: list[OfficeClosureOut] = Field(description="the town's office closures the period skipped")

    @classmethod
    def of(cls, due: Any) -> "DueOut":
        zone = due.zone
        return cls(form=due.form.value, last_day=due.last_day,
                   ends_at=due.ends_at.astimezone(zone) if due.ends_at else None, text=duetext.short(due),
                   provision=due.provision, runs_from=due.runs_from,
                   start=due.start.astimezone(zone) if due.start else None, period=due.period,
                   moved_from=due.moved_from,
                   office_closures=[OfficeClosureOut(day=c.day, name=c.name) for c in due.closures])


class IncidentOut(BaseModel):
    id: int
    code: str = Field(description="the acknowledge code an SMS reply carries")
    kind: str
    what: str = Field(description="the kind in a few words, with the town's numbers (e.g. 'storm >= 0.25 in')")
    rule: str = Field(default="", description="the rule in a sentence, with the town's parameters and units")
    subject: str = Field(description="outfall, turbidity pair, construction site or rain gauge id")
    station_name: str
    state: State
    priority: Priority
    opened_at: datetime
    start: datetime
    end: datetime | None
    deadline: datetime | None
    due: DueOut | None = Field(None, description="the deadline as a due date: its day, end instant and provision")
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
    runoff: dict[str, Any] | None = Field(None, description=(
        "where the subject's runoff goes on the town's map, when one is imported: for a site, its inlets and "
        "the outfalls they reach (id, receiving_water, monitored stations); for an outfall, the construction "
        "sites upstream. 'text' is the sentence the email and the page give"))

    @classmethod
    def of(cls, view: IncidentView) -> "IncidentOut":
        i = view.incident
        return cls(id=i.id, code=i.code, kind=i.kind, what=view.what or i.policy.what, rule=view.rule, subject=i.subject,
                   station_name=view.station_name, state=i.state, priority=i.priority, opened_at=i.opened_at,
                   start=i.start, end=i.end, deadline=i.deadline,
                   due=DueOut.of(view.due) if view.due is not None else None, acknowledged_at=i.acknowledged_at,
                   acknowledged_by=i.acknowledged_by, resolved_at=i.resolved_at, resolved_by=i.resolved_by,
                   resolution=i.resolution, suppressed=i.suppressed, episodes=i.episodes, provision=i.provision,
                   params=view.params, threshold=view.threshold,
                   runoff=view.runoff.as_json() if view.runoff is not None else None)


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
    note: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK, description="why it is resolved (required)")


class MeOut(BaseModel):
    username: str
    name: str
    role: str
    municipality: str


class StationOut(BaseModel):
    id: str
    name: str
    kind: str = Field(description="rain gauge, outfall, turbidity upstream or turbidity downstream")
    quantity: str
    subject: str = Field(description="the gauge, outfall or turbidity pair it belongs to")
    lat: float | None
    lon: float | None
    state: StationState = Field(description="the worst of its states")
    states: list[StationState]
    reasons: list[str]
    latest_at: datetime | None = Field(description="its newest reading")
    latest_value: float | None
    battery_v: float | None
    signal_dbm: float | None
    calibration_due: date | None
    open_incidents: list[int]

    @classmethod
    def of(cls, s: StationStatus) -> "StationOut":
        st = s.station
        return cls(id=st.id, name=st.name, kind=st.kind, quantity=st.quantity, subject=st.subject, lat=st.lat,
                   lon=st.lon, state=s.state, states=s.states, reasons=s.reasons,
                   latest_at=from_ns(s.latest.time_ns) if s.latest else None,
                   latest_value=s.latest.value if s.latest else None, battery_v=s.battery_v, signal_dbm=s.signal_dbm,
                   calibration_due=s.calibration_due, open_incidents=[i.id for i in s.incidents])


class BucketOut(BaseModel):
    start: datetime
    count: int | None
    min: float | None
    max: float | None
    mean: float | None
    sum: float | None


class SeriesOut(BaseModel):
    label: str
    buckets: list[BucketOut]
    values: Literal["raw", "corrected"] = Field("raw", description="raw readings, or with the drift corrections in "
                                                                   "force applied (USGS TM 1-D3)")


class ThresholdOut(BaseModel):
    label: str
    value: float | None


class BandOut(BaseModel):
    kind: str = Field(description="storm or episode")
    start: datetime
    end: datetime
    label: str


class ReadingsOut(BaseModel):
    """A window of a station's readings summarised in equal buckets (what its chart draws)."""
    station: str
    start: datetime
    end: datetime
    bucket_s: float
    unit: str
    series: list[SeriesOut]
    rain: list[BucketOut] = Field(description="rain per bucket [in] (sum)")
    rain_values: Literal["raw", "corrected"] = "raw"
    thresholds: list[ThresholdOut]
    bands: list[BandOut]
    notes: list[str] = Field(default_factory=list, description="what the answer holds and lacks (a store that did "
                                                               "not answer, which series are corrected)")


class CalibrationOut(BaseModel):
    station: str
    device: str
    sensor: str
    performed: date
    due: date
    days_left: int
    overdue: bool

    @classmethod
    def of(cls, c: Calibration) -> "CalibrationOut":
        return cls(station=c.station, device=c.device, sensor=c.sensor, performed=c.performed, due=c.due,
                   days_left=c.days_left, overdue=c.overdue)


class DueItemOut(BaseModel):
    incident: int
    code: str
    state: State
    site: str
    site_name: str
    reason: str = Field(description="storm or routine")
    gauge: str | None
    deadline: datetime | None
    resolved_at: datetime | None
    resolved_by: str | None
    engine_closed_at: datetime | None = Field(description="when the alert engine's item closed (None: open, or "
                                                          "no engine in this process)")

    @classmethod
    def of(cls, d: DueItem) -> "DueItemOut":
        i = d.incident
        return cls(incident=i.id, code=i.code, state=i.state, site=i.subject, site_name=d.site_name, reason=d.reason,
                   gauge=d.gauge, deadline=i.deadline, resolved_at=i.resolved_at, resolved_by=i.resolved_by,
                   engine_closed_at=d.engine_closed_at)


class PhotoOut(BaseModel):
    sha256: str
    media_type: str
    size: int
    name: str
    url: str


class ReportOut(BaseModel):
    id: int
    site: str
    at: datetime
    inspector: str
    credential: Credential
    license_no: str
    disturbed_areas: str = Field(description="(1) disturbed areas and drainage pathways; next 14 days")
    stabilized_areas: str = Field(description="(2) areas stabilised")
    idle_areas: str = Field(description="(3) disturbed areas idle for 14 days")
    sediment_pct: float = Field(description="(4) sediment accumulation [% of storage volume]")
    sediment_note: str | None
    maintenance: str = Field(description="(5) maintenance needs, erosion evidence")
    deficiencies: str = Field(description="(6) deficiencies in carrying out the SWPPP")
    certification: str
    recorded_by: str
    recorded_at: datetime
    photos: list[PhotoOut]
    closed_incidents: list[int]

    @classmethod
    def of(cls, r: InspectionReport, base: str = "") -> "ReportOut":
        return cls(id=r.id, site=r.site, at=r.at, inspector=r.inspector, credential=r.credential,
                   license_no=r.license_no, disturbed_areas=r.disturbed_areas, stabilized_areas=r.stabilized_areas,
                   idle_areas=r.idle_areas, sediment_pct=r.sediment_pct, sediment_note=r.sediment_note,
                   maintenance=r.maintenance, deficiencies=r.deficiencies, certification=r.certification,
                   recorded_by=r.recorded_by, recorded_at=r.recorded_at,
                   photos=[PhotoOut(sha256=p.sha256, media_type=p.media_type, size=p.size, name=p.name,
                                    url=f"{base}/inspections/{r.id}/photos/{p.sha256}") for p in r.photos],
                   closed_incidents=list(r.closed))


class RecordedOut(BaseModel):
    report: ReportOut
    closed: list[IncidentOut] = Field(description="the inspection items it resolved")


class OutfallOut(BaseModel):
    id: str
    name: str
    lat: float | None
    lon: float | None
    receiving_water: str | None
    pipe_diameter_in: float | None
    pipe_material: PipeMaterial | None
    rain_gauges: list[str]
    flow_floor_gpm: float

    @classmethod
    def of(cls, o: Outfall) -> "OutfallOut":
        return cls(id=o.id, name=o.name, lat=o.lat, lon=o.lon, receiving_water=o.receiving_water,
                   pipe_diameter_in=o.pipe_diameter_in, pipe_material=o.pipe_material, rain_gauges=list(o.rain_gauges),
                   flow_floor_gpm=o.flow_floor_gpm)


class SuppressionOut(BaseModel):
    id: int | None = Field(description="None: from the registry file")
    source: str = Field(description="registry or recorded")
    kind: SuppressionKind
    outfall: str
    start: datetime | None
    end: datetime | None
    flow: str | None = Field(description="an exempt flow's kind")
    reason: str
    recorded_by: str | None
    recorded_at: datetime | None
    withdrawn_by: str | None
    withdrawn_at: datetime | None
    withdrawn_note: str | None

    @classmethod
    def of(cls, x: Listed) -> "SuppressionOut":
        r = x.record
        return cls(id=r.id if r else None, source=x.source, kind=x.kind, outfall=x.outfall, start=x.start, end=x.end,
                   flow=x.flow, reason=x.reason, recorded_by=r.recorded_by if r else None,
                   recorded_at=r.recorded_at if r else None, withdrawn_by=r.withdrawn_by if r else None,
                   withdrawn_at=r.withdrawn_at if r else None, withdrawn_note=r.withdrawn_note if r else None)


class SuppressionIn(BaseModel):
    kind: SuppressionKind
    outfall: str = Field(min_length=1, max_length=64)
    start: RecordTime
    end: RecordTime | None = Field(default=None, description="required: one without an end is refused (409)")
    flow: str | None = Field(default=None, max_length=200, description="an exempt flow's kind (required for one)")
    reason: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)


class WithdrawIn(BaseModel):
    note: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK, description="why it is withdrawn")


class RevertIn(BaseModel):
    why: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK, description="why the correction stops applying")


class CorrectionOut(BaseModel):
    id: int
    station: str
    quantity: str
    sensor: str | None
    start: datetime = Field(description="the previous service visit: the correction grows from 0 here")
    end: datetime = Field(description="the visit that measured it: the whole correction from here on")
    fouling: float
    fouling_kind: str
    drift: float
    drift_kind: str
    max_allowable_pct: float | None
    record: str | None = Field(description="the calibration record it came from, if any")
    created_by: str
    created_at: datetime
    why: str
    in_force: bool
    reverted_by: str | None
    reverted_at: datetime | None
    reverted_why: str | None

    @classmethod
    def of(cls, c: Correction) -> "CorrectionOut":
        d = c.correction
        return cls(id=c.id, station=c.station, quantity=c.quantity, sensor=c.sensor, start=from_ns(d.t0_ns),
                   end=from_ns(d.t1_ns), fouling=d.fouling, fouling_kind=d.fouling_kind.value, drift=d.drift,
                   drift_kind=d.drift_kind.value, max_allowable_pct=d.max_allowable_pct, record=c.record,
                   created_by=c.created_by, created_at=from_ns(c.created_at_ns), why=c.why, in_force=c.active,
                   reverted_by=c.reverted_by,
                   reverted_at=from_ns(c.reverted_at_ns) if c.reverted_at_ns is not None else None,
                   reverted_why=c.reverted_why)


class StormOut(BaseModel):
    gauge: str
    gauge_name: str
    start: datetime
    end: datetime | None = Field(description="None while it may still be raining")
    last_rain: datetime
    depth_in: float
    qualifying: bool = Field(description="the town's rules.storm_min_depth_in or more: the gauge's active sites are due for inspection")
    duration_h: float | None
    peak_i15_in_h: float | None
    peak_i60_in_h: float | None
    sites: list[str]

    @classmethod
    def of(cls, s: Storm) -> "StormOut":
        return cls(gauge=s.gauge, gauge_name=s.gauge_name, start=s.start, end=s.end, last_rain=s.last_rain,
                   depth_in=s.depth_in, qualifying=s.qualifying, duration_h=s.duration_h,
                   peak_i15_in_h=s.peak_i15_in_h, peak_i60_in_h=s.peak_i60_in_h, sites=list(s.sites))


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "no session and no valid API token"},
    403: {"model": ErrorOut, "description": "the role is too small, or a session's CSRF token is missing"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut, "description": "no such incident"}}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ErrorOut, "description": "not possible in its state"}}

BAD: dict[int | str, dict[str, Any]] = {400: {"model": ErrorOut, "description": "refused as given (the detail says why)"}}
TOO_LARGE: dict[int | str, dict[str, Any]] = {413: {"model": ErrorOut, "description": "a photo or the request too large"}}

__all__ = ["ErrorOut", "IncidentOut", "AuditOut", "NotificationOut", "IncidentDetailOut", "AcknowledgeIn",
           "ResolveIn", "MeOut", "StationOut", "ReadingsOut", "CalibrationOut", "DueItemOut", "ReportOut", "RecordedOut",
           "PhotoOut", "OutfallOut", "SuppressionOut", "SuppressionIn", "WithdrawIn", "StormOut", "ERRORS", "NOT_FOUND",
           "CONFLICT", "BAD", "TOO_LARGE"]
