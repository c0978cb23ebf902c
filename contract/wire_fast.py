"""The ingest hot path's decoder of readings messages, derived from the pydantic model.

The model (:class:`~.wire.ReadingsMessage` and its :class:`~.wire.Reading`) is the contract's
single definition. :class:`FastDecoder` reads from its fields, when it is built (at import),
everything the fast path accepts: field names (aliases) and which are required, the schema
literal, the bounds of ``seq``/``epoch`` (``Ge``/``Gt``/``Le``/``Lt``), the number of readings
(``MinLen``/``MaxLen``), the id patterns (:class:`~.ids.IdRule`), the quantity and flag
enumerations, and which field is the reading time (:func:`~.wiretypes.reading_time`). The
checks that are code, not values — a value is finite also in the canonical unit, the unit
converts, null only with ``sensor_error`` — are the model's validators, which the fast path
repeats; it knows them by name (``MIRRORED``).

A contract change the fast path can follow is one edit, to the model. One it cannot (a new
validator, a constraint it has no reading of, an id field without an :class:`~.ids.IdRule`, a
new required field) raises :class:`FastPathError` naming the field when the decoder is built,
so the two decoders never silently differ; a new *optional* field is simply left to the model
(a message carrying it is decided by the model). Whatever the fast path does not decide
itself raises :class:`Slow`, and the caller hands the message to the model, which raises the
precise error; so the fast path may be stricter than the model, never looser
(``tests/contract/test_wire_property.py``, ``test_wire_fast.py``).
"""

from __future__ import annotations

import enum
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types as at
from pydantic import BaseModel, PlainValidator, Strict
from pydantic.fields import FieldInfo

from .canonical import CanonicalReading, DecodedReadings
from .errors import UnitError
from .ids import IdRule
from .timeutil import parse_wire_time, to_ns
from .units import CANONICAL, Quantity, _identity, converter
from .wiretypes import reading_time


class FastPathError(TypeError):
    """The model holds something the fast path cannot derive its decisions from."""


class Slow(Exception):
    """The fast path met something it does not decide on; the model will."""


MIRRORED: frozenset[str] = frozenset({
    "ms4watch.contract.wire.Reading._not_bool",         # value: a number or null, not a bool or a string
    "ms4watch.contract.wire.Reading._finite",           # value: finite, also in the canonical unit
    "ms4watch.contract.wire.Reading._unit",             # unit: converts to the quantity's canonical unit
    "ms4watch.contract.wire.Reading._null_needs_flag",  # value null only with sensor_error
})
"""The model's validators the fast path repeats in code (module and qualified name)."""

_CONFIG_UNSUPPORTED = ("strict", "str_strip_whitespace", "str_to_lower", "str_to_upper", "str_min_length",
                       "str_max_length", "coerce_numbers_to_str", "use_enum_values", "validate_default")

_NOT_GIVEN: Any = object()


@dataclass(frozen=True)
class ReadingsSpec:
    """What the fast path accepts, as read from the model. Bounds are inclusive, None: none."""

    schemas: frozenset[str]
    message_keys: frozenset[str]           # every field of the message the model knows (by alias)
    key: dict[str, str]                    # model field name -> key on the wire
    epoch_default: Any                     # _NOT_GIVEN when epoch is required
    seq: tuple[float, float]
    epoch: tuple[float, float]
    readings_len: tuple[int, int | None]
    device: IdRule
    reading_keys: frozenset[str]
    reading_required: frozenset[str]
    sensor: IdRule
    station: IdRule
    quantities: frozenset[str]
    flags: frozenset[str]
    flags_required: bool
    value_nullable: bool


# -- reading the model ---------------------------------------------------------------------------
def _where(model: type[BaseModel], name: str) -> str:
    return f"{model.__name__}.{name}"


