"""The wire contract, version 1: JSON payloads on ``ms4/<municipality>/<station>/<device>/…``.

readings (QoS 1, not retained)::

    {"schema": "ms4watch.readings/1", "device": "LOG-OF12", "seq": 4711,
     "readings": [{"time": "2026-06-01T12:00:00Z", "sensor": "flow", "quantity": "flow",
                   "value": 3.2, "unit": "gpm", "flags": []}, ...]}

``seq`` is per device and only grows; a message carries one sample cycle or a backlog
batch. A reading may name another ``station`` than the topic's (a logger wired to two
stations). ``value`` may be null only together with the ``sensor_error`` flag.

status (QoS 1, retained; the broker publishes the last will ``{"state": "offline"}``)::

    {"schema": "ms4watch.status/1", "device": "LOG-OF12", "state": "online",
     "time": "...", "agent_version": "0.1.0", "config_version": "3", "uptime_s": 86400,
     "battery_v": 12.6, "signal_dbm": -71, "spool_depth": 0, "clock": "synced",
     "calibrations": [{"sensor": "flow", "performed": "2026-05-01", "due": "2026-08-01"}]}

``calibrations`` (optional; loggers before it simply leave it out) lists every sensor whose
firmware config has a ``calibration:`` block: sensor id, the day it was last calibrated and
the day the next calibration is due (``YYYY-MM-DD``), and ``station`` when the sensor
belongs to another station than the topic's. ``[]`` means no sensor has one.

events (QoS 1): ``{"schema": "ms4watch.event/1", "device": ..., "time": ..., "kind": ..., "data": {...}}``

Decoding translates every validation failure into :class:`ContractError` naming the topic
and the field (``readings[3].unit``).
"""

from __future__ import annotations

import enum
import json
import math

import orjson
from datetime import date, datetime
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (AwareDatetime, BaseModel, ConfigDict, Field, Strict, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from .errors import ContractError, UnitError
from .ids import _ID, check_id
from .timeutil import due_not_before_performed, iso_utc, to_ns
from .units import CANONICAL, Quantity, _identity, canonical_unit, converter

READINGS_SCHEMA = "ms4watch.readings/1"
STATUS_SCHEMA = "ms4watch.status/1"
EVENT_SCHEMA = "ms4watch.event/1"


class QualityFlag(str, enum.Enum):
    """Quality flags a reading may carry (QARTOD-style tests and logger state)."""

    SENSOR_ERROR = "sensor_error"        # driver could not read the sensor (value null)
    RANGE = "range"                      # outside the sensor's valid range
    SPIKE = "spike"
    FLAT_LINE = "flat_line"
    CALIBRATION_OVERDUE = "calibration_overdue"
    CLOCK_UNSYNCED = "clock_unsynced"    # taken while the logger clock was not synchronised
    ESTIMATED = "estimated"
    SIMULATED = "simulated"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _SensorAtStation(_Strict):
    """Something about one sensor, optionally at another station than its logger's topic."""
    sensor: str
    station: str | None = None

    @field_validator("sensor")
    @classmethod
    def _sensor(cls, v: str) -> str:
        return check_id("sensor id", v)

    @field_validator("station")
    @classmethod
    def _station(cls, v: str | None) -> str | None:
        return None if v is None else check_id("station id", v)


class Reading(_SensorAtStation):
    time: AwareDatetime
    sensor: str
    quantity: Quantity
    value: float | None
    unit: str
    flags: list[QualityFlag] = Field(default_factory=list)
    station: str | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _not_bool(cls, v: Any) -> Any:
        if isinstance(v, bool) or isinstance(v, str):
            raise ValueError("value must be a number (or null with sensor_error)")
        return v

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("value must be a finite number")
        return v

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str, info: ValidationInfo) -> str:
        quantity = info.data.get("quantity")
        if quantity is not None:
            try:
                converter(quantity, v)
            except UnitError as e:
                raise ValueError(str(e)) from None
        return v

    @model_validator(mode="after")
    def _null_needs_flag(self) -> "Reading":
        if self.value is None and QualityFlag.SENSOR_ERROR not in self.flags:
            raise ValueError("value may be null only with the sensor_error flag")
        return self


class ReadingsMessage(_Strict):
    schema_: Literal["ms4watch.readings/1"] = Field(default=READINGS_SCHEMA, alias="schema")
    device: str
    seq: int = Field(ge=0)
    readings: list[Reading] = Field(min_length=1)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        return check_id("device id", v)

    def to_json(self) -> bytes:
        return encode_readings(self.device, self.seq, [
            (to_ns(r.time), r.sensor, r.quantity.value, r.value, r.unit, [f.value for f in r.flags], r.station)
            for r in self.readings])


Day = Annotated[date, Strict()]
"""A calendar day on the wire: exactly ``YYYY-MM-DD`` (no time, no timestamp number)."""


