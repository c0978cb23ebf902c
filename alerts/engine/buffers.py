"""The engine's buffers: each (station, quantity)'s readings (:class:`Series`), each
station's reading times (:class:`Times`), and what one batch changed in a buffer
(:class:`Change`, what the exact shortcuts of the subject modules read). Times are UTC ns.
Public: the tests read them through ``StreamingEngine.series``, ``.times`` and ``.pending``.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np

from .. import evaluate as ev

NEVER = -(2 ** 62)
"""Before any time: a station with no reading, a buffer with no cut-off [ns]."""
BIG = 2 ** 62
"""After any time: no such reading, nothing changed [ns]."""
SAME = object()   # Series.put: the reading was there already, unchanged

def next_after(t: np.ndarray, after_ns: int) -> int:
    """Time of the first reading after ``after_ns`` (a huge number if none yet)."""
    i = int(np.searchsorted(t, after_ns, side="right"))
    return int(t[i]) if i < t.size else BIG


def held(mx: dict[str, int], stations: Iterable[str], silent: int) -> int:
    """The earliest latest reading of ``stations`` (in ``mx``) that holds their horizon back
    (``NEVER`` if none has reported): a station that never reported is absent, and so is
    one whose latest reading is more than ``silent`` before the latest of them all (a gauge
    gone dead must not hold the others back, and their buffers, for ever: issue 21)."""
    h, top = BIG, NEVER
    for s in stations:
        m = mx.get(s)
        if m is not None:
            if m < h:
                h = m
            if m > top:
                top = m
    if h == BIG:
        return NEVER
    if h < top - silent:
        h = min(m for s in stations if (m := mx.get(s)) is not None and m >= top - silent)
    return h


class Series:
    """One (station, quantity) buffer: sorted unique times, values and flags.

    Kept in numpy arrays with room at the end. The common case, a reading later than the
    last (and not before the cut-off: later than ``gate``), is staged in Python lists
    (``pt``, ``pv``, ``pf``: an append there costs less than writing three numpy scalars)
    and moved into the arrays when they are next read (:meth:`arrays`), before any other
    change, or once 64 wait. A changed value is written in place and an earlier reading
    moves only the readings after it (late readings are near the end). The views
    :meth:`arrays` hands out are for the evaluation at hand: the next ``put`` may change
    them. ``trim`` moves the cut-off; the readings before it leave the view when it is next
    built (the engine refuses readings older than the cut-off, so none can come back).
    """

    __slots__ = ("key", "station", "t", "v", "f", "lo", "n", "first", "last", "cutoff", "gate", "_view",
                 "pt", "pv", "pf", "mark", "mark_last", "change", "times", "edits", "deps", "lost", "lost_flagged")

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.station = key[0]
        self.deps: tuple[tuple[str, str], ...] | None = None     # feed: the subjects that read it, once asked for
        self.pt: list[int] = []      # staged appends (times, values, flags), after the arrays' readings
        self.pv: list[float] = []
        self.pf: list[str] = []
        self.mark = -1               # feed: where this batch's staged appends begin (-1: none yet)
        self.mark_last = NEVER      # feed: the latest time before them
        self.lost: list[float] | None = None   # feed: values of this batch's staged readings replaced where they waited
        self.lost_flagged = False    # feed: ... by a reading with flags
        self.change: Change | None = None   # feed: what changed in this batch, as far as folded
        self.times: Times | None = None     # its station's reading times, once it has one
        self.edits = 0               # readings inserted before the latest or replaced (appends are not counted)
        self._store(ev.EMPTY[0], ev.EMPTY[1], ev.EMPTY[2])
        self.last = self.gate = self.cutoff = NEVER

    def _store(self, t: np.ndarray, v: np.ndarray, f: np.ndarray, room: int = 0) -> None:
        n = t.size
        cap = 2 * (n + room) + 32
        self.t, self.v, self.f = np.empty(cap, np.int64), np.empty(cap, np.float64), np.empty(cap, dtype=object)
        self.t[:n], self.v[:n], self.f[:n] = t, v, f
        self.lo, self.n = 0, n
        self.first = int(t[0]) if n else BIG     # time at ``lo``
        self._view: ev.Arrays | None = None

    def _drop_old(self) -> None:
        if self.first < self.cutoff:
            lo, n = self.lo, self.n
            lo += int(np.searchsorted(self.t[lo:n], self.cutoff))
            self.lo, self.first = lo, int(self.t[lo]) if lo < n else BIG

    def flush(self) -> None:
        """Move the staged appends into the arrays."""
        pt = self.pt
        k = len(pt)
        if not k:
            return
        n = self.n
        if n + k > self.t.size:
            self._grow(k)
            n = self.n
        if n == self.lo:
            self.first = pt[0]
        t, v, f = self.t, self.v, self.f
        if k < 6:
            for i, x in enumerate(pt, n):
                t[i] = x
            for i, y in enumerate(self.pv, n):
                v[i] = y
            for i, z in enumerate(self.pf, n):
                f[i] = z
        else:
            t[n:n + k], v[n:n + k], f[n:n + k] = pt, self.pv, self.pf
        self.n, self._view = n + k, None
        self.pt, self.pv, self.pf = [], [], []

    def put(self, t: int, v: float, f: str) -> object:
        """Add or replace the reading at ``t``: ``SAME`` when it was there already unchanged,
        else the value it replaced (None: a new time). The staged appends first go in."""
        self.flush()
        n = self.n
        if t > self.last:
            if n == self.t.size:
                self._grow()
                n = self.n
            if n == self.lo:
                self.first = t
            self.t[n], self.v[n], self.f[n] = t, v, f
            self.n, self.last, self._view = n + 1, t, None
            self.gate = t if t > self.gate else self.gate
            return None
        self._drop_old()
        lo = self.lo
        i = n - 1 if t == self.last and n > lo else lo + int(np.searchsorted(self.t[lo:n], t))
        if i < n and self.t[i] == t:
            old = float(self.v[i])
            if old == v and self.f[i] == f:
                return SAME
            self.v[i], self.f[i], self._view = v, f, None
            self.edits += 1
            return old
        if n == self.t.size:
            self._grow()
            i -= lo
            n, lo = self.n, 0
        for a in (self.t, self.v, self.f):
            a[i + 1:n + 1] = a[i:n]          # the readings after it move one place (numpy copies overlaps safely)
        self.t[i], self.v[i], self.f[i] = t, v, f
        self.n, self._view = n + 1, None
        self.edits += 1
        if i == lo:
            self.first = t
        return None

    def _grow(self, room: int = 0) -> None:
        self._drop_old()
        lo, n = self.lo, self.n
        self._store(self.t[lo:n], self.v[lo:n], self.f[lo:n], room)

    def arrays(self) -> ev.Arrays:
        """Sorted (times, values, flags) from the cut-off on: views, not to be modified."""
        if self.pt:
            self.flush()
        if self._view is None:
            self._drop_old()
            lo, n = self.lo, self.n
            self._view = (self.t[lo:n], self.v[lo:n], self.f[lo:n]) if lo < n else ev.EMPTY
        return self._view

    def trim(self, before_ns: int) -> None:
        """Drop the readings before ``before_ns`` (the engine refuses later ones older than it)."""
        if before_ns > self.cutoff:
            self.cutoff = before_ns
            if before_ns - 1 > self.gate:
                self.gate = before_ns - 1
            if self.first < before_ns:
                self._view = None

    def rows(self) -> list[list[Any]]:
        t, v, f = self.arrays()
        return [[ti, vi, fi] for ti, vi, fi in zip(t.tolist(), v.tolist(), f.tolist())]   # 2.5x list(x)

    def load(self, cutoff: int, rows: Iterable[Sequence[Any]]) -> None:
        kept = sorted((int(t), float(v), f) for t, v, f in rows)
        self.pt, self.pv, self.pf = [], [], []
        self._store(np.array([r[0] for r in kept], dtype=np.int64), np.array([r[1] for r in kept], dtype=np.float64),
                    np.array([r[2] for r in kept] or [], dtype=object))
        self.last = kept[-1][0] if kept else NEVER
        self.cutoff = cutoff
        self.gate = max(self.last, cutoff - 1)


class SeriesMap(dict[tuple[str, str], "Series"]):
    """(station, quantity) -> its :class:`Series`, made when first asked for; ``by_station``:
    station -> quantity -> the same (feed looks a reading's buffer up there: no tuple to make)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_station: dict[str, dict[str, Series]] = {}

    def __missing__(self, key: tuple[str, str]) -> "Series":
        s = self[key] = Series(key)
        self.by_station.setdefault(key[0], {})[key[1]] = s
        return s


class Times:
    """A station's reading times (station health): a set of times, gathered in a list as
    readings come and merged into a sorted array when read. ``trim`` drops the times before
    it at once; one added later that is older still counts until the next trim."""

    __slots__ = ("t", "cutoff", "_new")

    def __init__(self) -> None:
        self.t = ev.EMPTY[0]
        self.cutoff = NEVER
        self._new: list[int] = []

    def add(self, t: int) -> None:
        self._new.append(t)

    def extend(self, ts: list[int]) -> None:
        self._new.extend(ts)

    def times(self) -> np.ndarray:
        if self._new:
            new = np.array(self._new, dtype=np.int64)
            self._new = []
            if new.size > 1 and np.any(np.diff(new) <= 0):
                new = np.unique(new)
            t = self.t
            self.t = np.concatenate((t, new)) if not t.size or new[0] > t[-1] else np.union1d(t, new)
        return self.t

    def trim(self, before_ns: int) -> None:
        if before_ns <= self.cutoff:
            return
        t = self.times()
        i = int(np.searchsorted(t, before_ns))
        if i:
            self.t = t[i:]
        self.cutoff = before_ns

    def load(self, cutoff: int, times: Iterable[int]) -> None:
        self.t = np.unique(np.asarray([int(x) for x in times], dtype=np.int64))
        self.cutoff = cutoff



class Change:
    """What changed in one (station, quantity) buffer since a subject was last evaluated:
    what the exact shortcuts need to know (times in UTC ns). The defaults: nothing changed
    (the live case makes ten a batch: slots, and the common fields as arguments)."""

    __slots__ = ("inserted", "appended", "prev_last", "positive", "replaced", "flagged", "vmax")

    def __init__(self, appended: int = BIG, prev_last: int = BIG, vmax: float = -math.inf,
                 positive: bool = False) -> None:
        self.inserted = BIG       # earliest new time before the buffer's latest, or of a corrected value
        self.appended = appended   # earliest new time after the buffer's latest
        self.prev_last = prev_last  # earliest latest-time of the buffer before a change
        self.positive = positive   # a new value > 0 (or NaN): rain that may make or grow a storm
        self.replaced = False      # a value at a time already there before the batch changed
        self.flagged = False       # a new reading not appended carries a flag (e.g. calibration_overdue;
        #                            appended ones lie after every storm and episode, so their flags mark none)
        self.vmax = vmax           # the largest new value

    def merged(self, o: "Change") -> "Change":
        """Both changes in one (a new record: one batch's records are shared by subjects)."""
        m = Change()
        m.inserted, m.appended = min(self.inserted, o.inserted), min(self.appended, o.appended)
        m.prev_last = min(self.prev_last, o.prev_last)
        m.positive, m.replaced = self.positive or o.positive, self.replaced or o.replaced
        m.flagged = self.flagged or o.flagged
        m.vmax = max(self.vmax, o.vmax)
        return m


def nan_values(c: Change, vs: list[float]) -> None:
    """What ``feed``'s loop notes of appended values among which is a NaN: positive (not
    <= 0), and the largest of the others."""
    for x in vs:
        if not x <= 0.0:
            c.positive = True
        if x > c.vmax:
            c.vmax = x
