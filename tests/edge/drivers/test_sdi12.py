"""The SDI-12 driver against a simulated sensor on a pseudo-terminal (real pyserial I/O)."""

from __future__ import annotations

import time

import pytest

from ms4watch.edge.drivers.base import DriverEnv
from ms4watch.edge.drivers.sdi12 import Sdi12Driver, Sdi12Options
from ms4watch.edge.drivers.sdi12 import protocol
from ms4watch.edge.errors import DriverError

from .conftest import CAL_OK, CAL_OVERDUE, T0, sensor
from .instruments import gone, Sdi12Bus, Sdi12Sensor

# A pty cannot hold 7-bit framing (re-opening it as 7E1 fails with EINVAL), so the tests
# speak 8N1 at 9600 baud, as a USB SDI-12 adapter does; the bytes are the same.
FAST = {"timeout_s": 0.3, "retries": 0, "break_ms": 0, "baudrate": 9600, "framing": "8N1"}


def make(bus: Sdi12Bus, env: DriverEnv, id: str = "turb", calibration=None, **options) -> Sdi12Driver:
    opts = {"address": "0", **FAST, **options}
    s = sensor(id=id, port=bus.port, calibration=calibration, **opts)
    d = Sdi12Driver(s, Sdi12Options.model_validate(s.options), env)
    d.open()
    return d


# -- the protocol, without I/O -----------------------------------------------------------


@pytest.mark.parametrize("reply, values", [
    ("0+1.23-4.5+.7", [1.23, -4.5, 0.7]),
    ("0+12-0.001+7.", [12.0, -0.001, 7.0]),
    ("0", []),
])
def test_values_parse(reply, values):
    assert protocol.parse_values(reply, "0", "0D0!") == values


@pytest.mark.parametrize("reply, message", [
    ("0+1.2.3", "malformed values"),
    ("01.5", "malformed values"),
    ("0+1.5 ", "malformed values"),
    ("1+1.5", "came from address '1', expected '0'"),
    ("", "empty reply"),
])
def test_values_refused(reply, message):
    with pytest.raises(DriverError, match=message):
        protocol.parse_values(reply, "0", "0D0!")


def test_start_replies():
    assert protocol.parse_start("00135", "0", "0M!") == (13, 5)
    assert protocol.parse_start("a00112", "a", "aC!") == (1, 12)
    with pytest.raises(DriverError, match="expected atttnn"):
        protocol.parse_start("00135", "0", "0C!")
    with pytest.raises(DriverError, match="expected atttn"):
        protocol.parse_start("0013", "0", "0M1!")


def test_identification_parse():
    ident = protocol.parse_identification("014CAMPBELLCLARV10100SN1234", "0")
    assert (ident.sdi12_version, ident.vendor, ident.model, ident.version, ident.serial) == \
        ("14", "CAMPBELL", "CLARV1", "010", "0SN1234")
    assert "CAMPBELL CLARV1" in ident.describe()
    with pytest.raises(DriverError, match="malformed reply to 0I!"):
        protocol.parse_identification("013SHORT", "0")


@pytest.mark.parametrize("address", ["#", "", "01", " "])
def test_bad_address_refused_by_options(address):
    with pytest.raises(ValueError, match="SDI-12 address must be one character"):
        Sdi12Options.model_validate({"address": address})


def test_integer_address_accepted():
    assert Sdi12Options.model_validate({"address": 3}).address == "3"


# -- measurement cycles over the pty -----------------------------------------------------


def test_measure_cycle_follows_service_request(env):
    # ttt = 10 s but the sensor is ready after 0.1 s and says so: the driver must not sit
    # out the full ten seconds.
    with Sdi12Bus({"0": Sdi12Sensor([12.5, -3.25, 0.5], wait_s=10, service_request_s=0.1, per_d=2)}) as bus:
        d = make(bus, env, value_index=3)
        started = time.monotonic()
        [r] = d.read(T0)
        assert time.monotonic() - started < 5
        assert (r.value, r.unit, r.quantity, r.sensor, r.time_ns, r.flags) == (0.5, "FNU", "turbidity", "turb", T0, ())
        assert bus.commands == ["0I!", "0M!", "0D0!", "0D1!"]
        assert d.identification is not None and d.identification.vendor == "CAMPBELL"
        d.close()


def test_service_request_in_the_same_read_as_the_start_reply(env):
    # The adapter hands over "00101<CR><LF>0<CR><LF>" in one read: the line after the reply
    # is kept for the next look, so the driver goes on at once instead of sitting out ttt.
    with Sdi12Bus({"0": Sdi12Sensor([4.5, 6.0], wait_s=10, service_request_s=0)}) as bus:
        d = make(bus, env, value_index=2)
        started = time.monotonic()
        [r] = d.read(T0)
        assert time.monotonic() - started < 5
        assert r.value == 6.0 and bus.commands == ["0I!", "0M!", "0D0!"]
        d.close()


