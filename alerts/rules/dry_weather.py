"""Dry weather at an outfall: less than 0.10 in of rain in the trailing 72 h.

The 0.10 in is a depth of rain at the outfall. A gauge measures that depth at one point;
two gauges that each saw the same 0.06 in shower do not make 0.12 in at the outfall. So
each gauge is judged on its own (:func:`is_dry_weather`) and the outfall's state combines
them without ever adding depths (:func:`combine_dry_states`): the wettest gauge decides.

References
----------
Ramapo ch. 218 and Schenectady ch. 148 Art. II (prohibition of illicit discharges) —
REGULATIONS.md row *Dry weather*: less than 0.10 in in the previous 72 h (IDDE screening,
CMRSWC SOP 1; 40 CFR 122.21(g)(7)(ii) mirror image).
"""

from __future__ import annotations

import enum
from decimal import Decimal
from typing import Mapping

import numpy as np
import pandas as pd

from ._common import ns_index, td_ns
from .storms import MICRO, decimal_to_micro, to_micro_in

PROVISION = "Ramapo ch. 218 / Schenectady ch. 148 Art. II (illicit discharges); IDDE dry-weather screening"


class DryState(enum.IntEnum):
    UNKNOWN = -1   # rain data does not cover the window: never assumed dry
    WET = 0
    DRY = 1


# The codes as plain ints for numpy (an IntEnum member costs numpy ~10 us to convert, and
# ~1 us to look up on its class)
UNKNOWN, WET, DRY = int(DryState.UNKNOWN), int(DryState.WET), int(DryState.DRY)


