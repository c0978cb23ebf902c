"""The streaming engine: readings in, events out, state on disk.

A thin layer over the same rule functions as replay (:mod:`.evaluate`). Each station's
readings are kept in a buffer; after a batch, every subject (gauge, outfall, turbidity
pair, site, station) whose inputs changed is re-evaluated on its buffer and the events
that changed are returned. Its rules run unless what changed provably cannot change its
events (exact shortcuts: ``_storms_may_change``, ``_flow_may_change``, ``_pair_may_change``;
an open episode extended from the new readings alone, ``_extend_open``; docs/rules.md,
*Streaming = replay*). Events are identified by ``id``: an update keeps its id (an
episode that closes, a storm that grows, then is confirmed), and an event that late data
disproves is returned once more with ``status = retracted``.

Out of order, duplicates, backlogs: a reading is kept by (station, quantity, time); the
same reading twice changes nothing. A station's *horizon* is its latest reading minus
``rules.lateness``: readings older than that are assumed complete, events that ended well
before it are final (frozen) and the buffer before them is dropped. A backlog after an
outage is not late for its own station as long as it arrives before the station's new
readings (the edge spool drains oldest first), so it is handled exactly. A reading older
than the part of the buffer still kept is counted in ``late_dropped`` and left out. A
station that has never reported (a dead gauge among several, a missing upstream probe) is
absent: it holds no subject's horizon back, and its first readings, should they come later
as a backlog, do not reopen events the other stations' data made final. So is a station gone
silent, once its latest reading is more than ``lateness`` + ``dry_lookback`` before the latest
of the subject's other stations (``_held``): a dead gauge would otherwise keep its outfalls'
readings for ever (issue 21).

Property (tests/alerts/test_engine_property.py): for any readings, fed in any order within
the lateness window, duplicated or in backlogs, the final version of every event equals
replay over the sorted readings.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Iterable

import numpy as np

from ms4watch.contract.registry import Registry
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading

from . import evaluate as ev
from .errors import AlertError
from .events import Event, EventKind, EventStatus
from .rules._common import runs, td_ns
from .rules.dry_weather import RainIndex

STATE_VERSION = 1


_NEVER = -(2 ** 62)
_BIG = 2 ** 62
_SAME = object()   # _Series.put: the reading was there already, unchanged
_EXTENDABLE = (EventKind.DRY_WEATHER_FLOW, EventKind.DRY_WEATHER_UNKNOWN)   # _extend_open
_ORDER = {"gauge": 0, "outfall": 1, "pair": 2, "station": 3}   # gauges first: sites need their storms


def _order_key(key: tuple[str, str]) -> tuple[int, str]:
    return _ORDER[key[0]], key[1]


def _next_after(t: np.ndarray, after_ns: int) -> int:
    """Time of the first reading after ``after_ns`` (a huge number if none yet)."""
    i = int(np.searchsorted(t, after_ns, side="right"))
    return int(t[i]) if i < t.size else _BIG


def _held(mx: dict[str, int], stations: Iterable[str], silent: int) -> int:
    """The earliest latest reading of ``stations`` (in ``mx``) that holds their horizon back
    (``_NEVER`` if none has reported): a station that never reported is absent, and so is
    one whose latest reading is more than ``silent`` before the latest of them all (a gauge
    gone dead must not hold the others back, and their buffers, for ever: issue 21)."""
    h, top = _BIG, _NEVER
    for s in stations:
        m = mx.get(s)
        if m is not None:
            if m < h:
                h = m
            if m > top:
                top = m
    if h == _BIG:
        return _NEVER
    if h < top - silent:
        h = min(m for s in stations if (m := mx.get(s)) is not None and m >= top - silent)
    return h


class _Series:
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
                 "pt", "pv", "pf", "mark", "mark_last", "change", "times", "edits", "deps")

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.station = key[0]
        self.deps: tuple | None = None     # feed: the subjects that read it, once asked for
        self.pt: list[int] = []      # staged appends (times, values, flags), after the arrays' readings
        self.pv: list[float] = []
        self.pf: list[str] = []
        self.mark = -1               # feed: where this batch's staged appends begin (-1: none yet)
        self.mark_last = _NEVER      # feed: the latest time before them
        self.change: _Change | None = None   # feed: what changed in this batch, as far as folded
        self.times: _Times | None = None     # its station's reading times, once it has one
        self.edits = 0               # readings inserted before the latest or replaced (appends are not counted)
        self._store(ev.EMPTY[0], ev.EMPTY[1], ev.EMPTY[2])
        self.last = self.gate = self.cutoff = _NEVER

    def _store(self, t: np.ndarray, v: np.ndarray, f: np.ndarray, room: int = 0) -> None:
        n = t.size
        cap = 2 * (n + room) + 32
        self.t, self.v, self.f = np.empty(cap, np.int64), np.empty(cap, np.float64), np.empty(cap, dtype=object)
        self.t[:n], self.v[:n], self.f[:n] = t, v, f
        self.lo, self.n = 0, n
        self.first = int(t[0]) if n else _BIG     # time at ``lo``
        self._view: ev.Arrays | None = None

    def _drop_old(self) -> None:
        if self.first < self.cutoff:
            lo, n = self.lo, self.n
            lo += int(np.searchsorted(self.t[lo:n], self.cutoff))
            self.lo, self.first = lo, int(self.t[lo]) if lo < n else _BIG

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
            for i, x in enumerate(self.pv, n):
                v[i] = x
            for i, x in enumerate(self.pf, n):
                f[i] = x
        else:
            t[n:n + k], v[n:n + k], f[n:n + k] = pt, self.pv, self.pf
        self.n, self._view = n + k, None
        self.pt, self.pv, self.pf = [], [], []

    def put(self, t: int, v: float, f: str):
        """Add or replace the reading at ``t``: ``_SAME`` when it was there already unchanged,
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
                return _SAME
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

    def rows(self) -> list[list]:
        t, v, f = self.arrays()
        return [list(x) for x in zip(t.tolist(), v.tolist(), f.tolist())]

    def load(self, cutoff: int, rows: Iterable) -> None:
        rows = sorted((int(t), float(v), f) for t, v, f in rows)
        self.pt, self.pv, self.pf = [], [], []
        self._store(np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.float64),
                    np.array([r[2] for r in rows] or [], dtype=object))
        self.last = rows[-1][0] if rows else _NEVER
        self.cutoff = cutoff
        self.gate = max(self.last, cutoff - 1)


