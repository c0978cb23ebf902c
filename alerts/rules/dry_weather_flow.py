"""Dry-weather flow episodes at an outfall (illicit discharge detection).

References
----------
Ramapo ch. 218 and Schenectady ch. 148 Art. II (prohibition of illicit discharges and
connections; exempt flows) — REGULATIONS.md rows *Dry weather* and *Dry-weather flow
present* (flow above the site's noise floor sustained >= 30 min).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd

from ._common import episodes, ns_index, td_ns, to_index
from .dry_weather import DryState

PROVISION = ("Ramapo ch. 218 / Schenectady ch. 148 Art. II: prohibition of illicit discharges; "
             "dry weather < 0.10 in in 72 h, flow above floor >= 30 min")

EPISODE_COLUMNS = ["start", "end", "open", "peak_gpm", "n_readings"]


def _episode_frame(t: np.ndarray, val: np.ndarray, eps: list[tuple[int, int, bool]], peak_name: str) -> pd.DataFrame:
    a = np.array([e[0] for e in eps], dtype=np.int64)
    b = np.array([e[1] for e in eps], dtype=np.int64)
    return pd.DataFrame({
        "start": to_index(t[a]), "end": to_index(t[b]), "open": np.array([e[2] for e in eps], dtype=bool),
        peak_name: np.array([float(np.nanmax(val[x:y + 1])) for x, y in zip(a, b)], dtype=np.float64),
        "n_readings": b - a + 1,
    })


def dry_weather_flow(flow_gpm: pd.Series, dry: pd.Series, *, floor_gpm: float = 0.5,
                     min_duration=timedelta(minutes=30), rearm=None) -> pd.DataFrame:
    """Episodes of flow above the floor in every reading for at least ``min_duration`` while dry.

    Parameters
    ----------
    flow_gpm : Series [gpm], indexed by UTC time
        Outfall flow readings (canonical gpm), sorted, one per time.
    dry : Series of :class:`DryState`, indexed like ``flow_gpm``
        From :func:`~.dry_weather.is_dry_weather` at the flow times.
    floor_gpm : float [gpm]
        The outfall's noise floor: flow strictly above it counts.
    min_duration : timedelta [min]
        From the first to the last reading of the run (readings at 0 and 30 min: 30 min).
    rearm : timedelta, optional
        Runs closer than this are one episode (hysteresis); default ``min_duration``.

    Returns
    -------
    DataFrame: ``start``, ``end`` (first and last readings meeting the condition),
    ``open`` (still meeting it at the last reading), ``peak_gpm`` [gpm], ``n_readings``.

    References
    ----------
    REGULATIONS.md *Dry-weather flow present*; Ramapo ch. 218; Schenectady ch. 148 Art. II.
    """
    t = ns_index(flow_gpm)
    v = flow_gpm.to_numpy(dtype="float64")
    d = np.asarray(dry.to_numpy(), dtype=np.int8)
    cond = (v > floor_gpm) & (d == DryState.DRY)
    md = td_ns(min_duration)
    eps = episodes(t, cond, md, td_ns(rearm) if rearm is not None else md)
    return _episode_frame(t, v, eps, "peak_gpm")


def unknown_dry_flow(flow_gpm: pd.Series, dry: pd.Series, *, floor_gpm: float = 0.5,
                     min_duration=timedelta(minutes=30)) -> pd.DataFrame:
    """Episodes of sustained flow above the floor while dry weather is UNKNOWN (rain data gap).

    Same parameters and result as :func:`dry_weather_flow`: a data-gap notice, since the
    law's question (is this dry-weather flow?) cannot be answered.
    """
    t = ns_index(flow_gpm)
    v = flow_gpm.to_numpy(dtype="float64")
    d = np.asarray(dry.to_numpy(), dtype=np.int8)
    cond = (v > floor_gpm) & (d == DryState.UNKNOWN)
    md = td_ns(min_duration)
    return _episode_frame(t, v, episodes(t, cond, md, md), "peak_gpm")
