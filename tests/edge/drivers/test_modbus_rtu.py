"""The Modbus RTU driver against simulated slaves on a pseudo-terminal: real frames, real
CRC-16, minimalmodbus and pyserial doing the talking."""

from __future__ import annotations

import struct

import pytest

from ms4watch.edge.drivers.base import DriverEnv
from ms4watch.edge.drivers.modbus_rtu import ModbusRtuDriver, ModbusRtuOptions, decode_registers
from ms4watch.edge.errors import DriverError

from .conftest import CAL_OVERDUE, T0, sensor
from .instruments import gone, ModbusSlaves, crc16_modbus, float_registers

HOLDING, INPUT = 3, 4


def make(slaves: ModbusSlaves, env: DriverEnv, id: str = "flow", calibration=None, **options) -> ModbusRtuDriver:
    opts = {"slave": 1, "register": 0, "timeout_s": 0.2, "retries": 0, **options}
    s = sensor(id=id, driver="modbus_rtu", quantity="flow", unit="L/s", port=slaves.port,
               calibration=calibration, **opts)
    d = ModbusRtuDriver(s, ModbusRtuOptions.model_validate(s.options), env)
    d.open()
    return d


def test_crc16_reference_vector():
    # The check value of CRC-16/MODBUS over "123456789" (the catalogue's test vector).
    assert crc16_modbus(b"123456789") == 0x4B37


@pytest.mark.parametrize("order, registers", [
    ("ABCD", [0x3F80, 0x0000]),
    ("CDAB", [0x0000, 0x3F80]),
    ("BADC", [0x803F, 0x0000]),
    ("DCBA", [0x0000, 0x803F]),
])
def test_decode_one_point_zero(order, registers):
    # 1.0f is 0x3F800000: A=3F B=80 C=00 D=00.
    assert decode_registers(registers, "float32", order) == 1.0


def test_decode_integers():
    assert decode_registers([0xFFFE], "int16") == -2
    assert decode_registers([0xFFFE], "uint16") == 65534
    assert decode_registers([0x0001, 0x0002], "uint32", "ABCD") == 65538
    assert decode_registers([0x0002, 0x0001], "uint32", "CDAB") == 65538
    assert decode_registers([0xFFFF, 0xFFFF], "int32") == -1


@pytest.mark.parametrize("order", ["ABCD", "CDAB", "BADC", "DCBA"])
@pytest.mark.parametrize("table, function", [("holding", HOLDING), ("input", INPUT)])
def test_float32_over_two_registers(env, order, table, function):
    value = 123.456
    hi, lo = float_registers(value, order)
    with ModbusSlaves({7: {(function, 100): hi, (function, 101): lo}}) as bus:
        d = make(bus, env, slave=7, register=100, table=table, word_order=order)
        [r] = d.read(T0)
        assert r.value == pytest.approx(struct.unpack(">f", struct.pack(">f", value))[0], rel=1e-7)
        assert (r.unit, r.quantity, r.sensor) == ("L/s", "flow", "flow")
        assert bus.received[-1][:2] == bytes((7, function))
        d.close()


def test_int16_scale_and_offset(env):
    # a level register in hundredths of a foot, minus the sensor's mounting offset
    with ModbusSlaves({1: {(HOLDING, 3): struct.unpack(">H", struct.pack(">h", -250))[0]}}) as bus:
        d = make(bus, env, register=3, data_type="int16", scale=0.01, offset=10.0)
        assert d.read(T0)[0].value == pytest.approx(-2.5 + 10.0)
        d.close()


def test_calibration_flag(env):
    with ModbusSlaves({1: {(HOLDING, 0): 42}}) as bus:
        d = make(bus, env, data_type="uint16", calibration=CAL_OVERDUE)
        [r] = d.read(T0)
        assert (r.value, r.flags) == (42.0, ("calibration_overdue",))
        d.close()


