"""The wire contract, version 1: JSON payloads on ``ms4/<municipality>/<station>/<device>/…``.

readings (QoS 1, not retained)::

    {"schema": "ms4watch.readings/1", "device": "LOG-OF12", "epoch": 917, "seq": 4711,
     "readings": [{"time": "2026-06-01T12:00:00Z", "sensor": "flow", "quantity": "flow",
                   "value": 3.2, "unit": "gpm", "flags": []}, ...]}

``seq`` is per device and only grows within an ``epoch``: the number the logger drew when
it created its spool, kept in the spool, so a logger whose spool is lost (reflashed, new SD
card, replaced) starts a new epoch and its restarted sequence numbers are not taken for
ones already stored. ``epoch`` is optional; a message without it (a logger from before
epochs) is epoch 0. A message carries one sample cycle or a backlog batch. A reading may
name another ``station`` than the topic's (a logger wired to two stations). ``value`` may
be null only together with the ``sensor_error`` flag.

The contract is strict, and the bounds are those of :mod:`.bounds`: ``schema`` is required;
``epoch`` and ``seq`` are JSON integers (not ``"7"``, ``7.0`` or ``true``), 0 ≤ n < 2^63;
ids are whole matches of ``[A-Za-z0-9][A-Za-z0-9_.-]{0,63}``; a time is exactly
``YYYY-MM-DDTHH:MM:SS[.ffffff]`` then ``Z`` or ``±HH:MM`` (RFC 3339), from 2000-01-01 to a
day after ingest received the message; a value is finite, also once converted to the
canonical unit. The pydantic models below are the contract's single definition:
:func:`decode_canonical`, the ingest hot path, reads what it accepts (names, schema, bounds,
id patterns, enumerations) from :class:`ReadingsMessage`'s fields when this module is
imported (:mod:`.wire_fast`), and accepts exactly what the model accepts (a property test
checks it). A contract change is an edit here; one the fast path cannot follow stops the
import with :class:`~.wire_fast.FastPathError` naming the field.

status (QoS 1, retained; the broker publishes the last will ``{"state": "offline"}``)::

    {"schema": "ms4watch.status/1", "device": "LOG-OF12", "state": "online",
     "time": "...", "agent_version": "0.1.0", "config_version": "3", "uptime_s": 86400,
     "battery_v": 12.6, "signal_dbm": -71, "spool_depth": 0, "clock": "synced",
     "calibrations": [{"sensor": "flow", "performed": "2026-05-01", "due": "2026-08-01"}]}

``calibrations`` (optional; loggers before it simply leave it out) lists every sensor whose
firmware config has a ``calibration:`` block: sensor id, the day it was last calibrated and
the day the next calibration is due (``YYYY-MM-DD``), and ``station`` when the sensor
belongs to another station than the topic's. ``[]`` means no sensor has one.

events (QoS 1, not retained)::

    {"schema": "ms4watch.event/1", "device": "LOG-OF12", "time": "2026-06-01T14:03:12.482Z",
     "kind": "calibration", "data": {...}}

Things that happen on a logger, one message each, from its spool like readings (nothing
lost offline). ``kind`` is an id; ``data`` a JSON object (at most 64 KiB encoded). Ingest
stores every valid event — the server's record of what loggers did — keyed by (device,
time, kind, payload digest), so a redelivery is stored once. Kinds the agent sends:

* ``calibration``: ``data`` is a calibration record (``ms4watch.calibration/1``,
  :class:`~.calibration.CalibrationRecord`: who, when, standards and lots, as found, as
  left, coefficients, result, next due) written by ``ms4watch calibrate``; ingest refuses
  one that breaks that contract (named field: ``data.as_found[2].reading``) and hands valid
  ones to the calibration history as well. A dedicated channel was not needed: records are
  rare, small, and ordered with the logger's other events.
* ``sample_taken`` / ``sample_failed``: an autosampler bottle record (issue 12);
* ``cmd_ack``, ``config_applied``, ``config_rejected``: answers to ``…/cmd`` and ``…/config``;
* ``sensor_paused`` / ``sensor_resumed``: a sensor taken for a calibration and given back;
* ``clock_jump``: the logger's wall clock jumped.

Decoding translates every validation failure into :class:`ContractError` naming the topic
and the field (``readings[3].unit``).
"""

from __future__ import annotations

import enum
import json
import math