def rain_coverage(rain_t_ns: np.ndarray, max_gap_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """Intervals ``[a, b]`` (ns) covered by a gauge's rows (zeros included).

    Consecutive rows closer than ``max_gap_ns`` cover the time between them; a row covers
    the ``max_gap_ns`` before and after it (a reporting gauge is trusted until it has been
    silent for ``max_gap_ns``). Returns start and end arrays.
    """
    t = np.asarray(rain_t_ns, dtype=np.int64)
    if t.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    brk = np.flatnonzero(np.diff(t) > max_gap_ns) + 1
    first = np.concatenate(([0], brk))
    last = np.concatenate((brk - 1, [t.size - 1]))
    return t[first] - max_gap_ns, t[last] + max_gap_ns


def is_dry_weather(rain_in: pd.Series, at: pd.DatetimeIndex | pd.Series, *,
                   lookback=pd.Timedelta(hours=72), max_rain_in: Decimal = Decimal("0.10"),
                   max_gap=pd.Timedelta(hours=1), after_rain=pd.Timedelta(0)) -> pd.Series:
    """Dry-weather state at each time of ``at``, judged on one rain gauge.

    Parameters
    ----------
    rain_in : Series [in], indexed by UTC time
        Rain per row at *one* gauge, zero rows included (they show the gauge was
        reporting). Never concatenate gauges: depths at different points do not add up
        (use :func:`outfall_dry_weather` for an outfall with several gauges).
    at : DatetimeIndex (UTC)
        Times to judge (typically the outfall's flow readings).
    lookback : timedelta [h]
        Trailing window ``(t - lookback, t]``; 72 h by default (48–72 h allowed).
    max_rain_in : Decimal [in]
        Strictly less than this in the window is dry (0.10 in: 0.09 dry, 0.10 wet).
    max_gap : timedelta
        Rows further apart than this leave a gap: a window touching a gap is UNKNOWN.
    after_rain : timedelta [h]
        Any rain in ``(t - after_rain, t]`` makes ``t`` WET however little has fallen: a
        storm is not dry weather while it runs off (its first 0.09 in would otherwise
        make its runoff look like an illicit discharge). The registry default is the
        storm's minimum inter-event time, 6 h (EPA SYNOP; REGULATIONS.md *Storm end*);
        0 turns it off.

    Returns
    -------
    Series of :class:`DryState` (int) indexed like ``at``: DRY, WET, or UNKNOWN when the
    rain rows do not cover the whole window (a data gap is never assumed dry). A window
    already holding 0.10 in or more is WET even with a gap.

    References
    ----------
    REGULATIONS.md row *Dry weather*; Ramapo ch. 218, Schenectady ch. 148 Art. II.
    """
    state, _ = _gauge_state(rain_in, at, lookback=lookback, max_rain_in=max_rain_in, max_gap=max_gap,
                            after_rain=after_rain)
    return state


def _gauge_state(rain_in: pd.Series, at, *, lookback, max_rain_in, max_gap, after_rain) -> tuple[pd.Series, np.ndarray]:
    """:func:`is_dry_weather` and the depth in each window [micro-inch] (int64)."""
    at_idx = at if isinstance(at, pd.DatetimeIndex) else pd.DatetimeIndex(at)
    state, total = gauge_dry_state(ns_index(rain_in), rain_in.to_numpy(), ns_index(at_idx), lookback_ns=td_ns(lookback),
                                   max_rain_uin=decimal_to_micro(max_rain_in), max_gap_ns=td_ns(max_gap),
                                   after_rain_ns=td_ns(after_rain))
    return pd.Series(state, index=at_idx, name="dry_state"), total


def gauge_dry_state(rain_t_ns: np.ndarray, rain_in: np.ndarray, at_ns: np.ndarray, *, lookback_ns: int,
                    max_rain_uin: int, max_gap_ns: int, after_rain_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`is_dry_weather` on arrays (the form the alert engine calls): one gauge's rows
    (times [UTC ns], depths [in]) judged at the times ``at_ns`` [UTC ns]; durations in ns,
    ``max_rain_uin`` in micro-inches. Returns the :class:`DryState` codes (int8) and the depth
    in each trailing window [micro-inch] (int64)."""
    t_at = np.asarray(at_ns, dtype=np.int64)
    t_r = np.asarray(rain_t_ns, dtype=np.int64)
    v = to_micro_in(rain_in)
    if t_r.size and np.any(np.diff(t_r) < 0):
        o = np.argsort(t_r, kind="stable")
        t_r, v = t_r[o], v[o]
    lb = lookback_ns
    cum = np.concatenate(([0], np.cumsum(v)))
    hi = np.searchsorted(t_r, t_at, side="right")
    lo = np.searchsorted(t_r, t_at - lb, side="right")
    total = cum[hi] - cum[lo]
    wet = total >= max_rain_uin
    ar = after_rain_ns
    if ar > 0:
        t_pos = t_r[v > 0]
        k_last = np.searchsorted(t_pos, t_at, side="right") - 1
        recent = (k_last >= 0) & (t_at - t_pos[np.clip(k_last, 0, None)] < ar) if t_pos.size else \
            np.zeros(t_at.size, dtype=bool)
        wet = wet | recent
    ca, cb = rain_coverage(t_r, max_gap_ns)
    # covered if one coverage interval holds [t - lookback, t]
    k = np.searchsorted(ca, t_at - lb, side="right") - 1
    ok = k >= 0
    kk = np.clip(k, 0, None)
    covered = ok & (cb[kk] >= t_at) if ca.size else np.zeros(t_at.size, dtype=bool)
    state = np.where(wet, WET, np.where(covered, DRY, UNKNOWN)).astype(np.int8)
    return state, total


def combine_dry_states(states: pd.DataFrame) -> pd.Series:
    """The outfall's dry-weather state from its gauges' states (one column per gauge).

    WET if any gauge is WET (a gauge with coverage that is wet, or a gauge with a gap whose
    window already holds the threshold or recent rain: observed rain is never ignored);
    else DRY if at least one gauge is DRY (has coverage and is dry: every gauge with
    coverage is then dry); else UNKNOWN (no gauge covers the window). Depths are never
    added: the wettest gauge decides. No gauge at all: UNKNOWN.
    """
    return pd.Series(combine_dry_codes(states.to_numpy(dtype=np.int8)), index=states.index, name="dry_state")


def combine_dry_codes(states: np.ndarray) -> np.ndarray:
    """:func:`combine_dry_states` on an (n readings, n gauges) array of :class:`DryState` codes."""
    a = np.asarray(states, dtype=np.int8)
    if a.shape[1] == 0:
        return np.full(len(a), UNKNOWN, dtype=np.int8)
    if a.shape[1] == 1:
        return a[:, 0].copy()   # one gauge: its own state
    wet = (a == WET).any(axis=1)
    dry = (a == DRY).any(axis=1)
    return np.where(wet, WET, np.where(dry, DRY, UNKNOWN)).astype(np.int8)


def outfall_dry_weather(rain_by_gauge: Mapping[str, pd.Series], at: pd.DatetimeIndex | pd.Series, *,
                        lookback=pd.Timedelta(hours=72), max_rain_in: Decimal = Decimal("0.10"),
                        max_gap=pd.Timedelta(hours=1), after_rain=pd.Timedelta(0)
                        ) -> tuple[pd.Series, pd.DataFrame, pd.DataFrame]:
    """Dry-weather state of an outfall served by one or more rain gauges.

    Parameters
    ----------
    rain_by_gauge : mapping gauge id -> Series [in], indexed by UTC time
        Each gauge's rows (zeros included), as for :func:`is_dry_weather`.
    at, lookback, max_rain_in, max_gap, after_rain
        As for :func:`is_dry_weather`, applied to each gauge on its own.

    Returns
    -------
    ``(state, per_gauge, depth_in)``: the outfall's :class:`DryState` at each time
    (:func:`combine_dry_states`), each gauge's state (DataFrame, one column per gauge) and
    each gauge's rain in the trailing window [in] (DataFrame, same shape).

    Notes
    -----
    The outfall is DRY when every gauge with coverage is dry and at least one has
    coverage; a gauge without coverage (dead, or not yet reporting) is left out unless the
    rain it did record already makes the window wet.

    References
    ----------
    REGULATIONS.md row *Dry weather* (less than 0.10 in of rain in the previous 72 h: a
    depth at the outfall); Ramapo ch. 218, Schenectady ch. 148 Art. II.
    """
    at_idx = at if isinstance(at, pd.DatetimeIndex) else pd.DatetimeIndex(at)
    gauges = list(rain_by_gauge)
    state, per_gauge, depth = outfall_dry_codes(
        {g: (ns_index(r), r.to_numpy()) for g, r in rain_by_gauge.items()}, ns_index(at_idx),
        lookback_ns=td_ns(lookback), max_rain_uin=decimal_to_micro(max_rain_in), max_gap_ns=td_ns(max_gap),
        after_rain_ns=td_ns(after_rain))
    return (pd.Series(state, index=at_idx, name="dry_state"),
            pd.DataFrame(per_gauge, index=at_idx, columns=gauges),
            pd.DataFrame(depth, index=at_idx, columns=gauges, dtype=np.float64))


def outfall_dry_codes(rain_by_gauge: Mapping[str, tuple[np.ndarray, np.ndarray]], at_ns: np.ndarray, *,
                      lookback_ns: int, max_rain_uin: int, max_gap_ns: int, after_rain_ns: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`outfall_dry_weather` on arrays (the form the alert engine calls).

    ``rain_by_gauge``: gauge id -> (times [UTC ns], depths [in]); durations in ns,
    ``max_rain_uin`` in micro-inches (:func:`gauge_dry_state`). Returns the outfall's
    :class:`DryState` codes (n,), each gauge's codes (n, gauges) and each gauge's depth in
    the trailing window [in] (n, gauges), gauges in the mapping's order.
    """
    t_at = np.asarray(at_ns, dtype=np.int64)
    n, k = t_at.size, len(rain_by_gauge)
    per_gauge = np.empty((n, k), dtype=np.int8)
    depth = np.empty((n, k), dtype=np.float64)
    for j, (t, v) in enumerate(rain_by_gauge.values()):
        per_gauge[:, j], total = gauge_dry_state(t, v, t_at, lookback_ns=lookback_ns, max_rain_uin=max_rain_uin,
                                                 max_gap_ns=max_gap_ns, after_rain_ns=after_rain_ns)
        depth[:, j] = total / MICRO
    return combine_dry_codes(per_gauge), per_gauge, depth
