"""The rain gauges' subjects: storms (``rules/storms``), judged on a gauge's rain buffer. A
gauge's confirmed qualifying storms are what the construction sites' inspections follow
(``StreamingEngine.confirmed``); its buffer keeps what its outfalls' dry-weather look-back
needs too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import evaluate as ev
from ..events import AlertEvent, AlertEventStatus
from ..rules._common import td_ns
from .buffers import BIG, NEVER, Change
from .state import Subject

if TYPE_CHECKING:
    from .scheduler import StreamingEngine

Changed = dict[tuple[str, str], Change]


class Gauges:
    """Every rain gauge of the engine's registry."""

    def __init__(self, eng: "StreamingEngine") -> None:
        self.eng = eng
        r = eng.rules
        self.mit = td_ns(r.storm_inter_event)
        self.rain_keep = td_ns(r.dry_lookback) + 2 * td_ns(r.dry_rain_max_gap)   # the outfalls' look-back
        self.outfalls = {g.id: [("outfall", o.id) for o in eng.reg.outfalls if g.id in o.rain_gauges]
                         for g in eng.reg.rain_gauges}
        self.osubs: dict[str, list[Subject]] = {}   # gauge -> its outfalls' subjects, once all exist

    def storms_may_change(self, gid: str, changed: Changed | None) -> bool:
        """Whether what changed since the gauge was last evaluated may change its storms.

        Storms are made of the rain rows above zero alone (zero rows only say the gauge was
        alive), so new zero rows change none, but for the flags of those inside a storm
        (``uncalibrated``, issue 13): a flagged row out of order runs the rules (one after the
        gauge's latest row lies after every storm). Time passing changes a storm only when it
        gets confirmed (now - last rain > inter-event time). Exact."""
        c = changed.get((gid, "rain")) if changed else None
        if c is not None and (c.positive or c.replaced or (c.flagged and c.inserted < BIG)):
            return True
        now, mit = self.eng.now_ns, self.mit
        return any(not e["confirmed"] and now - e["last_rain"] > mit
                   for e in self.eng.subjects[("gauge", gid)].live.values())

    def quiet(self, gid: str, changed: Changed | None) -> bool:
        """The common case (zero rows appended, no storm due to be confirmed: no storm can
        change): :meth:`storms_may_change` false and the freezing and trimming of
        :meth:`evaluate`, without running the rules. False when it does not apply."""
        eng = self.eng
        key = ("gauge", gid)
        if not (eng.shortcuts and key in eng.fresh):
            return False
        c = changed.get((gid, "rain")) if changed else None
        if c is not None and (c.positive or c.replaced or (c.flagged and c.inserted < BIG)):
            return False
        mit = self.mit
        sub = eng.subjects[key]
        live = sub.live
        now = eng.now_ns
        for e in live.values():
            f = e.fields
            if not f["confirmed"] and now - f["last_rain"] > mit:
                return False
        m = eng.latest.get(gid)
        horizon = (NEVER if m is None else m) - eng.lateness
        if live:
            eng.update(key, None, mit, horizon, ((gid, "rain"),))   # freezes only
        need = horizon - mit
        for e in live.values():
            start = e.fields.get("start")
            if start is not None and start < need:
                need = start
        if need < sub.cutoff:
            need = sub.cutoff
        sub.cutoff = need
        keep = self.rain_keep
        osubs = self.osubs.get(gid)
        if osubs is None:   # its outfalls' subjects, once all exist (they are never replaced)
            subjects = eng.subjects
            found = [subjects.get(okey) for okey in self.outfalls.get(gid, ())]
            osubs = [s for s in found if s is not None]
            if len(osubs) < len(found):
                need = NEVER - keep
                osubs = []
            else:
                self.osubs[gid] = osubs
        for osub in osubs:
            if osub.cutoff - keep < need:
                need = osub.cutoff - keep
        eng.series[(gid, "rain")].trim(need)
        return True

    def evaluate(self, gid: str, changed: Changed | None) -> tuple[list[AlertEvent], bool]:
        """Storms of a gauge that change; also whether its confirmed qualifying storms changed."""
        if self.quiet(gid, changed):
            return [], False
        eng = self.eng
        key = ("gauge", gid)
        mit = self.mit
        computed = None
        if eng.must_run(key) or self.storms_may_change(gid, changed):
            computed = ev.gauge_storms(eng.reg, gid, eng.get(gid, "rain"), eng.now_ns)
        horizon = eng.horizon(gid)
        changes = eng.update(key, computed, mit, horizon, ((gid, "rain"),))
        confirmed = eng.confirmed[gid]
        confirmed_changed = False
        for e in changes:
            if e.status is AlertEventStatus.ACTIVE and e["confirmed"] and e["qualifying"]:
                if confirmed.get(e.id) != e["last_rain"]:
                    confirmed[e.id] = e["last_rain"]
                    confirmed_changed = True
            elif confirmed.pop(e.id, None) is not None:
                confirmed_changed = True
        # keep rain for the storms still open and for the dry-weather look-back of outfalls
        need = eng.cutoff(key, horizon, mit)
        keep = self.rain_keep
        for okey in self.outfalls.get(gid, ()):
            osub = eng.subjects.get(okey)
            if osub is None:
                need = NEVER - keep
            elif osub.cutoff - keep < need:
                need = osub.cutoff - keep
        eng.series[(gid, "rain")].trim(need)
        return changes, confirmed_changed
