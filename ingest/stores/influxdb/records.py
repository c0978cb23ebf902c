"""Non-reading records in the store's schema (schema.py), built from contract objects.

``store.write_records([...])`` takes the tuples these functions return. Ingest writes a
``device_status`` record per status message and a ``calibration`` record per sensor the
status lists under ``calibrations``; the alert engine writes ``alert``, ``storm``
and ``inspection`` records from its events (same timestamp again when an episode closes
or an inspection is recorded, so the point is updated in place); incidents write
``incident`` records on every state change.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from typing import Any, Iterable, Mapping

from ....contract.timeutil import parse_time, to_ns
from ....contract.wire import SensorCalibration, StatusMessage
from .lineproto import FieldValue
from .schema import ALERT, CALIBRATION, CALIBRATION_RECORD, DEVICE_EVENT, DEVICE_STATUS, INCIDENT, INSPECTION, STORM

Record = tuple[str, Mapping[str, str], Mapping[str, FieldValue | None], int]


def status_record(station: str, msg: StatusMessage, received_ns: int) -> Record:
    """A status message → ``device_status`` (time: the message's own time, else when received)."""
    t = to_ns(msg.time) if msg.time else received_ns
    return (DEVICE_STATUS, {"station": station, "device": msg.device}, {
        "online": 1 if msg.state == "online" else 0, "state": msg.state,
        "battery_v": _f(msg.battery_v), "signal_dbm": _f(msg.signal_dbm), "uptime_s": _f(msg.uptime_s),
        "spool_depth": msg.spool_depth, "dropped": msg.dropped,
        "clock_synced": None if msg.clock is None else int(msg.clock == "synced"),
        "agent_version": msg.agent_version, "config_version": msg.config_version}, t)


def days_left(due: date, t_ns: int) -> float:
    """Whole days from the UTC day of ``t_ns`` [epoch ns] to ``due`` [d].

    0 on the due day itself, negative from the day after: the day the logger starts flagging
    readings ``calibration_overdue`` (edge/drivers/calibration.py, also by UTC day).
    """
    day = datetime.fromtimestamp(t_ns // 1_000_000_000, tz=timezone.utc).date()
    return float((due - day).days)


def calibration_records(station: str, device: str, calibrations: Iterable[SensorCalibration],
                        received_ns: int) -> list[Record]:
    """A status message's calibrations → one ``calibration`` record per sensor, at ``received_ns``.

    ``days_left`` is counted from the day the status was received; ``due`` and ``performed``
    are ``YYYY-MM-DD``. A sensor's own station (a logger wired to two stations) wins over the
    topic's.
    """
    return [(CALIBRATION, {"station": c.station or station, "device": device, "sensor": c.sensor},
             {"due": c.due.isoformat(), "performed": c.performed.isoformat(),
              "days_left": days_left(c.due, received_ns)}, received_ns)
            for c in calibrations]


EVENT_TIME_SPREAD_NS = 1_000_000
"""A device event's point is at its time plus ``digest mod`` this [ns] (schema.DEVICE_EVENT)."""


def device_event_records(e: Any) -> list[Record]:
    """A :class:`~ms4watch.ingest.stores.base.DeviceEvent` → a ``device_event`` point, and for a
    calibration event a ``calibration_record`` point too."""
    out: list[Record] = [(DEVICE_EVENT, {"station": e.station, "device": e.device, "kind": e.kind}, {
        "data": json.dumps(dict(e.data), separators=(",", ":"), allow_nan=False), "digest": e.digest,
        "received_ns": e.received_ns}, e.time_ns + e.digest % EVENT_TIME_SPREAD_NS)]
    r = e.calibration
    if r is not None:
        linear = r.fit.kind.value == "linear"
        out.append((CALIBRATION_RECORD, {"station": r.station, "device": r.device, "sensor": r.sensor,
                                         "procedure": r.procedure.value}, {
            "id": r.id, "result": r.result.value, "technician": r.technician, "next_due": r.next_due.isoformat(),
            "fit": r.fit.describe(), "slope": r.fit.slope if linear else None, "offset": r.fit.offset if linear else None,
            "worst_as_found_pct": _f(r.worst_as_found_pct), "worst_as_left_pct": _f(r.worst_as_left_pct),
            "record": r.model_dump_json(by_alias=True)}, to_ns(r.performed)))
    return out


_EVENT_STATION = {"dry_weather_flow": "outfall", "turbidity_contrast": "pair", "storm": "gauge"}
_EVENT_VALUE = {"dry_weather_flow": "peak_gpm", "turbidity_contrast": "max_delta_ntu", "storm": "depth_in"}


def event_records(event: Mapping[str, Any]) -> list[Record]:
    """An alert-engine event (events.jsonl contract of issue 3) → its records."""
    kind = event["kind"]
    if kind in ("inspection_due", "inspection_overdue"):
        # One point per inspection item, at its storm's end (routine items: their due time);
        # the overdue escalation and the recorded inspection update the same point.
        t = to_ns(parse_time(event.get("storm_end") or event["due"]))
        recorded = event.get("closed_at") or event.get("recorded") or ""
        overdue = kind == "inspection_overdue" or bool(event.get("overdue"))
        state = "recorded" if recorded else ("overdue" if overdue else "due")
        return [(INSPECTION, {"site": event["site"], "gauge": event.get("gauge") or "routine"},
                 {"due": event["due"], "state": state, "recorded": recorded, "overdue": int(overdue),
                  "reason": event.get("reason", "storm")}, t)]
    if event.get("status") == "retracted" or not event.get("start"):
        return []
    station = event.get(_EVENT_STATION.get(kind, "station")) or event.get("station") or ""
    start = to_ns(parse_time(event["start"]))
    value = event.get(_EVENT_VALUE.get(kind, "value"))
    text = event.get("text") or f"{kind.replace('_', ' ')} at {station}" + (f": {value}" if value is not None else "")
    out: list[Record] = [(ALERT, {"kind": kind, "station": station}, {
        "open": int(event.get("end") is None), "value": _f(value), "text": text,
        "suppressed": event.get("suppressed") or "", "end": event.get("end") or ""}, start)]
    if kind == "storm":
        end = event.get("end")
        duration_h = (to_ns(parse_time(end)) - start) / 3.6e12 if end else None
        out.append((STORM, {"gauge": station}, {
            "depth_in": _f(value), "duration_h": duration_h, "qualifying": bool(event.get("qualifying")),
            "end": end or "", "open": int(end is None)}, start))
    return out


def incident_record(incident_id: str, kind: str, station: str, opened_ns: int, state: str, by: str = "") -> Record:
    return (INCIDENT, {"kind": kind, "station": station},
            {"incident_id": incident_id, "state": state, "open": int(state != "resolved"), "by": by}, opened_ns)


def _f(v: Any) -> float | None:
    return None if v is None else float(v)
