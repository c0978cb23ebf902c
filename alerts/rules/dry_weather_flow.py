"""Dry-weather flow episodes at an outfall (illicit discharge detection).

References
----------
Ramapo ch. 218 and Schenectady ch. 148 Art. II (prohibition of illicit discharges and
connections; exempt flows) — REGULATIONS.md rows *Dry weather* and *Dry-weather flow
present* (flow above the site's noise floor sustained >= 30 min).
"""

from __future__ import annotations

from datetime import timedelta

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import DEFAULT_MAX_GAP, episodes, in_order, ns_index, silence_ns, td_ns, to_index
from .dry_weather import DryState

# The law only: the rule's numbers are the town's (registry ``rules:``), stated by alerts/kinds/.
PROVISION = ("Ramapo ch. 218 / Schenectady ch. 148 Art. II: prohibition of illicit discharges; "
             "IDDE dry-weather screening")

EPISODE_COLUMNS = ["start", "end", "open", "peak_gpm", "n_readings"]


def flow_episodes(t_ns: np.ndarray, flow_gpm: np.ndarray, dry_state: np.ndarray, state: DryState, *,
                  floor_gpm: float, min_duration_ns: int, rearm_ns: int,
                  max_gap_ns: int) -> list[tuple[int, int, bool, float, int]]:
    """Runs of flow above ``floor_gpm`` [gpm] in every reading while the dry-weather code is
    ``state``, lasting ``min_duration_ns``, runs closer than ``rearm_ns`` joined: the arrays
    form of :func:`dry_weather_flow` and :func:`unknown_dry_flow` (what the alert engine
    calls). Returns ``(start_ns, end_ns, open, peak_gpm, n_readings)`` per episode.

    "Sustained" (REGULATIONS.md *Dry-weather flow present*) is what the readings show: two
    consecutive readings further apart than ``max_gap_ns`` [ns], the flow station's stale
    threshold (``rules.stale_intervals`` x its expected report interval: the silence after
    which the stale-station rule, :func:`.health.stale_spans`, calls it stale), end a run;
    never less than ``min_duration_ns``. A logger silent all night between two readings
    above the floor saw no flow sustained through the night; one reporting every 30 min, as
    it should, did."""
    t = np.asarray(t_ns, dtype=np.int64)
    v = np.asarray(flow_gpm, dtype=np.float64)
    cond = (v > floor_gpm) & (np.asarray(dry_state, dtype=np.int8) == state)
    gap = silence_ns(max_gap_ns, min_duration_ns)
    return [(int(t[a]), int(t[b]), is_open, float(np.nanmax(v[a:b + 1])), b - a + 1)
            for a, b, is_open in episodes(t, cond, min_duration_ns, rearm_ns, max_gap_ns=gap)]


def _readings(flow_gpm: pd.Series, dry: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The flow readings in order, each time once, without those that have no value (a
    ``sensor_error`` reading is no reading, as the engine and replay skip it: a run of flow
    goes on across it as across a minute the logger missed), and their dry-weather states."""
    flow_gpm, dry = in_order(flow_gpm), in_order(dry)
    has_value = flow_gpm.notna()
    if not has_value.all():
        flow_gpm = flow_gpm[has_value]
        dry = dry[dry.index.isin(flow_gpm.index)]
    return flow_gpm, dry


def _episode_frame(eps: list[tuple[int, int, bool, float, int]], peak_name: str) -> pd.DataFrame:
    import pandas as pd
    return pd.DataFrame({
        "start": to_index(np.array([e[0] for e in eps], dtype=np.int64)),
        "end": to_index(np.array([e[1] for e in eps], dtype=np.int64)),
        "open": np.array([e[2] for e in eps], dtype=bool),
        peak_name: np.array([e[3] for e in eps], dtype=np.float64),
        "n_readings": np.array([e[4] for e in eps], dtype=np.int64),
    })


def dry_weather_flow(flow_gpm: pd.Series, dry: pd.Series, *, floor_gpm: float = 0.5,
                     min_duration: timedelta = timedelta(minutes=30), rearm: timedelta | None = None,
                     max_gap: timedelta = DEFAULT_MAX_GAP) -> pd.DataFrame:
    """Episodes of flow above the floor in every reading for at least ``min_duration`` while dry.

    Parameters
    ----------
    flow_gpm : Series [gpm], indexed by UTC time
        Outfall flow readings (canonical gpm). Readings out of order are sorted; a time
        given twice keeps its first reading (as the streaming engine's buffers do); a
        reading without a value (NaN: ``sensor_error``) is no reading, as for the engine.
    dry : Series of :class:`DryState`, indexed like ``flow_gpm``
        From :func:`~.dry_weather.is_dry_weather` at the flow times.
    floor_gpm : float [gpm]
        The outfall's noise floor: flow strictly above it counts.
    min_duration : timedelta [min]
        From the first to the last reading of the run (readings at 0 and 30 min: 30 min).
    rearm : timedelta, optional
        Runs closer than this are one episode (hysteresis); default ``min_duration``.
    max_gap : timedelta [min]
        The flow station's stale threshold, ``rules.stale_intervals`` x its expected report
        interval (default 3 x 15 min): consecutive readings further apart than this (never
        less than ``min_duration``) end a run, since a silent logger shows nothing sustained.

    Returns
    -------
    DataFrame: ``start``, ``end`` (first and last readings meeting the condition),
    ``open`` (still meeting it at the last reading), ``peak_gpm`` [gpm], ``n_readings``.

    References
    ----------
    REGULATIONS.md *Dry-weather flow present*; Ramapo ch. 218; Schenectady ch. 148 Art. II;
    the stale-station rule (docs/rules.md *health*) for what a silence is.
    """
    md = td_ns(min_duration)
    flow_gpm, dry = _readings(flow_gpm, dry)
    return _episode_frame(flow_episodes(ns_index(flow_gpm), flow_gpm.to_numpy(dtype="float64"), dry.to_numpy(),
                                        DryState.DRY, floor_gpm=floor_gpm, min_duration_ns=md,
                                        rearm_ns=td_ns(rearm) if rearm is not None else md,
                                        max_gap_ns=td_ns(max_gap)), "peak_gpm")


def unknown_dry_flow(flow_gpm: pd.Series, dry: pd.Series, *, floor_gpm: float = 0.5,
                     min_duration: timedelta = timedelta(minutes=30),
                     max_gap: timedelta = DEFAULT_MAX_GAP) -> pd.DataFrame:
    """Episodes of sustained flow above the floor while dry weather is UNKNOWN (rain data gap).

    Same parameters and result as :func:`dry_weather_flow`: a data-gap notice, since the
    law's question (is this dry-weather flow?) cannot be answered.
    """
    md = td_ns(min_duration)
    flow_gpm, dry = _readings(flow_gpm, dry)
    return _episode_frame(flow_episodes(ns_index(flow_gpm), flow_gpm.to_numpy(dtype="float64"), dry.to_numpy(),
                                        DryState.UNKNOWN, floor_gpm=floor_gpm, min_duration_ns=md, rearm_ns=md,
                                        max_gap_ns=td_ns(max_gap)),
                          "peak_gpm")