def test_two_slaves_one_bus(env):
    with ModbusSlaves({1: {(HOLDING, 0): 11}, 2: {(INPUT, 0): 22}}) as bus:
        a = make(bus, env, slave=1, data_type="uint16")
        b = make(bus, env, id="level", slave=2, table="input", data_type="uint16")
        assert (a.read(T0)[0].value, b.read(T0)[0].value) == (11.0, 22.0)
        a.close()
        b.close()


@pytest.mark.parametrize("fault, message", [
    ("silent", "read failed after 1 tries: no reply within 0.2 s"),
    ("bad_crc", "read failed after 1 tries: bad reply: Checksum error"),
    ("garbage", "read failed after 1 tries: bad reply"),
    ("wrong_slave", "read failed after 1 tries: bad reply: .*slave"),
    ("short", "read failed after 1 tries: bad reply"),
])
def test_fault_then_recovery(env, fault, message):
    hi, lo = float_registers(3.5, "ABCD")
    with ModbusSlaves({1: {(HOLDING, 0): hi, (HOLDING, 1): lo}}) as bus:
        d = make(bus, env)
        bus.faults.append(fault)
        with pytest.raises(DriverError, match=message) as e:
            d.read(T0)
        assert f"{bus.port} slave 1 holding register 0 (sensor flow)" in str(e.value)
        assert d.read(T0 + 1)[0].value == 3.5
        d.close()


def test_retry_hides_one_bad_reply(env):
    with ModbusSlaves({1: {(HOLDING, 0): 9}}) as bus:
        d = make(bus, env, data_type="uint16", retries=1)
        bus.faults.append("bad_crc")
        assert d.read(T0)[0].value == 9.0
        assert len(bus.received) == 2
        d.close()


def test_slave_exception_is_not_retried(env):
    with ModbusSlaves({1: {(HOLDING, 0): 9}}) as bus:
        d = make(bus, env, register=500, data_type="uint16", retries=2)
        with pytest.raises(DriverError, match="slave refused the request: .*illegal data address"):
            d.read(T0)
        assert len(bus.received) == 1
        d.close()


def test_slave_that_stops_answering(env):
    with ModbusSlaves({1: {(HOLDING, 0): 9}}) as bus:
        d = make(bus, env, data_type="uint16", retries=1)
        assert d.read(T0)[0].value == 9.0
        bus.faults[:] = ["silent"] * 4
        for k in range(2):
            with pytest.raises(DriverError, match="read failed after 2 tries: no reply"):
                d.read(T0 + k)
        assert d.read(T0 + 5)[0].value == 9.0
        d.close()


def test_nan_register_refused(env):
    hi, lo = float_registers(float("nan"), "ABCD")
    with ModbusSlaves({1: {(HOLDING, 0): hi, (HOLDING, 1): lo}}) as bus:
        d = make(bus, env)
        with pytest.raises(DriverError, match="not a number"):
            d.read(T0)
        d.close()


def test_requests_carry_a_valid_crc(env):
    with ModbusSlaves({1: {(HOLDING, 0): 9}}) as bus:
        d = make(bus, env, data_type="uint16")
        d.read(T0)
        [frame] = bus.received
        assert frame == bytes((1, 3, 0, 0, 0, 1)) + struct.pack("<H", crc16_modbus(frame[:6]))
        assert bus.bad_requests == 0
        d.close()


def test_adapter_gone_is_a_driver_error_and_reopened(env):
    with ModbusSlaves({1: {(HOLDING, 0): 9}}) as bus:
        a = make(bus, env, data_type="uint16")
        b = make(bus, env, id="level", data_type="uint16")
        assert a.read(T0)[0].value == 9.0
        shared = env.shared["serial_ports"][bus.port]
        gone(shared.serial)
        with pytest.raises(DriverError, match="serial port failed: .*reopening at the next read"):
            a.read(T0)
        # both users of the bus reopen it, one port again
        assert (a.read(T0 + 1)[0].value, b.read(T0 + 1)[0].value) == (9.0, 9.0)
        assert env.shared["serial_ports"][bus.port].users == 2
        a.close()
        b.close()
        assert bus.port not in env.shared["serial_ports"]