import orjson
from datetime import date, datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (AwareDatetime, BaseModel, ConfigDict, Field, Strict, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from .bounds import DEFAULT_WINDOW, STORE_MAX_NS, TimeWindow
from .calibration import CALIBRATION_EVENT, CalibrationRecord
from .canonical import CanonicalReading as CanonicalReading, DecodedReadings as DecodedReadings  # their old home
from .errors import ContractError, UnitError
from .timeutil import due_not_before_performed, iso_utc, parse_wire_time, to_ns
from .units import CANONICAL, Quantity, canonical_unit, converter
from .wire_fast import FastDecoder, Slow
from .wiretypes import Count, DeviceIdText, DeviceEventKindText, ReadingTime, SensorIdText, StationIdText

READINGS_SCHEMA = "ms4watch.readings/1"
STATUS_SCHEMA: Final = "ms4watch.status/1"
EVENT_SCHEMA: Final = "ms4watch.event/1"


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
    # defer_build: a model's validator is built when first used, not at import (ingest decodes
    # readings without these models and starts faster for it).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Reading(_Strict):
    """One reading. The fast decoder (:mod:`.wire_fast`) reads its accepted values from these
    fields; a validator added here must be repeated there (it refuses to build otherwise)."""
    time: ReadingTime
    sensor: SensorIdText
    quantity: Quantity
    unit: str
    value: float | None     # after quantity and unit: it is checked in the canonical unit too
    flags: list[QualityFlag] = Field(default_factory=list)
    station: StationIdText | None = None   # when not the topic's (a logger wired to two stations)

    @field_validator("value", mode="before")
    @classmethod
    def _not_bool(cls, v: Any) -> Any:
        if isinstance(v, bool) or isinstance(v, str):
            raise ValueError("value must be a number (or null with sensor_error)")
        return v

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float | None, info: ValidationInfo) -> float | None:
        if v is None:
            return v
        if not math.isfinite(v):
            raise ValueError("value must be a finite number")
        quantity, unit = info.data.get("quantity"), info.data.get("unit")
        if quantity is not None and unit is not None and not math.isfinite(converter(quantity, unit)(v)):
            raise ValueError(f"value {v!r} {unit} is not finite in {canonical_unit(quantity)}")
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
    """A readings message: the single definition of what one may carry (see :class:`Reading`)."""
    schema_: Literal["ms4watch.readings/1"] = Field(alias="schema")
    device: DeviceIdText
    epoch: Count = 0
    seq: Count
    readings: list[Reading] = Field(min_length=1)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_json(self) -> bytes:
        return encode_readings(self.device, self.seq, [
            (to_ns(r.time), r.sensor, r.quantity.value, r.value, r.unit, [f.value for f in r.flags], r.station)
            for r in self.readings], epoch=self.epoch)


Day = Annotated[date, Strict()]
"""A calendar day on the wire: exactly ``YYYY-MM-DD`` (no time, no timestamp number)."""


class SensorCalibration(_Strict):
    """One sensor's calibration as its logger reports it in the status message: the firmware
    config's ``calibration:`` block without the correction coefficients. Readings taken on a
    day after ``due`` carry the ``calibration_overdue`` flag."""

    sensor: SensorIdText
    performed: Day
    due: Day
    station: StationIdText | None = None

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


EVENT_DATA_MAX_BYTES = 64 * 1024


class DeviceEventMessage(_Strict):
    schema_: Literal["ms4watch.event/1"] = Field(default=EVENT_SCHEMA, alias="schema")
    device: DeviceIdText
    time: AwareDatetime
    kind: DeviceEventKindText
    data: dict[str, Any] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("time", mode="before")
    @classmethod
    def _time(cls, v: Any, info: ValidationInfo) -> Any:
        t = v if isinstance(v, datetime) else parse_wire_time(v)
        ctx = info.context or {}
        window: TimeWindow = ctx.get("window", DEFAULT_WINDOW)
        received = ctx.get("received_ns")
        latest = STORE_MAX_NS if received is None else min(STORE_MAX_NS, received + window.future_ns)
        if not window.earliest_ns <= to_ns(t) <= latest:
            raise ValueError(f"time {v} is outside what is taken (from 2000-01-01 to a day after it was received)")
        return t

    @field_validator("data")
    @classmethod
    def _data(cls, v: dict[str, Any]) -> dict[str, Any]:
        if len(orjson.dumps(v)) > EVENT_DATA_MAX_BYTES:
            raise ValueError(f"data is over {EVENT_DATA_MAX_BYTES // 1024} KiB")
        return v

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()


