"""Modbus RTU instruments over RS-485 (minimalmodbus on a shared pyserial port).

One configured sensor reads one value: a 16-bit register, or a 32-bit integer or IEEE-754
float spread over two consecutive registers. Devices disagree about the order of the four
bytes A B C D (A the most significant): ``word_order`` names it the way device manuals do.

========  =========================================  =====================
order     registers [r, r+1]                         a.k.a.
========  =========================================  =====================
``ABCD``  ``[AB, CD]`` high word first               big-endian (Modbus)
``CDAB``  ``[CD, AB]`` low word first                word-swapped
``BADC``  ``[BA, DC]`` high word first, bytes swap   byte-swapped
``DCBA``  ``[DC, BA]``                               little-endian
========  =========================================  =====================

``value = raw * scale + offset`` (e.g. ``scale: 0.01`` for a register in hundredths), then
the sensor's calibration. minimalmodbus and pyserial exceptions become :class:`DriverError`.
"""

from __future__ import annotations

import struct
import termios
from typing import Any, ClassVar, Literal

import minimalmodbus
import serial
from pydantic import BaseModel, ConfigDict, Field

from ....contract.firmware import Sensor
from ...errors import DriverError
from ..base import DriverBase, DriverEnv, RawReading
from ..calibration import make_reading
from ..serialport import OnSharedPort, SerialSettings, invalidate_port

__all__ = ["ModbusRtuDriver", "ModbusRtuOptions", "decode_registers"]

DataType = Literal["uint16", "int16", "uint32", "int32", "float32"]
WordOrder = Literal["ABCD", "CDAB", "BADC", "DCBA"]

_FORMAT = {"uint16": ">H", "int16": ">h", "uint32": ">I", "int32": ">i", "float32": ">f"}
_FUNCTION = {"holding": 3, "input": 4}


class ModbusRtuOptions(BaseModel):
    """The ``options:`` block of a ``modbus_rtu`` sensor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slave: int = Field(ge=1, le=247, description="the instrument's Modbus address")
    # ``register`` in YAML; named otherwise here because BaseModel has a ``register`` attribute.
    register_: int = Field(alias="register", ge=0, le=65535,
                           description="protocol address, 0-based (holding register 40001 is 0)")
    table: Literal["holding", "input"] = Field(default="holding",
                                               description="holding (function 3) or input (function 4) registers")
    data_type: DataType = "float32"
    word_order: WordOrder = Field(default="ABCD", description="byte order of 32-bit values, see the table above")
    scale: float = 1.0
    offset: float = 0.0
    baudrate: int = 9600
    parity: Literal["N", "E", "O"] = "N"
    stopbits: Literal[1, 2] = 1
    timeout_s: float = Field(default=0.5, gt=0, le=10, description="wait for a reply [s]")
    retries: int = Field(default=2, ge=0, le=5, description="extra tries of a request that got no good reply")


def decode_registers(registers: list[int], data_type: DataType, word_order: WordOrder = "ABCD") -> float:
    """Registers (16-bit unsigned ints, as read) → the number they hold."""
    if data_type in ("uint16", "int16"):
        return float(struct.unpack(_FORMAT[data_type], struct.pack(">H", registers[0]))[0])
    hi, lo = registers[0], registers[1]
    raw = struct.pack(">HH", hi, lo)  # as transmitted: r[0] bytes, then r[1] bytes
    a, b, c, d = {
        "ABCD": (0, 1, 2, 3),
        "CDAB": (2, 3, 0, 1),
        "BADC": (1, 0, 3, 2),
        "DCBA": (3, 2, 1, 0),
    }[word_order]
    ordered = bytes((raw[a], raw[b], raw[c], raw[d]))
    return float(struct.unpack(_FORMAT[data_type], ordered)[0])


class ModbusRtuDriver(DriverBase, OnSharedPort):
    """Read one register (or register pair) of one Modbus RTU slave."""

    name: ClassVar[str] = "modbus_rtu"
    Options: ClassVar[type[BaseModel]] = ModbusRtuOptions
    needs_port: ClassVar[bool] = True
    options: ModbusRtuOptions

    def __init__(self, sensor: Sensor, options: ModbusRtuOptions | dict[str, Any], env: DriverEnv):
        super().__init__(sensor, options, env)
        self._instrument: Any = None

    def serial_settings(self) -> SerialSettings:
        o = self.options
        return SerialSettings(o.baudrate, 8, o.parity, o.stopbits)

    def open(self) -> None:
        port, opened = self.ensure_port()
        if opened:
            # minimalmodbus takes an open serial object; it never opens or caches ports itself then.
            instrument = minimalmodbus.Instrument(port.serial, self.options.slave, mode=minimalmodbus.MODE_RTU)
            instrument.clear_buffers_before_each_transaction = True
            self._instrument = instrument

    def close(self) -> None:
        self.release()
        self._instrument = None

    def read(self, t_ns: int) -> list[RawReading]:
        self.open()  # no-op when open; reopens a port that failed (adapter replugged)
        o = self.options
        count = 1 if o.data_type.endswith("16") else 2
        registers = self._read_registers(count)
        try:
            raw = decode_registers(registers, o.data_type, o.word_order)
        except (struct.error, IndexError) as e:
            raise DriverError(f"{self._where()}: cannot decode {registers}: {e}") from None
        if raw != raw or raw in (float("inf"), float("-inf")):
            raise DriverError(f"{self._where()}: register holds {raw} (not a number)")
        return [make_reading(self.sensor, t_ns, raw * o.scale + o.offset)]

    def _where(self) -> str:
        o = self.options
        return f"{self.sensor.port} slave {o.slave} {o.table} register {o.register_} (sensor {self.sensor.id})"

    def _read_registers(self, count: int) -> list[int]:
        o = self.options
        port = self._port
        assert port is not None
        problem = ""
        with port.lock:
            try:
                if port.serial.timeout != o.timeout_s:  # minimalmodbus waits this long for a reply
                    port.serial.timeout = o.timeout_s
            except (serial.SerialException, OSError, termios.error) as e:
                invalidate_port(self.env.shared, port)
                raise DriverError(f"{self._where()}: serial port failed setting the reply timeout: {e}; "
                                  "reopening at the next read") from None
            for _ in range(1 + o.retries):
                try:
                    return list(self._instrument.read_registers(o.register_, count, _FUNCTION[o.table]))
                except minimalmodbus.IllegalRequestError as e:
                    # The slave answered with an exception code: asking again will not help.
                    raise DriverError(f"{self._where()}: slave refused the request: {e}") from None
                except minimalmodbus.NoResponseError:
                    problem = f"no reply within {o.timeout_s:g} s"
                except (minimalmodbus.ModbusException, ValueError, TypeError) as e:
                    problem = f"bad reply: {e}"
                except (serial.SerialException, OSError, termios.error) as e:
                    invalidate_port(self.env.shared, port)
                    raise DriverError(f"{self._where()}: serial port failed: {e}; reopening at the next read") from None
        raise DriverError(f"{self._where()}: read failed after {1 + o.retries} tries: {problem}")