def _unwrap(annotation: Any) -> tuple[Any, list[Any], bool]:
    """(type, Annotated metadata, whether None is allowed) of ``T``, ``Annotated[T, ...]`` or
    ``... | None``."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise FastPathError(f"a union of {args}")
        annotation = args[0]
    metadata: list[Any] = []
    if typing.get_origin(annotation) is typing.Annotated:
        annotation, *metadata = typing.get_args(annotation)
    return annotation, metadata, nullable


def _field(model: type[BaseModel], name: str) -> tuple[FieldInfo, Any, list[Any], bool]:
    f = model.model_fields.get(name)
    if f is None:
        raise FastPathError(f"{_where(model, name)}: the fast path decodes this field and the model has none")
    try:
        annotation, inner, nullable = _unwrap(f.annotation)
    except FastPathError as e:
        raise FastPathError(f"{_where(model, name)}: the fast path cannot decode {e}") from None
    return f, annotation, list(f.metadata) + inner, nullable


def _only(model: type[BaseModel], name: str, metadata: list[Any], allowed: tuple[type, ...]) -> None:
    for m in metadata:
        if not isinstance(m, allowed):
            raise FastPathError(f"{_where(model, name)}: the fast path has no reading of the constraint {m!r}")


def _interval(model: type[BaseModel], name: str) -> tuple[float, float]:
    f, annotation, metadata, nullable = _field(model, name)
    if annotation is not int or nullable:
        raise FastPathError(f"{_where(model, name)}: the fast path decodes an int here, the model has {f.annotation}")
    _only(model, name, metadata, (Strict, at.Ge, at.Gt, at.Le, at.Lt))
    lo, hi = -math.inf, math.inf
    for m in metadata:
        c: Any = m                              # annotated_types bounds are typed as comparable, ours are ints
        if isinstance(m, at.Ge):
            lo = max(lo, c.ge)
        elif isinstance(m, at.Gt):
            lo = max(lo, c.gt + 1)
        elif isinstance(m, at.Le):
            hi = min(hi, c.le)
        elif isinstance(m, at.Lt):
            hi = min(hi, c.lt - 1)
    return lo, hi


def _id_rule(model: type[BaseModel], name: str, nullable_ok: bool = False) -> IdRule:
    f, annotation, metadata, nullable = _field(model, name)
    rules = [m for m in metadata if isinstance(m, IdRule)]
    if annotation is not str or len(rules) != 1 or len(metadata) != 1 or (nullable and not nullable_ok):
        raise FastPathError(f"{_where(model, name)}: the fast path decodes an id here (Annotated[str, IdRule(...)]), "
                            f"the model has {f.annotation}")
    return rules[0]


def _choices(model: type[BaseModel], name: str, annotation: Any) -> frozenset[str]:
    """The values of an enumeration of strings or a Literal of strings."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation]
    elif typing.get_origin(annotation) is Literal:
        values = list(typing.get_args(annotation))
    else:
        values = []
    if not values or not all(type(v) is str for v in values):
        raise FastPathError(f"{_where(model, name)}: the fast path decodes an enumeration of strings here, "
                            f"the model has {annotation}")
    return frozenset(values)


def _check_validators(model: type[BaseModel]) -> None:
    decorators = model.__pydantic_decorators__
    for kind in ("validators", "field_validators", "root_validators", "model_validators"):
        for name, d in getattr(decorators, kind).items():
            func = getattr(d.func, "__func__", d.func)
            if f"{func.__module__}.{func.__qualname__}" not in MIRRORED:
                raise FastPathError(f"{_where(model, name)}: a validator the fast path does not repeat "
                                    f"(add its check to wire_fast and its name to MIRRORED)")
    for key in _CONFIG_UNSUPPORTED:
        if model.model_config.get(key):
            raise FastPathError(f"{model.__name__}.model_config {key}: the fast path does not apply it")


def _keys(model: type[BaseModel], known: set[str]) -> tuple[dict[str, str], frozenset[str]]:
    """Wire key of every field; a required field the fast path does not know is refused."""
    for name, f in model.model_fields.items():
        if name not in known and f.is_required():
            raise FastPathError(f"{_where(model, name)}: a required field the fast path does not decode")
    return {name: f.alias or name for name, f in model.model_fields.items()}, \
        frozenset(f.alias or n for n, f in model.model_fields.items())


