"""The simulated instrument behind the same interface as a real driver.

``options.model`` picks what it simulates: ``rain`` (a tipping bucket reporting depth per
interval), ``runoff`` (an area-velocity flow meter at an outfall), ``turbidity`` (a sonde),
``battery``. The world it samples comes from ``env.shared["world"]`` (the demo builds one for
all loggers); a logger started alone builds its own from ``options.seed``.
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ....contract.firmware import Sensor
from ....contract.units import converter
from ....contract.wire import QualityFlag
from ..base import DriverEnv, RawReading
from .world import MIN_NS, Discharge, World, random_storms

_SIM = (QualityFlag.SIMULATED.value,)


class SimOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Literal["rain", "runoff", "turbidity", "battery", "signal"]
    scale: float = Field(default=1.0, gt=0, description="rain multiplier at this place [-]")
    tip_in: float = Field(default=0.01, gt=0, description="rain per tip [in]")
    area_acres: float = Field(default=5.0, gt=0, description="catchment draining to the outfall [acre]")
    runoff_coeff: float = Field(default=0.4, gt=0, le=1, description="rational-method C [-]")
    lag_min: float = Field(default=20.0, gt=0, description="linear-reservoir time constant [min]")
    baseflow_gpm: float = Field(default=0.05, ge=0, description="dry-weather seepage [gpm]")
    noise: float = Field(default=0.05, ge=0, description="sensor noise, in the sensor's unit")
    illicit: list[dict[str, float]] = Field(default_factory=list,
                                            description="[{start_h, hours, gpm}] injected discharges")
    background_ntu: float = Field(default=3.0, ge=0)
    washoff_ntu_per_gpm: float = Field(default=0.05, ge=0, description="turbidity per gpm of runoff [NTU/gpm]")
    start_v: float = Field(default=12.8, gt=0)
    drain_v_per_day: float = Field(default=0.03, ge=0)
    seed: int = 7


class SimDriver:
    name: ClassVar[str] = "sim"
    Options: ClassVar[type[BaseModel]] = SimOptions

    def __init__(self, sensor: Sensor, options: SimOptions, env: DriverEnv):
        self.sensor = sensor
        self.o = options
        self.env = env
        self.world: World | None = env.shared.get("world")
        self._last_idx: int | None = None
        self._illicit = [Discharge(**d) for d in options.illicit]
        # The world is computed in canonical units (in, gpm, NTU, V); report in the sensor's.
        self._from_canonical = 1.0 / converter(sensor.quantity, sensor.unit)(1.0)

    def open(self) -> None:
        if self.world is None:  # a logger started alone: one world for all its sensors
            self.world = self._standalone_world(time.time_ns())

    def _standalone_world(self, t_ns: int) -> World:
        """A week of random weather from ``t_ns``, shared by the logger's sensors, renewed weekly."""
        world = self.env.shared.get("standalone_world")
        if world is None or t_ns >= world.start_ns + int(world.hours * 3600e9) - MIN_NS:
            rng = np.random.default_rng([self.o.seed, t_ns // (7 * 86400 * 10**9)])
            world = World(start_ns=t_ns - t_ns % MIN_NS, hours=24 * 7, seed=self.o.seed,
                          storms=random_storms(rng, 24 * 7))
            self.env.shared["standalone_world"] = world
        return world

    def close(self) -> None:
        pass

    def read(self, t_ns: int) -> list[RawReading]:
        w = self.world
        assert w is not None, "open() first"
        if "world" not in self.env.shared and t_ns >= w.start_ns + int(w.hours * 3600e9) - MIN_NS:
            w = self.world = self._standalone_world(t_ns)
            self._last_idx = None
        i = w.index(t_ns)
        value = getattr(self, f"_{self.o.model}")(w, i) * self._from_canonical
        return [RawReading(t_ns, self.sensor.id, self.sensor.quantity.value, round(float(value), 6),
                           self.sensor.unit, _SIM)]

    # -- models --------------------------------------------------------------------------
    def _rain(self, w: World, i: int) -> float:
        """Depth fallen since the previous read, as whole tips."""
        tips = w.tips(self.o.scale, self.o.tip_in)
        lo = (self._last_idx + 1) if self._last_idx is not None else i
        self._last_idx = i
        return float(tips[lo:i + 1].sum()) * self.o.tip_in

    def _flow_gpm(self, w: World, i: int) -> float:
        q = w.runoff_gpm(self.o.area_acres, self.o.runoff_coeff, self.o.lag_min, self.o.scale)[i]
        hours = i / 60.0
        q += sum(d.gpm for d in self._illicit if d.start_h <= hours < d.start_h + d.hours)
        return q

    def _runoff(self, w: World, i: int) -> float:
        q = self._flow_gpm(w, i) + self.o.baseflow_gpm + w.noise(self.sensor.id + "flow", self.o.noise)[i]
        return max(0.0, q)

    def _turbidity(self, w: World, i: int) -> float:
        q = self._flow_gpm(w, i)
        ntu = self.o.background_ntu + self.o.washoff_ntu_per_gpm * q
        ntu *= float(np.exp(w.noise(self.sensor.id + "turb", self.o.noise)[i]))
        return max(0.0, ntu)

    def _signal(self, w: World, i: int) -> float:
        """Cellular signal [dBm]: a fair rural link, fading a little in heavy rain."""
        return -78.0 - 40.0 * float(w.intensity_in_per_min[i]) + w.noise(self.sensor.id + "sig", 2.0)[i]

    def _battery(self, w: World, i: int) -> float:
        days = i / 1440.0
        solar = 0.15 * max(0.0, np.sin((i % 1440) / 1440 * 2 * np.pi - np.pi / 2))
        return self.o.start_v - self.o.drain_v_per_day * days + solar
