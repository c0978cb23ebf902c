"""SDI-12 sensors through a serial adapter (pyserial).

One configured sensor is one value of one SDI-12 measurement: ``address`` picks the sensor
on the bus, ``command`` the measurement (``M``, ``M1``…, ``C``…, ``R0``…), ``value_index``
the value (1-based, counted across ``aD0!``, ``aD1!``, …). Two configured sensors with the
same port, address and command share one measurement per sample time ``t_ns``, so a sonde
reporting turbidity and temperature is measured once per cycle, not twice.

Every transaction (command → reply) is retried ``retries`` times on silence or on a
malformed reply; the last problem is what :class:`DriverError` says. Nothing read from the
line ever escapes as a pyserial exception.
"""

from __future__ import annotations

import logging
import re
import termios
import time
from typing import Annotated, Any, ClassVar

import serial
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ....contract.firmware import Sensor
from ...errors import DriverError
from ..base import DriverBase, DriverEnv, RawReading
from ..calibration import make_reading
from ..serialport import OnSharedPort, SerialSettings, SharedPort, invalidate_port, read_some, write_all
from . import protocol
from .protocol import Identification

log = logging.getLogger(__name__)

__all__ = ["Sdi12Driver", "Sdi12Options"]


class _PortLost(DriverError):
    """The serial device itself failed; retrying on it is pointless until it is reopened."""


def _address(v: Any) -> Any:
    # YAML reads `address: 0` as an integer; a single digit means the same address.
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 9:
        return str(v)
    return v


