"""The scheduler: which subjects a batch of readings or a clock tick makes due, in which
order, and what becomes of their events (diffed against those emitted, frozen once final).

:class:`StreamingEngine` keeps the buffers (:mod:`.buffers`) and each subject's events
(:class:`.state.Subject`); a subject's own rules and exact shortcuts live in its module
(:mod:`.gauge`, :mod:`.outfall`, :mod:`.pair`, :mod:`.station`, :mod:`.site`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterable

from ...contract.registry import Registry
from ...contract.timeutil import to_ns
from ...contract.wire import CanonicalReading
from .. import evaluate as ev
from ..errors import AlertError
from ..events import AlertEvent
from ..rules._common import td_ns
from .buffers import BIG, NEVER, SAME, Change, Series, SeriesMap, Times, held, nan_values, next_after
from .gauge import Gauges
from .outfall import Outfalls
from .pair import Pairs
from .site import Sites
from .state import Subject, load, save
from .station import Stations

_ORDER = {"gauge": 0, "outfall": 1, "pair": 2, "station": 3}   # gauges first: sites need their storms


def _order_key(key: tuple[str, str]) -> tuple[int, str]:
    return _ORDER[key[0]], key[1]


class _Due(list[tuple[str, str]]):
    """The subjects due after a batch (feed, eval_interval 0), in order, and ``work``: the
    same as ``evaluate`` walks them, (``_ORDER`` of the kind, name, None), made once."""

    __slots__ = ("work",)
    work: list[tuple[int, str, Any]]


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
        changed provably cannot change its events (exact: see ``Gauges.storms_may_change``,
        ``Outfalls.flow_may_change`` and ``Pairs.may_change``); False runs them for every change,
        the reference the tests compare the shortcuts with."""
        self.reg = registry
        self.eval_interval = td_ns(eval_interval)
        self.shortcuts = shortcuts
        # subject -> (station, quantity) -> what changed since the subject was last evaluated
        self.pending: dict[tuple[str, str], dict[tuple[str, str], Change]] = {}
        self._last_eval: dict[tuple[str, str], int] = {}
        self.fresh: set[tuple[str, str]] = set()   # subjects whose rules ran since this engine started
        self._site_wake = 0
        self.rules = r = registry.rules
        self.state_path = Path(state_path) if state_path else None
        self.lateness = td_ns(r.lateness)
        # a station this much behind the latest of a subject's stations holds its horizon
        # back no more (held; docs/rules.md, Streaming = replay: issue 21)
        self.silent = self.lateness + td_ns(r.dry_lookback)
        self.now_ns = 0
        self.checkpoint_ns = 0
        self.late_dropped = 0
        self.series = SeriesMap()
        self.times: dict[str, Times] = defaultdict(Times)  # station -> reading times (health)
        self.latest: dict[str, int] = {}
        self.subjects: dict[tuple[str, str], Subject] = {}
        self.confirmed: dict[str, dict[str, int]] = defaultdict(dict)  # gauge -> storm id -> end
        self.since: int | None = None   # the earliest reading or clock time seen: stations are expected from then
        self.status_intervals: dict[str, float] = {}  # station -> report interval its logger states [s]
        self.inspected: list[ev.Inspection] = []   # recorded inspections, in order
        self.deps = self._dependencies()
        # one home per kind of subject: its rules' shortcuts, its own bookkeeping
        self.gauges = Gauges(self)
        self.outfalls = Outfalls(self)
        self.pairs = Pairs(self)
        self.stations = Stations(self)
        self.sites = Sites(self)
        self._due_cache: dict[tuple[Series, ...], _Due] = {}   # feed, eval_interval 0
        self._subject_order = sorted({k for subs in self.deps.values() for k in subs}, key=_order_key)
        if self.state_path and self.state_path.exists():
            load(self, self.state_path)

    # -- public API -------------------------------------------------------------------------
    def feed(self, readings: Iterable[CanonicalReading]) -> list[AlertEvent]:
        """Add readings (any order, duplicates allowed); return new or changed events."""
        series = self.series
        by_station = series.by_station
        since = BIG if self.since is None else self.since
        touched: list[Series] = []   # the buffers this batch changes
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
            if t == s.gate and s.mark >= 0:
                # the reading staged last in this batch, again (another sensor of the quantity at
                # that time: a logger's backlog): replaced where it waits, the value it replaces
                # kept for the fold, which notes both as the loop below notes a reading and its
                # correction (the rain index never saw it: no edit)
                v = float(v)
                flags = flags or ""
                pv, pf = s.pv, s.pf
                was = pv[-1]
                if was == v and pf[-1] == flags:
                    continue
                pv[-1] = v
                pf[-1] = flags
                lost = s.lost
                if lost is None:
                    s.lost = [was]
                else:
                    lost.append(was)
                if flags:
                    s.lost_flagged = True
                continue
            if t < since:
                since = t
            if t < s.cutoff:
                self.late_dropped += 1
                continue
            if s.mark >= 0:
                self.fold(s)
            elif s.change is None:
                touched.append(s)
            prev = s.last
            v = float(v)
            flags = flags or ""
            old = s.put(t, v, flags)
            c = s.change
            if c is None:
                c = s.change = Change()
            if old is SAME:
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
            self.times[station].add(t)
            # Station health (stale, battery) is judged by advance(), on the clock: judged
            # here against the newest reading of any station, a logger whose batch arrives
            # a moment after its neighbours' would look stale for that moment.
        mx, now = self.latest, self.now_ns
        pending, deps = self.pending, self.deps
        times = self.times
        # eval_interval 0 (serve): every subject whose inputs changed is evaluated now, and none
        # waits from before, so the subjects share this batch's records (each reads only its own
        # inputs' there) instead of each getting its own
        shared: dict[tuple[str, str], Change] | None = {} if self.eval_interval <= 0 and not pending else None
        hit: list[Series] = []   # shared: the buffers that changed, in order
        new_change = Change.__new__
        for s in touched:
            c, m = s.change, s.mark
            if m >= 0:   # _fold, inline: the common case, readings appended only
                s.mark = -1
                ts, vs = (s.pt, s.pv) if m == 0 else (s.pt[m:], s.pv[m:])
                if s.lost is not None:
                    vs = vs + s.lost
                    s.lost = None
                hi = max(vs)
                if c is None:   # Change(ts[0], s.mark_last, hi, hi > 0.0), or without hi if NaN: slots set inline
                    c = new_change(Change)
                    c.inserted, c.appended, c.prev_last, c.replaced, c.flagged = BIG, ts[0], s.mark_last, False, False
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
                    nan_values(c, vs)
                if s.lost_flagged:
                    s.lost_flagged = False
                    c.flagged = True
                tm = s.times
                if tm is None:
                    tm = s.times = times[s.station]
                tm._new += ts
            else:
                s.change = None
                if c is None or c.prev_last == BIG:
                    continue   # only readings it had already, unchanged
            s.change = None
            if c.appended < since:
                since = c.appended
            last = s.last
            if last > now:
                now = last
            st = s.station
            if last > mx.get(st, NEVER):
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
        self.since, self.now_ns = (None if since == BIG else since), now
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
            return self.evaluate(due, changed=shared)
        last_eval, iv = self._last_eval, self.eval_interval
        # now never goes back, so with eval_interval 0 every pending subject is due
        return self.evaluate(list(pending) if iv <= 0 else [k for k in pending if now - last_eval.get(k, NEVER) >= iv])

    def advance(self, now_ns: int) -> list[AlertEvent]:
        """Time passes (no readings needed): storms get confirmed, inspections fall overdue,
        stations go stale."""
        if now_ns > self.now_ns:
            self.now_ns = now_ns
        if self.since is None or now_ns < self.since:
            self.since = now_ns
        stations = set(self.latest) | self.reg.station_ids()   # a registry station that never reported too
        subjects = {("gauge", g.id) for g in self.reg.rain_gauges} | {("station", s) for s in stations}
        return self.evaluate(subjects | set(self.pending), sites=True)

    def record_inspection(self, site: str, time: datetime | int, inspector: str = "", note: str = "") -> list[AlertEvent]:
        """Record an inspection of ``site`` at ``time`` (aware datetime or UTC ns); closes its
        open items and returns the updated ones."""
        if not any(s.id == site for s in self.reg.construction_sites):
            raise AlertError(f"unknown construction site {site!r}")
        t = time if isinstance(time, int) else to_ns(time)
        self.inspected.append(ev.Inspection(site, t, inspector, note))
        return self.evaluate((), sites=True)

    def station_freshness(self) -> list[tuple[str, int | None, int]]:
        """For the server's ``/metrics``: every station (the registry's and any that reported)
        with the newest reading it was fed [UTC ns] (None: none yet) and the silence after
        which it is stale [ns], ``rules.stale_intervals`` × its expected report interval
        (:func:`~..evaluate.report_interval`: the registry's, its logger's stated, the default).
        Copies, so a scrape from another thread never sees a batch half-fed."""
        newest, stated = dict(self.latest), dict(self.status_intervals)
        n = self.rules.stale_intervals
        return [(s, newest.get(s), n * ev.report_interval(self.reg, s, stated)[0])
                for s in sorted(set(newest) | self.reg.station_ids())]

    def inputs(self) -> set[tuple[str, str]]:
        """Every (station, quantity) the rules read: what a re-feed from the store must cover."""
        return set(self.deps) | {(s, "battery") for s in self.reg.station_ids()}

    def station_report_interval(self, station: str, seconds: float | None) -> list[AlertEvent]:
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
        old = self.status_intervals.get(station)
        if seconds is None:
            self.status_intervals.pop(station, None)
        else:
            self.status_intervals[station] = float(seconds)
        if self.status_intervals.get(station) == old:
            return []
        return self.evaluate([("station", station)])

    def use_registry(self, registry: Registry) -> list[AlertEvent]:
        """Judge from now on by ``registry``: the same stations, sites and rules with other
        approved discharges or exempt flows (recorded on the workbench). Every outfall is
        judged again; an episode not yet final takes the new suppression, a final one keeps
        its own. Returns the events that change."""
        if not self.reg.same_stations(registry):
            raise AlertError("use_registry: only approved discharges and exempt flows may change while running")
        self.reg = registry
        self.outfalls.use(registry)
        keys = [("outfall", o.id) for o in registry.outfalls]
        self.fresh.difference_update(keys)   # their rules run: the suppressions changed, not the readings
        return self.evaluate(keys)

    @property
    def inspections(self) -> list[ev.Inspection]:
        return list(self.inspected)

    def events(self) -> dict[str, AlertEvent]:
        """The current version of every event not retracted (frozen ones included)."""
        out = {}
        for sub in self.subjects.values():
            out.update(sub.emitted)
        return out

    # -- evaluation -------------------------------------------------------------------------
    def _dependencies(self) -> dict[tuple[str, str], set[tuple[str, str]]]:
        deps: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
        for g in self.reg.rain_gauges:
            deps[(g.id, "rain")].add(("gauge", g.id))
        for o in self.reg.outfalls:
            deps[(o.id, "flow")].add(("outfall", o.id))
            for gid in o.rain_gauges:
                deps[(gid, "rain")].add(("outfall", o.id))
        for p in self.reg.turbidity_pairs:
            deps[(p.upstream, "turbidity")].add(("pair", p.id))
            deps[(p.downstream, "turbidity")].add(("pair", p.id))
        return deps

    def get(self, station: str, quantity: str) -> ev.Arrays:
        """The buffer of (station, quantity): sorted (times, values, flags), views."""
        s = self.series.get((station, quantity))
        return s.arrays() if s is not None else ev.EMPTY

    def fold(self, s: Series) -> None:
        """Fold the readings ``feed`` staged in ``s`` in this batch (from ``s.mark`` on: each
        later than the one before) into ``s.change``, as its loop does for one reading
        (``feed`` does the same inline after its loop). Their flags need no note: an
        appended reading lies after every storm and episode (``Change.flagged``)."""
        m, s.mark = s.mark, -1
        c = s.change
        if c is None:
            c = s.change = Change()
        ts, vs = (s.pt, s.pv) if m == 0 else (s.pt[m:], s.pv[m:])
        if s.lost is not None:   # staged readings replaced in this batch: the values they had count too
            vs = vs + s.lost
            s.lost = None
        if s.lost_flagged:       # ... and the flags of what replaced them
            s.lost_flagged = False
            c.flagged = True
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
            nan_values(c, vs)
        tm = s.times
        if tm is None:
            tm = s.times = self.times[s.key[0]]
        tm._new += ts

    def horizon(self, *stations: str) -> int:
        """The earliest horizon of the stations that have reported (one that never has, a
        dead gauge among several or a missing upstream probe, is absent: it must not stop
        the others' events from becoming final), leaving out a station gone silent: one
        whose latest reading is more than ``_silent`` before the latest of them all."""
        return held(self.latest, stations, self.silent) - self.lateness

    def evaluate(self, due: Iterable[tuple[str, str]], sites: bool = False,
                 changed: dict[tuple[str, str], Change] | None = None) -> list[AlertEvent]:
        """Evaluate the subjects ``due`` (gauges first, then outfalls, pairs, stations, each by
        name), and the sites when due. ``changed``: feed's records of this batch, for every
        subject of ``due``, already in that order (eval_interval 0: nothing pending, and
        ``_last_eval`` is never read); else each subject takes its pending records."""
        out: list[AlertEvent] = []
        order = _ORDER
        sites_dirty = sites or self.now_ns >= self._site_wake
        if changed is None:
            work = []
            pending, last_eval, now = self.pending, self._last_eval, self.now_ns
            for key in due:
                work.append((order[key[0]], key[1], pending.pop(key, None)))
                last_eval[key] = now
            work.sort()   # by kind and name (unique: the records are never compared)
        else:
            work = due.work if type(due) is _Due else [(order[k], n, None) for k, n in due]
        shared = changed
        shortcuts = self.shortcuts
        gauges, outfalls, pairs, stations = self.gauges, self.outfalls, self.pairs, self.stations
        for kind, name, changed in work:
            if shared is not None:
                changed = shared
            if kind == 0:
                changes, confirmed_changed = gauges.evaluate(name, changed)
                out += changes
                sites_dirty = sites_dirty or confirmed_changed
            elif kind == 1:
                if changed and shortcuts:
                    quiet = outfalls.quiet(name, changed)   # nine of ten outfalls a batch, live
                    if quiet is not None:
                        if quiet:
                            out += quiet
                        continue
                changes = outfalls.evaluate(name, changed)
                if changes:
                    out += changes
            elif kind == 2:
                out += pairs.evaluate(name, changed)
            else:
                out += stations.evaluate(name)
        if sites_dirty and self.reg.construction_sites:
            wake = BIG
            for s in self.reg.construction_sites:
                out += self.sites.evaluate(s.id)
                for e in self.subjects[("site", s.id)].emitted.values():
                    if e["due"] >= self.now_ns:
                        wake = min(wake, e["due"] + 1)   # falls overdue, or the next routine item opens
                first = ev.site_opens_ns(self.reg, s.id)
                if first > self.now_ns:
                    wake = min(wake, first)              # its first routine item opens
            self._site_wake = wake
        return out

    def update(self, key: tuple[str, str], computed: list[AlertEvent] | None, settle_ns: int, horizon: int,
               inputs: tuple[tuple[str, str], ...] = ()) -> list[AlertEvent]:
        """Diff computed events against those emitted (``computed`` None: the rules were not
        run, what changed cannot change the events); freeze the ones that can no longer
        change. ``inputs``: the (station, quantity) buffers the subject's events are made of.

        An event is final when its last qualifying reading + ``settle_ns`` is before the
        horizon *and* the next reading of every input after it is too: then every reading
        that could extend it has arrived (the one that closed it included).
        """
        sub = self.subjects.get(key)
        if sub is None:
            sub = self.subjects[key] = Subject({}, set())
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
            if last is not None and last + settle_ns < horizon and all(next_after(self.get(*k)[0], last) <= horizon
                                                                       for k in inputs):
                sub.frozen.add(eid)
                del live[eid]
        return changes

    def cutoff(self, key: tuple[str, str], horizon: int, context_ns: int, keep_from: int = BIG) -> int:
        """Move ``key``'s cut-off on to ``context_ns`` before the horizon, never past the start
        of an event still live nor past ``keep_from`` [UTC ns] (a run that may yet become
        one), and never back; its readings before it may go. Events computed later that
        start before it are remnants of trimmed data (:meth:`update`)."""
        sub = self.subjects[key]
        c = min(horizon - context_ns, keep_from)
        for e in sub.live.values():
            start = e.fields.get("start")
            if start is not None and start < c:
                c = start
        if c < sub.cutoff:
            c = sub.cutoff
        sub.cutoff = c
        return c

    def going_on(self, start: int, last: int, horizon: int) -> int:
        """``start`` [UTC ns] of a run going on at a sensor's ``last`` reading, for
        :meth:`cutoff`'s ``keep_from``, while the horizon is less than ``lateness`` +
        ``dry_lookback`` past it; BIG after: a reading after so long a silence starts a new
        run (no rule joins across it)."""
        return start if horizon - last <= self.silent else BIG

    def must_run(self, key: tuple[str, str]) -> bool:
        """Whether ``key``'s rules must run whatever changed: shortcuts off, or not run since
        this engine started (what changed before a restart is not known)."""
        if self.shortcuts and key in self.fresh:   # the subject exists from its first run on
            return False
        self.fresh.add(key)
        return True

    # -- persistence ------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write the state atomically to ``state_path`` (:func:`.state.save`)."""
        if self.state_path is None:
            return
        save(self, self.state_path)
        self.checkpoint_ns = self.now_ns

    def close(self) -> None:
        self.checkpoint()