MESSAGE_FIELDS = {"schema_", "device", "epoch", "seq", "readings"}
READING_FIELDS = {"time", "sensor", "quantity", "value", "unit", "flags", "station"}


def derive(model: type[BaseModel]) -> tuple[ReadingsSpec, type[BaseModel]]:
    """The fast path's tables, read from a readings message model (and its reading model)."""
    _check_validators(model)
    key, message_keys = _keys(model, MESSAGE_FIELDS)
    f, annotation, metadata, _ = _field(model, "schema_")
    schemas = _choices(model, "schema_", annotation)
    if not f.is_required():
        raise FastPathError(f"{_where(model, 'schema_')}: the fast path decodes a required schema")
    _only(model, "schema_", metadata, ())
    for name in MESSAGE_FIELDS:
        _field(model, name)
    epoch_field = model.model_fields["epoch"]
    epoch_default = _NOT_GIVEN if epoch_field.is_required() else epoch_field.default
    f, annotation, metadata, nullable = _field(model, "readings")
    item = typing.get_args(annotation)[0] if typing.get_origin(annotation) is list else None
    if not (isinstance(item, type) and issubclass(item, BaseModel)) or nullable or not f.is_required():
        raise FastPathError(f"{_where(model, 'readings')}: the fast path decodes a required list of readings, "
                            f"the model has {f.annotation}")
    _only(model, "readings", metadata, (at.MinLen, at.MaxLen))
    low = max([m.min_length for m in metadata if isinstance(m, at.MinLen)], default=0)
    high = min([m.max_length for m in metadata if isinstance(m, at.MaxLen)], default=None)
    reading = item

    _check_validators(reading)
    rkey, reading_keys = _keys(reading, READING_FIELDS)
    key.update({f"reading.{n}": k for n, k in rkey.items()})
    required = frozenset(rkey[n] for n, f in reading.model_fields.items() if f.is_required())
    for name in READING_FIELDS:
        _field(reading, name)
    for name in ("time", "sensor", "quantity", "value", "unit"):
        if not reading.model_fields[name].is_required():
            raise FastPathError(f"{_where(reading, name)}: the fast path decodes a required field here")
    f, annotation, metadata, _ = _field(reading, "time")
    if not (len(metadata) == 1 and isinstance(metadata[0], PlainValidator) and metadata[0].func is reading_time):
        raise FastPathError(f"{_where(reading, 'time')}: the fast path decodes a ReadingTime here, the model has "
                            f"{f.annotation}")
    f, annotation, metadata, _ = _field(reading, "quantity")
    quantities = _choices(reading, "quantity", annotation)
    _only(reading, "quantity", metadata, ())
    if not quantities <= {q.value for q in Quantity}:
        raise FastPathError(f"{_where(reading, 'quantity')}: {sorted(quantities - {q.value for q in Quantity})} "
                            "have no canonical unit")
    f, annotation, metadata, _ = _field(reading, "unit")
    if annotation is not str:
        raise FastPathError(f"{_where(reading, 'unit')}: the fast path decodes a unit string, the model has "
                            f"{f.annotation}")
    _only(reading, "unit", metadata, ())
    f, annotation, metadata, value_nullable = _field(reading, "value")
    if annotation is not float:
        raise FastPathError(f"{_where(reading, 'value')}: the fast path decodes a float here, the model has "
                            f"{f.annotation}")
    _only(reading, "value", metadata, ())
    f, annotation, metadata, nullable = _field(reading, "flags")
    if typing.get_origin(annotation) is not list or nullable or (not f.is_required() and f.get_default(
            call_default_factory=True) != []):
        raise FastPathError(f"{_where(reading, 'flags')}: the fast path decodes a list of flags (default []), "
                            f"the model has {f.annotation}")
    _only(reading, "flags", metadata, ())
    flags = _choices(reading, "flags", typing.get_args(annotation)[0])
    f = reading.model_fields["station"]
    if f.is_required() or f.default is not None:
        raise FastPathError(f"{_where(reading, 'station')}: the fast path decodes an optional station (default None)")
    return ReadingsSpec(
        schemas=schemas, message_keys=message_keys, key=key, epoch_default=epoch_default,
        seq=_interval(model, "seq"),
        epoch=_interval(model, "epoch"),
        readings_len=(low, high), device=_id_rule(model, "device"),
        reading_keys=reading_keys, reading_required=required, sensor=_id_rule(reading, "sensor"),
        station=_id_rule(reading, "station", nullable_ok=True), quantities=quantities, flags=flags,
        flags_required=reading.model_fields["flags"].is_required(),
        value_nullable=value_nullable), reading


