import json

import pytest

from ms4watch.contract.errors import ContractError
from ms4watch.contract.timeutil import to_ns, parse_time
from ms4watch.contract.wire import (ReadingsMessage, canonicalize, decode_readings, decode_status,
                                    encode_readings, status_payload)

T = to_ns(parse_time("2026-06-01T12:00:00Z"))
TOPIC = "ms4/town/OF-1/LOG-1/readings"


def payload(**over):
    reading = {"time": "2026-06-01T12:00:00Z", "sensor": "flow", "quantity": "flow", "value": 1.5,
               "unit": "L/s", "flags": []}
    reading.update(over.pop("reading", {}))
    msg = {"schema": "ms4watch.readings/1", "device": "LOG-1", "seq": 7, "readings": [reading]}
    msg.update(over)
    return json.dumps(msg).encode()


def test_round_trip_and_canonical_units():
    raw = encode_readings("LOG-1", 42, [(T, "flow", "flow", 1.0, "cfs", [], None),
                                        (T, "rain", "rain", 0.2, "mm", ["simulated"], "RG-1")])
    msg = decode_readings(TOPIC, raw)
    assert msg.seq == 42 and msg.device == "LOG-1"
    assert decode_readings(TOPIC, msg.to_json()) == msg
    flow, rain = canonicalize(msg, "OF-1")
    assert flow.station == "OF-1" and flow.unit == "gpm" and flow.value == pytest.approx(448.831, rel=1e-5)
    assert flow.time_ns == T and flow.seq == 42
    assert rain.station == "RG-1" and rain.unit == "in" and rain.value == pytest.approx(0.2 / 25.4)
    assert rain.flags == "simulated"


def test_many_readings_in_one_message():
    rows = [(T + i * 60_000_000_000, "rain", "rain", 0.01, "in", [], None) for i in range(500)]
    msg = decode_readings(TOPIC, encode_readings("LOG-1", 1, rows))
    assert len(msg.readings) == 500
    assert [r.time for r in msg.readings] == sorted(r.time for r in msg.readings)


@pytest.mark.parametrize("raw, field, text", [
    (b"not json", "payload", "Invalid JSON"),
    (payload(seq=-1), "seq", "greater than or equal to 0"),
    (payload(schema="ms4watch.readings/9"), "schema", "ms4watch.readings/1"),
    (payload(readings=[]), "readings", "at least 1"),
    (payload(device="LOG 1"), "device", "invalid device id"),
    (payload(reading={"unit": "NTU"}), "readings[0].unit", "unknown unit 'NTU' for flow"),
    (payload(reading={"quantity": "flux"}), "readings[0].quantity", "Input should be"),
    (payload(reading={"time": "2026-06-01T12:00:00"}), "readings[0].time", "no UTC offset"),
    (payload(reading={"value": None}), "readings[0]", "sensor_error"),
    (payload(reading={"value": "12.5"}), "readings[0].value", "must be a number"),
    (payload(reading={"value": 12.5}).replace(b"12.5", b"1e999"), "readings[0].value", "finite"),
    (payload(reading={"flags": ["wet"]}), "readings[0].flags[0]", "Input should be"),
    (payload(extra=1), "extra", "Extra inputs"),
])
def test_rejections_name_topic_and_field(raw, field, text):
    with pytest.raises(ContractError) as e:
        decode_readings(TOPIC, raw)
    assert e.value.topic == TOPIC
    assert e.value.field == field
    assert text in str(e.value)
    assert str(e.value).startswith(f"{TOPIC}: {field}: ")


def test_null_value_with_sensor_error_flag_is_valid():
    msg = decode_readings(TOPIC, payload(reading={"value": None, "flags": ["sensor_error"]}))
    assert canonicalize(msg, "OF-1")[0].value is None


def test_status_round_trip():
    raw = status_payload("LOG-1", "online", spool_depth=3, clock="synced")
    st = decode_status("ms4/town/OF-1/LOG-1/status", raw)
    assert st.state == "online" and st.spool_depth == 3
    with pytest.raises(ContractError, match="state"):
        decode_status("t", b'{"schema":"ms4watch.status/1","device":"LOG-1","state":"asleep"}')


STATUS_TOPIC = "ms4/town/OF-1/LOG-1/status"


def status(**over) -> bytes:
    cal = {"sensor": "flow", "performed": "2026-05-01", "due": "2026-08-01"}
    cal.update(over.pop("cal", {}))
    msg = {"schema": "ms4watch.status/1", "device": "LOG-1", "state": "online", "calibrations": [cal]}
    msg.update(over)
    return json.dumps(msg).encode()


