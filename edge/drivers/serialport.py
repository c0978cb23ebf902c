"""A serial port shared by every driver on the same bus.

SDI-12 and Modbus RTU are multi-drop buses: several sensors (addresses) hang on one
adapter, so several configured sensors name the same ``port:``. They must share one open
port and take turns, a whole transaction at a time. The agent hands every driver the same
:attr:`DriverEnv.shared <ms4watch.edge.drivers.base.DriverEnv.shared>` dict; the ports
live there (never at module level), reference-counted, and close with their last user.

A calibration (``ms4watch calibrate``) runs in a process of its own beside the agent and
opens the same port: the port's lock is then also an exclusive ``flock`` on
``<lock_dir>/port-<name>.lock``, taken for each whole transaction, so the two processes
take turns on the bus and never interleave a command and its reply.

pyserial's exceptions never leave this module: they become :class:`DriverError`.
"""

from __future__ import annotations

import fcntl
import os
import select
import termios
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import serial

from ..errors import DriverError

__all__ = ["PortLock", "SerialSettings", "SharedPort", "acquire_port", "invalidate_port", "read_some",
           "release_port", "write_all"]

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


class PortLock:
    """A re-entrant lock for the threads of this process and, with a ``path``, an exclusive
    ``flock`` on that file for other processes (taken by the outermost holder only)."""

    def __init__(self, path: Path | None = None):
        self._rlock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o660)
            except OSError as e:
                raise DriverError(f"{path}: cannot open the port's lock file: {e.strerror}") from None

    def __enter__(self) -> "PortLock":
        self._rlock.acquire()
        if self._depth == 0 and self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._rlock.release()
                raise
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._rlock.release()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_some(ser: Any, timeout_s: float, limit: int = 256) -> bytes:
    """What the line has, up to ``limit`` bytes, as soon as there is any; b"" at the timeout.

    One ``select`` and one ``read`` on the port's descriptor: pyserial's ``read(n)`` waits
    for n bytes or its timeout, and ``read_until`` asks for one byte at a time (a select
    and a read per byte, a third of a logger's CPU per reading, bench/bench_edge.py).
    Raises ``serial.SerialException`` as pyserial does when the device went away."""
    fd = ser.fileno()
    ready, _, _ = select.select([fd], [], [], max(0.0, timeout_s))
    if not ready:
        return b""
    try:
        data = os.read(fd, limit)
    except BlockingIOError:       # the port is non-blocking: readiness can be spurious
        return b""
    if not data:
        raise serial.SerialException("device reports readiness to read but returned no data "
                                     "(device disconnected or multiple access on port?)")
    return data


def write_all(ser: Any, data: bytes) -> None:
    """Write ``data`` (a short command): straight to the descriptor, pyserial's write (with
    its write timeout) for whatever the driver's buffer did not take at once."""
    try:
        n = os.write(ser.fileno(), data)
    except BlockingIOError:
        n = 0
    if n < len(data):
        ser.write(data[n:])


def port_lock_path(lock_dir: Any, name: str) -> Path | None:
    """``<lock_dir>/port-<name, / as _>.lock``; None without a lock directory."""
    if lock_dir is None:
        return None
    return Path(lock_dir) / ("port-" + name.strip("/").replace("/", "_") + ".lock")


@dataclass
class SharedPort:
    """One open serial port, its lock, and a small cache drivers may use for results that
    several sensors share (one SDI-12 measurement feeding two configured quantities)."""

    name: str
    settings: SerialSettings
    serial: Any
    lock: PortLock = field(default_factory=PortLock)
    users: int = 0
    cache: dict[Any, Any] = field(default_factory=dict)
    broken: bool = False  # the device went away (USB adapter unplugged): users must reopen
    rx: bytes = b""       # bytes read past the end of the last reply line (SDI-12)


def acquire_port(shared: dict[str, Any], name: str, settings: SerialSettings, lock_dir: Any = None) -> SharedPort:
    """Open ``name`` (or join it if another driver has it open with the same settings).
    ``lock_dir``: where the port's inter-process lock file lives (the agent's data
    directory); None: this process alone uses the port."""
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
    try:
        lock = PortLock(port_lock_path(lock_dir, name))
    except DriverError:
        ser.close()
        raise
    port = SharedPort(name, settings, ser, lock=lock, users=1)
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
    port.lock.close()


class OnSharedPort:
    """For a driver on a serial port other sensors may share: the port is opened once, and
    opened afresh when it broke (a replugged adapter). The driver gives ``serial_settings()``;
    ``sensor``, ``env`` and ``name`` come from :class:`~.base.DriverBase` and the driver."""

    name: ClassVar[str]
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
        self._port = acquire_port(self.env.shared, self.sensor.port, self.serial_settings(), self.env.locks)
        return self._port, True

    def release(self) -> None:
        if self._port is not None:
            release_port(self.env.shared, self._port)
            self._port = None
