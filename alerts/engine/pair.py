"""The turbidity pairs' subjects: turbidity contrast with QC (``rules/turbidity``), judged on
the upstream and downstream probes' buffers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import evaluate as ev
from ..events import AlertEvent
from ..rules._common import td_ns
from .buffers import BIG, Change

if TYPE_CHECKING:
    from .scheduler import StreamingEngine

Changed = dict[tuple[str, str], Change]


class Pairs:
    """Every turbidity pair of the engine's registry."""

    def __init__(self, eng: "StreamingEngine") -> None:
        self.eng = eng
        r = eng.rules
        self.md = td_ns(r.turbidity_min_duration)
        self.align = td_ns(r.turbidity_align_tolerance)
        self.pairs = {p.id: p for p in eng.reg.turbidity_pairs}
        self.params = (ev.contrast_params(eng.reg), ev.qc_params(eng.reg))
        # per pair, where the runs still going on at its last downstream reading began
        # (``ContrastRuns.open_from``; BIG: none): the cut-off never passes it, for later
        # readings may make an event that starts there (one reading before a silence of the
        # sensor, while its logger's battery readings move the horizon on)
        self.open_from: dict[str, int] = {}

    def may_change(self, pid: str, changed: Changed | None) -> bool:
        """Whether what changed since the pair was last evaluated may change its events.

        Readings appended to either probe change what is judged at downstream readings from
        a bound on: the latest downstream reading before (its spike test now has both
        neighbours), the latest upstream one before, less the align tolerance (downstream
        readings near it may now pair with a newer one; its spike test too). If no event
        still open or ending from there is live and every downstream reading from there is
        certainly quiet (:func:`.evaluate.pair_quiet`: evaluable, no contrast, no backstop),
        the runs from there are cut short, as short as they were or shorter: no event
        changes (and no run goes on at the last reading: ``open_from`` is none). Exact; a
        reading out of order or a corrected value runs the rules."""
        if not changed:
            return False
        eng = self.eng
        p = self.pairs[pid]
        bound = BIG
        for st, lead in ((p.downstream, 0), (p.upstream, self.align)):
            c = changed.get((st, "turbidity"))
            if c is not None:
                if c.inserted < BIG:
                    return True
                bound = min(bound, c.prev_last - lead)
        for e in eng.subjects[("pair", pid)].live.values():
            if e["end"] is None or e["last_met"] >= bound:
                return True
        down = eng.get(p.downstream, "turbidity")
        first = int(np.searchsorted(down[0], bound))
        if not ev.pair_quiet(eng.get(p.upstream, "turbidity"), down, first, *self.params):
            return True
        if first < down[0].size:
            self.open_from[pid] = BIG   # the last reading is quiet: it ended every run
        return False

    def evaluate(self, pid: str, changed: Changed | None) -> list[AlertEvent]:
        eng = self.eng
        p = self.pairs[pid]
        up, down = eng.get(p.upstream, "turbidity"), eng.get(p.downstream, "turbidity")
        key = ("pair", pid)
        computed = None
        if eng.must_run(key) or self.may_change(pid, changed):
            computed, open_from = ev.pair_judgement(eng.reg, pid, up, down)
            self.open_from[pid] = BIG if open_from is None else open_from
        md, tol = self.md, self.align
        horizon = eng.horizon(p.upstream, p.downstream)
        # a probe that never reported (a missing upstream) is absent, not "still to come"
        inputs = tuple((st, "turbidity") for st in (p.upstream, p.downstream) if st in eng.latest)
        changes = eng.update(key, computed, 2 * md + tol, horizon, inputs)
        keep = self.open_from.get(pid, BIG)
        if keep < BIG:
            keep = eng.going_on(keep, int(down[0][-1]), horizon) if down[0].size else BIG
        c = eng.cutoff(key, horizon, 3 * md + 2 * tol, keep)
        # Keep the whole current flat segment (flat-line QC looks back to its start) and two
        # readings before it: the spike test judges a reading by both neighbours, so the first
        # reading kept is judged without one, and the reading after it must still lie before
        # the subject's cut-off (else a spike just before an episode, trimmed, moves its start).
        for a in (up, down):
            t, v = a[0], a[1]
            i = k = int(np.searchsorted(t, c))
            while 0 < i < t.size and v[i] == v[i - 1]:
                i -= 1
            if k > 0:   # readings before c: keep from two before the segment (from the first if it began there)
                c = min(c, int(t[max(i - 2, 0)]))
        eng.series[(p.upstream, "turbidity")].trim(c)
        eng.series[(p.downstream, "turbidity")].trim(c)
        return changes
