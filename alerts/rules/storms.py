"""Storm events from a rain gauge record.

References
----------
Schenectady ch. 148 Art. I (construction inspections): inspect "within 24 hours of the end
of a storm event 0.5 inch or greater" — REGULATIONS.md rows *Qualifying storm*, *Storm end*
(minimum inter-event time 6 h, EPA SYNOP, Driscoll et al. 1989), *Rain gauge resolution*
and *Double tip*.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar
from decimal import Decimal

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import NS_PER_H, NS_PER_MIN, ns_index, td_ns, to_index

PROVISION = "Schenectady ch. 148 Art. I (construction inspections: storm event >= 0.5 in); EPA SYNOP MIT"
MICRO = 1_000_000  # micro-inches per inch: the unit of ``depth_uin``
# Depths are summed as integers of 1/254,000,000 in, exact for records in inches and in
# millimetres alike (1e-6 in = 254, 1e-6 mm = 10): 50 x 0.01 in and 127 x 0.1 mm are both
# 0.50 in exactly (micro-inches were not: 0.1 mm = 3,937.007874 micro-inches, 127 of them
# summed 0.499999 in).
EXACT = 254_000_000
PER_MICRO = EXACT // MICRO   # 254
INTENSITY_WINDOWS_MIN = (5, 15, 60)

COLUMNS = ["start", "end", "first_rain", "depth_in", "depth_uin", "duration_h", "n_rows",
           "peak_i5_in_h", "peak_i15_in_h", "peak_i60_in_h", "qualifying"]


def to_micro_in(depth_in: np.ndarray | pd.Series) -> np.ndarray:
    """Depths [in] as int64 micro-inches, rounded half away from zero (exact sums after this)."""
    a = np.asarray(depth_in, dtype="float64")
    micro: np.ndarray = np.sign(a).astype(np.int64) * np.floor(np.abs(a) * MICRO + 0.5).astype(np.int64)
    return micro


def decimal_to_micro(d: Decimal | float | str) -> int:
    return int((Decimal(str(d)) * MICRO).to_integral_value())


MAX_DEPTH_IN = 1_000_000.0
"""A depth beyond any rain (a broken gauge, a hostile message) counts as this much [in]: far
over every threshold, and 36,000 of them still sum inside int64 units of 1/EXACT in."""


def to_exact(depth_in: np.ndarray | pd.Series) -> np.ndarray:
    """Depths [in] as int64 units of 1/:data:`EXACT` in, rounded half away from zero (exact
    sums after this for depths given to 6 decimals in inches or in millimetres).

    A missing depth (NaN) is no rain; beyond ±:data:`MAX_DEPTH_IN` (infinities included) a
    depth counts as that bound, never wrapping around int64 into a negative depth."""
    a = np.clip(np.nan_to_num(np.asarray(depth_in, dtype="float64"), nan=0.0), -MAX_DEPTH_IN, MAX_DEPTH_IN)
    exact: np.ndarray = np.sign(a).astype(np.int64) * np.floor(np.abs(a) * EXACT + 0.5).astype(np.int64)
    return exact


def decimal_to_exact(d: Decimal | float | str) -> int:
    return int((Decimal(str(d)) * EXACT).to_integral_value())


_Units = TypeVar("_Units", int, np.ndarray)


def exact_to_micro(q: _Units) -> _Units:
    """Units of 1/:data:`EXACT` in as micro-inches, rounded half up (int or int64 array)."""
    return (q + PER_MICRO // 2) // PER_MICRO


def filter_double_tips(t_ns: np.ndarray, window_ns: int) -> np.ndarray:
    """Mask of rows to keep: a row within ``window_ns`` of the previous kept row is a double tip.

    Applies to tip-per-row records (REGULATIONS.md *Double tip*: a second tip within 1 s is
    discarded). Interval records (1 min, 5 min) never have rows that close.
    """
    keep = np.ones(len(t_ns), dtype=bool)
    if len(t_ns) < 2 or window_ns <= 0:
        return keep
    close = np.flatnonzero(np.diff(t_ns) < window_ns) + 1
    for i in close.tolist():  # rare rows only; chains (3 tips within 1 s) handled exactly
        prev = i - 1
        while not keep[prev]:
            prev -= 1
        if t_ns[i] - t_ns[prev] < window_ns:
            keep[i] = False
    return keep


def peak_intensity(t_ns: np.ndarray, depth_uin: np.ndarray, window_min: int) -> float:
    """Largest depth in any window of ``window_min`` minutes ending at a rain row, [in/h].

    Rain rows are the depth fallen in the interval ending at their time, so the window
    ``(t - w, t]`` holds the rows with times in it. NaN when the storm is shorter than
    the window (as the reference tools leave it blank).
    """
    w = window_min * NS_PER_MIN
    if len(t_ns) == 0:
        return float("nan")
    cum = np.concatenate(([0], np.cumsum(depth_uin)))
    lo = np.searchsorted(t_ns, t_ns - w, side="right")
    best = int((cum[1:] - cum[lo]).max())
    return best / EXACT * (60.0 / window_min)


@dataclass(frozen=True)
class StormParams:
    """Parameters of :func:`storm_events` (REGULATIONS.md defaults)."""

    inter_event: timedelta = timedelta(hours=6)
    min_depth_in: Decimal = Decimal("0")            # storms below are dropped [in]
    min_duration: timedelta = timedelta(0)          # storms shorter are dropped
    qualifying_in: Decimal = Decimal("0.50")        # inclusive [in]
    double_tip: timedelta = timedelta(seconds=1)
    start_offset: timedelta = timedelta(0)          # Rainmaker: 1 min (start of first interval)

    def as_dict(self) -> dict[str, Any]:
        return {"inter_event_h": self.inter_event.total_seconds() / 3600,
                "min_depth_in": float(self.min_depth_in),
                "min_duration_h": self.min_duration.total_seconds() / 3600,
                "qualifying_in": float(self.qualifying_in),
                "double_tip_s": self.double_tip.total_seconds(),
                "start_offset_min": self.start_offset.total_seconds() / 60}


def storm_events(rain_in: pd.Series, params: StormParams = StormParams()) -> pd.DataFrame:
    """Split a rain record into storm events.

    Parameters
    ----------
    rain_in : Series [in], indexed by UTC time
        Depth fallen in the interval ending at each time (one row per tip, or per logging
        interval). Zero rows are ignored (they only say the gauge was alive).
    params : StormParams
        ``inter_event`` — a gap between rain rows *longer* than this starts a new storm
        [h]; ``qualifying_in`` — depth at or above which a storm qualifies [in];
        ``min_depth_in`` / ``min_duration`` drop small storms; ``double_tip`` drops a
        row within this of the previous one [s]; ``start_offset`` is subtracted from the
        first rain row's time (1 min dates a storm from the start of its first 1-minute
        interval, Rainmaker's convention).

    Returns
    -------
    DataFrame, one row per storm: ``start``, ``end`` (UTC; end = last rain row),
    ``first_rain`` (time of the first rain row), ``depth_in`` [in], ``depth_uin``
    [micro-inch; summed exactly, then rounded], ``duration_h`` [h] (end - start), ``n_rows``, peak 5/15/60-min
    intensities [in/h], ``qualifying`` (depth >= qualifying_in, exact).

    Notes
    -----
    Depths are rounded to 1/254,000,000 in (:data:`EXACT`) then summed as integers, so 50
    tips of 0.01 in and 127 tips of 0.1 mm are both exactly 0.50 in. Duration filters compare ``end - start`` (with the start offset).

    References
    ----------
    Schenectady ch. 148 Art. I; REGULATIONS.md rows *Qualifying storm*, *Storm end*,
    *Double tip*.
    """
    return _frame(storm_rows(ns_index(rain_in), rain_in.to_numpy(), params))


def storm_rows(t_ns: np.ndarray, rain_in: np.ndarray, params: StormParams = StormParams()) -> list[tuple[Any, ...]]:
    """:func:`storm_events` on arrays (the form the alert engine calls): rain rows' times
    [UTC ns] and depths [in] in, one tuple per storm out, in the order of
    :data:`COLUMNS` without ``depth_in``: (start, end, first_rain [UTC ns], depth [micro-inch],
    duration [h], n_rows, peak 5/15/60-min intensities [in/h], qualifying)."""
    t = np.asarray(t_ns, dtype=np.int64)
    v = to_exact(rain_in)
    if len(t) and np.any(np.diff(t) < 0):
        order = np.argsort(t, kind="stable")
        t, v = t[order], v[order]
    wet = v > 0
    t, v = t[wet], v[wet]
    keep = filter_double_tips(t, td_ns(params.double_tip))
    t, v = t[keep], v[keep]
    if len(t) == 0:
        return []
    mit = td_ns(params.inter_event)
    brk = np.flatnonzero(np.diff(t) > mit) + 1
    first = np.concatenate(([0], brk))
    last = np.concatenate((brk - 1, [len(t) - 1]))
    cum = np.concatenate(([0], np.cumsum(v)))
    depth = cum[last + 1] - cum[first]
    offset = td_ns(params.start_offset)
    start = t[first] - offset
    end = t[last]
    dur = end - start
    ok = (depth >= decimal_to_exact(params.min_depth_in)) & (dur >= td_ns(params.min_duration))
    qual = decimal_to_exact(params.qualifying_in)
    rows = []
    for i in np.flatnonzero(ok).tolist():
        a, b = int(first[i]), int(last[i]) + 1
        peaks = [peak_intensity(t[a:b], v[a:b], w) for w in INTENSITY_WINDOWS_MIN]
        rows.append((int(start[i]), int(end[i]), int(t[a]), int(exact_to_micro(int(depth[i]))), float(dur[i]) / NS_PER_H,
                     b - a, *peaks, bool(depth[i] >= qual)))
    return rows


def _frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    import pandas as pd
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=d) for c, d in zip(COLUMNS, [
            "datetime64[ns, UTC]", "datetime64[ns, UTC]", "datetime64[ns, UTC]", "float64", "int64",
            "float64", "int64", "float64", "float64", "float64", "bool"])})
    a = np.array([r[0] for r in rows], dtype=np.int64)
    b = np.array([r[1] for r in rows], dtype=np.int64)
    f = np.array([r[2] for r in rows], dtype=np.int64)
    depth = np.array([r[3] for r in rows], dtype=np.int64)
    return pd.DataFrame({
        "start": to_index(a), "end": to_index(b), "first_rain": to_index(f),
        "depth_in": depth / MICRO, "depth_uin": depth,
        "duration_h": [r[4] for r in rows], "n_rows": [r[5] for r in rows],
        "peak_i5_in_h": [r[6] for r in rows], "peak_i15_in_h": [r[7] for r in rows],
        "peak_i60_in_h": [r[8] for r in rows], "qualifying": [r[9] for r in rows],
    })
