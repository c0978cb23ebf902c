"""The driver interface. One folder per driver under ``edge/drivers/<name>/`` holding the
driver, a commented ``sample.yaml`` and its README; its tests live in tests/edge/drivers/.

A driver class has:

* ``name`` — what ``driver:`` says in a firmware config,
* ``Options`` — a pydantic model of its ``options:`` block, checked at config load time
  (validation is not I/O: no port is opened to validate),
* ``__init__(sensor, options, env)`` — no I/O either,
* ``open()`` / ``close()`` — acquire and release the port, GPIO line, …,
* ``read(t_ns) -> list[RawReading]`` — one sample; raises
  :class:`~ms4watch.edge.errors.DriverError` when the instrument fails, never a pyserial or
  minimalmodbus exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from ...contract.firmware import Sensor

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


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class DriverEnv:
    """What the agent hands every driver: shared objects (the simulated world in the demo),
    a data directory for state that must survive restarts (pulse counters)."""

    data_dir: Any = None
    shared: dict[str, Any] = field(default_factory=dict)


class Driver(Protocol):
    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]]
    sensor: Sensor  # the agent names the sensor of a failed read from it

    def open(self) -> None: ...

    def read(self, t_ns: int) -> list[RawReading]: ...

    def close(self) -> None: ...
