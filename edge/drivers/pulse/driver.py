"""Tipping-bucket rain gauge by pulse counting.

The gauge's reed switch closes once per tip. On a Raspberry Pi the closure pulls a GPIO
line low (gpiozero ``DigitalInputDevice``, imported only when a GPIO line is opened); elsewhere — tests,
a bench without GPIO — any object with ``start(on_edge)`` / ``stop()`` can stand in, handed
to the driver through ``env.shared["pulse_sources"][sensor_id]``. gpiozero itself can run
on its mock pins: put a pin factory in ``env.shared["gpio_pin_factory"]``.

``read(t_ns)`` reports the rain depth fallen since the previous read, in the sensor's unit:
``tips * tip_size``, then the calibration (a gauge's field-check factor is its ``slope``).
The counter lives in ``env.data_dir`` and survives restarts: tips counted before the agent
stopped, and not yet read, are reported by the first read after it starts again. (Tips
while nothing listens to the line are not seen: that gap is the agent's downtime.)

The handover is at-most-once: ``read`` marks the tips reported before returning them, so
an agent killed between that and spooling the reading loses that interval's depth rather
than counting it twice.
"""

from __future__ import annotations

import logging
import math
import time
from datetime import timedelta
from typing import Any, Callable, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ....contract.firmware import Sensor
from ....contract.rules_config import Duration
from ....contract.timeutil import format_duration
from ....contract.units import Quantity, converter
from ...errors import DriverError
from ..base import DriverBase, DriverEnv, RawReading
from ..calibration import make_reading
from .counter import TipCounter

log = logging.getLogger(__name__)

__all__ = ["PulseDriver", "PulseOptions", "PulseSource", "GpioPulseSource"]


class PulseSource(Protocol):
    """Calls ``on_edge(t_s)`` [s, time.monotonic()] for every closure of the switch."""

    def start(self, on_edge: Callable[[float], object]) -> None: ...

    def stop(self) -> None: ...


class GpioPulseSource:
    """A reed switch between a GPIO line (BCM numbering) and ground, through gpiozero."""

    def __init__(self, pin: int, pull_up: bool = True, pin_factory: Any = None):
        self.pin = pin
        self.pull_up = pull_up
        self.pin_factory = pin_factory
        self._button: Any = None

    def start(self, on_edge: Callable[[float], object]) -> None:
        try:
            from gpiozero import DigitalInputDevice
            from gpiozero.exc import GPIOZeroError
        except ImportError:
            raise DriverError("gpiozero is not installed (pip install 'ms4watch[gpio]')") from None
        try:
            # Debounce is ours (TipCounter), so gpiozero hands us every edge with its time. What
            # a Button is but for its hold thread, which wakes 10 times a second to time holds.
            self._button = DigitalInputDevice(self.pin, pull_up=self.pull_up, bounce_time=None,
                                              pin_factory=self.pin_factory)
        except (GPIOZeroError, OSError, RuntimeError) as e:
            raise DriverError(f"GPIO{self.pin}: cannot open: {e}") from None
        self._button.when_activated = lambda *_: on_edge(time.monotonic())

    def stop(self) -> None:
        if self._button is not None:
            self._button.close()
            self._button = None


class PulseOptions(BaseModel):
    """The ``options:`` block of a ``pulse`` sensor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pin: int = Field(ge=0, le=27, description="GPIO line, BCM numbering (GPIO17 is physical pin 11)")
    tip_size: float = Field(gt=0, description="rain depth of one tip, in the sensor's unit (0.01 for 0.01 in)")
    debounce: Duration = Field(default=timedelta(milliseconds=10), description="contact bounce to ignore")
    double_tip: Duration = Field(default=timedelta(seconds=1),
                                 description="a second tip this soon after the last is discarded")
    pull_up: bool = Field(default=True, description="switch to ground with the Pi's pull-up (the usual wiring)")

    @field_validator("double_tip")
    @classmethod
    def _double_tip(cls, v: timedelta) -> timedelta:
        # REGULATIONS.md, "Double tip": a second tip within 1 s is discarded; range 0.1-1 s.
        if not timedelta(seconds=0.1) <= v <= timedelta(seconds=1):
            raise ValueError(f"double_tip must be between 0.1s and 1s (REGULATIONS.md), got {format_duration(v)}")
        return v

    @model_validator(mode="after")
    def _fits(self, info: ValidationInfo) -> "PulseOptions":
        if self.debounce > self.double_tip:
            raise ValueError("debounce must not be longer than double_tip")
        context = info.context or {}
        sensor, config = context.get("sensor"), context.get("config")
        if sensor is None:
            return self
        if sensor.quantity != Quantity.RAIN:
            raise ValueError(f"a pulse gauge measures rain, this sensor says quantity {sensor.quantity.value!r}")
        tip_in = getattr(config, "tip_in", None)
        if tip_in is not None:
            mine = converter(Quantity.RAIN, sensor.unit)(self.tip_size)
            if not math.isclose(mine, float(tip_in), rel_tol=1e-3):
                raise ValueError(f"tip_size {self.tip_size:g} {sensor.unit} is {mine:.4g} in, "
                                 f"but the config's tip_in says {tip_in} in")
        return self


class PulseDriver(DriverBase):
    """Rain depth since the last read, from a tipping bucket."""

    name: ClassVar[str] = "pulse"
    Options: ClassVar[type[BaseModel]] = PulseOptions
    needs_port: ClassVar[bool] = False

    def __init__(self, sensor: Sensor, options: PulseOptions | dict[str, Any], env: DriverEnv):
        super().__init__(sensor, options, env)
        self.counter: TipCounter | None = None
        self._source: PulseSource | None = None

    def open(self) -> None:
        if self._source is not None:
            return
        o = self.options
        self.counter = TipCounter(self.state_file("pulse", "the pulse counter"),
                                  o.debounce.total_seconds(), o.double_tip.total_seconds())
        injected = self.env.shared.get("pulse_sources", {}).get(self.sensor.id)
        source = injected or GpioPulseSource(o.pin, o.pull_up, self.env.shared.get("gpio_pin_factory"))
        source.start(self.counter.edge)
        self._source = source
        if self.counter.pending():
            log.info("sensor %s: %d tips from before the restart will be reported", self.sensor.id,
                     self.counter.pending())

    def close(self) -> None:
        if self._source is not None:
            self._source.stop()
            self._source = None

    def read(self, t_ns: int) -> list[RawReading]:
        if self.counter is None or self._source is None:
            raise DriverError(f"sensor {self.sensor.id}: read() before open()")
        tips = self.counter.take()
        # round away binary noise (7 * 0.01 = 0.07000000000000001) that thresholds would see
        return [make_reading(self.sensor, t_ns, round(tips * self.options.tip_size, 9))]