# -- the decoder ---------------------------------------------------------------------------------
# Bounded caches: a logger repeats its ids, units and (within a message) its sample times, so
# each is validated or converted once, then looked up. They also hand back one shared object
# per id and time, so readings waiting to be stored do not each carry their own copies of the
# same strings (about half their memory). The id and unit caches belong to one decoder (what
# they hold was checked against its model); times are the wire's RFC 3339 form for all.
_TIME_NS: dict[str, int] = {}
_CACHE_MAX = 65536
_new_tuple = tuple.__new__
_NO_TIME = object()      # what no reading's time is (the fast path's "no previous time")
CANONICAL_UNIT = {q.value: u for q, u in CANONICAL.items()}
SENSOR_ERROR = "sensor_error"   # the flag that lets a value be null (``Reading._null_needs_flag``)


def _time_ns(t: Any) -> int:
    """Epoch ns of a time in the wire's RFC 3339 form (:func:`~.timeutil.parse_wire_time`)."""
    if type(t) is not str:
        raise Slow
    ns = _TIME_NS.get(t)
    if ns is None:
        try:
            ns = to_ns(parse_wire_time(t))
        except ValueError:
            raise Slow from None
        if len(_TIME_NS) >= _CACHE_MAX:
            _TIME_NS.clear()
        _TIME_NS[t] = ns
    return ns


def _id_checker(rule: IdRule) -> Callable[[Any], str]:
    fullmatch = rule.pattern.fullmatch
    good: dict[str, str] = {}

    def good_id(s: Any) -> str:
        """The shared copy of a valid id; raises Slow for anything else."""
        if type(s) is not str:
            raise Slow
        known = good.get(s)
        if known is None:
            if not fullmatch(s):
                raise Slow
            if len(good) >= _CACHE_MAX:
                good.clear()
            known = good[s] = s
        return known
    return good_id


def _unit_map(quantities: frozenset[str]) -> Callable[[Any, Any], tuple[Any, str, str]]:
    shared = {q: q for q in quantities}
    units: dict[tuple[str, str], tuple[Any, str, str]] = {}

    def unit_map(q: Any, unit: Any) -> tuple[Any, str, str]:
        """(converter or None when already canonical, canonical unit, the quantity's shared string)."""
        if type(q) is not str or type(unit) is not str:
            raise Slow
        hit = units.get((q, unit))
        if hit is None:
            if q not in shared:
                raise Slow
            try:
                conv = converter(q, unit)
            except UnitError:
                raise Slow from None
            if len(units) >= 4096:
                units.clear()
            hit = units[q, unit] = (None if conv is _identity else conv, CANONICAL_UNIT[q], shared[q])
        return hit
    return unit_map


Decide = Callable[[str, Any, int, int], DecodedReadings]


