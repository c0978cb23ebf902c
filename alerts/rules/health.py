"""Station health: stale stations and low batteries.

References
----------
Both laws, access and monitoring (monitoring equipment kept working and calibrated) —
REGULATIONS.md, *Edge loggers* row: a station that stops reporting cannot show a violation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import ns_index

PROVISION = "Ramapo ch. 218 / Schenectady ch. 148: monitoring equipment at outfalls (kept reporting)"


def stale_spans(t_ns: np.ndarray, now_ns: int, stale_intervals: int, interval_ns: int,
                since_ns: int | None = None) -> list[tuple[int, int | None, int]]:
    """Spans in which a station sent nothing for more than ``stale_intervals`` of its expected
    report interval.

    Parameters
    ----------
    t_ns : sorted unique reading times of the station [UTC ns] (may be empty)
    now_ns : the present [UTC ns]
    stale_intervals : missed intervals before the station is stale [-]
    interval_ns : the station's expected report interval [ns]: the longest its logger stays
        silent when healthy (its heartbeat), from the registry or the logger's status —
        not guessed from recent gaps, which a logger sending one row per rain-gauge tip
        makes short during a storm (it was called stale minutes after the last tip).
    since_ns : when the station was first expected to report [UTC ns] (the start of the
        data), or None. A station that has never reported is stale once ``now_ns`` is more
        than ``stale_intervals`` intervals after it: one open span. Once its first readings
        exist that span is gone (they may be a backlog covering the silence, and a station
        installed late is not faulted for the time before its first reading).

    Returns
    -------
    ``(start_ns, end_ns | None, interval_ns)``: start = the last reading (or ``since_ns``)
    + ``stale_intervals`` × interval (when it became stale), end = the reading that resumed
    (None: still stale at ``now_ns``). Strictly more than that silence is stale: exactly
    3 intervals is not.
    """
    t = np.asarray(t_ns, dtype=np.int64)
    if t.size > 1 and np.any(np.diff(t) <= 0):  # sort + dedupe only when needed (np.unique hashes: slow)
        t = np.sort(t, kind="stable")
        t = t[np.concatenate(([True], t[1:] != t[:-1]))]
    iv = int(interval_ns)
    if iv <= 0:
        raise ValueError(f"interval_ns must be positive, got {interval_ns}")
    limit = stale_intervals * iv
    out: list[tuple[int, int | None, int]] = []
    if t.size == 0:
        if since_ns is not None and now_ns - since_ns > limit:
            out.append((int(since_ns) + limit, None, iv))
        return out
    ends = np.concatenate((t[1:], [now_ns]))          # next reading (or now) after reading i
    for i in np.flatnonzero(ends - t > limit).tolist():
        out.append((int(t[i]) + limit, int(ends[i]) if i + 1 < t.size else None, iv))
    return out


def low_battery(battery_v: pd.Series, threshold_v: float, hysteresis_v: float) -> list[tuple[int, int, bool, float]]:
    """Low-battery episodes: from a reading below ``threshold_v`` [V] until one at or above
    ``threshold_v + hysteresis_v`` [V] (hysteresis, no flapping).

    Returns ``(start_ns, end_ns, open, min_v)`` with end = last reading inside the episode.
    """
    return low_battery_arrays(ns_index(battery_v), battery_v.to_numpy(dtype="float64"), threshold_v, hysteresis_v)


def low_battery_arrays(t_ns: np.ndarray, battery_v: np.ndarray, threshold_v: float,
                       hysteresis_v: float) -> list[tuple[int, int, bool, float]]:
    """:func:`low_battery` on arrays: times [UTC ns, int64, sorted] and voltages [V] (the
    form the alert engine calls)."""
    t = np.asarray(t_ns, dtype=np.int64)
    v = np.asarray(battery_v, dtype=np.float64)
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
