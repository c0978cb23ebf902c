"""Sampling decisions taken on the logger, because the link may be down when it matters.

Both work on canonical values (rain in inches per interval, flow in gpm), reading by
reading, and return the reason to trigger the autosampler, or None.

* :class:`FirstFlush` — once per storm, when the rain since the storm began reaches
  ``rain_in`` and the flow exceeds ``flow_gpm``. A storm ends after ``inter_event`` without
  rain (EPA SYNOP minimum inter-event time, REGULATIONS.md "Storm end").
* :class:`DryWeatherFlow` — the server's dry-weather-flow rule (REGULATIONS.md "Dry weather"
  and "Dry-weather flow present"): less than ``max_rain_in`` of rain in the trailing
  ``lookback``, and flow above the floor in every reading for ``min_duration``. The rain is
  what this logger's own gauge saw, or what the server told it (``rain_report`` command);
  any rain within ``after_rain`` (6 h) means a storm is still running off.
  Without rain data covering the whole lookback the weather is unknown, and it does not fire.
"""

from __future__ import annotations

from collections import deque
from decimal import Decimal

from ..contract.firmware import DryWeatherFlowTrigger, FirstFlushTrigger

_MICRO = Decimal("1000000")


def _micro_in(depth_in: float) -> int:
    """Rain as integer micro-inches, so 50 tips of 0.01 in make exactly 0.50 in."""
    return int(round(depth_in * 1_000_000))


class FirstFlush:
    def __init__(self, settings: FirstFlushTrigger):
        self.s = settings
        self._gap_ns = int(settings.inter_event.total_seconds() * 1e9)
        self._need = int(settings.rain_in * _MICRO)
        self._last_rain_ns: int | None = None
        self._storm_micro = 0
        self._fired = False

    def rain(self, t_ns: int, depth_in: float) -> None:
        if depth_in <= 0:
            return
        if self._last_rain_ns is None or t_ns - self._last_rain_ns > self._gap_ns:
            self._storm_micro, self._fired = 0, False
        self._storm_micro += _micro_in(depth_in)
        self._last_rain_ns = max(t_ns, self._last_rain_ns or t_ns)

    def flow(self, t_ns: int, flow_gpm: float) -> str | None:
        in_storm = self._last_rain_ns is not None and t_ns - self._last_rain_ns <= self._gap_ns
        if in_storm and not self._fired and self._storm_micro >= self._need and flow_gpm > self.s.flow_gpm:
            self._fired = True
            return "first_flush"
        return None


class DryWeatherFlow:
    def __init__(self, settings: DryWeatherFlowTrigger):
        self.s = settings
        self._lookback_ns = int(settings.lookback.total_seconds() * 1e9)
        self._min_ns = int(settings.min_duration.total_seconds() * 1e9)
        self._max_micro = int(settings.max_rain_in * _MICRO)
        self._rain: deque[tuple[int, int]] = deque()   # (t, micro-inches) within the lookback
        self._rain_sum = 0
        self._rain_since_ns: int | None = None         # rain data covers time from here on
        self._after_rain_ns = int(settings.after_rain.total_seconds() * 1e9)
        self._last_rain_ns: int | None = None
        self._told: tuple[int, int] | None = None      # (t, micro-inches in the lookback ending at t)
        self._flow_since_ns: int | None = None
        self._fired = False

    def rain(self, t_ns: int, depth_in: float) -> None:
        if self._rain_since_ns is None:
            self._rain_since_ns = t_ns
        m = _micro_in(depth_in)
        if m > 0:
            self._rain.append((t_ns, m))
            self._rain_sum += m
            self._last_rain_ns = max(t_ns, self._last_rain_ns or t_ns)
        self._expire(t_ns)

    def told(self, t_ns: int, rain_in_lookback: float) -> None:
        """The server's count of the rain in the lookback ending at ``t_ns`` (command ``rain_report``)."""
        self._told = (t_ns, _micro_in(rain_in_lookback))

    def _expire(self, now_ns: int) -> None:
        while self._rain and self._rain[0][0] <= now_ns - self._lookback_ns:
            self._rain_sum -= self._rain.popleft()[1]

    def dry(self, now_ns: int) -> bool | None:
        """True dry, False wet, None unknown (no rain data covering the lookback)."""
        self._expire(now_ns)
        if self._last_rain_ns is not None and now_ns - self._last_rain_ns < self._after_rain_ns:
            return False   # a storm still running off
        if self._rain_since_ns is not None and self._rain_since_ns <= now_ns - self._lookback_ns:
            return self._rain_sum < self._max_micro
        if self._told is not None and now_ns - self._told[0] <= 3600 * 10**9:
            return self._told[1] < self._max_micro
        return None

    def flow(self, t_ns: int, flow_gpm: float) -> str | None:
        if flow_gpm <= self.s.flow_floor_gpm or self.dry(t_ns) is not True:
            self._flow_since_ns, self._fired = None, False   # the episode is over: re-arm
            return None
        if self._flow_since_ns is None:
            self._flow_since_ns = t_ns
        if not self._fired and t_ns - self._flow_since_ns >= self._min_ns:
            self._fired = True
            return "dry_weather_flow"
        return None
