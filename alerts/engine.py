"""The streaming engine: readings in, events out, state on disk.

A thin layer over the same rule functions as replay (:mod:`.evaluate`). Each station's
readings are kept in a buffer; after a batch, every subject (gauge, outfall, turbidity
pair, site, station) whose inputs changed is re-evaluated on its buffer and the events
that changed are returned. Events are identified by ``id``: an update keeps its id (an
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
as a backlog, do not reopen events the other stations' data made final.

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
from .events import Event, EventStatus
from .rules._common import td_ns

STATE_VERSION = 1


_NEVER = -(2 ** 62)
_BIG = 2 ** 62
_SAME = object()   # _Series.put: the reading was there already, unchanged


def _next_after(t: np.ndarray, after_ns: int) -> int:
    """Time of the first reading after ``after_ns`` (a huge number if none yet)."""
    i = int(np.searchsorted(t, after_ns, side="right"))
    return int(t[i]) if i < t.size else _BIG


class _Series:
    """One (station, quantity) buffer: sorted unique times, values and flags.

    Kept in numpy arrays with room at the end, so the common case, a reading later than the
    last, is an append in place; an earlier reading or a changed value builds new arrays
    (rare). Views handed out by :meth:`arrays` never change afterwards.
    """

    __slots__ = ("t", "v", "f", "lo", "n", "last", "cutoff", "_view")

    def __init__(self) -> None:
        self._store(ev.EMPTY[0], ev.EMPTY[1], ev.EMPTY[2])
        self.cutoff = _NEVER  # readings before this were dropped

    def _store(self, t: np.ndarray, v: np.ndarray, f: np.ndarray) -> None:
        n = t.size
        cap = 2 * n + 32
        self.t, self.v, self.f = np.empty(cap, np.int64), np.empty(cap, np.float64), np.empty(cap, dtype=object)
        self.t[:n], self.v[:n], self.f[:n] = t, v, f
        self.lo, self.n = 0, n
        self.last = int(t[-1]) if n else _NEVER   # the latest time (cut-offs lie before it: never trimmed)
        self._view: ev.Arrays | None = None

    def put(self, t: int, v: float, f: str):
        """Add or replace the reading at ``t``: ``_SAME`` when it was there already unchanged,
        else the value it replaced (None: a new time)."""
        n = self.n
        if t > self.last:
            if n == self.t.size:
                lo = self.lo
                self._store(self.t[lo:n], self.v[lo:n], self.f[lo:n])
                n = self.n
            self.t[n], self.v[n], self.f[n] = t, v, f
            self.n, self.last, self._view = n + 1, t, None
            return None
        lo = self.lo
        i = n - 1 if t == self.last and n > lo else lo + int(np.searchsorted(self.t[lo:n], t))
        if i < n and self.t[i] == t:
            old = float(self.v[i])
            if old == v and self.f[i] == f:
                return _SAME
            nv, nf = self.v[lo:n].copy(), self.f[lo:n].copy()   # new arrays: views handed out stay as they were
            nv[i - lo], nf[i - lo] = v, f
            self._store(self.t[lo:n], nv, nf)
            return old
        k = i - lo
        self._store(np.insert(self.t[lo:n], k, t), np.insert(self.v[lo:n], k, v), np.insert(self.f[lo:n], k, f))
        return None

    def arrays(self) -> ev.Arrays:
        """Sorted (times, values, flags): views, not to be modified."""
        if self._view is None:
            lo, n = self.lo, self.n
            self._view = (self.t[lo:n], self.v[lo:n], self.f[lo:n]) if lo < n else ev.EMPTY
        return self._view

    def trim(self, before_ns: int) -> None:
        """Drop the readings before ``before_ns``; later readings older than it are refused by the engine."""
        if before_ns <= self.cutoff:
            return
        lo, n = self.lo, self.n
        if lo < n and self.t[lo] < before_ns:
            self.lo = lo + int(np.searchsorted(self.t[lo:n], before_ns))
            self._view = None
        self.cutoff = before_ns

    def rows(self) -> list[list]:
        t, v, f = self.arrays()
        return [list(x) for x in zip(t.tolist(), v.tolist(), f.tolist())]

    def load(self, cutoff: int, rows: Iterable) -> None:
        rows = sorted((int(t), float(v), f) for t, v, f in rows)
        self._store(np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.float64),
                    np.array([r[2] for r in rows] or [], dtype=object))
        self.cutoff = cutoff


@dataclass
class _Subject:
    emitted: dict[str, Event]           # the current version of every event (frozen ones included)
    frozen: set[str]
    cutoff: int = _NEVER
    live: dict[str, Event] = field(default_factory=dict)   # emitted and not frozen: what can still change

    def __post_init__(self) -> None:
        self.live = {k: e for k, e in self.emitted.items() if k not in self.frozen}


class StreamingEngine:
    """Alert rules over a stream of :class:`CanonicalReading`, with state in ``state_path``.

    ``feed(readings)`` and ``advance(now_ns)`` return the events that are new or changed
    (compare ``id`` to update an earlier one). ``record_inspection`` closes inspection
    items. Call ``checkpoint()`` before acknowledging readings upstream (or re-feed the
    readings newer than ``checkpoint_ns - lateness`` after a crash: feeding a reading
    twice changes nothing).
    """

    def __init__(self, registry: Registry, state_path: str | Path | None = None, *,
                 eval_interval: timedelta = timedelta(minutes=10)):
        """``eval_interval``: a subject is re-evaluated by ``feed`` at most once per this much
        data time (0: after every batch); ``advance`` evaluates everything pending. The
        rules need 15-30 min of evidence, so 10 min delays no alert much and keeps
        the per-reading cost low."""
        self.reg = registry
        self.eval_interval = td_ns(eval_interval)
        self._pending: set[tuple[str, str]] = set()
        self._last_eval: dict[tuple[str, str], int] = {}
        self._site_wake = 0
        self.rules = r = registry.rules
        self.state_path = Path(state_path) if state_path else None
        self.lateness = td_ns(r.lateness)
        self._mit = td_ns(r.storm_inter_event)
        self._dwf_md = td_ns(r.dwf_min_duration)
        self._turb_md = td_ns(r.turbidity_min_duration)
        self._align = td_ns(r.turbidity_align_tolerance)
        self._rain_keep = td_ns(r.dry_lookback) + 2 * td_ns(r.dry_rain_max_gap)
        self._outfalls = {o.id: o for o in registry.outfalls}
        self._pairs = {p.id: p for p in registry.turbidity_pairs}
        self._gauge_outfalls = {g.id: [o.id for o in registry.outfalls if g.id in o.rain_gauges]
                                for g in registry.rain_gauges}
        self.now_ns = 0
        self.checkpoint_ns = 0
        self.late_dropped = 0
        self._series: dict[tuple[str, str], _Series] = defaultdict(_Series)
        self._times: dict[str, _Series] = defaultdict(_Series)  # station -> reading times (health)
        self._max: dict[str, int] = {}
        self._subjects: dict[tuple[str, str], _Subject] = {}
        self._confirmed: dict[str, dict[str, int]] = defaultdict(dict)  # gauge -> storm id -> end
        self._since: int | None = None   # the earliest reading or clock time seen: stations are expected from then
        self._status_intervals: dict[str, float] = {}  # station -> report interval its logger states [s]
        self._inspections: list[ev.Inspection] = []
        self._deps = self._dependencies()
        if self.state_path and self.state_path.exists():
            self._load()

    # -- public API -------------------------------------------------------------------------
    def feed(self, readings: Iterable[CanonicalReading]) -> list[Event]:
        """Add readings (any order, duplicates allowed); return new or changed events."""
        dirty: set[tuple[str, str]] = set()
        series, times, mx, deps = self._series, self._times, self._max, self._deps
        since, now = self._since, self.now_ns
        for r in readings:
            v = r.value
            if v is None:
                continue
            t = r.time_ns
            if since is None or t < since:
                since = t
            key = (r.station, r.quantity)
            s = series[key]
            if t < s.cutoff:
                self.late_dropped += 1
                continue
            if s.put(t, float(v), r.flags or "") is _SAME:
                continue
            times[r.station].put(t, 0.0, "")
            if t > mx.get(r.station, _NEVER):
                mx[r.station] = t
            if t > now:
                now = t
            dirty.update(deps.get(key, ()))
            # Station health (stale, battery) is judged by advance(), on the clock: judged
            # here against the newest reading of any station, a logger whose batch arrives
            # a moment after its neighbours' would look stale for that moment.
        self._since, self.now_ns = since, now
        self._pending |= dirty
        last_eval, iv = self._last_eval, self.eval_interval
        due = [k for k in self._pending if now - last_eval.get(k, _NEVER) >= iv]
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
        return self._evaluate(subjects | self._pending, sites=True)

    def record_inspection(self, site: str, time, inspector: str = "", note: str = "") -> list[Event]:
        """Record an inspection of ``site`` at ``time`` (aware datetime or UTC ns); closes its
        open items and returns the updated ones."""
        if not any(s.id == site for s in self.reg.construction_sites):
            raise AlertError(f"unknown construction site {site!r}")
        t = time if isinstance(time, int) else to_ns(time)
        self._inspections.append(ev.Inspection(site, t, inspector, note))
        return self._evaluate((), sites=True)

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

    def _horizon(self, *stations: str) -> int:
        """The earliest horizon of the stations that have reported (one that never has, a
        dead gauge among several or a missing upstream probe, is absent: it must not stop
        the others' events from becoming final)."""
        seen = [self._max[s] for s in stations if s in self._max]
        return (min(seen) if seen else _NEVER) - self.lateness

    def _evaluate(self, due: Iterable[tuple[str, str]], sites: bool = False) -> list[Event]:
        out: list[Event] = []
        order = {"gauge": 0, "outfall": 1, "pair": 2, "station": 3}
        sites_dirty = sites or self.now_ns >= self._site_wake
        work = []
        for key in due:
            work.append((order[key[0]], key[1]))
            self._pending.discard(key)
            self._last_eval[key] = self.now_ns
        work.sort()
        for kind, name in work:
            if kind == 0:
                changes, confirmed_changed = self._gauge(name)
                out += changes
                sites_dirty = sites_dirty or confirmed_changed
            elif kind == 1:
                out += self._outfall(name)
            elif kind == 2:
                out += self._pair(name)
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

    def _update(self, key: tuple[str, str], computed: list[Event], settle_ns: int, horizon: int,
                inputs: tuple[ev.Arrays, ...] = ()) -> list[Event]:
        """Diff computed events against those emitted; freeze the ones that can no longer change.

        An event is final when its last qualifying reading + ``settle_ns`` is before the
        horizon *and* the next reading of every input after it is too: then every reading
        that could extend it has arrived (the one that closed it included).
        """
        sub = self._subjects.get(key)
        if sub is None:
            sub = self._subjects[key] = _Subject({}, set())
        changes = []
        live = sub.live
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
            if last is not None and last + settle_ns < horizon and all(_next_after(a[0], last) <= horizon
                                                                       for a in inputs):
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

    def _gauge(self, gid: str) -> tuple[list[Event], bool]:
        """Storms of a gauge; also whether its confirmed qualifying storms changed."""
        key = ("gauge", gid)
        rain = self._get(gid, "rain")
        mit = self._mit
        computed = ev.gauge_storms(self.reg, gid, rain, self.now_ns)
        horizon = self._horizon(gid)
        changes = self._update(key, computed, mit, horizon, (rain,))
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
        for oid in self._gauge_outfalls.get(gid, ()):
            osub = self._subjects.get(("outfall", oid))
            ocut = osub.cutoff if osub else _NEVER
            need = min(need, ocut - self._rain_keep)
        self._series[(gid, "rain")].trim(need)
        return changes, confirmed_changed

    def _outfall(self, oid: str) -> list[Event]:
        of = self._outfalls[oid]
        flow = self._get(oid, "flow")
        key = ("outfall", oid)
        computed = ev.outfall_events(self.reg, oid, flow, {g: self._get(g, "rain") for g in of.rain_gauges})
        md = self._dwf_md
        horizon = self._horizon(oid, *of.rain_gauges)
        changes = self._update(key, computed, 2 * md, horizon, (flow,))
        c = self._cutoff(key, horizon, 3 * md)
        self._series[(oid, "flow")].trim(c)
        return changes

    def _pair(self, pid: str) -> list[Event]:
        p = self._pairs[pid]
        up, down = self._get(p.upstream, "turbidity"), self._get(p.downstream, "turbidity")
        computed = ev.pair_events(self.reg, pid, up, down)
        key = ("pair", pid)
        md, tol = self._turb_md, self._align
        horizon = self._horizon(p.upstream, p.downstream)
        # a probe that never reported (a missing upstream) is absent, not "still to come"
        inputs = tuple(a for st, a in ((p.upstream, up), (p.downstream, down)) if st in self._max)
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
        times = ser.arrays()[0] if ser is not None else ev.EMPTY[0]
        battery = self._get(st, "battery")
        computed = ev.station_health(self.reg, st, times, battery, self.now_ns,
                                     ev.report_interval(self.reg, st, self._status_intervals), since_ns=self._since)
        key = ("station", st)
        horizon = self._horizon(st)
        changes = self._update(key, computed, 0, horizon, (battery,) if battery[0].size else ())
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
            "times": [[s, ser.cutoff, ser.arrays()[0].tolist()] for s, ser in self._times.items()],
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
                self._times[s].load(cut, ((t, 0.0, "") for t in ts))
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