class SensorCalibration(_SensorAtStation):
    """One sensor's calibration as its logger reports it in the status message: the firmware
    config's ``calibration:`` block without the correction coefficients. Readings taken on a
    day after ``due`` carry the ``calibration_overdue`` flag."""

    sensor: str
    performed: Day
    due: Day
    station: str | None = None

    @field_validator("due")
    @classmethod
    def _due_after_performed(cls, v: date, info: ValidationInfo) -> date:
        return due_not_before_performed(v, info.data.get("performed"))


class StatusMessage(_Strict):
    schema_: Literal["ms4watch.status/1"] = Field(default=STATUS_SCHEMA, alias="schema")
    device: str
    state: Literal["online", "offline"]
    time: AwareDatetime | None = None
    agent_version: str | None = None
    config_version: str | None = None
    uptime_s: float | None = None
    battery_v: float | None = None
    signal_dbm: float | None = None
    spool_depth: int | None = None
    dropped: int | None = None
    clock: Literal["synced", "unsynced"] | None = None
    calibrations: tuple[SensorCalibration, ...] | None = None
    # The longest the logger stays silent for its station when healthy (its heartbeat) [s];
    # the server judges the station stale after rules.stale_intervals of it. Optional.
    report_interval_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("calibrations")
    @classmethod
    def _one_per_sensor(cls, v: tuple[SensorCalibration, ...] | None) -> tuple[SensorCalibration, ...] | None:
        seen: set[str] = set()
        for c in v or ():
            if c.sensor in seen:
                raise ValueError(f"sensor {c.sensor!r} is listed twice")
            seen.add(c.sensor)
        return v

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True, exclude_none=True).encode()


class EventMessage(_Strict):
    schema_: Literal["ms4watch.event/1"] = Field(default=EVENT_SCHEMA, alias="schema")
    device: str
    time: AwareDatetime
    kind: str
    data: dict[str, Any] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()


CANONICAL_UNIT = {q.value: u for q, u in CANONICAL.items()}


class CanonicalReading(NamedTuple):
    """One reading as the store and the rules see it: UTC ns, canonical unit.

    ``flags`` is a comma-separated string of :class:`QualityFlag` values ("" when clean),
    so it is a plain field in every store.
    """

    time_ns: int
    station: str
    device: str
    sensor: str
    quantity: str
    value: float | None
    unit: str
    flags: str
    seq: int


def encode_readings(device: str, seq: int,
                    rows: list[tuple[int, str, str, float | None, str, list[str], str | None]]) -> bytes:
    """Encode a readings message from plain tuples (the logger's hot path).

    rows: (time_ns, sensor, quantity, value, unit, flags, station_or_None)
    """
    out = []
    for t, sensor, quantity, value, unit, flags, station in rows:
        d: dict[str, Any] = {"time": iso_utc(t), "sensor": sensor, "quantity": quantity,
                             "value": value, "unit": unit, "flags": flags}
        if station:
            d["station"] = station
        out.append(d)
    return json.dumps({"schema": READINGS_SCHEMA, "device": device, "seq": seq, "readings": out},
                      separators=(",", ":")).encode()


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += ("." if path else "") + str(part)
    return path or "payload"


def _contract_error(topic: str, e: ValidationError) -> ContractError:
    """The first validation failure as a :class:`ContractError` naming topic and field."""
    err = e.errors(include_url=False)[0]
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return ContractError(topic, _field_path(tuple(err["loc"])), err["msg"].removeprefix("Value error, ") + more)


def decode_readings(topic: str, payload: bytes | str) -> ReadingsMessage:
    """Parse and validate a readings payload; errors name the topic and the field."""
    try:
        return ReadingsMessage.model_validate_json(payload)
    except ValidationError as e:
        raise _contract_error(topic, e) from None


def decode_status(topic: str, payload: bytes | str) -> StatusMessage:
    """Parse and validate a status payload; errors name the topic and the field
    (``calibrations[1].due``)."""
    try:
        return StatusMessage.model_validate_json(payload)
    except ValidationError as e:
        raise _contract_error(topic, e) from None


def canonicalize(msg: ReadingsMessage, station: str) -> list[CanonicalReading]:
    """Convert every reading of a message into its canonical unit (the boundary)."""
    out = []
    for r in msg.readings:
        q = r.quantity
        value = None if r.value is None else converter(q, r.unit)(r.value)
        out.append(CanonicalReading(
            to_ns(r.time), r.station or station, msg.device, r.sensor, q.value, value,
            canonical_unit(q), ",".join(f.value for f in r.flags), msg.seq))
    return out


_QUANTITIES = {q.value: q for q in Quantity}
_FLAGS = frozenset(f.value for f in QualityFlag)
_READING_KEYS = frozenset(("time", "sensor", "quantity", "value", "unit", "flags", "station"))
_ID_RE = _ID


def decode_canonical(topic: str, station: str, payload: bytes | str) -> tuple[str, int, list[CanonicalReading]]:
    """Decode a readings payload straight into canonical readings: ``(device, seq, readings)``.

    The ingest hot path. It accepts exactly what :func:`decode_readings` accepts — anything
    unusual is handed to the pydantic model, which raises the precise :class:`ContractError`
    (topic and field) — but a well-formed message costs a few µs per reading instead of ~18.
    """
    try:
        return _fast_canonical(station, orjson.loads(payload))
    except _Slow:
        msg = decode_readings(topic, payload)   # raises ContractError with the field, or validates
        return msg.device, msg.seq, canonicalize(msg, station)
    except ValueError:                         # not JSON at all: let pydantic word the error
        decode_readings(topic, payload)
        raise