class Sdi12Options(BaseModel):
    """The ``options:`` block of an ``sdi12`` sensor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: Annotated[str, BeforeValidator(_address)] = Field(
        description="sensor address on the bus: 0-9, a-z, A-Z")
    command: str = Field(default="M",
                         description="measurement: M, M1..M9, C, C1..C9 (concurrent), R0..R9 (continuous)")
    value_index: int = Field(default=1, ge=1, le=99, description="which value of the measurement, 1-based")
    baudrate: int = Field(default=1200, description="1200 on a bare SDI-12 line; what the adapter says otherwise")
    framing: str = Field(default="7E1", pattern=r"^[78][NEO][12]$", description="7E1 on a bare SDI-12 line")
    break_ms: float = Field(default=12.0, ge=0, le=100,
                            description="break before each command [ms]; 0 when the adapter sends it")
    timeout_s: float = Field(default=1.0, gt=0, le=10, description="wait for a reply [s]")
    retries: int = Field(default=2, ge=0, le=5, description="extra tries of a command that got no good reply")
    max_wait_s: float = Field(default=120.0, gt=0, le=999,
                              description="refuse a measurement that asks for longer than this [s]")
    expect_vendor: str | None = Field(default=None, description="refuse a sensor whose aI! vendor differs")
    expect_model: str | None = Field(default=None, description="refuse a sensor whose aI! model differs")
    error_values: list[float] = Field(default_factory=list,
                                      description="values the sensor sends to say it failed, e.g. -9999")

    @field_validator("address")
    @classmethod
    def _address_ok(cls, v: str) -> str:
        return protocol.check_address(v)

    @field_validator("command")
    @classmethod
    def _command_ok(cls, v: str) -> str:
        if not re.match(protocol.COMMAND_PATTERN, v):
            raise ValueError(f"command must be M, M1..M9, C, C1..C9 or R0..R9 without address and '!' "
                             f"(the CRC variants MC, CC are not used), got {v!r}")
        return v


class Sdi12Driver(DriverBase, OnSharedPort):
    """Read one value of one SDI-12 sensor."""

    name: ClassVar[str] = "sdi12"
    Options: ClassVar[type[BaseModel]] = Sdi12Options
    needs_port: ClassVar[bool] = True
    options: Sdi12Options

    def __init__(self, sensor: Sensor, options: Sdi12Options | dict[str, Any], env: DriverEnv):
        super().__init__(sensor, options, env)
        self.identification: Identification | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def serial_settings(self) -> SerialSettings:
        return SerialSettings.from_framing(self.options.baudrate, self.options.framing)

    def open(self) -> None:
        self.ensure_port()

    def close(self) -> None:
        self.release()

    # -- reading -----------------------------------------------------------------------

    def read(self, t_ns: int) -> list[RawReading]:
        self.open()  # no-op when open; reopens a port that failed (adapter replugged)
        port = self._require_port()
        o = self.options
        with port.lock:
            if self.identification is None:
                self.identification = self.identify()
            key = ("sdi12", o.address, o.command)
            cached = port.cache.get(key)
            if cached is not None and cached[0] == t_ns:
                values = cached[1]
            else:
                port.cache.pop(key, None)
                values = self.measure()
                port.cache[key] = (t_ns, values)
        if len(values) < o.value_index:
            raise DriverError(f"{self._where()}: {o.address}{o.command}! gave {len(values)} values, "
                              f"value_index is {o.value_index}")
        raw = values[o.value_index - 1]
        if raw in o.error_values:
            raise DriverError(f"{self._where()}: sensor reported its error value {raw:g}")
        return [make_reading(self.sensor, t_ns, raw)]

    def identify(self) -> Identification:
        """``aI!``: who is at this address; checks ``expect_vendor``/``expect_model``."""
        a = self.options.address
        ident = self._transact(f"{a}I!", lambda r: protocol.parse_identification(r, a))
        o = self.options
        if o.expect_vendor is not None and ident.vendor.strip() != o.expect_vendor.strip():
            raise DriverError(f"{self._where()}: expected vendor {o.expect_vendor!r}, sensor says {ident.describe()}")
        if o.expect_model is not None and ident.model.strip() != o.expect_model.strip():
            raise DriverError(f"{self._where()}: expected model {o.expect_model!r}, sensor says {ident.describe()}")
        log.info("%s: %s", self._where(), ident.describe())
        return ident

    def measure(self) -> list[float]:
        """One measurement cycle: start, wait, collect ``aD0!``… until all values are in."""
        a, cmd = self.options.address, self.options.command
        if cmd.startswith("R"):
            c = f"{a}{cmd}!"
            return self._transact(c, lambda r: protocol.parse_values(r, a, c))
        start = f"{a}{cmd}!"
        wait_s, count = self._transact(start, lambda r: protocol.parse_start(r, a, start))
        if wait_s > self.options.max_wait_s:
            raise DriverError(f"{self._where()}: {start} asks to wait {wait_s} s, more than max_wait_s "
                              f"{self.options.max_wait_s:g}")
        if count == 0:
            raise DriverError(f"{self._where()}: {start} announced no values")
        if wait_s:
            # aM!: the sensor sends a service request "a<CR><LF>" when ready (§4.4.6); if it
            # does not, the data must be there after ttt seconds anyway. aC!: just wait.
            self._wait_ready(wait_s, service_request=cmd.startswith("M"))
        values: list[float] = []
        for i in range(10):
            c = f"{a}D{i}!"
            got = self._transact(c, lambda r: protocol.parse_values(r, a, c))
            if not got:
                break
            values.extend(got)
            if len(values) >= count:
                break
        if len(values) < count:
            raise DriverError(f"{self._where()}: {start} announced {count} values, sensor sent {len(values)}")
        return values[:count]

    # -- the line ----------------------------------------------------------------------

    def _require_port(self) -> SharedPort:
        if self._port is None:
            raise DriverError(f"sensor {self.sensor.id}: read() before open()")
        return self._port

    def _where(self) -> str:
        return f"{self.sensor.port} address {self.options.address!r} (sensor {self.sensor.id})"

    def _transact(self, command: str, parse: Any) -> Any:
        """Send ``command``, parse the reply; retry on silence or garbage."""
        problem = ""
        for _ in range(1 + self.options.retries):
            try:
                self._send(command)
                line = self._line(time.monotonic() + self.options.timeout_s, echo=command)
                if line is None:
                    problem = f"no reply within {self.options.timeout_s:g} s"
                    continue
                return parse(line)
            except _PortLost:
                raise
            except DriverError as e:
                problem = str(e)
        tries = 1 + self.options.retries
        raise DriverError(f"{self._where()}: {command} failed after {tries} tries: {problem}")

    def _send(self, command: str) -> None:
        port = self._require_port()
        ser = port.serial
        try:
            ser.reset_input_buffer()
            port.rx = b""
            if self.options.break_ms:
                ser.break_condition = True
                time.sleep(self.options.break_ms / 1000)
                ser.break_condition = False
                time.sleep(0.009)  # marking after the break (§7.1: 8.33 ms)
            write_all(ser, command.encode("ascii"))
            ser.flush()
        except (serial.SerialException, OSError, termios.error) as e:
            invalidate_port(self.env.shared, self._require_port())
            raise _PortLost(f"{self._where()}: serial port failed on write: {e}; reopening at the next read") from None

    def _line(self, deadline: float, echo: str | None = None) -> str | None:
        """The next reply line without CR LF, or None at the deadline. Skips the echo of our
        own command (one-wire adapters hear themselves) and NULs a break leaves behind.

        Reads what the line has in one call (:func:`~..serialport.read_some`); bytes after
        the line wait in ``port.rx`` for the next call."""
        port = self._require_port()
        ser = port.serial
        buf, port.rx = port.rx, b""
        while True:
            if b"\n" not in buf:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if buf:
                        raise DriverError(f"incomplete reply {buf!r} (no CR LF within the timeout)")
                    return None
                try:
                    chunk = read_some(ser, remaining)
                except (serial.SerialException, OSError, termios.error) as e:
                    invalidate_port(self.env.shared, port)
                    raise _PortLost(f"{self._where()}: serial port failed on read: {e}; reopening at the next read") from None
                buf += chunk
                if b"\n" not in buf:
                    if len(buf) > 256:
                        raise DriverError(f"garbage on the line: {buf[:40]!r}…")
                    continue
            line, _, port.rx = buf.partition(b"\n")
            buf = b""
            raw = line.rstrip(b"\r").lstrip(b"\x00")
            try:
                text = raw.decode("ascii")
            except UnicodeDecodeError:
                raise DriverError(f"garbage on the line: {raw[:40]!r}") from None
            if not text.isprintable():
                raise DriverError(f"garbage on the line: {raw[:40]!r}")
            if echo is not None and text.startswith(echo):
                text = text[len(echo):]
                if not text:
                    buf, port.rx = port.rx, b""
                    continue
            return text

    def _wait_ready(self, wait_s: int, service_request: bool) -> None:
        a = self.options.address
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                line = self._line(deadline)
            except _PortLost:
                raise
            except DriverError as e:
                log.debug("%s: ignored while waiting: %s", self._where(), e)
                continue
            if line is None:
                break
            if service_request and line == a:
                return
            log.debug("%s: ignored while waiting: %r", self._where(), line)
