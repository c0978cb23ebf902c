"""Autosampler trigger: a contact closure on a GPIO line, or a command on a serial port.

Samplers (ISCO 3700/6712, Hach AS950, …) take a sample when their "event" input sees a
contact closure, or when told so on their serial interface. The logger decides when (first
flush of a storm, a command from the SMO) and calls :meth:`AutosamplerDriver.trigger`,
which returns the bottle record the agent publishes as an event of kind
:data:`EVENT_KIND`::

    {"sensor": "sampler", "bottle": 3, "time": "2026-06-01T12:00:00Z",
     "trigger": "first_flush", "volume_ml": 500.0, "method": "gpio", "bottles_left": 21}

The bottle number is kept in ``env.data_dir`` and survives restarts. It is taken *before*
the sampler is triggered: a trigger that fails half-way (a serial command without its
acknowledgement; the sampler may have drawn) leaves a gap in the bottle numbers rather than
two records for one bottle. When every bottle is used, ``trigger`` refuses until
:meth:`AutosamplerDriver.reset_bottles` (the technician swapped the rack).

``read`` takes no reading: it returns an empty list.
"""

from __future__ import annotations

import json
import logging
import os
import re
import termios
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal

import serial
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ....contract.firmware import Sensor
from ....contract.rules_config import Duration
from ....contract.timeutil import iso_utc
from ...errors import DriverError
from ..base import DriverBase, DriverEnv, RawReading
from ..serialport import OnSharedPort, SerialSettings, invalidate_port

log = logging.getLogger(__name__)

__all__ = ["AutosamplerDriver", "AutosamplerOptions", "EVENT_KIND"]

#: ``kind`` of the event the agent publishes with a bottle record.
EVENT_KIND = "sample_taken"


