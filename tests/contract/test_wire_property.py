"""Property: the ingest hot path (``decode_canonical`` and its ``FAST_READINGS``) and the
pydantic model accept exactly the same readings messages, and decode them alike.

Messages are near-valid: a valid message with a few mutations (``MUTATIONS``, and generated
ones) — a field of the wrong type, an id with a trailing newline, odd or out-of-bounds times,
huge or non-finite values, missing or extra keys. Either both decoders refuse (with the same
error) or both give the same canonical readings; and whenever the fast path decides a message
by itself, the model agrees with it. Each mutation is also tried alone on a valid message, so
a disagreement on any of them cannot hide behind another defect of the same message.
"""

from __future__ import annotations

import copy
import json
import os
from datetime import datetime, timedelta

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ms4watch.contract.bounds import DEFAULT_WINDOW
from ms4watch.contract.errors import ContractError
from ms4watch.contract.timeutil import parse_time, to_ns
from ms4watch.contract.wire import FAST_READINGS, QualityFlag, canonicalize, decode_canonical, decode_readings
from ms4watch.contract.wire_fast import Slow

TOPIC = "ms4/town/OF-1/LOG-1/readings"
RECEIVED = to_ns(parse_time("2026-06-02T00:00:00Z"))
EXAMPLES = 3000 if os.environ.get("MS4_SLOW") else 250

UNITS = [("flow", "gpm"), ("flow", "cfs"), ("flow", "L/s"), ("flow", "MGD"), ("rain", "in"), ("rain", "mm"),
         ("turbidity", "NTU"), ("turbidity", "FNU"), ("temperature", "degF"), ("temperature", "degC"),
         ("level", "ft"), ("level", "m"), ("battery", "V")]
FLAGS = [f.value for f in QualityFlag]

ids = st.one_of(st.sampled_from(["LOG-1", "flow", "OF-9", "a", "A" * 64, "9.x_y-z"]),
                st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,12}", fullmatch=True))
counts = st.integers(0, 2**63 - 1)


# strategies built once, not per example: a strategy made inside a draw is validated anew each
# time, which cost hypothesis more than drawing from it
INSIDE = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2026, 6, 1))
AROUND = st.one_of(INSIDE, st.datetimes(min_value=datetime(1999, 12, 31), max_value=datetime(2000, 1, 2)),
                   st.datetimes(min_value=datetime(2026, 6, 2, 12), max_value=datetime(2026, 6, 4)),
                   st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2300, 1, 1)))
FRACS = st.sampled_from(["", ".5", ".250", ".123456"])
OFFSETS = st.sampled_from(["Z", "+00:00", "-00:00", "-05:00", "+05:30", "+23:59", "-23:59"])


@st.composite
def rfc3339(draw, near_the_bounds: bool = True):
    """Times in the wire's form: anywhere in the window, or (``near_the_bounds``) also around
    its edges (2000-01-01, a day after RECEIVED) and far outside it."""
    when = draw(AROUND if near_the_bounds else INSIDE)
    frac = draw(FRACS)
    offset = draw(OFFSETS)
    if not near_the_bounds and when < datetime(2000, 1, 2):
        offset = "Z"        # -05:00 is still 2000-01-01 there, but +05:30 is 1999
    return when.strftime("%Y-%m-%dT%H:%M:%S") + frac + offset


valid_times = rfc3339(near_the_bounds=False)
values = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**15, 10**15))
UNIT_PAIRS = st.sampled_from(UNITS)
FLAG_LISTS = st.lists(st.sampled_from(FLAGS), max_size=3, unique=True)
VALUES_OR_NONE = st.one_of(values, st.none())
IDS_OR_NONE = st.one_of(ids, st.none())


@st.composite
def valid_reading(draw) -> dict:
    quantity, unit = draw(UNIT_PAIRS)
    flags = draw(FLAG_LISTS)
    value = draw(VALUES_OR_NONE)
    if value is None and "sensor_error" not in flags:
        flags.append("sensor_error")
    r = {"time": draw(valid_times), "sensor": draw(ids), "quantity": quantity, "value": value, "unit": unit,
         "flags": flags}
    if draw(st.booleans()):
        r["station"] = draw(IDS_OR_NONE)
    if not flags and draw(st.booleans()):
        del r["flags"]
    return r


