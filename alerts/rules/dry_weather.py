"""Dry weather at an outfall: less than 0.10 in of rain at its gauge(s) in the trailing 72 h.

References
----------
Ramapo ch. 218 and Schenectady ch. 148 Art. II (prohibition of illicit discharges) —
REGULATIONS.md row *Dry weather*: less than 0.10 in in the previous 72 h (IDDE screening,
CMRSWC SOP 1; 40 CFR 122.21(g)(7)(ii) mirror image).
"""

from __future__ import annotations

import enum
from decimal import Decimal

import numpy as np
import pandas as pd

from ._common import ns_index, td_ns
from .storms import decimal_to_micro, to_micro_in

PROVISION = "Ramapo ch. 218 / Schenectady ch. 148 Art. II (illicit discharges); IDDE dry-weather screening"


class DryState(enum.IntEnum):
    UNKNOWN = -1   # rain data does not cover the window: never assumed dry
    WET = 0
    DRY = 1


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
    """Dry-weather state at each time of ``at``.

    Parameters
    ----------
    rain_in : Series [in], indexed by UTC time
        Rain per row at the outfall's gauge(s), zero rows included (they show the gauge was
        reporting). Several gauges: concatenate them; the total is compared.
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
    at_idx = at if isinstance(at, pd.DatetimeIndex) else pd.DatetimeIndex(at)
    t_at = ns_index(at_idx)
    t_r = ns_index(rain_in)
    v = to_micro_in(rain_in.to_numpy())
    if t_r.size and np.any(np.diff(t_r) < 0):
        o = np.argsort(t_r, kind="stable")
        t_r, v = t_r[o], v[o]
    lb = td_ns(lookback)
    cum = np.concatenate(([0], np.cumsum(v)))
    hi = np.searchsorted(t_r, t_at, side="right")
    lo = np.searchsorted(t_r, t_at - lb, side="right")
    total = cum[hi] - cum[lo]
    wet = total >= decimal_to_micro(max_rain_in)
    ar = td_ns(after_rain)
    if ar > 0:
        t_pos = t_r[v > 0]
        k_last = np.searchsorted(t_pos, t_at, side="right") - 1
        recent = (k_last >= 0) & (t_at - t_pos[np.clip(k_last, 0, None)] < ar) if t_pos.size else \
            np.zeros(t_at.size, dtype=bool)
        wet = wet | recent
    ca, cb = rain_coverage(t_r, td_ns(max_gap))
    # covered if one coverage interval holds [t - lookback, t]
    k = np.searchsorted(ca, t_at - lb, side="right") - 1
    ok = k >= 0
    kk = np.clip(k, 0, None)
    covered = ok & (cb[kk] >= t_at) if ca.size else np.zeros(t_at.size, dtype=bool)
    state = np.where(wet, DryState.WET, np.where(covered, DryState.DRY, DryState.UNKNOWN)).astype(np.int8)
    return pd.Series(state, index=at_idx, name="dry_state")
