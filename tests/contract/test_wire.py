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
    (payload(reading={"time": "2026-06-01T12:00:00"}), "readings[0].time", "timezone"),
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
    (payload(reading={"time": "2026-06-01T12:00:00"}), "readings[0].time", "timezone"),
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
        assert decode_canonical(TOPIC, "OF-1", raw) == (msg.device, msg.seq, canonicalize(msg, "OF-1"))


def test_status_may_state_the_loggers_report_interval():
    st = decode_status(STATUS_TOPIC, status(report_interval_s=1800))
    assert st.report_interval_s == 1800.0 and decode_status(STATUS_TOPIC, st.to_json()) == st
    assert decode_status(STATUS_TOPIC, status()).report_interval_s is None          # optional: older loggers
    assert b"report_interval_s" not in status_payload("LOG-1", "offline")
    for bad in (0, -5, "30min"):
        with pytest.raises(ContractError) as e:
            decode_status(STATUS_TOPIC, status(report_interval_s=bad))
        assert e.value.field == "report_interval_s"