def test_status_carries_each_sensors_calibration():
    from datetime import date

    from ms4watch.contract.wire import SensorCalibration
    raw = status(calibrations=[{"sensor": "flow", "performed": "2026-05-01", "due": "2026-08-01"},
                               {"sensor": "turb", "performed": "2026-05-20", "due": "2026-06-19", "station": "DS-1"}])
    st = decode_status(STATUS_TOPIC, raw)
    assert st.calibrations == (SensorCalibration(sensor="flow", performed=date(2026, 5, 1), due=date(2026, 8, 1)),
                               SensorCalibration(sensor="turb", performed=date(2026, 5, 20), due=date(2026, 6, 19),
                                                 station="DS-1"))
    assert decode_status(STATUS_TOPIC, st.to_json()) == st
    assert b'"due":"2026-08-01"' in st.to_json()
    assert decode_status(STATUS_TOPIC, status(calibrations=[])).calibrations == ()   # no calibrated sensor
    older = b'{"schema":"ms4watch.status/1","device":"LOG-1","state":"online","battery_v":12.6}'
    assert decode_status(STATUS_TOPIC, older).calibrations is None                    # before the field
    assert b"calibrations" not in status_payload("LOG-1", "offline")


@pytest.mark.parametrize("raw, field, text", [
    (status(cal={"due": "2026-08-01T00:00:00Z"}), "calibrations[0].due", "YYYY-MM-DD"),
    (status(cal={"performed": 1780000000}), "calibrations[0].performed", "valid date"),
    (status(cal={"due": "soon"}), "calibrations[0].due", "YYYY-MM-DD"),
    (status(cal={"due": "2026-04-30"}), "calibrations[0].due", "due 2026-04-30 is before performed 2026-05-01"),
    (status(cal={"sensor": "flow meter"}), "calibrations[0].sensor", "invalid sensor id"),
    (status(cal={"station": "OF 1"}), "calibrations[0].station", "invalid station id"),
    (status(cal={"slope": 1.02}), "calibrations[0].slope", "Extra inputs"),
    (status(cal={"due": None}), "calibrations[0].due", "valid date"),
    (json.dumps({"schema": "ms4watch.status/1", "device": "LOG-1", "state": "online",
                 "calibrations": [{"sensor": "flow", "performed": "2026-05-01"}]}).encode(),
     "calibrations[0].due", "Field required"),
    (status(calibrations={"flow": "2026-08-01"}), "calibrations", "valid array"),
    (status(calibrations=[{"sensor": "flow", "performed": "2026-05-01", "due": "2026-08-01"}] * 2),
     "calibrations", "sensor 'flow' is listed twice"),
])
def test_status_calibration_rejections_name_the_field(raw, field, text):
    with pytest.raises(ContractError) as e:
        decode_status(STATUS_TOPIC, raw)
    assert e.value.topic == STATUS_TOPIC and e.value.field == field
    assert text in str(e.value)
    assert str(e.value).startswith(f"{STATUS_TOPIC}: {field}: ")


def test_message_model_is_frozen():
    msg = decode_readings(TOPIC, payload())
    with pytest.raises(Exception):
        msg.seq = 8  # type: ignore[misc]
    assert isinstance(msg, ReadingsMessage)


@pytest.mark.parametrize("raw, field, text", [
    (b"not json", "payload", "Invalid JSON"),
    (payload(seq=-1), "seq", "greater than or equal to 0"),
    (payload(reading={"unit": "NTU"}), "readings[0].unit", "unknown unit 'NTU' for flow"),
    (payload(reading={"value": None}), "readings[0]", "sensor_error"),
    (payload(reading={"time": "2026-06-01T12:00:00"}), "readings[0].time", "no UTC offset"),
    (payload(reading={"flags": ["wet"]}), "readings[0].flags[0]", "Input should be"),
    (payload(reading={"value": True}), "readings[0].value", ""),
    (payload(reading={"station": "bad station"}), "readings[0].station", "invalid station id"),
])
def test_fast_path_refuses_what_the_model_refuses_with_the_same_error(raw, field, text):
    from ms4watch.contract.wire import decode_canonical
    with pytest.raises(ContractError) as fast:
        decode_canonical(TOPIC, "OF-1", raw)
    with pytest.raises(ContractError) as model:
        decode_readings(TOPIC, raw)
    assert str(fast.value) == str(model.value)
    assert fast.value.field == field and text in str(fast.value)