READING_LISTS = st.lists(valid_reading(), min_size=1, max_size=4)


@st.composite
def valid_message(draw) -> dict:
    msg = {"schema": "ms4watch.readings/1", "device": draw(ids)}
    if draw(st.booleans()):
        msg["epoch"] = draw(counts)
    msg["seq"] = draw(counts)
    msg["readings"] = draw(READING_LISTS)
    return msg


# -- mutations: (where, key, value); where is "msg" or "reading"; MISSING deletes the key -----------
MISSING = "<missing>"
ODD_COUNTS = [2**63, 2**63 - 1, 2**64 - 1, 2**64, -1, "7", True, False, 7.0, 0.0, 1e20, None, [], {}, MISSING]
ODD_IDS = ["LOG-1\n", "LOG 1", "", "-x", "é", "x/y", "A" * 64, "A" * 65, "ok\r", "\nLOG-1", 5, None, ["LOG-1"]]
ODD_MESSAGE = {
    "schema": ["ms4watch.readings/2", "ms4watch.readings/1\n", "", None, 1, MISSING],
    "device": ODD_IDS + [MISSING], "epoch": ODD_COUNTS, "seq": ODD_COUNTS,
    "readings": [[], {}, None, [1], [[]], [None], MISSING],
    "extra": [1], "Seq": [1], "station": ["OF-1"],
}
ODD_READING = {
    "time": [
        # forms datetime.fromisoformat takes and the contract does not
        "2026-W23-1T12:00:00Z", "20260601T120000Z", "2026-06-01 12:00:00Z", "2026-06-01T12:00Z",
        "2026-06-01T12:00:00,5Z", "2026-06-01T12:00:00.1234567Z", "2026-06-01T12:00:00+0500",
        "2026-06-01T12:00:00+05", "2026-06-01", "2026-06-01T12:00:00", "2026-06-01T12:00:00+05:00:30",
        # and others
        "2026-152T12:00:00Z", "2026-06-01t12:00:00z", "2026-06-01T23:59:60Z", "2026-06-01T24:00:00Z",
        "2026-02-30T12:00:00Z", "2026-06-01T12:00:00+24:00", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
        "1999-12-31T23:59:59.999999Z", "2262-04-11T23:47:16Z", "2262-04-12T00:00:00Z", "2026-06-03T00:00:00Z",
        "2026-06-03T00:00:00.000001Z", "2026-06-02T19:00:00.000001-05:00", " 2026-06-01T12:00:00Z",
        "2026-06-01T12:00:00Z\n", "12:00:00Z", "", 1780000000, 1.78e9, None, True, MISSING],
    "sensor": ODD_IDS + [MISSING], "station": ODD_IDS,
    "quantity": ["flux", "", "Flow", "rain ", 3, None, MISSING],
    "unit": ["bogus", " gpm", "GPM", "gpm\n", "NTU", "cfs", "MGD", "in", 7, None, "", MISSING],
    "value": [1e308, -1e308, 1.7e308, 5e307, 4e305, 10**400, 2**64, 2**63, True, "1.5", None, [], {}, MISSING],
    "flags": [["sensor_error"], ["wet"], ["spike", "spike"], [3], [None], "sensor_error", None, {}, 1, [], MISSING],
    "extra": [1], "Time": ["2026-06-01T12:00:00Z"], "device": ["LOG-1"],
}
MUTATIONS = ([("msg", k, v) for k, vs in ODD_MESSAGE.items() for v in vs]
             + [("reading", k, v) for k, vs in ODD_READING.items() for v in vs])
generated = st.one_of(
    st.tuples(st.just("reading"), st.just("time"), rfc3339()),
    st.tuples(st.just("reading"), st.just("value"), st.one_of(st.floats(), st.integers(-2**80, 2**80))),
    st.tuples(st.sampled_from(["msg"]), st.sampled_from(["seq", "epoch"]), st.integers(-2**70, 2**70)))


def mutated(msg: dict, mutations: list[tuple[tuple[str, str, object], int]]) -> bytes:
    for (where, key, value), index in mutations:
        target = msg
        if where == "reading":
            readings = msg.get("readings")
            if type(readings) is not list or not readings or type(readings[0]) is not dict:
                continue
            target = readings[index % len(readings)]
        if value == MISSING:
            target.pop(key, None)
        else:
            target[key] = value
    return json.dumps(msg, allow_nan=True).encode()


