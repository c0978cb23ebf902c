"""A simulated watershed for the demo: rain, runoff, turbidity and batteries that hang
together physically.

* Rain: storms as events (start, duration, depth) with a stochastic hyetograph — a gamma
  shaped intensity curve with multiplicative noise — either listed (the demo's week) or
  drawn from a Poisson arrival process (``random_storms``). Each gauge sees the storm
  scaled by its own factor (spatial variation).
* Runoff at an outfall: rational-method inflow ``Q = C·i·A`` (i in in/h, A in acres gives
  cfs) routed through a linear reservoir (time constant ``lag_min``) plus a tiny baseflow;
  an illicit discharge adds a constant flow during its window.
* Turbidity: background plus a wash-off term driven by the routed runoff (construction
  sites below have a high gain), with sensor noise.

Everything is precomputed on a 1-minute grid with numpy from a seed, so every simulated
sensor in every logger sees the same world and the demo is reproducible.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

MIN_NS = 60_000_000_000


@dataclass(frozen=True)
class Storm:
    start_h: float   # hours after the world's start
    hours: float
    depth_in: float


@dataclass(frozen=True)
class Discharge:
    start_h: float
    hours: float
    gpm: float


def demo_week() -> list[Storm]:
    """The demo's storyline: a qualifying storm, a trace shower, a long dry spell (where the
    illicit discharge is injected), and a moderate storm at the end."""
    return [Storm(8.0, 6.0, 0.85), Storm(30.0, 1.5, 0.04), Storm(140.0, 4.0, 0.35)]


def random_storms(rng: np.random.Generator, hours: float, mean_gap_h: float = 60.0) -> list[Storm]:
    """Poisson storm arrivals, exponential durations, gamma depths (humid-climate summer)."""
    out, t = [], float(rng.exponential(mean_gap_h / 2))
    while t < hours:
        dur = float(np.clip(rng.exponential(5.0), 0.5, 30))
        depth = float(np.round(rng.gamma(0.9, 0.35), 2))
        if depth >= 0.01:
            out.append(Storm(t, dur, depth))
        t += dur + float(rng.exponential(mean_gap_h))
    return out


@dataclass
class World:
    start_ns: int
    hours: float
    seed: int = 7
    storms: list[Storm] = field(default_factory=demo_week)

    def __post_init__(self) -> None:
        self.n = int(np.ceil(self.hours * 60)) + 1
        self._rng = np.random.default_rng(self.seed)
        self.intensity_in_per_min = self._hyetograph()
        self._cache: dict[tuple, np.ndarray] = {}

    # -- rain ------------------------------------------------------------------------------
    def _hyetograph(self) -> np.ndarray:
        rain = np.zeros(self.n)
        for s in self.storms:
            i0 = int(s.start_h * 60)
            m = max(1, int(s.hours * 60))
            x = np.linspace(0.01, 1, m)
            shape = x ** 1.5 * np.exp(-x / 0.25)          # early peak, long tail
            shape *= self._rng.lognormal(0, 0.5, m)        # gusts
            shape = shape / shape.sum() * s.depth_in
            i1 = min(self.n, i0 + m)
            if i1 > i0:  # a storm past the end of the window does not fall
                rain[i0:i1] += shape[: i1 - i0]
        return rain

    def tips(self, scale: float, tip_in: float) -> np.ndarray:
        """Tip counts per minute for a gauge: quantised cumulative depth (no depth is lost)."""
        key = ("tips", scale, tip_in)
        if key not in self._cache:
            cum = np.floor(np.cumsum(self.intensity_in_per_min * scale) / tip_in + 1e-9)
            self._cache[key] = np.diff(cum, prepend=0.0)
        return self._cache[key]

    def index(self, t_ns: int) -> int:
        """The minute of ``t_ns`` on the grid, held to its first and last [-]. Plain integers:
        ``np.clip`` on one number costs ~6 µs (an array made and unmade), and every simulated
        reading asks this once."""
        return min(max((t_ns - self.start_ns) // MIN_NS, 0), self.n - 1)

    # -- runoff ----------------------------------------------------------------------------
    def runoff_gpm(self, area_acres: float, coeff: float, lag_min: float, scale: float = 1.0) -> np.ndarray:
        key = ("runoff", area_acres, coeff, lag_min, scale)
        if key not in self._cache:
            i_in_per_h = self.intensity_in_per_min * scale * 60.0
            inflow_gpm = coeff * i_in_per_h * area_acres * 1.008 * 448.83   # acre·in/h → cfs → gpm
            out = np.empty(self.n)
            q, k = 0.0, 1.0 / max(lag_min, 1.0)
            for j, qin in enumerate(inflow_gpm):   # linear reservoir, 1-min steps
                q += (qin - q) * k
                out[j] = q
            self._cache[key] = out
        return self._cache[key]

    def noise(self, key: str, sigma: float) -> np.ndarray:
        """Reproducible per-sensor noise series."""
        ck = ("noise", key, sigma)
        if ck not in self._cache:
            rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
            self._cache[ck] = rng.normal(0, sigma, self.n)
        return self._cache[ck]
