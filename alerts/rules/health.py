"""Station health: stale stations and low batteries.

References
----------
Both laws, access and monitoring (monitoring equipment kept working and calibrated) —
REGULATIONS.md, *Edge loggers* row: a station that stops reporting cannot show a violation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import ns_index

PROVISION = "Ramapo ch. 218 / Schenectady ch. 148: monitoring equipment at outfalls (kept reporting)"
INTERVAL_HISTORY = 12  # usual interval = the longest of the previous 12 gaps (local: streaming = replay)


def stale_spans(t_ns: np.ndarray, now_ns: int, stale_intervals: int) -> list[tuple[int, int | None, int]]:
    """Spans in which a station sent nothing for ``stale_intervals`` of its usual intervals.

    Parameters
    ----------
    t_ns : sorted unique reading times of the station [UTC ns]
    now_ns : the present [UTC ns]
    stale_intervals : missed intervals before the station is stale

    Returns
    -------
    ``(start_ns, end_ns | None, interval_ns)``: start = the last reading + k intervals (when
    it became stale), end = the reading that resumed (None: still stale at ``now_ns``).
    The usual interval is the longest of the previous 12 gaps (12 needed), so a station
    with two schedules (tips and a 5-min heartbeat, or two sensors a minute apart) is
    judged by its slower one.
    """
    t = np.asarray(t_ns, dtype=np.int64)
    if t.size > 1 and np.any(np.diff(t) <= 0):  # sort + dedupe only when needed (np.unique hashes: slow)
        t = np.sort(t, kind="stable")
        t = t[np.concatenate(([True], t[1:] != t[:-1]))]
    if t.size < INTERVAL_HISTORY + 1:
        return []
    gaps = np.diff(t)
    ends = np.concatenate((t[1:], [now_ns]))          # next reading (or now) after reading i
    h = INTERVAL_HISTORY
    iv = np.lib.stride_tricks.sliding_window_view(gaps, h).max(axis=1)[: t.size - h]  # for i = h .. n-1
    g = ends[h:] - t[h:]
    hit = np.flatnonzero((iv > 0) & (g > stale_intervals * iv))
    out = []
    for k in hit.tolist():
        i = k + h
        out.append((int(t[i] + stale_intervals * iv[k]), int(ends[i]) if i + 1 < t.size else None, int(iv[k])))
    return out


def low_battery(battery_v: pd.Series, threshold_v: float, hysteresis_v: float) -> list[tuple[int, int, bool, float]]:
    """Low-battery episodes: from a reading below ``threshold_v`` [V] until one at or above
    ``threshold_v + hysteresis_v`` [V] (hysteresis, no flapping).

    Returns ``(start_ns, end_ns, open, min_v)`` with end = last reading inside the episode.
    """
    t = ns_index(battery_v)
    v = battery_v.to_numpy(dtype="float64")
    out = []
    n = v.size
    lows = np.flatnonzero(v < threshold_v)
    ok = v >= threshold_v + hysteresis_v
    while lows.size:
        a = int(lows[0])
        rec = np.flatnonzero(ok[a:])
        b = a + int(rec[0]) - 1 if rec.size else n - 1
        out.append((int(t[a]), int(t[b]), not rec.size, float(v[a:b + 1].min())))
        lows = lows[lows > b]
    return out
