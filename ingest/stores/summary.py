"""Summarising readings in equal time buckets: the count, least, greatest and sum of each.

Charts of long windows draw one bucket per pixel column: its least and greatest value as a
vertical stroke (a line through min/max keeps every peak and every threshold crossing that
a one-point-per-bucket thinning such as LTTB may drop), rain as the bucket's sum (depth adds
up). Stores that can do it themselves (:class:`~.base.Summarising`: SQLite's GROUP BY,
InfluxQL's ``GROUP BY time()``) send only the buckets; :func:`summarise` does the same in
numpy over readings already fetched (a store without the ability, the spool's part).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ...contract.wire import CanonicalReading
from .base import Bucket


def summarise(readings: Sequence[CanonicalReading], start_ns: int, width_ns: int) -> list[Bucket]:
    """Buckets of ``width_ns`` [ns] counted from ``start_ns`` over the readings with a value."""
    if width_ns <= 0:
        raise ValueError(f"width_ns must be positive, got {width_ns}")
    t = np.fromiter((r.time_ns for r in readings), dtype=np.int64, count=len(readings))
    v = np.fromiter((np.nan if r.value is None else r.value for r in readings), dtype=np.float64,
                    count=len(readings))
    return summarise_arrays(t, v, start_ns, width_ns)


def summarise_arrays(t_ns: np.ndarray, values: np.ndarray, start_ns: int, width_ns: int) -> list[Bucket]:
    """:func:`summarise` over arrays (times [ns], values; NaN is no value)."""
    ok = ~np.isnan(values) & (t_ns >= start_ns)
    t_ns, values = t_ns[ok], values[ok]
    if t_ns.size == 0:
        return []
    b = (t_ns - start_ns) // width_ns
    order = np.argsort(b, kind="stable")
    b, v = b[order], values[order]
    keys, first = np.unique(b, return_index=True)
    count = np.diff(np.append(first, b.size))
    mins = np.minimum.reduceat(v, first)
    maxs = np.maximum.reduceat(v, first)
    sums = np.add.reduceat(v, first)
    return [Bucket(int(start_ns + k * width_ns), int(c), float(lo), float(hi), float(s), float(s) / int(c))
            for k, c, lo, hi, s in zip(keys.tolist(), count.tolist(), mins.tolist(), maxs.tolist(), sums.tolist())]


def merge(*parts: Iterable[Bucket]) -> list[Bucket]:
    """Buckets of the same start combined (the store's and the spool's part of a window); a
    statistic one part lacks is lacking in the sum, except the least and the greatest."""
    out: dict[int, Bucket] = {}
    for part in parts:
        for x in part:
            y = out.get(x.start_ns)
            out[x.start_ns] = x if y is None else _combine(x, y)
    return [out[k] for k in sorted(out)]


def _combine(x: Bucket, y: Bucket) -> Bucket:
    def both(a, b, f):
        return None if a is None or b is None else f(a, b)

    def either(a, b, f):
        return a if b is None else b if a is None else f(a, b)

    count = both(x.count, y.count, int.__add__)
    total = both(x.sum, y.sum, float.__add__)
    mean = total / count if total is not None and count else None
    return Bucket(x.start_ns, count, either(x.min, y.min, min), either(x.max, y.max, max), total, mean)


__all__ = ["summarise", "summarise_arrays", "merge"]
