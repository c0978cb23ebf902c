"""Alert events (:class:`AlertEvent`) and their ``events.jsonl`` form.

One JSON object per line; the contract fields of issue 3 first, then ``id`` (stable
identity: an update of an event keeps its id), ``status`` (``active`` or ``retracted``
when late data showed it was not so), ``params`` (the rule parameters used) and
``provision`` (the law the rule implements)::

    {"kind":"storm","gauge":"RG-1","start":"2026-06-01T08:00:00-04:00","end":null,"depth_in":0.62,
     "qualifying":true,"id":"storm/RG-1/...","status":"active","params":{...},"provision":"..."}

Times are ISO 8601 with the municipality's UTC offset.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone, tzinfo
from typing import IO, Any, Iterable, Mapping

from .errors import AlertError

TIME_FIELDS = frozenset({"start", "end", "storm_end", "due", "closed_at", "time", "last_rain", "last_met"})
SUBJECT_FIELDS = ("outfall", "pair", "site", "gauge", "station", "record")


class AlertKind(str, enum.Enum):
    STORM = "storm"
    INSPECTION_DUE = "inspection_due"
    INSPECTION_OVERDUE = "inspection_overdue"          # escalation
    DRY_WEATHER_FLOW = "dry_weather_flow"
    DRY_WEATHER_UNKNOWN = "dry_weather_unknown"        # data-gap notice: flow, but rain data missing
    TURBIDITY_CONTRAST = "turbidity_contrast"
    TURBIDITY_NOT_EVALUABLE = "turbidity_not_evaluable"
    STALE_STATION = "stale_station"
    LOW_BATTERY = "low_battery"
    CALIBRATION_DUE = "calibration_due"                # a sensor's calibration falls due soon (rules/calibration.py)
    CALIBRATION_OVERDUE = "calibration_overdue"        # … and is past due: its readings carry calibration_overdue
    COMPLIANCE_DEADLINE = "compliance_deadline"        # a clock of the local laws running (compliance/watch.py)


class AlertEventStatus(str, enum.Enum):
    ACTIVE = "active"
    RETRACTED = "retracted"


@dataclass(frozen=True)
class AlertEvent:
    """One alert record. Times in ``fields`` are int UTC nanoseconds (or None)."""

    kind: AlertKind
    id: str
    fields: Mapping[str, Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    provision: str = ""
    status: AlertEventStatus = AlertEventStatus.ACTIVE

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    @property
    def notify(self) -> bool:
        """Whether this event should reach a person (suppressed and retracted ones do not)."""
        return self.status is AlertEventStatus.ACTIVE and not self.fields.get("suppressed")

    def retracted(self) -> "AlertEvent":
        return replace(self, status=AlertEventStatus.RETRACTED)

    @property
    def subject(self) -> str:
        """The id the event is about: its outfall, pair, site, gauge or station (or a compliance record)."""
        for f in SUBJECT_FIELDS:
            v = self.fields.get(f)
            if v:
                return str(v)
        raise AlertError(f"event {self.id}: names none of {', '.join(SUBJECT_FIELDS)}")

    def instant(self, name: str) -> datetime | None:
        """A time field as an aware UTC datetime (None when unset)."""
        ns = self.fields.get(name)
        if ns is None:
            return None
        return datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).replace(
            microsecond=(ns % 1_000_000_000) // 1000)

    @property
    def overdue_of(self) -> str | None:
        """For an INSPECTION_OVERDUE escalation: the id of the inspection item it escalates."""
        if self.kind is AlertKind.INSPECTION_OVERDUE:
            return self.id.removeprefix(OVERDUE_PREFIX)
        return None

    def to_dict(self, tz: tzinfo = timezone.utc) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind.value}
        for k, v in self.fields.items():
            d[k] = format_time(v, tz) if k in TIME_FIELDS else v
        d["id"] = self.id
        d["status"] = self.status.value
        d["params"] = dict(self.params)
        d["provision"] = self.provision
        return d

    def to_json(self, tz: tzinfo = timezone.utc) -> str:
        return json.dumps(self.to_dict(tz), separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AlertEvent":
        """The edge: an ``events.jsonl`` record back into an AlertEvent; AlertError names the field."""
        if not isinstance(d, Mapping):
            raise AlertError("not an event record: expected a JSON object")
        try:
            kind = AlertKind(d.get("kind"))
        except ValueError:
            raise AlertError(f"kind: not an event kind: {d.get('kind')!r}") from None
        ident = d.get("id")
        if not isinstance(ident, str) or not ident:
            raise AlertError("id: missing")
        fields: dict[str, Any] = {}
        for k, v in d.items():
            if k in ("kind", "id", "status", "params", "provision"):
                continue
            if k in TIME_FIELDS:
                try:
                    v = parse_time_ns(v)
                except (ValueError, TypeError) as e:
                    raise AlertError(f"{k}: {e}") from None
            fields[k] = v
        try:
            status = AlertEventStatus(d.get("status", "active"))
        except ValueError:
            raise AlertError(f"status: must be active or retracted, got {d.get('status')!r}") from None
        return cls(kind, ident, fields, d.get("params", {}), d.get("provision", ""), status)


OVERDUE_PREFIX = "overdue/"


def overdue_id(item_id: str) -> str:
    """The id of the escalation of inspection item ``item_id`` (see :attr:`AlertEvent.overdue_of`)."""
    return OVERDUE_PREFIX + item_id


def format_time(ns: int | None, tz: tzinfo) -> str | None:
    if ns is None:
        return None
    dt = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).replace(
        microsecond=(ns % 1_000_000_000) // 1000).astimezone(tz)
    return dt.isoformat()


def parse_time_ns(text: str | None) -> int | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError(f"not an ISO 8601 time: {text!r}")
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        raise ValueError(f"time without offset: {text!r}")
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    delta = dt - epoch
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def write_jsonl(events: Iterable[AlertEvent], out: IO[str], tz: tzinfo = timezone.utc) -> int:
    n = 0
    for e in events:
        out.write(e.to_json(tz) + "\n")
        n += 1
    return n


def read_jsonl(path: str | os.PathLike[str]) -> list[AlertEvent]:
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(AlertEvent.from_dict(json.loads(line)))
                except (json.JSONDecodeError, AlertError) as e:
                    raise AlertError(f"{path}:{i}: {e}") from None
    return out