def decode_event(topic: str, payload: bytes | str, received_ns: int | None = None,
                 window: TimeWindow = DEFAULT_WINDOW) -> DeviceEventMessage:
    """Parse and validate an event; a ``calibration`` event's ``data`` must be a calibration
    record. Errors name the topic and the field (``data.as_found[2].reading``)."""
    try:
        msg = DeviceEventMessage.model_validate_json(payload, context={"received_ns": received_ns, "window": window})
    except ValidationError as e:
        raise _contract_error(topic, e) from None
    if msg.kind == CALIBRATION_EVENT:
        try:
            CalibrationRecord.model_validate(msg.data)
        except ValidationError as e:
            err = _contract_error(topic, e)
            raise ContractError(topic, "data." + err.field if err.field != "payload" else "data",
                                str(err).split(": ", 2)[-1]) from None
    return msg


CANONICAL_UNIT = {q.value: u for q, u in CANONICAL.items()}


def encode_readings(device: str, seq: int,
                    rows: list[tuple[int, str, str, float | None, str, list[str], str | None]],
                    epoch: int = 0) -> bytes:
    """Encode a readings message from plain tuples (the logger's hot path).

    rows: (time_ns, sensor, quantity, value, unit, flags, station_or_None); ``epoch`` 0 is
    left out (a message without one is epoch 0).
    """
    out = []
    for t, sensor, quantity, value, unit, flags, station in rows:
        d: dict[str, Any] = {"time": iso_utc(t), "sensor": sensor, "quantity": quantity,
                             "value": value, "unit": unit, "flags": flags}
        if station:
            d["station"] = station
        out.append(d)
    head: dict[str, Any] = {"schema": READINGS_SCHEMA, "device": device}
    if epoch:
        head["epoch"] = epoch
    return json.dumps({**head, "seq": seq, "readings": out}, separators=(",", ":")).encode()


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


def decode_readings(topic: str, payload: bytes | str, received_ns: int | None = None,
                    window: TimeWindow = DEFAULT_WINDOW) -> ReadingsMessage:
    """Parse and validate a readings payload; errors name the topic and the field.

    received_ns : when the message was received [epoch ns]; reading times may be at most
        ``window.future_ns`` after it. None: only the absolute bounds apply.
    """
    try:
        return ReadingsMessage.model_validate_json(payload, context={"received_ns": received_ns, "window": window})
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


FAST_READINGS = FastDecoder(ReadingsMessage)
"""The ingest hot path's decoder, derived from :class:`ReadingsMessage` when this module is
imported (:mod:`.wire_fast`)."""
_fast_decide = FAST_READINGS.decide


def decode_canonical(topic: str, station: str, payload: bytes | str, received_ns: int | None = None,
                     window: TimeWindow = DEFAULT_WINDOW) -> DecodedReadings:
    """Decode a readings payload straight into canonical readings: ``(device, seq, readings, epoch)``.

    The ingest hot path. It accepts exactly what :func:`decode_readings` accepts — its tables
    are read from the model (:data:`FAST_READINGS`), and anything unusual is handed to the
    model, which raises the precise :class:`ContractError` (topic and field) — but a
    well-formed message costs a few µs per reading instead of ~18.
    ``received_ns`` and ``window``: as for :func:`decode_readings`.
    """
    try:
        d = orjson.loads(payload)
    except ValueError:     # not JSON to orjson (or a number it cannot hold): the model decides
        pass
    else:
        latest = STORE_MAX_NS if received_ns is None else min(STORE_MAX_NS, received_ns + window.future_ns)
        try:
            return _fast_decide(station, d, window.earliest_ns, latest)   # window.limits(), inlined
        except Slow:
            pass
    msg = decode_readings(topic, payload, received_ns, window)   # raises ContractError naming the field
    return DecodedReadings(msg.device, msg.seq, canonicalize(msg, station), msg.epoch)


def encode_event(device: str, t_ns: int, kind: str, data: dict[str, Any]) -> bytes:
    """An event message (the logger's hot path: plain JSON, no model)."""
    return json.dumps({"schema": EVENT_SCHEMA, "device": device, "time": iso_utc(t_ns), "kind": kind, "data": data},
                      separators=(",", ":"), allow_nan=False).encode()


def status_payload(device: str, state: Literal["online", "offline"], **fields: Any) -> bytes:
    return StatusMessage(device=device, state=state, **fields).to_json()


def utc_now_iso(now: datetime) -> str:
    return now.isoformat().replace("+00:00", "Z")
