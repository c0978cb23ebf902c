"""The outfalls' subjects: dry-weather flow and dry-weather unknown (``rules/dry_weather_flow``),
judged on an outfall's flow buffer and its gauges' rain buffers.

Three ways, cheapest first: :meth:`Outfalls.quiet` (nothing that changed can change its
events: they only freeze and the buffer is trimmed), :meth:`Outfalls.extend_open` (an open
episode grows by the appended readings alone), else the rules run
(:func:`..evaluate.outfall_events`), unless :meth:`Outfalls.flow_may_change` proves they
need not. All exact; docs/rules.md, *Streaming = replay*.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...contract.registry import Outfall, Registry
from .. import evaluate as ev
from ..events import AlertEvent, AlertKind
from ..rules._common import runs, td_ns
from ..rules.dry_weather import RainIndex
from .buffers import BIG, NEVER, Change, Series, held
from .state import Subject

if TYPE_CHECKING:
    from .scheduler import StreamingEngine

Changed = dict[tuple[str, str], Change]
EXTENDABLE = (AlertKind.DRY_WEATHER_FLOW, AlertKind.DRY_WEATHER_UNKNOWN)   # extend_open
WINDOW = 64   # long_run_reaches looks at up to this many readings in Python, else numpy


class Outfalls:
    """Every outfall of the engine's registry: its buffers' keys, its latest flow reading
    above the floor (``last_above``) and its gauges' kept rain indexes."""

    def __init__(self, eng: "StreamingEngine") -> None:
        self.eng = eng
        r = eng.rules
        self.md = td_ns(r.dwf_min_duration)
        self.rain_gap = gap = td_ns(r.dry_rain_max_gap)
        # a new rain row changes the dry-weather state only at flow readings from its own time
        # on (from its time - (gap - lookback) were the gap longer than the look-back)
        self.rain_lead = min(0, td_ns(r.dry_lookback) - gap)
        self.indexes: dict[str, tuple[RainIndex, int]] = {}   # gauge -> its rain rows' index, the buffer's edits
        self.last_above: dict[str, int] = {}       # outfall -> its latest flow reading above the floor [ns]
        reg = eng.reg
        self.outfalls: dict[str, Outfall] = {o.id: o for o in reg.outfalls}
        # outfall -> its subject, flow buffer, stations, rain buffers and floor (the registry's
        # floors never change while running: use_registry refuses it)
        self.keys = {o.id: (("outfall", o.id), (o.id, "flow"), (o.id, *o.rain_gauges),
                            tuple((g, "rain") for g in o.rain_gauges), o.flow_floor_gpm)
                     for o in reg.outfalls}
        self.kept: dict[str, tuple[Subject, Series]] = {}   # outfall -> its subject, flow buffer

    def use(self, registry: Registry) -> None:
        """The registry's outfalls with other suppressions (``StreamingEngine.use_registry``)."""
        self.outfalls = {o.id: o for o in registry.outfalls}

    def _bound(self, changed: Changed, flow_key: tuple[str, str], rain_keys: tuple[tuple[str, str], ...]) -> int:
        """From which time what changed can change the condition at flow readings
        (:meth:`flow_may_change`): an inserted flow reading's time, the latest flow reading
        before an appended one, a new rain row's time plus ``rain_lead``."""
        c = changed.get(flow_key)
        bound = BIG if c is None else (c.inserted if c.inserted < c.prev_last else c.prev_last)
        for rk in rain_keys:
            c = changed.get(rk)
            if c is not None:
                b = (c.inserted if c.inserted < c.appended else c.appended) + self.rain_lead
                if b < bound:
                    bound = b
        return bound

    def quiet(self, oid: str, changed: Changed) -> list[AlertEvent] | None:
        """The common case (readings appended below the floor, zero rain rows: nine of ten
        outfalls a batch, live): :meth:`flow_may_change`'s first case, then the freezing and
        trimming :meth:`evaluate` does, without running the rules. None when it does not
        apply (the outfall not run since this engine started, or something may change)."""
        key, flow_key, stations, rain_keys, floor = self.keys[oid]
        eng = self.eng
        if key not in eng.fresh:
            return None
        c = changed.get(flow_key)
        if c is not None and c.vmax > floor:
            return None
        if not self.last_above.get(oid, BIG) < self._bound(changed, flow_key, rain_keys):
            return None
        kept = self.kept.get(oid)
        if kept is None:   # both are made by its first run and never replaced
            kept = self.kept[oid] = (eng.subjects[key], eng.series[flow_key])
        sub, ser = kept
        md = self.md
        horizon = held(eng.latest, stations, eng.silent) - eng.lateness
        live = sub.live
        changes = eng.update(key, None, 2 * md, horizon, (flow_key,)) if live else []
        cut = min(horizon - 3 * md, self.keep_from(oid, horizon))
        for e in live.values():
            start = e.fields.get("start")
            if start is not None and start < cut:
                cut = start
        if cut < sub.cutoff:
            cut = sub.cutoff
        sub.cutoff = cut
        ser.trim(cut)
        return changes

    def keep_from(self, oid: str, horizon: int) -> int:
        """Where the cut-off must stop for a run that may still become an episode [ns]: one
        going on at the latest flow reading L (above the floor: ``last_above``) and shorter
        than the minimum duration (a longer one is an event, live) began after L - md. The
        horizon passes L when the flow sensor falls silent while its logger reports (its
        battery): readings after the silence may continue that run (up to the silence that
        ends a run, at most ``dry_lookback``: :func:`..evaluate.silence_after_ns`), so its
        readings stay until the horizon is ``lateness`` + ``dry_lookback`` past L
        (:meth:`~.scheduler.StreamingEngine.going_on`). A closed episode ends before L: what
        stays of its run is shorter than md (no remnant episode). BIG: no such run."""
        last = self.eng.series[self.keys[oid][1]].last
        if self.last_above.get(oid) != last:
            return BIG
        return self.eng.going_on(last - self.md, last, horizon)

    def flow_may_change(self, oid: str, changed: Changed | None) -> bool:
        """Whether what changed since the outfall was last evaluated may change its events.

        Both of its rules need flow above the floor: a reading at or below it meets neither,
        whatever the weather. What changed can change the condition only at flow readings
        from a bound on (:meth:`_bound`): an inserted flow reading's time; the latest flow
        reading before an appended one (a run open there closes); a new rain row's time t.
        The row counts in the depth and recent rain of windows ending at t or later only, and
        the coverage it adds too: it joins the stretch before it only where the row before
        already covers (``dry_rain_max_gap`` past itself, past t), and a stretch it starts or
        lengthens backwards begins at t - gap, so a ``dry_lookback`` window in it ends after t
        (with a look-back shorter than the gap, from t - (gap - look-back): ``rain_lead``).
        Then, exactly:

        1. no flow reading from the bound on is above the floor (the new ones included):
           every run of the condition, so every episode and its fields, is as it was;
        2. else, unless a flow reading came out of order: an episode needs a run meeting the
           condition for ``dwf_min_duration``, which lies within a run of readings above the
           floor. When every such run reaching the bound is shorter, no run that changed is
           long enough now, nor was before (appended readings only lengthen the last run).

        A corrected value counts as a reading inserted at its time (the one it replaces was
        above the floor, or not: ``last_above`` has seen it).

        Running the rules is always exact: while an episode is open (its run reaches the
        latest reading) any change that gets past 1. runs them, without proving 2. (it would
        hold: the open run reaches the bound and lasts the minimum duration)."""
        if not changed:
            return False
        key, flow_key, _, rain_keys, floor = self.keys[oid]
        bound = self._bound(changed, flow_key, rain_keys)
        c = changed.get(flow_key)
        inserted, new_above = (False, False) if c is None else (c.inserted < BIG, c.vmax > floor)
        if not new_above and self.last_above.get(oid, BIG) < bound:
            return False                                    # 1.
        if inserted:
            return True
        for e in self.eng.subjects[key].live.values():
            if e.fields.get("end", 0) is None:
                return True                                 # an episode open: its rules run
        t, v, _ = self.eng.get(oid, "flow")
        return long_run_reaches(self.last_above, oid, t, v, bound, floor, self.md)   # 2.

    def evaluate(self, oid: str, changed: Changed | None) -> list[AlertEvent]:
        """The outfall's events that change (after :meth:`quiet` said it does not apply)."""
        eng = self.eng
        key, flow_key, stations, _, _ = self.keys[oid]
        of = self.outfalls[oid]
        computed = extended = None
        run = eng.must_run(key)
        if not run and changed and (extended := self.extend_open(oid, changed)) is not None:
            pass
        elif run or self.flow_may_change(oid, changed):
            flow = eng.get(oid, "flow")
            index = {g: x for g in of.rain_gauges if (x := self.rain_index(g)) is not None}
            computed = ev.outfall_events(eng.reg, oid, flow, {g: eng.get(g, "rain") for g in of.rain_gauges},
                                         index)
            above = np.flatnonzero(flow[1] > of.flow_floor_gpm)
            self.last_above[oid] = int(flow[0][above[-1]]) if above.size else NEVER
        md = self.md
        horizon = eng.horizon(*stations)
        changes = eng.update(key, computed, 2 * md, horizon, (flow_key,))
        if extended is not None:
            changes.append(extended)   # the rules did not run: update froze only (an open episode stays live)
        eng.series[flow_key].trim(eng.cutoff(key, horizon, 3 * md, self.keep_from(oid, horizon)))
        return changes

    def extend_open(self, oid: str, changed: Changed) -> AlertEvent | None:
        """An open dry-weather-flow episode (or dry-weather-unknown notice) extended by the
        flow readings appended since the outfall was last evaluated, without running its
        rules (:func:`..evaluate.extend_open_episode`), recorded as emitted; None when that
        cannot be done exactly (the rules then run).

        It applies when the only live event still open is such an episode or notice whose
        ``last_met`` is the latest flow reading before the change, no flow reading was
        inserted or corrected, and every rain row new to the outfall's gauges was appended at
        a time that can change the dry-weather state only after ``last_met`` (its time plus
        ``rain_lead``, as in :meth:`flow_may_change`): every judgement up to ``last_met``, so
        every other event, is then as it was."""
        eng = self.eng
        key, flow_key, _, rain_keys, _ = self.keys[oid]
        c = changed.get(flow_key)
        if c is None or c.inserted < BIG or c.appended == BIG:
            return None
        sub = eng.subjects[key]
        open_e = None
        for e in sub.live.values():
            if e.fields.get("end", 0) is None:
                if open_e is not None:
                    return None
                open_e = e
        if open_e is None or open_e.kind not in EXTENDABLE:
            return None
        last = open_e.fields["last_met"]
        if c.prev_last != last:
            return None
        lead = self.rain_lead
        for rk in rain_keys:
            rc = changed.get(rk)
            if rc is not None and (rc.inserted < BIG or rc.appended + lead <= last):
                return None
        flow = eng.get(oid, "flow")
        t = flow[0]
        i = int(np.searchsorted(t, last, side="right"))
        if i == 0 or int(t[i - 1]) != last:
            return None
        gauges = self.outfalls[oid].rain_gauges
        index = {g: x for g in gauges if (x := self.rain_index(g)) is not None}
        grown = ev.extend_open_episode(eng.reg, oid, open_e, flow, {g: eng.get(g, "rain") for g in gauges}, index, i)
        if grown is None:
            return None
        self.last_above[oid] = grown.fields["last_met"]   # every new reading is above the floor
        sub.emitted[grown.id] = sub.live[grown.id] = grown
        return grown

    def rain_index(self, gid: str) -> RainIndex | None:
        """The gauge's rain rows as a :class:`RainIndex`, extended with the rows appended since
        it was last asked for. It may keep rows the buffer has dropped (before the cut-off:
        more than the look-back and two gaps before every flow reading an outfall judges, so
        they change no judgement), never with a hole: it is built again when a row was
        inserted or replaced, when the buffer no longer holds its latest row, or when it holds
        twice the buffer. None with ``shortcuts`` off or no rows (the rules then build one
        from the rows, as replay does)."""
        eng = self.eng
        s = eng.series.get((gid, "rain"))
        if s is None or not eng.shortcuts:
            return None
        t, v, _ = s.arrays()
        if not t.size:
            self.indexes.pop(gid, None)
            return None
        kept = self.indexes.get(gid)
        last = None if kept is None else kept[0].last
        # built again unless the buffer still holds the index's latest row (else rows the
        # buffer dropped before the index saw them would leave a hole in it)
        if last is None or kept is None or kept[1] != s.edits or last < t[0] or kept[0].n > 2 * t.size + 4096:
            index = RainIndex(t, v, self.rain_gap, td_ns(eng.rules.double_tip))
            self.indexes[gid] = (index, s.edits)
            return index
        index = kept[0]
        i = int(np.searchsorted(t, last, side="right"))
        if i < t.size:
            index.extend(t[i:], v[i:])
        return index


