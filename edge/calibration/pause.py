"""Taking a sensor away from a running agent for a calibration, and giving it back.

Two lock files per sensor in the agent's data directory, with ``flock(2)`` (the kernel
drops a lock when its holder dies, so a crashed calibration never leaves a sensor paused
and a crashed agent never blocks one):

* ``calibrating-<sensor>.lock`` — the **request**: ``ms4watch calibrate`` holds it
  exclusively for the whole run. The agent tests it (a shared, non-blocking attempt) each
  time round its loop.
* ``sensor-<sensor>.lock`` — **in use**: the agent holds it shared while the sensor's
  driver is open. Seeing the request, the agent closes the driver (its port, its GPIO line)
  and lets go; the calibration takes it exclusively — only then does it open the instrument
  itself. When the request goes, the agent takes "in use" again (never while a calibration
  holds it) and reopens the driver.

While paused the agent takes no readings of that sensor: a rain gauge being poured into or
a sonde sitting in a 800 NTU standard must not report a storm or a plume. The gap is
explained by the agent's ``sensor_paused`` / ``sensor_resumed`` events and by the
calibration record. Other sensors on the same serial bus keep being read; the two processes
take turns on the port a transaction at a time (:mod:`..drivers.serialport`).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from ..errors import EdgeError

__all__ = ["SensorLocks", "CalibrationHold", "PauseTimeout", "SensorBusy"]


class SensorBusy(EdgeError):
    """Another calibration holds the sensor."""


class PauseTimeout(EdgeError):
    """The agent did not let go of the sensor in time."""


def _lock_path(lock_dir: Path, kind: str, sensor: str) -> Path:
    return Path(lock_dir) / f"{kind}-{sensor}.lock"


def _open(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o660)


def _try(fd: int, how: int) -> bool:
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


class SensorLocks:
    """The agent's side for one sensor: whether a calibration asks for it, and "in use"."""

    def __init__(self, lock_dir: str | Path, sensor: str):
        self.sensor = sensor
        self._request = _open(_lock_path(Path(lock_dir), "calibrating", sensor))
        self._in_use = _open(_lock_path(Path(lock_dir), "sensor", sensor))
        self.held = False

    def requested(self) -> bool:
        """Whether a calibration holds the request now."""
        if _try(self._request, fcntl.LOCK_SH):
            fcntl.flock(self._request, fcntl.LOCK_UN)
            return False
        return True

    def take(self) -> bool:
        """Take "in use" unless a calibration holds or asks for the sensor. True: taken."""
        if self.held:
            return True
        if self.requested() or not _try(self._in_use, fcntl.LOCK_SH):
            return False
        if self.requested():      # asked for between the two looks: give it back at once
            fcntl.flock(self._in_use, fcntl.LOCK_UN)
            return False
        self.held = True
        return True

    def let_go(self) -> None:
        if self.held:
            fcntl.flock(self._in_use, fcntl.LOCK_UN)
            self.held = False

    def close(self) -> None:
        self.let_go()
        for fd in (self._request, self._in_use):
            try:
                os.close(fd)
            except OSError:
                pass


class CalibrationHold:
    """The calibration's side: ``with CalibrationHold(lock_dir, sensor, timeout_s): …`` —
    inside, no agent reads the sensor. Raises :class:`SensorBusy` when another calibration
    holds it and :class:`PauseTimeout` when a running agent does not let go in time."""

    def __init__(self, lock_dir: str | Path, sensor: str, timeout_s: float = 60.0):
        self.lock_dir = Path(lock_dir)
        self.sensor = sensor
        self.timeout_s = timeout_s
        self._fds: list[int] = []
        self.waited_s = 0.0

    def __enter__(self) -> "CalibrationHold":
        request = _open(_lock_path(self.lock_dir, "calibrating", self.sensor))
        self._fds.append(request)
        if not _try(request, fcntl.LOCK_EX):
            self._close()
            raise SensorBusy(f"sensor {self.sensor} is being calibrated by another session")
        os.ftruncate(request, 0)
        os.write(request, f"{os.getpid()}\n".encode())
        in_use = _open(_lock_path(self.lock_dir, "sensor", self.sensor))
        self._fds.append(in_use)
        t0 = time.monotonic()
        while not _try(in_use, fcntl.LOCK_EX):
            if time.monotonic() - t0 > self.timeout_s:
                self._close()
                raise PauseTimeout(f"the running agent did not let go of sensor {self.sensor} within "
                                   f"{self.timeout_s:g} s (is it stuck reading it?)")
            time.sleep(0.05)
        self.waited_s = time.monotonic() - t0
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        for fd in reversed(self._fds):      # "in use" first, then the request
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()
