"""A serial port shared by every driver on the same bus.

SDI-12 and Modbus RTU are multi-drop buses: several sensors (addresses) hang on one
adapter, so several configured sensors name the same ``port:``. They must share one open
port and take turns, a whole transaction at a time. The agent hands every driver the same
:attr:`DriverEnv.shared <ms4watch.edge.drivers.base.DriverEnv.shared>` dict; the ports
live there (never at module level), reference-counted, and close with their last user.

pyserial's exceptions never leave this module: they become :class:`DriverError`.
"""

from __future__ import annotations

import termios
import threading
from dataclasses import dataclass, field
from typing import Any

import serial

from ..errors import DriverError

__all__ = ["SerialSettings", "SharedPort", "acquire_port", "invalidate_port", "release_port"]

_KEY = "serial_ports"


@dataclass(frozen=True)
class SerialSettings:
    """Line settings; every user of one port must agree on them."""

    baudrate: int
    bytesize: int = 8
    parity: str = "N"
    stopbits: int = 1

    @classmethod
    def from_framing(cls, baudrate: int, framing: str) -> "SerialSettings":
        """``framing`` like ``"7E1"`` or ``"8N1"``."""
        return cls(baudrate, int(framing[0]), framing[1], int(framing[2]))

    def __str__(self) -> str:
        return f"{self.baudrate} {self.bytesize}{self.parity}{self.stopbits}"


@dataclass
class SharedPort:
    """One open serial port, its lock, and a small cache drivers may use for results that
    several sensors share (one SDI-12 measurement feeding two configured quantities)."""

    name: str
    settings: SerialSettings
    serial: Any
    lock: threading.RLock = field(default_factory=threading.RLock)
    users: int = 0
    cache: dict[Any, Any] = field(default_factory=dict)
    broken: bool = False  # the device went away (USB adapter unplugged): users must reopen


def acquire_port(shared: dict[str, Any], name: str, settings: SerialSettings) -> SharedPort:
    """Open ``name`` (or join it if another driver has it open with the same settings)."""
    ports: dict[str, SharedPort] = shared.setdefault(_KEY, {})
    existing = ports.get(name)
    if existing is not None:
        if existing.settings != settings:
            raise DriverError(f"{name}: opened as {existing.settings} by another sensor on this bus, "
                              f"this sensor asks for {settings}; every sensor on one port must use the same settings")
        existing.users += 1
        return existing
    try:
        ser = serial.Serial(port=name, baudrate=settings.baudrate, bytesize=settings.bytesize,
                            parity=settings.parity, stopbits=settings.stopbits, timeout=0.1,
                            write_timeout=2.0)
    except (serial.SerialException, OSError, ValueError, termios.error) as e:
        raise DriverError(f"{name}: cannot open serial port as {settings}: {e}") from None
    port = SharedPort(name, settings, ser, users=1)
    ports[name] = port
    return port


def release_port(shared: dict[str, Any], port: SharedPort) -> None:
    """Drop one user of ``port``; the last one closes it."""
    port.users -= 1
    if port.users > 0 or port.broken:
        return
    shared.get(_KEY, {}).pop(port.name, None)
    _close(port)


def invalidate_port(shared: dict[str, Any], port: SharedPort) -> None:
    """The port failed at the OS level: close it for every user; the next
    :func:`acquire_port` opens the device afresh (a replugged USB adapter)."""
    if port.broken:
        return
    port.broken = True
    ports = shared.get(_KEY, {})
    if ports.get(port.name) is port:
        del ports[port.name]
    _close(port)


def _close(port: SharedPort) -> None:
    try:
        port.serial.close()
    except (serial.SerialException, OSError, termios.error):
        pass


class OnSharedPort:
    """For a driver on a serial port other sensors may share: the port is opened once, and
    opened afresh when it broke (a replugged adapter). The driver gives ``serial_settings()``;
    ``sensor``, ``env`` and ``name`` come from :class:`~.base.DriverBase` and the driver."""

    name: str
    sensor: Any
    env: Any
    _port: SharedPort | None = None

    def serial_settings(self) -> SerialSettings:
        raise NotImplementedError

    def ensure_port(self) -> tuple[SharedPort, bool]:
        """The open port, and whether it was (re)opened by this call."""
        if self._port is not None and self._port.broken:
            release_port(self.env.shared, self._port)
            self._port = None
        if self._port is not None:
            return self._port, False
        if not self.sensor.port:
            raise DriverError(f"sensor {self.sensor.id}: {self.name} needs a port (e.g. /dev/ttyUSB0)")
        self._port = acquire_port(self.env.shared, self.sensor.port, self.serial_settings())
        return self._port, True

    def release(self) -> None:
        if self._port is not None:
            release_port(self.env.shared, self._port)
            self._port = None