def long_run_reaches(last_above: dict[str, int], oid: str, t: np.ndarray, v: np.ndarray, bound: int,
                     floor: float, md: int, window: int = WINDOW) -> bool:
    """:meth:`Outfalls.flow_may_change`'s 2.: whether a run of flow readings above ``floor``
    whose last reading is at ``bound`` or later lasts ``md`` (``dwf_min_duration``) [ns];
    notes the latest reading above the floor in ``last_above[oid]``.

    Exactly as on the whole buffer, it looks at the readings from ``md`` before the first
    reading from the bound on (at i0), and the one before them (ws): a run that goes on
    before ws and reaches i0 lasts more than the minimum duration, and so does its part from
    ws. Up to ``window`` readings are walked in Python (a few numpy calls cost more), more
    with numpy on the whole buffer."""
    n = t.size
    if n:
        i0 = int(np.searchsorted(t, bound))
        lo = int(np.searchsorted(t, int(t[i0 if i0 < n else n - 1]) - md))
        ws = lo - 1 if lo > 0 else 0
        if n - ws <= window:
            tt, vv, i0 = t[ws:].tolist(), v[ws:].tolist(), i0 - ws
            k = len(vv) - 1
            while k >= 0 and not vv[k] > floor:
                k -= 1
            if k < 0:   # none above the floor in the window: no run reaches i0
                a = np.flatnonzero(v > floor)
                last_above[oid] = int(t[a[-1]]) if a.size else NEVER
                return False
            last_above[oid] = tt[k]
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
    ka = np.flatnonzero(above)
    last_above[oid] = int(t[ka[-1]]) if ka.size else NEVER
    first, last = runs(above)
    reach = last >= np.searchsorted(t, bound)
    return bool(np.any(t[last[reach]] - t[first[reach]] >= md))