class _Slow(Exception):
    """The fast path met something it does not decide on; the model will."""


# Bounded caches of the fast path: a logger repeats its ids, units and (within a message)
# its sample times, so each is validated or converted once, then looked up. They also hand
# back one shared object per id and time, so readings waiting to be stored do not each
# carry their own copies of the same strings (about half their memory).
_TIME_NS: dict[str, int] = {}
_GOOD_IDS: dict[str, str] = {}
_UNIT_MAP: dict[tuple[str, str], tuple[Any, str, str]] = {}
_CACHE_MAX = 65536
_new_tuple = tuple.__new__


def _time_ns(t: Any) -> int:
    """Epoch ns of an ISO 8601 time string with an offset (``Z`` accepted)."""
    if type(t) is not str:
        raise _Slow
    ns = _TIME_NS.get(t)
    if ns is None:
        try:
            when = datetime.fromisoformat(t[:-1] + "+00:00" if t.endswith("Z") else t)
        except ValueError:
            raise _Slow from None
        if when.tzinfo is None:
            raise _Slow
        ns = to_ns(when)
        if len(_TIME_NS) >= _CACHE_MAX:
            _TIME_NS.clear()
        _TIME_NS[t] = ns
    return ns


def _good_id(s: Any) -> str:
    """The shared copy of a valid id; raises _Slow for anything else."""
    if type(s) is not str:
        raise _Slow
    known = _GOOD_IDS.get(s)
    if known is None:
        if not _ID_RE.match(s):
            raise _Slow
        if len(_GOOD_IDS) >= _CACHE_MAX:
            _GOOD_IDS.clear()
        known = _GOOD_IDS[s] = s
    return known


def _unit_map(q: Any, unit: Any) -> tuple[Any, str, str]:
    """(converter or None when already canonical, canonical unit, the quantity's shared string)."""
    if type(q) is not str or type(unit) is not str:
        raise _Slow
    hit = _UNIT_MAP.get((q, unit))
    if hit is None:
        if q not in _QUANTITIES:
            raise _Slow
        try:
            conv = converter(q, unit)
        except UnitError:
            raise _Slow from None
        if len(_UNIT_MAP) >= 4096:
            _UNIT_MAP.clear()
        hit = _UNIT_MAP[q, unit] = (None if conv is _identity else conv, CANONICAL_UNIT[q], _QUANTITIES[q].value)
    return hit


def _fast_canonical(station: str, d: Any) -> tuple[str, int, list[CanonicalReading]]:
    if (type(d) is not dict or d.keys() != {"schema", "device", "seq", "readings"} or d["schema"] != READINGS_SCHEMA
            or type(d["seq"]) is not int or d["seq"] < 0
            or type(d["readings"]) is not list or not d["readings"]):
        raise _Slow
    device, seq = _good_id(d["device"]), d["seq"]
    out: list[CanonicalReading] = []
    append = out.append
    isfinite = math.isfinite
    for r in d["readings"]:
        if type(r) is not dict:
            raise _Slow
        try:
            if len(r) == 6 and "station" not in r:     # the usual shape: every key but station
                t, sensor, q, value, unit, flags = r["time"], r["sensor"], r["quantity"], r["value"], r["unit"], r["flags"]
                st = station
            else:
                if len(r) < 5 or not r.keys() <= _READING_KEYS:
                    raise _Slow
                t, sensor, q, value, unit = r["time"], r["sensor"], r["quantity"], r["value"], r["unit"]
                flags = r.get("flags", ())
                st = r.get("station")
                st = station if st is None else _good_id(st)
        except KeyError:
            raise _Slow from None
        conv, cu, q = _unit_map(q, unit)
        sensor = _good_id(sensor)
        if flags:
            if type(flags) is not list or not all(type(f) is str and f in _FLAGS for f in flags):
                raise _Slow
            joined = ",".join(flags)
        elif flags == [] or flags == ():
            joined = ""
        else:
            raise _Slow
        tv = type(value)
        if tv is float:
            if not isfinite(value):
                raise _Slow
        elif tv is int:
            value = float(value)
        elif value is None:
            if "sensor_error" not in flags:
                raise _Slow
        else:
            raise _Slow
        if conv is not None and value is not None:
            value = conv(value)
        # tuple.__new__ directly: the NamedTuple's own constructor is a Python function (~0.5 µs)
        append(_new_tuple(CanonicalReading, (_time_ns(t), st, device, sensor, q, value, cu, joined, seq)))
    return device, seq, out


def status_payload(device: str, state: str, **fields: Any) -> bytes:
    return StatusMessage(device=device, state=state, **fields).to_json()


def utc_now_iso(now: datetime) -> str:
    return now.isoformat().replace("+00:00", "Z")