class _SeriesMap(dict):
    """(station, quantity) -> its :class:`_Series`, made when first asked for; ``by_station``:
    station -> quantity -> the same (feed looks a reading's buffer up there: no tuple to make)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_station: dict[str, dict[str, _Series]] = {}

    def __missing__(self, key: tuple[str, str]) -> "_Series":
        s = self[key] = _Series(key)
        self.by_station.setdefault(key[0], {})[key[1]] = s
        return s


class _Times:
    """A station's reading times (station health): a set of times, gathered in a list as
    readings come and merged into a sorted array when read. ``trim`` drops the times before
    it at once; one added later that is older still counts until the next trim."""

    __slots__ = ("t", "cutoff", "_new")

    def __init__(self) -> None:
        self.t = ev.EMPTY[0]
        self.cutoff = _NEVER
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


@dataclass
class _Subject:
    emitted: dict[str, Event]           # the current version of every event (frozen ones included)
    frozen: set[str]
    cutoff: int = _NEVER
    live: dict[str, Event] = field(default_factory=dict)   # emitted and not frozen: what can still change

    def __post_init__(self) -> None:
        self.live = {k: e for k, e in self.emitted.items() if k not in self.frozen}


class _Change:
    """What changed in one (station, quantity) buffer since a subject was last evaluated:
    what the exact shortcuts need to know (times in UTC ns). The defaults: nothing changed
    (the live case makes ten a batch: slots, and the common fields as arguments)."""

    __slots__ = ("inserted", "appended", "prev_last", "positive", "replaced", "flagged", "vmax")

    def __init__(self, appended: int = _BIG, prev_last: int = _BIG, vmax: float = -math.inf,
                 positive: bool = False) -> None:
        self.inserted = _BIG       # earliest new time before the buffer's latest, or of a corrected value
        self.appended = appended   # earliest new time after the buffer's latest
        self.prev_last = prev_last  # earliest latest-time of the buffer before a change
        self.positive = positive   # a new value > 0 (or NaN): rain that may make or grow a storm
        self.replaced = False      # a value at a time already there before the batch changed
        self.flagged = False       # a new reading not appended carries a flag (e.g. calibration_overdue;
        #                            appended ones lie after every storm and episode, so their flags mark none)
        self.vmax = vmax           # the largest new value

    def merged(self, o: "_Change") -> "_Change":
        """Both changes in one (a new record: one batch's records are shared by subjects)."""
        m = _Change()
        m.inserted, m.appended = min(self.inserted, o.inserted), min(self.appended, o.appended)
        m.prev_last = min(self.prev_last, o.prev_last)
        m.positive, m.replaced = self.positive or o.positive, self.replaced or o.replaced
        m.flagged = self.flagged or o.flagged
        m.vmax = max(self.vmax, o.vmax)
        return m


def _nan_values(c: _Change, vs: list[float]) -> None:
    """What ``feed``'s loop notes of appended values among which is a NaN: positive (not
    <= 0), and the largest of the others."""
    for x in vs:
        if not x <= 0.0:
            c.positive = True
        if x > c.vmax:
            c.vmax = x


class _Due(list):
    """The subjects due after a batch (feed, eval_interval 0), in order, and ``work``: the
    same as ``_evaluate`` walks them, (``_ORDER`` of the kind, name, None), made once."""

    __slots__ = ("work",)


class StreamingEngine:
    """Alert rules over a stream of :class:`CanonicalReading`, with state in ``state_path``.

    ``feed(readings)`` and ``advance(now_ns)`` return the events that are new or changed
    (compare ``id`` to update an earlier one). ``record_inspection`` closes inspection
    items. Call ``checkpoint()`` before acknowledging readings upstream (or re-feed the
    readings newer than ``checkpoint_ns - lateness`` after a crash: feeding a reading
    twice changes nothing).
    """

    def __init__(self, registry: Registry, state_path: str | Path | None = None, *,
                 eval_interval: timedelta = timedelta(minutes=10), shortcuts: bool = True):
        """``eval_interval``: a subject is re-evaluated by ``feed`` at most once per this much
        data time (0: after every batch); ``advance`` evaluates everything pending. The
        rules need 15-30 min of evidence, so 10 min delays no alert much and keeps
        the per-reading cost low. ``shortcuts``: skip running a subject's rules when what
        changed provably cannot change its events (exact: see ``_storms_may_change``,
        ``_flow_may_change`` and ``_pair_may_change``); False runs them for every change,
        the reference the tests compare the shortcuts with."""
        self.reg = registry
        self.eval_interval = td_ns(eval_interval)
        self.shortcuts = shortcuts
        # subject -> (station, quantity) -> what changed since the subject was last evaluated
        self._pending: dict[tuple[str, str], dict[tuple[str, str], _Change]] = {}
        self._last_eval: dict[tuple[str, str], int] = {}
        self._fresh: set[tuple[str, str]] = set()   # subjects whose rules ran since this engine started
        self._last_above: dict[str, int] = {}       # outfall -> its latest flow reading above the floor [ns]
        self._site_wake = 0
        self.rules = r = registry.rules
        self.state_path = Path(state_path) if state_path else None
        self.lateness = td_ns(r.lateness)
        # a station this much behind the latest of a subject's stations holds its horizon
        # back no more (_held; docs/rules.md, Streaming = replay: issue 21)
        self._silent = self.lateness + td_ns(r.dry_lookback)
        self._mit = td_ns(r.storm_inter_event)
        self._dwf_md = td_ns(r.dwf_min_duration)
        self._turb_md = td_ns(r.turbidity_min_duration)
        self._align = td_ns(r.turbidity_align_tolerance)
        self._rain_gap = gap = td_ns(r.dry_rain_max_gap)
        self._rain_keep = td_ns(r.dry_lookback) + 2 * gap
        self._indexes: dict[str, tuple[RainIndex, int]] = {}   # gauge -> its rain rows' index, the buffer's edits
        # a new rain row changes the dry-weather state only at flow readings from its own time
        # on (from its time - (gap - lookback) were the gap longer than the look-back)
        self._rain_lead = min(0, td_ns(r.dry_lookback) - gap)
        self._outfalls = {o.id: o for o in registry.outfalls}
        # outfall -> its subject, flow buffer, stations, rain buffers and floor (the registry's
        # floors never change while running: use_registry refuses it)
        self._outfall_keys = {o.id: (("outfall", o.id), (o.id, "flow"), (o.id, *o.rain_gauges),
                                     tuple((g, "rain") for g in o.rain_gauges), o.flow_floor_gpm)
                              for o in registry.outfalls}
        self._outfall_rain = {o.id: tuple((g, "rain") for g in o.rain_gauges) for o in registry.outfalls}
        self._outfall_kept: dict[str, tuple[_Subject, _Series]] = {}   # outfall -> its subject, flow buffer
        self._gauge_osubs: dict[str, list[_Subject]] = {}   # gauge -> its outfalls' subjects (_gauge)
        self._pairs = {p.id: p for p in registry.turbidity_pairs}
        self._pair_params = (ev.contrast_params(registry), ev.qc_params(registry))
        self._gauge_outfalls = {g.id: [("outfall", o.id) for o in registry.outfalls if g.id in o.rain_gauges]
                                for g in registry.rain_gauges}
        self.now_ns = 0
        self.checkpoint_ns = 0
        self.late_dropped = 0
        self._series: dict[tuple[str, str], _Series] = _SeriesMap()
        self._times: dict[str, _Times] = defaultdict(_Times)  # station -> reading times (health)
        self._max: dict[str, int] = {}
        self._subjects: dict[tuple[str, str], _Subject] = {}
        self._confirmed: dict[str, dict[str, int]] = defaultdict(dict)  # gauge -> storm id -> end
        self._since: int | None = None   # the earliest reading or clock time seen: stations are expected from then
        self._status_intervals: dict[str, float] = {}  # station -> report interval its logger states [s]
        self._inspections: list[ev.Inspection] = []
        self._deps = self._dependencies()
        self._due_cache: dict[tuple[_Series, ...], _Due] = {}   # feed, eval_interval 0
        self._subject_order = sorted({k for subs in self._deps.values() for k in subs}, key=_order_key)
        if self.state_path and self.state_path.exists():
            self._load()

    # -- public API -------------------------------------------------------------------------
    def feed(self, readings: Iterable[CanonicalReading]) -> list[Event]:
        """Add readings (any order, duplicates allowed); return new or changed events."""
        series = self._series
        by_station = series.by_station
        since = _BIG if self._since is None else self._since
        touched: list[_Series] = []   # the buffers this batch changes
        # CanonicalReading is a NamedTuple: unpacking it costs less than reading its fields by name
        for t, station, _d, _s, quantity, v, _u, flags, _q in readings:
            if v is None:
                continue
            try:
                s = by_station[station][quantity]
            except KeyError:
                s = series[(station, quantity)]
            if t > s.gate:   # later than the latest reading and not before the cut-off: staged
                if s.mark < 0:
                    if s.change is None:
                        touched.append(s)
                    s.mark, s.mark_last = len(s.pt), s.last
                s.pt.append(t)
                s.pv.append(float(v))
                s.pf.append(flags or "")
                s.last = s.gate = t
                continue
            if t < since:
                since = t
            if t < s.cutoff:
                self.late_dropped += 1
                continue
            if s.mark >= 0:
                self._fold(s)
            elif s.change is None:
                touched.append(s)
            prev = s.last
            v = float(v)
            flags = flags or ""
            old = s.put(t, v, flags)
            c = s.change
            if c is None:
                c = s.change = _Change()
            if old is _SAME:
                continue
            if t > prev:
                if t < c.appended:
                    c.appended = t
            elif t <= c.prev_last:   # else a reading new in this batch, changed again (two sensors): still new
                if t < c.inserted:
                    c.inserted = t
                if old is not None:
                    c.replaced = True
            if prev < c.prev_last:
                c.prev_last = prev
            if not v <= 0.0:
                c.positive = True
            if v > c.vmax:
                c.vmax = v
            if flags:
                c.flagged = True
            self._times[station].add(t)
            # Station health (stale, battery) is judged by advance(), on the clock: judged
            # here against the newest reading of any station, a logger whose batch arrives
            # a moment after its neighbours' would look stale for that moment.
        mx, now = self._max, self.now_ns
        pending, deps = self._pending, self._deps
        times = self._times
        # eval_interval 0 (serve): every subject whose inputs changed is evaluated now, and none
        # waits from before, so the subjects share this batch's records (each reads only its own
        # inputs' there) instead of each getting its own
        shared = {} if self.eval_interval <= 0 and not pending else None
        hit: list[_Series] = []   # shared: the buffers that changed, in order
        new_change = _Change.__new__
        for s in touched:
            c, m = s.change, s.mark
            if m >= 0:   # _fold, inline: the common case, readings appended only
                s.mark = -1
                ts, vs = (s.pt, s.pv) if m == 0 else (s.pt[m:], s.pv[m:])
                hi = max(vs)
                if c is None:   # _Change(ts[0], s.mark_last, hi, hi > 0.0), or without hi if NaN: slots set inline
                    c = new_change(_Change)
                    c.inserted, c.appended, c.prev_last, c.replaced, c.flagged = _BIG, ts[0], s.mark_last, False, False
                    if hi == hi:
                        c.positive, c.vmax = hi > 0.0, hi
                    else:
                        c.positive, c.vmax = False, -math.inf
                else:
                    if ts[0] < c.appended:
                        c.appended = ts[0]
                    if s.mark_last < c.prev_last:
                        c.prev_last = s.mark_last
                    if hi > c.vmax:
                        c.vmax = hi
                    if hi > 0.0:
                        c.positive = True
                if not hi > 0.0 and (hi != hi or (len(vs) > 1 and (x := sum(vs)) != x)):   # a NaN among them
                    _nan_values(c, vs)
                tm = s.times
                if tm is None:
                    tm = s.times = times[s.station]
                tm._new += ts
            else:
                s.change = None
                if c.prev_last == _BIG:
                    continue   # only readings it had already, unchanged
            s.change = None
            if c.appended < since:
                since = c.appended
            last = s.last
            if last > now:
                now = last
            st = s.station
            if last > mx.get(st, _NEVER):
                mx[st] = last
            if len(s.pt) > 64:
                s.flush()
            key = s.key
            if shared is not None:
                shared[key] = c
                hit.append(s)
                continue
            sd = s.deps
            if sd is None:
                sd = s.deps = tuple(deps.get(key, ()))
            for sub in sd:
                p = pending.get(sub)
                if p is None:
                    pending[sub] = {key: c}
                else:
                    mine = p.get(key)
                    p[key] = c if mine is None else mine.merged(c)
        self._since, self.now_ns = (None if since == _BIG else since), now
        if shared is not None:
            # the subjects due follow from which buffers changed (the dependencies never change):
            # kept for the last few such sets (the live case changes the same buffers every batch)
            hk = tuple(hit)
            cache = self._due_cache
            due = cache.get(hk)
            if due is None:
                dues: set[tuple[str, str]] = set()
                for s in hit:
                    sd = s.deps
                    if sd is None:
                        sd = s.deps = tuple(deps.get(s.key, ()))
                    dues.update(sd)
                order = self._subject_order
                due = _Due(k for k in order if k in dues) if 4 * len(dues) >= len(order) else \
                    _Due(sorted(dues, key=_order_key))
                due.work = [(_ORDER[k], n, None) for k, n in due]   # as _evaluate walks them
                if len(cache) >= 32:
                    cache.clear()
                cache[hk] = due
            return self._evaluate(due, changed=shared)
        last_eval, iv = self._last_eval, self.eval_interval
        # now never goes back, so with eval_interval 0 every pending subject is due
        due = list(pending) if iv <= 0 else [k for k in pending if now - last_eval.get(k, _NEVER) >= iv]
        return self._evaluate(due)

    def advance(self, now_ns: int) -> list[Event]:
        """Time passes (no readings needed): storms get confirmed, inspections fall overdue,
        stations go stale."""
        if now_ns > self.now_ns:
            self.now_ns = now_ns
        if self._since is None or now_ns < self._since:
            self._since = now_ns
        stations = set(self._max) | self.reg.station_ids()   # a registry station that never reported too
        subjects = {("gauge", g.id) for g in self.reg.rain_gauges} | {("station", s) for s in stations}
        return self._evaluate(subjects | set(self._pending), sites=True)

    def record_inspection(self, site: str, time, inspector: str = "", note: str = "") -> list[Event]:
        """Record an inspection of ``site`` at ``time`` (aware datetime or UTC ns); closes its
        open items and returns the updated ones."""
        if not any(s.id == site for s in self.reg.construction_sites):
            raise AlertError(f"unknown construction site {site!r}")
        t = time if isinstance(time, int) else to_ns(time)
        self._inspections.append(ev.Inspection(site, t, inspector, note))
        return self._evaluate((), sites=True)

    def station_freshness(self) -> list[tuple[str, int | None, int]]:
        """For the server's ``/metrics``: every station (the registry's and any that reported)
        with the newest reading it was fed [UTC ns] (None: none yet) and the silence after
        which it is stale [ns], ``rules.stale_intervals`` × its expected report interval
        (:func:`~.evaluate.report_interval`: the registry's, its logger's stated, the default).
        Copies, so a scrape from another thread never sees a batch half-fed."""
        newest, stated = dict(self._max), dict(self._status_intervals)
        n = self.rules.stale_intervals
        return [(s, newest.get(s), n * ev.report_interval(self.reg, s, stated)[0])
                for s in sorted(set(newest) | self.reg.station_ids())]

    def inputs(self) -> set[tuple[str, str]]:
        """Every (station, quantity) the rules read: what a re-feed from the store must cover."""
        return set(self._deps) | {(s, "battery") for s in self.reg.station_ids()}

    def station_report_interval(self, station: str, seconds: float | None) -> list[Event]:
        """The report interval ``station``'s logger states in its status message
        (``StatusMessage.report_interval_s``, seconds; None forgets it); returns the station's
        health events that change.

        A station is stale after ``rules.stale_intervals`` of its expected interval without a
        reading. The registry's ``report_interval`` wins (the town's statement, which replay
        sees as well); a stated interval comes next; ``rules.report_interval`` last. Kept in
        the state file. Call it from ingest's status path for every status that carries it.
        """
        if seconds is not None and not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
            raise AlertError(f"{station}: report interval must be a positive number of seconds, got {seconds!r}")
        old = self._status_intervals.get(station)
        if seconds is None:
            self._status_intervals.pop(station, None)
        else:
            self._status_intervals[station] = float(seconds)
        if self._status_intervals.get(station) == old:
            return []
        return self._evaluate([("station", station)])

    def use_registry(self, registry: Registry) -> list[Event]:
        """Judge from now on by ``registry``: the same stations, sites and rules with other
        approved discharges or exempt flows (recorded on the workbench). Every outfall is
        judged again; an episode not yet final takes the new suppression, a final one keeps
        its own. Returns the events that change."""
        if not self.reg.same_stations(registry):
            raise AlertError("use_registry: only approved discharges and exempt flows may change while running")
        self.reg = registry
        self._outfalls = {o.id: o for o in registry.outfalls}
        keys = [("outfall", o.id) for o in registry.outfalls]
        self._fresh.difference_update(keys)   # their rules run: the suppressions changed, not the readings
        return self._evaluate(keys)

    @property
    def inspections(self) -> list[ev.Inspection]:
        return list(self._inspections)

    def events(self) -> dict[str, Event]:
        """The current version of every event not retracted (frozen ones included)."""
        out = {}
        for sub in self._subjects.values():
            out.update(sub.emitted)
        return out

    # -- evaluation -------------------------------------------------------------------------
    def _dependencies(self) -> dict[tuple[str, str], set[tuple[str, str]]]:
        deps: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
        for g in self.reg.rain_gauges:
            deps[(g.id, "rain")].add(("gauge", g.id))
        for o in self.reg.outfalls:
            deps[(o.id, "flow")].add(("outfall", o.id))
            for g in o.rain_gauges:
                deps[(g, "rain")].add(("outfall", o.id))
        for p in self.reg.turbidity_pairs:
            deps[(p.upstream, "turbidity")].add(("pair", p.id))
            deps[(p.downstream, "turbidity")].add(("pair", p.id))
        return deps

    def _get(self, station: str, quantity: str) -> ev.Arrays:
        s = self._series.get((station, quantity))
        return s.arrays() if s is not None else ev.EMPTY

    def _rain_index(self, gid: str) -> RainIndex | None:
        """The gauge's rain rows as a :class:`RainIndex`, extended with the rows appended since
        it was last asked for. It may keep rows the buffer has dropped (before the cut-off:
        more than the look-back and two gaps before every flow reading an outfall judges, so
        they change no judgement), never with a hole: it is built again when a row was
        inserted or replaced, when the buffer no longer holds its latest row, or when it holds
        twice the buffer. None with ``shortcuts`` off or no rows (the rules then build one
        from the rows, as replay does)."""
        s = self._series.get((gid, "rain"))
        if s is None or not self.shortcuts:
            return None
        t, v, _ = s.arrays()
        if not t.size:
            self._indexes.pop(gid, None)
            return None
        kept = self._indexes.get(gid)
        last = None if kept is None else kept[0].last
        # built again unless the buffer still holds the index's latest row (else rows the
        # buffer dropped before the index saw them would leave a hole in it)
        if last is None or kept[1] != s.edits or last < t[0] or kept[0].n > 2 * t.size + 4096:
            index = RainIndex(t, v, self._rain_gap, td_ns(self.rules.double_tip))
            self._indexes[gid] = (index, s.edits)
            return index
        index = kept[0]
        i = int(np.searchsorted(t, last, side="right"))
        if i < t.size:
            index.extend(t[i:], v[i:])
        return index

    def _fold(self, s: _Series) -> None:
        """Fold the readings ``feed`` staged in ``s`` in this batch (from ``s.mark`` on: each
        later than the one before) into ``s.change``, as its loop does for one reading
        (``feed`` does the same inline after its loop). Their flags need no note: an
        appended reading lies after every storm and episode (``_Change.flagged``)."""
        m, s.mark = s.mark, -1
        c = s.change
        if c is None:
            c = s.change = _Change()
        ts, vs = (s.pt, s.pv) if m == 0 else (s.pt[m:], s.pv[m:])
        if ts[0] < c.appended:
            c.appended = ts[0]
        if s.mark_last < c.prev_last:
            c.prev_last = s.mark_last
        hi = max(vs)
        if hi > c.vmax:
            c.vmax = hi
        if hi > 0.0:
            c.positive = True
        elif hi != hi or (len(vs) > 1 and (x := sum(vs)) != x):   # a NaN among them
            _nan_values(c, vs)
        tm = s.times
        if tm is None:
            tm = s.times = self._times[s.key[0]]
        tm._new += ts

    def _horizon(self, *stations: str) -> int:
        """The earliest horizon of the stations that have reported (one that never has, a
        dead gauge among several or a missing upstream probe, is absent: it must not stop
        the others' events from becoming final), leaving out a station gone silent: one
        whose latest reading is more than ``_silent`` before the latest of them all."""
        return _held(self._max, stations, self._silent) - self.lateness

    def _evaluate(self, due: Iterable[tuple[str, str]], sites: bool = False,
                  changed: dict[tuple[str, str], _Change] | None = None) -> list[Event]:
        """Evaluate the subjects ``due`` (gauges first, then outfalls, pairs, stations, each by
        name), and the sites when due. ``changed``: feed's records of this batch, for every
        subject of ``due``, already in that order (eval_interval 0: nothing pending, and
        ``_last_eval`` is never read); else each subject takes its pending records."""
        out: list[Event] = []
        order = _ORDER
        sites_dirty = sites or self.now_ns >= self._site_wake
        if changed is None:
            work = []
            pending, last_eval, now = self._pending, self._last_eval, self.now_ns
            for key in due:
                work.append((order[key[0]], key[1], pending.pop(key, None)))
                last_eval[key] = now
            work.sort()   # by kind and name (unique: the records are never compared)
        else:
            work = due.work if type(due) is _Due else [(order[k], n, None) for k, n in due]
        shared = changed
        shortcuts, okeys = self.shortcuts, None
        for kind, name, changed in work:
            if shared is not None:
                changed = shared
            if kind == 0:
                changes, confirmed_changed = self._gauge(name, changed)
                out += changes
                sites_dirty = sites_dirty or confirmed_changed
            elif kind == 1:
                if changed and shortcuts:
                    # _outfall's quiet case, inline with the engine's fields bound once a batch
                    # (nine of ten outfalls a batch in the live case): the same steps, in order
                    if okeys is None:
                        okeys, fresh, last_above, kept_map = (self._outfall_keys, self._fresh, self._last_above,
                                                              self._outfall_kept)
                        mx, lateness, md, lead = self._max, self.lateness, self._dwf_md, self._rain_lead
                        silent = self._silent
                    key, flow_key, stations, rain_keys, floor = okeys[name]
                    if key in fresh:
                        c = changed.get(flow_key)
                        if c is None:
                            bound = _BIG
                        else:
                            bound = c.inserted if c.inserted < c.prev_last else c.prev_last
                            if c.vmax > floor:
                                bound = _NEVER
                        for rk in rain_keys:
                            c = changed.get(rk)
                            if c is not None:
                                b = (c.inserted if c.inserted < c.appended else c.appended) + lead
                                if b < bound:
                                    bound = b
                        if last_above.get(name, _BIG) < bound:
                            kept = kept_map.get(name)
                            if kept is None:
                                kept = kept_map[name] = (self._subjects[key], self._series[flow_key])
                            sub, ser = kept
                            horizon = _held(mx, stations, silent) - lateness
                            live = sub.live
                            if live:
                                changes = self._update(key, None, 2 * md, horizon, (flow_key,))
                                if changes:
                                    out += changes
                            cut = horizon - 3 * md
                            for e in live.values():
                                start = e.fields.get("start")
                                if start is not None and start < cut:
                                    cut = start
                            if cut < sub.cutoff:
                                cut = sub.cutoff
                            sub.cutoff = cut
                            if cut > ser.cutoff:   # ser.trim(cut), inline
                                ser.cutoff = cut
                                if cut - 1 > ser.gate:
                                    ser.gate = cut - 1
                                if ser.first < cut:
                                    ser._view = None
                            continue
                changes = self._outfall(name, changed)
                if changes:
                    out += changes
            elif kind == 2:
                out += self._pair(name, changed)
            else:
                out += self._station(name)
        if sites_dirty and self.reg.construction_sites:
            wake = _BIG
            for s in self.reg.construction_sites:
                out += self._site(s.id)
                for e in self._subjects[("site", s.id)].emitted.values():
                    if e["due"] >= self.now_ns:
                        wake = min(wake, e["due"] + 1)   # falls overdue, or the next routine item opens
                first = ev.site_opens_ns(self.reg, s.id)
                if first > self.now_ns:
                    wake = min(wake, first)              # its first routine item opens
            self._site_wake = wake
        return out

    def _update(self, key: tuple[str, str], computed: list[Event] | None, settle_ns: int, horizon: int,
                inputs: tuple[tuple[str, str], ...] = ()) -> list[Event]:
        """Diff computed events against those emitted (``computed`` None: the rules were not
        run, what changed cannot change the events); freeze the ones that can no longer
        change. ``inputs``: the (station, quantity) buffers the subject's events are made of.

        An event is final when its last qualifying reading + ``settle_ns`` is before the
        horizon *and* the next reading of every input after it is too: then every reading
        that could extend it has arrived (the one that closed it included).
        """
        sub = self._subjects.get(key)
        if sub is None:
            sub = self._subjects[key] = _Subject({}, set())
        live = sub.live
        if computed is None and not live:
            return []
        changes = []
        if computed is not None:
            seen = set()
            for e in computed:
                if e.id in sub.frozen:
                    continue
                start = e.fields.get("start")
                if start is not None and start < sub.cutoff and e.id not in sub.emitted:
                    continue  # remnant of trimmed data
                seen.add(e.id)
                old = live.get(e.id)
                if old is None or old.fields != e.fields:
                    sub.emitted[e.id] = live[e.id] = e
                    changes.append(e)
            for eid in [i for i in live if i not in seen]:
                del sub.emitted[eid]
                changes.append(live.pop(eid).retracted())
        for eid, e in list(live.items()):
            f = e.fields
            end = f.get("end")
            if end is None:
                continue
            last = f.get("last_met", end)
            if last is not None and last + settle_ns < horizon and all(_next_after(self._get(*k)[0], last) <= horizon
                                                                       for k in inputs):
                sub.frozen.add(eid)
                del live[eid]
        return changes

    def _cutoff(self, key: tuple[str, str], horizon: int, context_ns: int) -> int:
        sub = self._subjects[key]
        c = horizon - context_ns
        for e in sub.live.values():
            start = e.fields.get("start")
            if start is not None and start < c:
                c = start
        if c < sub.cutoff:
            c = sub.cutoff
        sub.cutoff = c
        return c

    def _run(self, key: tuple[str, str]) -> bool:
        """Whether ``key``'s rules must run whatever changed: shortcuts off, or not run since
        this engine started (what changed before a restart is not known)."""
        if self.shortcuts and key in self._fresh:   # the subject exists from its first run on
            return False
        self._fresh.add(key)
        return True

    def _storms_may_change(self, gid: str, changed: dict[tuple[str, str], _Change] | None) -> bool:
        """Whether what changed since the gauge was last evaluated may change its storms.

        Storms are made of the rain rows above zero alone (zero rows only say the gauge was
        alive), so new zero rows change none, but for the flags of those inside a storm
        (``uncalibrated``, issue 13): a flagged row out of order runs the rules (one after the
        gauge's latest row lies after every storm). Time passing changes a storm only when it
        gets confirmed (now - last rain > inter-event time). Exact."""
        c = changed.get((gid, "rain")) if changed else None
        if c is not None and (c.positive or c.replaced or (c.flagged and c.inserted < _BIG)):
            return True
        now, mit = self.now_ns, self._mit
        return any(not e["confirmed"] and now - e["last_rain"] > mit for e in self._subjects[("gauge", gid)].live.values())

    def _gauge(self, gid: str, changed: dict[tuple[str, str], _Change] | None) -> tuple[list[Event], bool]:
        """Storms of a gauge; also whether its confirmed qualifying storms changed."""
        key = ("gauge", gid)
        mit = self._mit
        if self.shortcuts and key in self._fresh:
            # _storms_may_change and the bookkeeping after it, inline, for the common case: no
            # storm can change (zero rows appended, no storm due to be confirmed)
            c = changed.get((gid, "rain")) if changed else None
            if c is None or not (c.positive or c.replaced or (c.flagged and c.inserted < _BIG)):
                sub = self._subjects[key]
                live = sub.live
                now = self.now_ns
                for e in live.values():
                    f = e.fields
                    if not f["confirmed"] and now - f["last_rain"] > mit:
                        break
                else:
                    m = self._max.get(gid)
                    horizon = (_NEVER if m is None else m) - self.lateness
                    if live:
                        self._update(key, None, mit, horizon, ((gid, "rain"),))   # freezes only
                    need = horizon - mit
                    for e in live.values():
                        start = e.fields.get("start")
                        if start is not None and start < need:
                            need = start
                    if need < sub.cutoff:
                        need = sub.cutoff
                    sub.cutoff = need
                    keep = self._rain_keep
                    osubs = self._gauge_osubs.get(gid)
                    if osubs is None:   # its outfalls' subjects, once all exist (they are never replaced)
                        subjects = self._subjects
                        osubs = [subjects.get(okey) for okey in self._gauge_outfalls.get(gid, ())]
                        if None in osubs:
                            need = _NEVER - keep
                            osubs = ()
                        else:
                            self._gauge_osubs[gid] = osubs
                    for osub in osubs:
                        if osub.cutoff - keep < need:
                            need = osub.cutoff - keep
                    self._series[(gid, "rain")].trim(need)
                    return [], False
        computed = None
        if self._run(key) or self._storms_may_change(gid, changed):
            computed = ev.gauge_storms(self.reg, gid, self._get(gid, "rain"), self.now_ns)
        horizon = self._horizon(gid)
        changes = self._update(key, computed, mit, horizon, ((gid, "rain"),))
        confirmed = self._confirmed[gid]
        confirmed_changed = False
        for e in changes:
            if e.status is EventStatus.ACTIVE and e["confirmed"] and e["qualifying"]:
                if confirmed.get(e.id) != e["last_rain"]:
                    confirmed[e.id] = e["last_rain"]
                    confirmed_changed = True
            elif confirmed.pop(e.id, None) is not None:
                confirmed_changed = True
        # keep rain for the storms still open and for the dry-weather look-back of outfalls
        need = self._cutoff(key, horizon, mit)
        keep = self._rain_keep
        for okey in self._gauge_outfalls.get(gid, ()):
            osub = self._subjects.get(okey)
            if osub is None:
                need = _NEVER - keep
            elif osub.cutoff - keep < need:
                need = osub.cutoff - keep
        self._series[(gid, "rain")].trim(need)
        return changes, confirmed_changed

    def _flow_may_change(self, oid: str, changed: dict[tuple[str, str], _Change] | None) -> bool:
        """Whether what changed since the outfall was last evaluated may change its events.

        Both of its rules need flow above the floor: a reading at or below it meets neither,
        whatever the weather. What changed can change the condition only at flow readings
        from a bound on: an inserted flow reading's time; the latest flow reading before an
        appended one (a run open there closes); a new rain row's time t. The row counts in
        the depth and recent rain of windows ending at t or later only, and the coverage it
        adds too: it joins the stretch before it only where the row before already covers
        (``dry_rain_max_gap`` past itself, past t), and a stretch it starts or lengthens
        backwards begins at t - gap, so a ``dry_lookback`` window in it ends after t (with a
        look-back shorter than the gap, from t - (gap - look-back): ``_rain_lead``).
        Then, exactly:

        1. no flow reading from the bound on is above the floor (the new ones included):
           every run of the condition, so every episode and its fields, is as it was;
        2. else, unless a flow reading came out of order: an episode needs a run meeting the
           condition for ``dwf_min_duration``, which lies within a run of readings above the
           floor. When every such run reaching the bound is shorter, no run that changed is
           long enough now, nor was before (appended readings only lengthen the last run).

        A corrected value counts as a reading inserted at its time (the one it replaces was
        above the floor, or not: ``_last_above`` has seen it).

        Running the rules is always exact: while an episode is open (its run reaches the
        latest reading) any change that gets past 1. runs them, without proving 2. (it would
        hold: the open run reaches the bound and lasts the minimum duration)."""
        if not changed:
            return False
        of = self._outfalls[oid]
        floor = of.flow_floor_gpm
        bound, inserted, new_above = _BIG, False, False
        c = changed.get((oid, "flow"))
        if c is not None:
            bound = min(c.inserted, c.prev_last)
            inserted, new_above = c.inserted < _BIG, c.vmax > floor
        for g in of.rain_gauges:
            c = changed.get((g, "rain"))
            if c is not None:
                bound = min(bound, min(c.inserted, c.appended) + self._rain_lead)
        if not new_above and self._last_above.get(oid, _BIG) < bound:
            return False                                    # 1.
        if inserted:
            return True
        for e in self._subjects[("outfall", oid)].live.values():
            if e.fields.get("end", 0) is None:
                return True                                 # an episode open: its rules run
        t, v, _ = self._get(oid, "flow")
        return self._long_run_reaches(oid, t, v, bound, floor)   # 2.

    WINDOW = 64   # _long_run_reaches looks at up to this many readings in Python, else numpy

    def _long_run_reaches(self, oid: str, t: np.ndarray, v: np.ndarray, bound: int, floor: float) -> bool:
        """_flow_may_change's 2.: whether a run of flow readings above the floor whose last
        reading is at ``bound`` or later lasts ``dwf_min_duration``; notes the latest reading
        above the floor in ``_last_above``.

        Exactly as on the whole buffer, it looks at the readings from ``dwf_min_duration``
        before the first reading from the bound on (at i0), and the one before them (ws): a
        run that goes on before ws and reaches i0 lasts more than the minimum duration, and so
        does its part from ws. Up to ``WINDOW`` readings are walked in Python (a few numpy
        calls cost more), more with numpy on the whole buffer."""
        md, n = self._dwf_md, t.size
        if n:
            i0 = int(np.searchsorted(t, bound))
            lo = int(np.searchsorted(t, int(t[i0 if i0 < n else n - 1]) - md))
            ws = lo - 1 if lo > 0 else 0
            if n - ws <= self.WINDOW:
                tt, vv, i0 = t[ws:].tolist(), v[ws:].tolist(), i0 - ws
                k = len(vv) - 1
                while k >= 0 and not vv[k] > floor:
                    k -= 1
                if k < 0:   # none above the floor in the window: no run reaches i0
                    a = np.flatnonzero(v > floor)
                    self._last_above[oid] = int(t[a[-1]]) if a.size else _NEVER
                    return False
                self._last_above[oid] = tt[k]
                start = -1
                for j, x in enumerate(vv):
                    if x > floor:
                        if start < 0:
                            start = j
                    elif start >= 0:
                        if j - 1 >= i0 and tt[j - 1] - tt[start] >= md:
                            return True
                        start = -1
                return start >= 0 and len(vv) - 1 >= i0 and tt[-1] - tt[start] >= md
        above = v > floor
        k = np.flatnonzero(above)
        self._last_above[oid] = int(t[k[-1]]) if k.size else _NEVER
        first, last = runs(above)
        reach = last >= np.searchsorted(t, bound)
        return bool(np.any(t[last[reach]] - t[first[reach]] >= md))

    def _outfall(self, oid: str, changed: dict[tuple[str, str], _Change] | None) -> list[Event]:
        key, flow_key, stations, rain_keys, floor = self._outfall_keys[oid]
        if changed and self.shortcuts and key in self._fresh:
            # _flow_may_change's first case and the bookkeeping after it, inline: the common
            # case (readings appended below the floor, zero rain rows) costs no calls.
            c = changed.get(flow_key)
            if c is None:
                bound = _BIG
            else:
                bound = c.inserted if c.inserted < c.prev_last else c.prev_last
                if c.vmax > floor:
                    bound = _NEVER
            for rk in rain_keys:
                c = changed.get(rk)
                if c is not None:
                    b = (c.inserted if c.inserted < c.appended else c.appended) + self._rain_lead
                    if b < bound:
                        bound = b
            if self._last_above.get(oid, _BIG) < bound:
                kept = self._outfall_kept.get(oid)
                if kept is None:   # both are made by its first run and never replaced
                    kept = self._outfall_kept[oid] = (self._subjects[key], self._series[flow_key])
                sub, ser = kept
                horizon = _held(self._max, stations, self._silent) - self.lateness
                changes = self._update(key, None, 2 * self._dwf_md, horizon, (flow_key,)) if sub.live else []
                cut = horizon - 3 * self._dwf_md
                for e in sub.live.values():
                    start = e.fields.get("start")
                    if start is not None and start < cut:
                        cut = start
                if cut < sub.cutoff:
                    cut = sub.cutoff
                sub.cutoff = cut
                ser.trim(cut)
                return changes
        of = self._outfalls[oid]
        computed = extended = None
        run = self._run(key)
        if not run and changed and (extended := self._extend_open(oid, changed)) is not None:
            pass
        elif run or self._flow_may_change(oid, changed):
            flow = self._get(oid, "flow")
            index = {g: x for g in of.rain_gauges if (x := self._rain_index(g)) is not None}
            computed = ev.outfall_events(self.reg, oid, flow, {g: self._get(g, "rain") for g in of.rain_gauges},
                                         index)
            above = np.flatnonzero(flow[1] > of.flow_floor_gpm)
            self._last_above[oid] = int(flow[0][above[-1]]) if above.size else _NEVER
        md = self._dwf_md
        horizon = self._horizon(*stations)
        changes = self._update(key, computed, 2 * md, horizon, (flow_key,))
        if extended is not None:
            changes.append(extended)   # the rules did not run: _update froze only (an open episode stays live)
        self._series[flow_key].trim(self._cutoff(key, horizon, 3 * md))
        return changes

    def _extend_open(self, oid: str, changed: dict[tuple[str, str], _Change]) -> Event | None:
        """An open dry-weather-flow episode (or dry-weather-unknown notice) extended by the
        flow readings appended since the outfall was last evaluated, without running its
        rules (:func:`.evaluate.extend_open_episode`), recorded as emitted; None when that
        cannot be done exactly (the rules then run).

        It applies when the only live event still open is such an episode or notice whose
        ``last_met`` is the latest flow reading before the change, no flow reading was
        inserted or corrected, and every rain row new to the outfall's gauges was appended at
        a time that can change the dry-weather state only after ``last_met`` (its time plus
        ``_rain_lead``, as in ``_flow_may_change``): every judgement up to ``last_met``, so
        every other event, is then as it was."""
        c = changed.get((oid, "flow"))
        if c is None or c.inserted < _BIG or c.appended == _BIG:
            return None
        sub = self._subjects[("outfall", oid)]
        open_e = None
        for e in sub.live.values():
            if e.fields.get("end", 0) is None:
                if open_e is not None:
                    return None
                open_e = e
        if open_e is None or open_e.kind not in _EXTENDABLE:
            return None
        last = open_e.fields["last_met"]
        if c.prev_last != last:
            return None
        lead = self._rain_lead
        for rk in self._outfall_rain[oid]:
            rc = changed.get(rk)
            if rc is not None and (rc.inserted < _BIG or rc.appended + lead <= last):
                return None
        flow = self._get(oid, "flow")
        t = flow[0]
        i = int(np.searchsorted(t, last, side="right"))
        if i == 0 or int(t[i - 1]) != last:
            return None
        gauges = self._outfalls[oid].rain_gauges
        index = {g: x for g in gauges if (x := self._rain_index(g)) is not None}
        e = ev.extend_open_episode(self.reg, oid, open_e, flow, {g: self._get(g, "rain") for g in gauges}, index, i)
        if e is None:
            return None
        self._last_above[oid] = e.fields["last_met"]   # every new reading is above the floor
        sub.emitted[e.id] = sub.live[e.id] = e
        return e

    def _pair_may_change(self, pid: str, changed: dict[tuple[str, str], _Change] | None) -> bool:
        """Whether what changed since the pair was last evaluated may change its events.

        Readings appended to either probe change what is judged at downstream readings from
        a bound on: the latest downstream reading before (its spike test now has both
        neighbours), the latest upstream one before, less the align tolerance (downstream
        readings near it may now pair with a newer one; its spike test too). If no event
        still open or ending from there is live and every downstream reading from there is
        certainly quiet (:func:`.evaluate.pair_quiet`: evaluable, no contrast, no backstop),
        the runs from there are cut short, as short as they were or shorter: no event
        changes. Exact; a reading out of order or a corrected value runs the rules."""
        if not changed:
            return False
        p = self._pairs[pid]
        bound = _BIG
        for st, lead in ((p.downstream, 0), (p.upstream, self._align)):
            c = changed.get((st, "turbidity"))
            if c is not None:
                if c.inserted < _BIG:
                    return True
                bound = min(bound, c.prev_last - lead)
        for e in self._subjects[("pair", pid)].live.values():
            if e["end"] is None or e["last_met"] >= bound:
                return True
        down = self._get(p.downstream, "turbidity")
        return not ev.pair_quiet(self._get(p.upstream, "turbidity"), down, int(np.searchsorted(down[0], bound)),
                                 *self._pair_params)

    def _pair(self, pid: str, changed: dict[tuple[str, str], _Change] | None) -> list[Event]:
        p = self._pairs[pid]
        up, down = self._get(p.upstream, "turbidity"), self._get(p.downstream, "turbidity")
        key = ("pair", pid)
        computed = None
        if self._run(key) or self._pair_may_change(pid, changed):
            computed = ev.pair_events(self.reg, pid, up, down)
        md, tol = self._turb_md, self._align
        horizon = self._horizon(p.upstream, p.downstream)
        # a probe that never reported (a missing upstream) is absent, not "still to come"
        inputs = tuple((st, "turbidity") for st in (p.upstream, p.downstream) if st in self._max)
        changes = self._update(key, computed, 2 * md + tol, horizon, inputs)
        c = self._cutoff(key, horizon, 3 * md + 2 * tol)
        # Keep the whole current flat segment (flat-line QC looks back to its start) and two
        # readings before it: the spike test judges a reading by both neighbours, so the first
        # reading kept is judged without one, and the reading after it must still lie before
        # the subject's cut-off (else a spike just before an episode, trimmed, moves its start).
        for a in (up, down):
            t, v = a[0], a[1]
            i = int(np.searchsorted(t, c))
            while 0 < i < t.size and v[i] == v[i - 1]:
                i -= 1
            if i > 0:
                c = min(c, int(t[max(i - 2, 0)]))
        self._series[(p.upstream, "turbidity")].trim(c)
        self._series[(p.downstream, "turbidity")].trim(c)
        return changes

    def _station(self, st: str) -> list[Event]:
        ser = self._times.get(st)
        times = ser.times() if ser is not None else ev.EMPTY[0]
        battery = self._get(st, "battery")
        computed = ev.station_health(self.reg, st, times, battery, self.now_ns,
                                     ev.report_interval(self.reg, st, self._status_intervals), since_ns=self._since)
        key = ("station", st)
        horizon = self._horizon(st)
        changes = self._update(key, computed, 0, horizon, ((st, "battery"),) if battery[0].size else ())
        c = self._cutoff(key, horizon, 0)
        # keep 2 readings before the cut-off: a span starts after the reading before it
        i = int(np.searchsorted(times, c)) - 2
        if i > 0:
            self._times[st].trim(int(times[i]))
            self._series[(st, "battery")].trim(int(times[i]))
        return changes

    def _site(self, sid: str) -> list[Event]:
        storms = {g: list(d.values()) for g, d in self._confirmed.items()}
        computed = ev.site_inspections(self.reg, sid, storms, [i.time_ns for i in self._inspections if i.site == sid],
                                       self.now_ns)
        sub = self._subjects.setdefault(("site", sid), _Subject({}, set()))
        changes = []
        seen = set()
        for e in computed:
            seen.add(e.id)
            if sub.emitted.get(e.id) is None or sub.emitted[e.id].fields != e.fields:
                sub.emitted[e.id] = sub.live[e.id] = e
                changes.append(e)
        for eid in [i for i in sub.emitted if i not in seen]:
            sub.live.pop(eid, None)
            changes.append(sub.emitted.pop(eid).retracted())
        return changes

    # -- persistence ------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write the state atomically to ``state_path``."""
        if self.state_path is None:
            return
        state = {
            "version": STATE_VERSION, "now_ns": self.now_ns, "late_dropped": self.late_dropped,
            "series": [[s, q, ser.cutoff, ser.rows()] for (s, q), ser in self._series.items()],
            "times": [[s, ser.cutoff, ser.times().tolist()] for s, ser in self._times.items()],
            "max": self._max,
            "subjects": [[k, n, sub.cutoff, sorted(sub.frozen), [e.to_dict() | {"_fields": list(e.fields)}
                                                                 for e in sub.emitted.values()]]
                         for (k, n), sub in self._subjects.items()],
            "confirmed": self._confirmed,
            "inspections": [[i.site, i.time_ns, i.inspector, i.note] for i in self._inspections],
            "since": self._since, "status_intervals": self._status_intervals,
        }
        tmp = self.state_path.with_suffix(self.state_path.suffix + ".tmp")
        try:
            tmp.write_text(json.dumps(state, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self.state_path)
        except OSError as e:
            raise AlertError(f"{self.state_path}: cannot write engine state: {e.strerror}") from None
        self.checkpoint_ns = self.now_ns

    def close(self) -> None:
        self.checkpoint()

    def _load(self) -> None:
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("version") != STATE_VERSION:
                raise AlertError(f"{self.state_path}: engine state version {state.get('version')!r}, "
                                 f"expected {STATE_VERSION}")
            self.now_ns = state["now_ns"]
            self.checkpoint_ns = self.now_ns
            self.late_dropped = state["late_dropped"]
            for s, q, cut, rows in state["series"]:
                self._series[(s, q)].load(cut, rows)
            for s, cut, ts in state["times"]:
                self._times[s].load(cut, ts)
            self._max = {k: int(v) for k, v in state["max"].items()}
            for k, n, cut, frozen, evs in state["subjects"]:
                emitted = {}
                for d in evs:
                    order = d.pop("_fields")
                    e = Event.from_dict(d)
                    emitted[e.id] = Event(e.kind, e.id, {f: e.fields[f] for f in order}, e.params, e.provision,
                                          e.status)
                self._subjects[(k, n)] = _Subject(emitted, set(frozen), cut)
            for g, d in state["confirmed"].items():
                self._confirmed[g] = {k: int(v) for k, v in d.items()}
            self._inspections = [ev.Inspection(s, int(t), i, n) for s, t, i, n in state["inspections"]]
            since = state.get("since")       # both absent from a state written before issue 10
            self._since = None if since is None else int(since)
            self._status_intervals = {k: float(v) for k, v in (state.get("status_intervals") or {}).items()}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise AlertError(f"{self.state_path}: cannot read engine state: {e}") from None