def test_measure_without_service_request_waits_ttt(env):
    with Sdi12Bus({"0": Sdi12Sensor([7.25], wait_s=1, service_request_s=None)}) as bus:
        d = make(bus, env)
        started = time.monotonic()
        [r] = d.read(T0)
        assert time.monotonic() - started >= 0.9
        assert r.value == 7.25
        d.close()


def test_concurrent_measurement(env):
    with Sdi12Bus({"0": Sdi12Sensor([1.5, 2.5, 3.5, 4.5], wait_s=1, per_d=3)}) as bus:
        d = make(bus, env, command="C", value_index=4)
        [r] = d.read(T0)
        assert r.value == 4.5
        assert bus.commands[1:] == ["0C!", "0D0!", "0D1!"]
        d.close()


def test_continuous_measurement(env):
    with Sdi12Bus({"0": Sdi12Sensor([9.0, -1.0])}) as bus:
        d = make(bus, env, command="R0", value_index=2)
        assert d.read(T0)[0].value == -1.0
        assert bus.commands[1:] == ["0R0!"]
        d.close()


def test_addresses_on_one_bus(env):
    # A sonde at 0 and a flow meter at b on one adapter: one port, each answers its own.
    with Sdi12Bus({"0": Sdi12Sensor([4.0]), "b": Sdi12Sensor([0.75, 2.5, 310.0])}) as bus:
        turb = make(bus, env)
        flow = make(bus, env, id="flow", address="b", value_index=3)
        assert turb.read(T0)[0].value == 4.0
        assert flow.read(T0)[0].value == 310.0
        assert "bM!" in bus.commands and "0M!" in bus.commands
        assert env.shared["serial_ports"][bus.port].users == 2
        turb.close()
        flow.close()
        assert bus.port not in env.shared["serial_ports"]


def test_two_quantities_share_one_measurement(env):
    with Sdi12Bus({"0": Sdi12Sensor([4.0, 18.5])}) as bus:
        turb = make(bus, env, value_index=1)
        temp = make(bus, env, id="temp", value_index=2)
        assert turb.read(T0)[0].value == 4.0
        assert temp.read(T0)[0].value == 18.5
        assert bus.commands.count("0M!") == 1
        temp.read(T0 + 60_000_000_000)  # a new sample time is a new measurement
        assert bus.commands.count("0M!") == 2
        turb.close()
        temp.close()


def test_calibration_applied_and_overdue_flagged(env):
    with Sdi12Bus({"0": Sdi12Sensor([4.0])}) as bus:
        d = make(bus, env, calibration=CAL_OK)
        [r] = d.read(T0)
        assert (r.value, r.flags) == (2.0 * 4.0 + 0.5, ())
        d.close()
        d = make(bus, env, calibration=CAL_OVERDUE)
        assert d.read(T0)[0].flags == ("calibration_overdue",)
        d.close()


def test_echo_of_own_command_is_skipped(env):
    with Sdi12Bus({"0": Sdi12Sensor([3.0, 6.0])}) as bus:
        bus.echo = True
        d = make(bus, env, value_index=2)
        assert d.read(T0)[0].value == 6.0
        d.close()


def test_break_before_command(env):
    with Sdi12Bus({"0": Sdi12Sensor([3.0])}) as bus:
        d = make(bus, env, break_ms=12)
        assert d.read(T0)[0].value == 3.0
        d.close()


# -- faults: a clear DriverError, and the next read works --------------------------------


@pytest.mark.parametrize("fault, message", [
    ("silent", r"0M! failed after 1 tries: no reply within 0.3 s"),
    ("garbage", r"0M! failed after 1 tries: garbage on the line"),
    ("malformed", r"0M! failed after 1 tries: malformed reply to 0M!: '0\+1.2.3x'"),
    ("wrong_address", r"0M! failed after 1 tries: reply to 0M! came from address '1', expected '0'"),
    ("no_crlf", r"0M! failed after 1 tries: incomplete reply b'00001'"),
])
def test_fault_then_recovery(env, fault, message):
    with Sdi12Bus({"0": Sdi12Sensor([5.5])}) as bus:
        d = make(bus, env)
        d.identification = d.identify()
        bus.faults.append(fault)
        with pytest.raises(DriverError, match=message) as e:
            d.read(T0)
        assert bus.port in str(e.value) and "sensor turb" in str(e.value)
        assert d.read(T0 + 1)[0].value == 5.5
        d.close()