def test_fast_path_equals_the_model_on_valid_messages():
    from ms4watch.contract.wire import decode_canonical
    for raw in (payload(), payload(reading={"value": None, "flags": ["sensor_error"]}),
                payload(reading={"station": "OF-9", "unit": "cfs"}),
                encode_readings("LOG-1", 3, [(T + i, "t", "turbidity", 4.0 + i, "FNU", ["simulated"], None)
                                             for i in range(50)])):
        msg = decode_readings(TOPIC, raw)
        assert decode_canonical(TOPIC, "OF-1", raw) == (msg.device, msg.seq, canonicalize(msg, "OF-1"), msg.epoch)


def test_status_may_state_the_loggers_report_interval():
    st = decode_status(STATUS_TOPIC, status(report_interval_s=1800))
    assert st.report_interval_s == 1800.0 and decode_status(STATUS_TOPIC, st.to_json()) == st
    assert decode_status(STATUS_TOPIC, status()).report_interval_s is None          # optional: older loggers
    assert b"report_interval_s" not in status_payload("LOG-1", "offline")
    for bad in (0, -5, "30min"):
        with pytest.raises(ContractError) as e:
            decode_status(STATUS_TOPIC, status(report_interval_s=bad))
        assert e.value.field == "report_interval_s"


# -- issue 14: one strict contract, bounded to what every store can hold -------------------------
RECEIVED = to_ns(parse_time("2026-06-02T00:00:00Z"))   # the messages above were sent the day before


def raw_payload(text: str) -> bytes:
    """A payload with some JSON the json module would not write (``7.0``, a huge literal)."""
    return payload(seq=424242).replace(b"424242", text.encode())


@pytest.mark.parametrize("raw, field, text", [
    (payload(seq=2**63), "seq", "less than 9223372036854775808"),
    (payload(seq=2**64), "seq", "less than 9223372036854775808"),
    (payload(seq="7"), "seq", "valid integer"),
    (raw_payload("7.0"), "seq", "valid integer"),
    (payload(seq=True), "seq", "valid integer"),
    (payload(epoch=-1), "epoch", "greater than or equal to 0"),
    (payload(epoch=2**63), "epoch", "less than 9223372036854775808"),
    (payload(epoch="3"), "epoch", "valid integer"),
    (json.dumps({"device": "LOG-1", "seq": 7, "readings": json.loads(payload())["readings"]}).encode(),
     "schema", "Field required"),
    (payload(device="LOG-1\n"), "device", "invalid device id"),
    (payload(reading={"sensor": "flow\n"}), "readings[0].sensor", "invalid sensor id"),
    (payload(reading={"station": "OF-9\n"}), "readings[0].station", "invalid station id"),
    (payload(reading={"time": "9999-12-31T00:00:00Z"}), "readings[0].time", "latest time every store can hold"),
    (payload(reading={"time": "2262-04-12T00:00:00Z"}), "readings[0].time", "latest time every store can hold"),
    (payload(reading={"time": "0001-01-01T00:00:00Z"}), "readings[0].time", "before 2000-01-01T00:00:00Z"),
    (payload(reading={"time": "1999-12-31T23:59:59-00:00"}), "readings[0].time", "before 2000-01-01T00:00:00Z"),
    (payload(reading={"time": "2026-06-03T00:00:01Z"}), "readings[0].time", "more than 1d after the message was received"),
    (payload(reading={"time": "2026-W23-1T12:00:00Z"}), "readings[0].time", "RFC 3339"),      # ISO week date
    (payload(reading={"time": "2026-152T12:00:00Z"}), "readings[0].time", "RFC 3339"),        # ordinal date
    (payload(reading={"time": "20260601T120000Z"}), "readings[0].time", "RFC 3339"),          # basic format
    (payload(reading={"time": "2026-06-01 12:00:00Z"}), "readings[0].time", "RFC 3339"),
    (payload(reading={"time": "2026-06-01T12:00Z"}), "readings[0].time", "RFC 3339"),
    (payload(reading={"time": "2026-06-01T12:00:00,5Z"}), "readings[0].time", "RFC 3339"),
    (payload(reading={"time": "2026-06-01T12:00:00.1234567Z"}), "readings[0].time", "RFC 3339"),
    (payload(reading={"time": "2026-06-01t12:00:00z"}), "readings[0].time", "RFC 3339"),
    (payload(reading={"time": "2026-06-01T23:59:60Z"}), "readings[0].time", "not a valid time"),
    (payload(reading={"time": "2026-06-01T12:00:00"}), "readings[0].time", "no UTC offset"),
    (payload(reading={"time": 1780000000}), "readings[0].time", "must be a string"),
    (payload(reading={"value": 1e308, "unit": "cfs"}), "readings[0].value", "not finite in gpm"),
    (payload(reading={"value": -1e308, "unit": "MGD"}), "readings[0].value", "not finite in gpm"),
    (raw_payload("7").replace(b'"value": 1.5', b'"value": 1e400'), "readings[0].value", "finite"),
])
def test_the_contract_refuses_what_no_store_can_hold_and_what_it_does_not_define(raw, field, text):
    """Both decoders, the model and the fast path, refuse it with the same error naming the field."""
    from ms4watch.contract.wire import decode_canonical
    with pytest.raises(ContractError) as model:
        decode_readings(TOPIC, raw, received_ns=RECEIVED)
    with pytest.raises(ContractError) as fast:
        decode_canonical(TOPIC, "OF-1", raw, received_ns=RECEIVED)
    assert model.value.field == field and text in str(model.value), str(model.value)
    assert str(fast.value) == str(model.value)