class AutosamplerOptions(BaseModel):
    """The ``options:`` block of an ``autosampler`` sensor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["gpio", "serial"] = Field(description="contact closure on a GPIO line, or a serial command")
    bottles: int = Field(default=24, ge=1, le=96, description="bottles in the rack")
    volume_ml: float = Field(gt=0, description="sample volume programmed in the sampler [mL]")
    # gpio
    pin: int | None = Field(default=None, ge=0, le=27, description="GPIO line driving the relay, BCM numbering")
    active_high: bool = True
    pulse: Duration = Field(default=timedelta(milliseconds=500), description="how long the contact closes")
    # serial
    command: str | None = Field(default=None, description='what to send, e.g. "SAMPLE\\r"')
    ack: str | None = Field(default=None, description="regular expression the reply must match; "
                                                      "a group named bottle gives the sampler's own bottle number")
    reply_timeout_s: float = Field(default=2.0, gt=0, le=30)
    baudrate: int = 9600
    framing: str = Field(default="8N1", pattern=r"^[78][NEO][12]$")

    @field_validator("ack")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"not a regular expression: {e}") from None
        return v

    @model_validator(mode="after")
    def _mode(self, info: ValidationInfo) -> "AutosamplerOptions":
        if self.mode == "gpio" and self.pin is None:
            raise ValueError("mode gpio needs pin (the GPIO line of the relay)")
        if self.mode == "serial":
            if not self.command:
                raise ValueError('mode serial needs command (e.g. "SAMPLE\\r")')
            sensor = (info.context or {}).get("sensor")
            if sensor is not None and not sensor.port:
                raise ValueError("mode serial needs the sensor's port (e.g. /dev/ttyUSB1)")
        return self


class AutosamplerDriver(DriverBase, OnSharedPort):
    """Trigger an autosampler and keep the bottle record."""

    name: ClassVar[str] = "autosampler"
    Options: ClassVar[type[BaseModel]] = AutosamplerOptions
    needs_port: ClassVar[bool] = False  # only in serial mode; the options check that

    def __init__(self, sensor: Sensor, options: AutosamplerOptions | dict[str, Any], env: DriverEnv):
        super().__init__(sensor, options, env)
        self._lock = threading.Lock()
        self._state_path: Path | None = None
        self._next_bottle = 1
        self._relay: Any = None

    @classmethod
    def validated(cls, options: Any, sensor: Sensor) -> AutosamplerOptions:
        """The options check needs the sensor (serial mode needs its port)."""
        return (options if isinstance(options, AutosamplerOptions)
                else AutosamplerOptions.model_validate(options, context={"sensor": sensor}))

    def serial_settings(self) -> SerialSettings:
        return SerialSettings.from_framing(self.options.baudrate, self.options.framing)

    # -- lifecycle ---------------------------------------------------------------------

    def open(self) -> None:
        if self._state_path is not None:
            return
        path = self.state_file("autosampler", "the bottle record")
        self._next_bottle = self._load(path)
        o = self.options
        if o.mode == "gpio":
            self._relay = self._open_relay()
        else:
            self.ensure_port()
        self._state_path = path

    def close(self) -> None:
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        self.release()
        self._state_path = None

    def read(self, t_ns: int) -> list[RawReading]:
        return []

    # -- sampling ----------------------------------------------------------------------

    @property
    def bottles_left(self) -> int:
        return self.options.bottles - self._next_bottle + 1

    def trigger(self, reason: str, t_ns: int) -> dict[str, Any]:
        """Take a sample now; return the bottle record to publish (kind :data:`EVENT_KIND`).

        ``reason``: what decided it (``first_flush``, ``command``, …). Raises
        :class:`DriverError` when the sampler could not be triggered or every bottle is used.
        """
        if self._state_path is None:
            raise DriverError(f"sensor {self.sensor.id}: trigger() before open()")
        if not reason:
            raise DriverError(f"sensor {self.sensor.id}: a trigger needs a reason")
        with self._lock:
            bottle = self._next_bottle
            if bottle > self.options.bottles:
                raise DriverError(f"sensor {self.sensor.id}: all {self.options.bottles} bottles are used; "
                                  "swap the rack and reset the bottle count")
            self._save(bottle + 1)  # taken before the sampler moves: a gap, never a duplicate
            if self.options.mode == "gpio":
                self._close_contact()
            else:
                reported = self._send_command()
                if reported is not None and reported != bottle:
                    log.warning("sensor %s: sampler says bottle %d, our count says %d; following the sampler",
                                self.sensor.id, reported, bottle)
                    bottle = reported
                    self._save(bottle + 1)
        record = {"sensor": self.sensor.id, "bottle": bottle, "time": iso_utc(t_ns), "trigger": reason,
                  "volume_ml": self.options.volume_ml, "method": self.options.mode,
                  "bottles_left": self.bottles_left}
        log.info("sensor %s: sample in bottle %d (%s)", self.sensor.id, bottle, reason)
        return record

    def reset_bottles(self) -> None:
        """A fresh rack: the next sample goes into bottle 1."""
        if self._state_path is None:
            raise DriverError(f"sensor {self.sensor.id}: reset_bottles() before open()")
        with self._lock:
            self._save(1)

    # -- hardware ----------------------------------------------------------------------

    def _open_relay(self) -> Any:
        try:
            from gpiozero import DigitalOutputDevice
            from gpiozero.exc import GPIOZeroError
        except ImportError:
            raise DriverError("gpiozero is not installed (pip install 'ms4watch[gpio]')") from None
        try:
            return DigitalOutputDevice(self.options.pin, active_high=self.options.active_high, initial_value=False,
                                       pin_factory=self.env.shared.get("gpio_pin_factory"))
        except (GPIOZeroError, OSError, RuntimeError) as e:
            raise DriverError(f"GPIO{self.options.pin}: cannot open: {e}") from None

    def _close_contact(self) -> None:
        from gpiozero.exc import GPIOZeroError  # present: the relay was opened with it

        try:
            try:
                self._relay.on()
                time.sleep(self.options.pulse.total_seconds())
            finally:
                self._relay.off()
        except (GPIOZeroError, OSError, RuntimeError) as e:
            raise DriverError(f"GPIO{self.options.pin} (sensor {self.sensor.id}): relay failed: {e}") from None

    def _send_command(self) -> int | None:
        """Send the command; wait for the acknowledgement. The sampler's bottle number if
        the ``ack`` pattern has a group named ``bottle``."""
        o = self.options
        assert o.command is not None
        port, _ = self.ensure_port()     # reopens a port that broke (adapter replugged)
        ser = port.serial
        where = f"{self.sensor.port} (sensor {self.sensor.id})"
        with port.lock:
            try:
                ser.reset_input_buffer()
                ser.write(o.command.encode("ascii"))
                ser.flush()
                if o.ack is None:
                    return None
                pattern = re.compile(o.ack)
                deadline = time.monotonic() + o.reply_timeout_s
                seen = b""
                while time.monotonic() < deadline:
                    seen += ser.read_until(b"\n", 256)
                    if len(seen) > 4096:
                        break
                    if seen.endswith(b"\n"):
                        line = seen.decode("ascii", "replace").strip()
                        seen = b""
                        m = pattern.search(line)
                        if m:
                            return int(m.group("bottle")) if "bottle" in pattern.groupindex else None
                        log.debug("%s: ignored reply %r", where, line)
            except (serial.SerialException, OSError, termios.error) as e:
                invalidate_port(self.env.shared, port)
                raise DriverError(f"{where}: serial port failed: {e}; reopening at the next trigger") from None
        raise DriverError(f"{where}: no reply matching {o.ack!r} within {o.reply_timeout_s:g} s "
                          f"(the sampler may or may not have drawn; bottle number skipped)")

    # -- the bottle file ---------------------------------------------------------------

    def _load(self, path: Path) -> int:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            n = int(data["next_bottle"])
            if n < 1:
                raise ValueError(f"next_bottle {n} < 1")
            return n
        except FileNotFoundError:
            return 1
        except OSError as e:
            raise DriverError(f"{path}: cannot read the bottle record: {e.strerror}") from None
        except (ValueError, KeyError, TypeError) as e:
            # Refuse rather than guess: starting over at bottle 1 could mislabel full bottles.
            raise DriverError(f"{path}: unreadable bottle record ({e}); check the rack, then delete the "
                              "file to start at bottle 1") from None

    def _save(self, next_bottle: int) -> None:
        path = self._state_path
        assert path is not None
        tmp = path.with_name(path.name + ".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"next_bottle": next_bottle}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:
            raise DriverError(f"{path}: cannot save the bottle record: {e.strerror}") from None
        self._next_bottle = next_bottle
