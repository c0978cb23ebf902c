"""Helpers shared by the rules: time as int64 UTC nanoseconds, runs of a condition.

The rules' cores work on numpy arrays; pandas (~0.3 s of CPU to import) is imported only by
the functions over Series and DataFrames (replay, reports), never on the streaming engine's
path, so a server starts without it (``tests/test_server.py``)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

NS_PER_S = 1_000_000_000
NS_PER_MIN = 60 * NS_PER_S
NS_PER_H = 3600 * NS_PER_S


def ns_index(s: pd.Series | pd.DatetimeIndex) -> np.ndarray:
    """Epoch nanoseconds (int64) of a tz-aware Series' DatetimeIndex, or of the index itself.

    Naive times are refused: every rule works in UTC.
    """
    import pandas as pd
    idx = s if isinstance(s, pd.DatetimeIndex) else s.index
    if not isinstance(idx, pd.DatetimeIndex):
        raise TypeError("expected a Series indexed by time (DatetimeIndex)")
    if idx.tz is None:
        raise ValueError("time index without a time zone; rules need UTC-aware times")
    return idx.as_unit("ns").asi8


def in_order(s: pd.Series) -> pd.Series:
    """``s`` sorted by time (stable), each time once (its first reading, as the streaming
    engine's buffers keep it): readings given out of order or twice are judged as if they
    came in order once. Series indexed alike stay aligned."""
    if not s.index.is_monotonic_increasing:
        s = s.sort_index(kind="stable")
    if s.index.has_duplicates:
        s = s[~s.index.duplicated(keep="first")]
    return s


def td_ns(td: timedelta) -> int:
    """A timedelta (or pandas Timedelta) as integer nanoseconds."""
    if type(td) is timedelta:   # exact in integers, without pandas (~0.1 us instead of ~1.4 us: the rules call it often)
        return (td.days * 86400 + td.seconds) * NS_PER_S + td.microseconds * 1000
    import pandas as pd
    return int(pd.Timedelta(td).value)


def to_index(ns: np.ndarray) -> pd.DatetimeIndex:
    import pandas as pd
    return pd.DatetimeIndex(np.asarray(ns, dtype="int64").view("datetime64[ns]"), tz="UTC")


def runs(cond: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end positions (inclusive) of the runs of True in a boolean array."""
    c = np.asarray(cond, dtype=bool)
    if c.size == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    padded = np.zeros(c.size + 2, dtype=bool)
    padded[1:-1] = c
    edges = np.flatnonzero(padded[1:] != padded[:-1])   # a run's first position, then one past its last, ...
    return edges[0::2], edges[1::2] - 1


# A silence of a station: consecutive readings further apart than its stale threshold,
# ``rules.stale_intervals`` x its expected report interval; this is that threshold with the
# registry's defaults (3 x 15 min), for the rules' functions over Series.
DEFAULT_MAX_GAP = timedelta(minutes=45)


def silence_ns(max_gap_ns: int, min_duration_ns: int) -> int:
    """The gap between consecutive readings [ns] beyond which a run of a condition ends:
    the station's stale threshold ``max_gap_ns`` [ns], never less than the rule's minimum
    duration ``min_duration_ns`` [ns] (two readings that far apart can still show it)."""
    return max(int(max_gap_ns), int(min_duration_ns))


def open_run_start(t_ns: np.ndarray, cond: np.ndarray, max_gap_ns: int | None = None) -> int | None:
    """The position of the first reading of the run of ``cond`` that holds at the last reading,
    runs split at silences longer than ``max_gap_ns`` as :func:`episodes` splits them; None when
    the last reading does not meet ``cond``. Later readings may lengthen that run into an
    episode however short it is now (the streaming engine keeps its readings: a run of one
    reading before a silence lasts 0 min, and the readings after it may continue it)."""
    c = np.asarray(cond, dtype=bool)
    if c.size == 0 or not c[-1]:
        return None
    off = np.flatnonzero(~c)
    a = int(off[-1]) + 1 if off.size else 0
    if max_gap_ns is not None and c.size - a > 1:
        silent = np.flatnonzero(np.diff(np.asarray(t_ns)[a:]) > max_gap_ns)
        if silent.size:
            a += int(silent[-1]) + 1
    return a


def episodes(t_ns: np.ndarray, cond: np.ndarray, min_duration_ns: int, rearm_ns: int,
             max_gap_ns: int | None = None) -> list[tuple[int, int, bool]]:
    """Episodes of a condition held in every reading for at least ``min_duration_ns``.

    A run of consecutive readings meeting ``cond`` qualifies when the time from its first to
    its last reading is at least ``min_duration_ns`` (readings at 0…30 min = 30 min).
    Qualifying runs closer than ``rearm_ns`` (from the last reading of one to the first of
    the next) are one episode: hysteresis, so a condition that flickers does not flap.
    ``max_gap_ns``: two consecutive readings further apart than this end a run and start
    another (a silence of the logger shows nothing was sustained through it); None: never.

    Returns ``(first_pos, last_pos, open)`` per episode, ``open`` when the condition still
    holds at the last reading of the input.
    """
    t = np.asarray(t_ns)
    starts, ends = runs(cond)
    if starts.size and max_gap_ns is not None and t.size > 1:
        silent = np.flatnonzero(np.diff(t) > max_gap_ns)   # between positions k and k + 1
        if silent.size:
            c = np.asarray(cond, dtype=bool)
            cut = silent[c[silent] & c[silent + 1]]           # a silence inside a run of the condition
            if cut.size:
                starts = np.sort(np.concatenate((starts, cut + 1)))
                ends = np.sort(np.concatenate((ends, cut)))
    if starts.size == 0:
        return []
    ok = (t[ends] - t[starts]) >= min_duration_ns
    starts, ends = starts[ok], ends[ok]
    out: list[list[int]] = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        if out and t[a] - t[out[-1][1]] < rearm_ns:
            out[-1][1] = b
        else:
            out.append([a, b])
    last = len(t) - 1
    return [(a, b, b == last) for a, b in out]
