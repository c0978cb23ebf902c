"""The driver interface. One folder per driver under ``edge/drivers/<name>/`` holding the
driver, a commented ``sample.yaml`` and its README; its tests live in tests/edge/drivers/.

A driver class has:

* ``name`` — what ``driver:`` says in a firmware config,
* ``Options`` — a pydantic model of its ``options:`` block, checked at config load time
  (validation is not I/O: no port is opened to validate),
* ``__init__(sensor, options, env)`` — no I/O either (:class:`DriverBase` does the usual part;
  drivers on a serial port add :class:`~.serialport.OnSharedPort`),
* ``open()`` / ``close()`` — acquire and release the port, GPIO line, …,
* ``read(t_ns) -> list[RawReading]`` — one sample; raises
  :class:`~ms4watch.edge.errors.DriverError` when the instrument fails, never a pyserial or
  minimalmodbus exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from ...contract.firmware import Sensor
from ..errors import DriverError

M = TypeVar("M", bound=BaseModel)


class RawReading(NamedTuple):
    """A reading as a driver takes it, in the sensor's own unit."""

    time_ns: int
    sensor: str
    quantity: str
    value: float | None
    unit: str
    flags: tuple[str, ...] = ()


def as_options(model: type[M], options: "M | dict[str, Any]") -> M:
    """A driver's options: already validated (the agent's path), or a dict to validate (tests, tools)."""
    return options if isinstance(options, model) else model.model_validate(options)


class DriverBase:
    """What every real driver's ``__init__`` does: keep the sensor, its validated options and
    the environment (no I/O). A driver whose options need the sensor to validate overrides
    :meth:`validated`."""

    Options: ClassVar[type[BaseModel]]

    def __init__(self, sensor: Sensor, options: Any, env: "DriverEnv"):
        self.sensor = sensor
        self.options = self.validated(options, sensor)
        self.env = env

    @classmethod
    def validated(cls, options: Any, sensor: Sensor) -> Any:
        return as_options(cls.Options, options)

    def state_file(self, kind: str, what: str) -> Path:
        """``<data_dir>/<kind>-<sensor>.json``, for state that must survive restarts; the
        directory is made if needed. ``what`` names the state in the error when there is none."""
        if self.env.data_dir is None:
            raise DriverError(f"sensor {self.sensor.id}: {what} needs a data directory")
        data_dir = Path(self.env.data_dir)
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DriverError(f"{data_dir}: cannot create: {e.strerror}") from None
        return data_dir / f"{kind}-{self.sensor.id}.json"


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class DriverEnv:
    """What the agent hands every driver: shared objects (the simulated world in the demo),
    a data directory for state that must survive restarts (pulse counters), and where the
    lock files that share serial ports with other processes live (``lock_dir``, default the
    data directory: a calibration run gives its drivers a data directory of their own and
    the agent's as ``lock_dir``)."""

    data_dir: Any = None
    shared: dict[str, Any] = field(default_factory=dict)
    lock_dir: Any = None

    @property
    def locks(self) -> Any:
        return self.lock_dir if self.lock_dir is not None else self.data_dir


class Driver(Protocol):
    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]]
    sensor: Sensor  # the agent names the sensor of a failed read from it

    def open(self) -> None: ...

    def read(self, t_ns: int) -> list[RawReading]: ...

    def close(self) -> None: ...