BASE = {"schema": "ms4watch.readings/1", "device": "LOG-1", "seq": 7, "readings": [
    {"time": "2026-06-01T12:00:00Z", "sensor": "flow", "quantity": "flow", "value": 2.5, "unit": "cfs", "flags": []},
    {"time": "2026-06-01T12:00:00.5-04:00", "sensor": "rain", "quantity": "rain", "value": 0.2, "unit": "mm",
     "flags": ["simulated"], "station": "RG-1"}]}


def _decide(fn):
    try:
        return fn()
    except ContractError as e:
        return e


def check(raw: bytes) -> str:
    """Both decoders agree on ``raw``; returns what they decided ("taken", "refused"), and
    "fast" when the fast path decided it by itself."""
    def by_model():
        m = decode_readings(TOPIC, raw, received_ns=RECEIVED)
        return (m.device, m.seq, canonicalize(m, "OF-1"), m.epoch)
    model = _decide(by_model)
    fast = _decide(lambda: decode_canonical(TOPIC, "OF-1", raw, received_ns=RECEIVED))
    try:
        direct = FAST_READINGS.decide("OF-1", orjson.loads(raw), *DEFAULT_WINDOW.limits(RECEIVED))
    except (Slow, ValueError):
        direct = None
    if isinstance(model, ContractError):
        assert isinstance(fast, ContractError), f"the hot path took what the model refuses ({model})"
        assert str(fast) == str(model)
        assert direct is None, f"the fast path decided on what the model refuses ({model})"
        return "refused"
    assert not isinstance(fast, ContractError), f"the hot path refused what the model takes ({fast})"
    assert tuple(fast) == model
    for r in model[2]:
        assert r.value is None or abs(r.value) < float("inf")
        assert DEFAULT_WINDOW.earliest_ns <= r.time_ns <= RECEIVED + DEFAULT_WINDOW.future_ns
    if direct is None:
        return "taken"
    assert tuple(direct) == model
    return "fast"


def test_each_odd_field_alone():
    """Every mutation on its own, on a valid message the fast path decides by itself."""
    assert check(mutated(copy.deepcopy(BASE), [])) == "fast"
    seen = {"taken": 0, "refused": 0, "fast": 0}
    for mutation in MUTATIONS:
        for index in (0, 1):
            seen[check(mutated(copy.deepcopy(BASE), [(mutation, index)]))] += 1
    assert seen["refused"] > len(MUTATIONS) and seen["fast"] > 10, seen


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_message(), st.lists(st.tuples(st.one_of(st.sampled_from(MUTATIONS), generated), st.integers(0, 3)),
                                 max_size=3))
def test_fast_path_and_model_accept_the_same_messages(msg, mutations):
    check(mutated(msg, mutations))


def test_the_generator_makes_both_kinds():
    """The property is not vacuous: its messages are sometimes taken, sometimes refused, and
    the fast path decides some of them by itself."""
    seen = {"taken": 0, "refused": 0, "fast": 0}

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(valid_message(), st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 3)), max_size=2))
    def count(msg, mutations):
        seen[check(mutated(msg, mutations))] += 1
    count()
    assert seen["refused"] >= 20 and seen["fast"] >= 20, seen


def test_times_at_the_window_edges():
    """The edges themselves: the earliest instant and a day after receipt are taken, one µs beyond is not."""
    edge = datetime(2026, 6, 3)
    for text, ok in (("2000-01-01T00:00:00Z", True), ("1999-12-31T23:59:59.999999Z", False),
                     (edge.strftime("%Y-%m-%dT%H:%M:%SZ"), True),
                     ((edge + timedelta(microseconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), False)):
        raw = json.dumps({"schema": "ms4watch.readings/1", "device": "LOG-1", "seq": 1, "readings": [
            {"time": text, "sensor": "f", "quantity": "flow", "value": 1, "unit": "gpm", "flags": []}]}).encode()
        model = _decide(lambda: decode_readings(TOPIC, raw, received_ns=RECEIVED))
        fast = _decide(lambda: decode_canonical(TOPIC, "OF-1", raw, received_ns=RECEIVED))
        assert isinstance(model, ContractError) is (not ok) and isinstance(fast, ContractError) is (not ok), text