def test_fault_in_data_reply_then_recovery(env):
    with Sdi12Bus({"0": Sdi12Sensor([5.5, 6.5])}) as bus:
        d = make(bus, env)
        d.identification = d.identify()
        bus.faults[:] = [None, "malformed"]  # aM! fine, aD0! broken
        with pytest.raises(DriverError, match="0D0! failed after 1 tries: malformed values"):
            d.read(T0)
        assert d.read(T0 + 1)[0].value == 5.5
        d.close()


def test_retry_hides_one_bad_reply(env):
    with Sdi12Bus({"0": Sdi12Sensor([5.5])}) as bus:
        d = make(bus, env, retries=1)
        bus.faults[:] = ["garbage", None, None, "silent"]  # aI! garbage, retried; aM! ok; aD0! silent, retried
        assert d.read(T0)[0].value == 5.5
        assert bus.commands == ["0I!", "0I!", "0M!", "0D0!", "0D0!"]
        d.close()


def test_sensor_that_stops_answering(env):
    with Sdi12Bus({"0": Sdi12Sensor([5.5])}) as bus:
        d = make(bus, env, retries=1)
        assert d.read(T0)[0].value == 5.5
        bus.dead = True
        for k in range(2):
            with pytest.raises(DriverError, match="0M! failed after 2 tries: no reply"):
                d.read(T0 + k + 1)
        bus.dead = False
        assert d.read(T0 + 5)[0].value == 5.5
        d.close()


def test_wrong_address_configured(env):
    with Sdi12Bus({"1": Sdi12Sensor([5.5])}) as bus:
        d = make(bus, env, address="0")
        with pytest.raises(DriverError, match="address '0'.*0I! failed after 1 tries: no reply"):
            d.read(T0)
        d.close()


def test_fewer_values_than_announced(env):
    with Sdi12Bus({"0": Sdi12Sensor([1.0, 2.0], announce=3)}) as bus:
        d = make(bus, env)
        with pytest.raises(DriverError, match="announced 3 values, sensor sent 2"):
            d.read(T0)
        d.close()


def test_value_index_beyond_measurement(env):
    with Sdi12Bus({"0": Sdi12Sensor([1.0, 2.0])}) as bus:
        d = make(bus, env, value_index=5)
        with pytest.raises(DriverError, match="gave 2 values, value_index is 5"):
            d.read(T0)
        d.close()


def test_error_value_refused(env):
    with Sdi12Bus({"0": Sdi12Sensor([-9999.0])}) as bus:
        d = make(bus, env, error_values=[-9999])
        with pytest.raises(DriverError, match="sensor reported its error value -9999"):
            d.read(T0)
        d.close()


def test_unexpected_model_refused(env):
    with Sdi12Bus({"0": Sdi12Sensor([1.0])}) as bus:
        d = make(bus, env, expect_model="EXO2")
        with pytest.raises(DriverError, match="expected model 'EXO2', sensor says CAMPBELL CLARV1"):
            d.read(T0)
        d.close()
        d = make(bus, env, expect_vendor="CAMPBELL", expect_model="CLARV1")
        assert d.read(T0)[0].value == 1.0
        d.close()


def test_missing_port_is_a_driver_error(env, tmp_path):
    s = sensor(port=str(tmp_path / "ttyUSB9"), address="0")
    d = Sdi12Driver(s, s.options, env)
    with pytest.raises(DriverError, match="cannot open serial port"):
        d.open()


def test_same_port_different_settings_refused(env):
    with Sdi12Bus({"0": Sdi12Sensor([1.0])}) as bus:
        a = make(bus, env)
        with pytest.raises(DriverError, match="every sensor on one port must use the same settings"):
            make(bus, env, id="other", baudrate=1200)
        a.close()


def test_adapter_gone_is_a_driver_error_and_reopened(env):
    # The far end of the line disappears (a USB adapter pulled out): pyserial fails at the
    # OS level. The driver says so as a DriverError, drops the port, and tries to reopen it
    # at the next read.
    with Sdi12Bus({"0": Sdi12Sensor([5.5])}) as bus:
        d = make(bus, env)
        assert d.read(T0)[0].value == 5.5
        shared = env.shared["serial_ports"][bus.port]
        gone(shared.serial)
        with pytest.raises(DriverError, match="serial port failed on write"):
            d.read(T0 + 1)
        assert shared.broken and bus.port not in env.shared["serial_ports"]
        assert d.read(T0 + 2)[0].value == 5.5  # reopened: the node is back
        d.close()