def compile_spec(s: ReadingsSpec) -> Decide:
    """The fast path over a spec: ``decide(station, parsed_json, earliest_ns, latest_ns)``."""
    k_schema, k_device, k_seq, k_readings = (s.key[n] for n in ("schema_", "device", "seq", "readings"))
    k_epoch = s.key["epoch"]
    k_time, k_sensor, k_quantity, k_value, k_unit, k_flags, k_station = (
        s.key[f"reading.{n}"] for n in ("time", "sensor", "quantity", "value", "unit", "flags", "station"))
    known = {s.key[n] for n in MESSAGE_FIELDS}
    required = known - {k_epoch} if s.epoch_default is not _NOT_GIVEN else known
    shape_plain = frozenset(required) if s.epoch_default is not _NOT_GIVEN else frozenset({"\0never"})
    shape_epoch = frozenset(required | {k_epoch})
    epoch_default = s.epoch_default
    epoch_lo, epoch_hi = s.epoch
    seq_lo, seq_hi = s.seq
    n_lo, n_hi = s.readings_len[0], (math.inf if s.readings_len[1] is None else s.readings_len[1])
    schemas = s.schemas
    reading_known = frozenset(s.key[f"reading.{n}"] for n in READING_FIELDS)
    usual = reading_known - {k_station}          # the usual reading: every key but station
    n_usual = len(usual)
    n_required = len(s.reading_required)
    flags_required = s.flags_required
    allowed_flags = s.flags
    nullable = s.value_nullable
    device_id, sensor_id, station_id = _id_checker(s.device), _id_checker(s.sensor), _id_checker(s.station)
    unit_map = _unit_map(s.quantities)
    isfinite = math.isfinite

    def decide(station: str, d: Any, earliest_ns: int, latest_ns: int) -> DecodedReadings:
        """The usual message, decided here; anything else raises Slow. Reading times must lie in
        [earliest_ns, latest_ns] (:meth:`~.bounds.TimeWindow.limits`)."""
        if type(d) is not dict:
            raise Slow
        keys = d.keys()
        if keys == shape_plain:
            epoch = epoch_default
        elif keys == shape_epoch:
            epoch = d[k_epoch]
            if type(epoch) is not int or not epoch_lo <= epoch <= epoch_hi:
                raise Slow
        else:
            raise Slow
        seq = d[k_seq]
        schema = d[k_schema]
        rs = d[k_readings]
        if (type(schema) is not str or schema not in schemas or type(seq) is not int or not seq_lo <= seq <= seq_hi
                or type(rs) is not list or not n_lo <= len(rs) <= n_hi):
            raise Slow
        device = device_id(d[k_device])
        out: list[CanonicalReading] = []
        append = out.append
        last_t: Any = _NO_TIME
        ns = 0
        for r in rs:
            if type(r) is not dict:
                raise Slow
            try:
                if len(r) == n_usual and k_station not in r:
                    t, sensor, q, value, unit = r[k_time], r[k_sensor], r[k_quantity], r[k_value], r[k_unit]
                    flags = r[k_flags]
                    st = station
                else:
                    if len(r) < n_required or not r.keys() <= reading_known:
                        raise Slow
                    t, sensor, q, value, unit = r[k_time], r[k_sensor], r[k_quantity], r[k_value], r[k_unit]
                    flags = r[k_flags] if flags_required else r.get(k_flags, ())
                    given = r.get(k_station)
                    st = station if given is None else station_id(given)
            except KeyError:
                raise Slow from None
            conv, cu, q = unit_map(q, unit)
            sensor = sensor_id(sensor)
            if flags:
                if type(flags) is not list or not all(type(f) is str and f in allowed_flags for f in flags):
                    raise Slow
                joined = ",".join(flags)
            elif flags == [] or flags == ():
                joined = ""
            else:
                raise Slow
            tv = type(value)
            if tv is float:
                if not isfinite(value):
                    raise Slow
            elif tv is int:
                value = float(value)
            elif value is None:
                if not nullable or SENSOR_ERROR not in flags:
                    raise Slow
            else:
                raise Slow
            if conv is not None and value is not None:
                value = conv(value)
                if not isfinite(value):
                    raise Slow
            if t != last_t:              # the readings of a sample cycle share their time
                ns = _time_ns(t)
                if not earliest_ns <= ns <= latest_ns:
                    raise Slow
                last_t = t
            # tuple.__new__ directly: the NamedTuple's own constructor is a Python function (~0.5 µs)
            append(_new_tuple(CanonicalReading, (ns, st, device, sensor, q, value, cu, joined, seq)))
        return _new_tuple(DecodedReadings, (device, seq, out, epoch))
    return decide


class FastDecoder:
    """The fast path of one readings message model: ``spec`` (its tables, read from the model)
    and ``decide(station, parsed_json, earliest_ns, latest_ns)``."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self.spec, self.reading_model = derive(model)
        self.decide: Decide = compile_spec(self.spec)
