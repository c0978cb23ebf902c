"""The ingest hot path's decoder is derived from the pydantic model, the contract's single
definition: its accepted field names, ranges, enumerations and id patterns are read from the
model's fields at build time, so a contract change is one edit.

Shown on variants of the model (subclasses changing one constraint each, as a contract change
would): a fast decoder built from a variant follows it, and still accepts exactly what the
variant accepts (the property of ``test_wire_property.py``, over that variant). A change the
fast path cannot follow refuses to build, naming the field, instead of decoding otherwise.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Annotated, Any, Literal

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field, Strict, ValidationError, field_validator

from ms4watch.contract.bounds import COUNT_LIMIT, DEFAULT_WINDOW
from ms4watch.contract.ids import _ID, IdRule
from ms4watch.contract.units import Quantity
from ms4watch.contract.wire import QualityFlag, Reading, ReadingsMessage, canonicalize
from ms4watch.contract.wire_fast import FastDecoder, FastPathError, Slow

from tests.contract.test_wire_property import MUTATIONS, RECEIVED, generated, mutated, valid_message

LIMITS = DEFAULT_WINDOW.limits(RECEIVED)


def test_the_fast_paths_tables_are_the_models():
    spec = FastDecoder(ReadingsMessage).spec
    assert spec.schemas == frozenset({"ms4watch.readings/1"})
    assert spec.message_keys == frozenset(f.alias or n for n, f in ReadingsMessage.model_fields.items())
    assert spec.reading_keys == frozenset(f.alias or n for n, f in Reading.model_fields.items())
    assert spec.seq == spec.epoch == (0, COUNT_LIMIT - 1)
    assert spec.epoch_default == ReadingsMessage.model_fields["epoch"].default == 0
    assert spec.readings_len == (1, None)
    assert spec.quantities == frozenset(q.value for q in Quantity)
    assert spec.flags == frozenset(f.value for f in QualityFlag)
    assert spec.device.pattern is spec.sensor.pattern is spec.station.pattern is _ID


# -- variants: one contract change each ---------------------------------------------------------
class FewFlags(str, enum.Enum):
    SENSOR_ERROR = "sensor_error"
    SPIKE = "spike"


class FewQuantities(str, enum.Enum):
    FLOW = "flow"
    RAIN = "rain"


class NarrowReading(Reading):
    quantity: FewQuantities                                          # type: ignore[assignment]
    flags: list[FewFlags] = Field(default_factory=list)              # type: ignore[assignment]
    station: Annotated[str, IdRule("station id", re.compile(r"OF-[0-9]"), "OF- and a digit")] | None = None


class Narrow(ReadingsMessage):
    """seq below 1000 and from 1; at most 2 readings; a device id is LOG- and digits; the
    schema is renamed; fewer quantities and flags; stations are OF-<digit>."""
    schema_: Literal["ms4watch.readings/9"] = Field(alias="schema")  # type: ignore[assignment]
    device: Annotated[str, IdRule("device id", re.compile(r"LOG-[0-9]+"), "LOG- and digits")]
    seq: Annotated[int, Strict(), Field(gt=0, le=999)]
    readings: list[NarrowReading] = Field(min_length=1, max_length=2)   # type: ignore[assignment]


class Renamed(ReadingsMessage):
    """The device travels as "logger"; epoch is required."""
    device: Annotated[str, IdRule("device id")] = Field(alias="logger")
    epoch: Annotated[int, Strict(), Field(ge=0, lt=COUNT_LIMIT)]


def _message(**over: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"schema": "ms4watch.readings/1", "device": "LOG-1", "seq": 7, "readings": [
        {"time": "2026-06-01T12:00:00Z", "sensor": "flow", "quantity": "flow", "value": 2.5, "unit": "cfs",
         "flags": []}]}
    msg.update(over)
    return msg


def _reading(**over: Any) -> dict[str, Any]:
    return {**_message()["readings"][0], **over}


def _takes(fast: FastDecoder, msg: dict[str, Any]) -> bool:
    try:
        fast.decide("OF-1", orjson.loads(json.dumps(msg)), *LIMITS)
    except Slow:
        return False
    return True


def test_a_variant_of_the_model_is_followed_by_its_fast_path():
    fast = FastDecoder(Narrow)
    ok = _message(schema="ms4watch.readings/9")
    assert _takes(fast, ok)
    assert not _takes(FastDecoder(ReadingsMessage), ok)              # the real contract: another schema
    assert not _takes(fast, _message())
    for over, taken in (({"seq": 0}, False), ({"seq": 1}, True), ({"seq": 999}, True), ({"seq": 1000}, False),
                        ({"device": "LOG-12"}, True), ({"device": "OF-1"}, False),
                        ({"readings": [_reading()] * 2}, True), ({"readings": [_reading()] * 3}, False),
                        ({"readings": [_reading(flags=["spike"])]}, True),
                        ({"readings": [_reading(flags=["simulated"])]}, False),
                        ({"readings": [_reading(quantity="rain", unit="in")]}, True),
                        ({"readings": [_reading(quantity="level", unit="ft")]}, False),
                        ({"readings": [_reading(station="OF-2")]}, True),
                        ({"readings": [_reading(station="ST-2")]}, False)):
        assert _takes(fast, {**ok, **over}) is taken, over


def test_a_renamed_field_and_a_required_epoch_are_followed():
    fast = FastDecoder(Renamed)
    msg = _message(epoch=3)
    msg["logger"] = msg.pop("device")
    assert _takes(fast, msg) and fast.decide("OF-1", orjson.loads(json.dumps(msg)), *LIMITS).device == "LOG-1"
    del msg["epoch"]
    assert not _takes(fast, msg)
    assert not _takes(fast, _message(epoch=3))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(valid_message(), st.lists(st.tuples(st.one_of(st.sampled_from(MUTATIONS), generated), st.integers(0, 3)),
                                 max_size=2), st.booleans())
def test_a_variants_fast_path_accepts_exactly_what_the_variant_accepts(msg, mutations, narrow_seq):
    msg["schema"] = "ms4watch.readings/9"
    if narrow_seq:
        msg["seq"] = msg["seq"] % 1200
    raw = mutated(msg, mutations)
    try:
        m = Narrow.model_validate_json(raw, context={"received_ns": RECEIVED, "window": DEFAULT_WINDOW})
        model: Any = (m.device, m.seq, canonicalize(m, "OF-1"), m.epoch)   # type: ignore[arg-type]
    except ValidationError:
        model = None
    try:
        fast: Any = tuple(FAST_NARROW.decide("OF-1", orjson.loads(raw), *LIMITS))
    except (Slow, ValueError):
        return                                  # handed to the model: nothing to compare
    assert fast == model, raw


FAST_NARROW = FastDecoder(Narrow)


# -- what the fast path cannot follow refuses to build ----------------------------------------
class Validated(Reading):
    @field_validator("sensor")
    @classmethod
    def _no_x(cls, v: str) -> str:
        if v.startswith("x"):
            raise ValueError("no x")
        return v


class WithValidator(ReadingsMessage):
    readings: list[Validated] = Field(min_length=1)   # type: ignore[assignment]


class Multiple(ReadingsMessage):
    seq: Annotated[int, Strict(), Field(ge=0, multiple_of=2)]


class Unchecked(ReadingsMessage):
    device: str         # type: ignore[assignment]


class NewRequired(ReadingsMessage):
    site: str


@pytest.mark.parametrize("model, field", [
    (WithValidator, "_no_x"), (Multiple, "seq"), (Unchecked, "device"), (NewRequired, "site")])
def test_a_change_the_fast_path_cannot_follow_refuses_to_build(model, field):
    with pytest.raises(FastPathError, match=re.escape(field)):
        FastDecoder(model)


class WithNote(ReadingsMessage):
    note: str | None = None


def test_a_new_optional_field_is_left_to_the_model():
    fast = FastDecoder(WithNote)
    assert _takes(fast, _message()) and not _takes(fast, _message(note="hi"))