@pytest.mark.parametrize("over", [
    {"seq": 2**63 - 1}, {"seq": 0}, {"epoch": 0}, {"epoch": 2**63 - 1}, {"epoch": 1_234_567},
    {"reading": {"time": "2000-01-01T00:00:00Z"}},
    {"reading": {"time": "2026-06-02T23:59:59.999999Z"}},          # within a day of being received
    {"reading": {"time": "2026-06-02T19:00:00-05:00"}},            # the same instant, written with an offset
    {"reading": {"time": "2026-06-01T12:00:00.5+23:59"}},
    {"reading": {"value": 1e300, "unit": "gpm"}},
])
def test_the_edges_of_the_contract_are_taken_by_both_decoders(over):
    from ms4watch.contract.wire import decode_canonical
    raw = payload(**over)
    msg = decode_readings(TOPIC, raw, received_ns=RECEIVED)
    assert decode_canonical(TOPIC, "OF-1", raw, received_ns=RECEIVED) == (
        msg.device, msg.seq, canonicalize(msg, "OF-1"), msg.epoch)


def test_without_a_receive_time_only_the_absolute_bounds_apply():
    from ms4watch.contract.bounds import ABSOLUTE_ONLY
    raw = payload(reading={"time": "2200-01-01T00:00:00Z"})
    assert decode_readings(TOPIC, raw).readings[0].time.year == 2200
    with pytest.raises(ContractError, match="more than 1d after"):
        decode_readings(TOPIC, raw, received_ns=RECEIVED)
    assert decode_readings(TOPIC, raw, received_ns=RECEIVED, window=ABSOLUTE_ONLY).readings[0].time.year == 2200
    with pytest.raises(ContractError, match="latest time every store can hold"):
        decode_readings(TOPIC, payload(reading={"time": "2262-04-12T00:00:00Z"}), RECEIVED, ABSOLUTE_ONLY)


def test_a_message_carries_its_loggers_spool_epoch():
    from ms4watch.contract.wire import decode_canonical
    raw = encode_readings("LOG-1", 42, [(T, "flow", "flow", 1.0, "gpm", [], None)], epoch=917)
    assert json.loads(raw)["epoch"] == 917
    msg = decode_readings(TOPIC, raw)
    assert (msg.epoch, msg.seq) == (917, 42) and decode_readings(TOPIC, msg.to_json()) == msg
    assert decode_canonical(TOPIC, "OF-1", raw).epoch == 917
    older = encode_readings("LOG-1", 42, [(T, "flow", "flow", 1.0, "gpm", [], None)])   # a logger before epochs
    assert "epoch" not in json.loads(older)
    assert decode_readings(TOPIC, older).epoch == 0 and decode_canonical(TOPIC, "OF-1", older).epoch == 0


def test_the_fast_path_decides_the_usual_message_itself():
    """Agreement must not come from the fast path handing everything to the model."""
    import orjson

    from ms4watch.contract.bounds import DEFAULT_WINDOW
    from ms4watch.contract.wire import FAST_READINGS
    for raw in (payload(), payload(epoch=5), encode_readings("LOG-1", 3, [(T, "f", "flow", 2.0, "cfs", [], "OF-2")])):
        assert FAST_READINGS.decide("OF-1", orjson.loads(raw), *DEFAULT_WINDOW.limits(RECEIVED))[0] == "LOG-1"
