"""The streaming engine's buffers and change records, against a model of its first design:
one reading at a time written into a sorted buffer, the change noted as it goes.

``feed`` stages readings later than a buffer's latest (and not before its cut-off) in
Python lists and folds each buffer's staged readings into its change record once per batch
(issue 10, performance). Whatever the order, duplicates, corrections, NaN values, flags and
cut-offs (one past a buffer's latest reading: a station's other quantity moved its horizon),
the buffers, the late readings dropped, the station times and the change records the
shortcuts read must be what the one-at-a-time design gave."""

from __future__ import annotations

import math
import random
from datetime import timedelta

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ms4watch.alerts.engine import BIG as _BIG, NEVER as _NEVER, StreamingEngine
from ms4watch.alerts.engine.outfall import long_run_reaches

from .support import MIN, at, reading, registry

KEYS = [("RG-1", "rain"), ("OF-1", "flow"), ("OF-1", "battery")]


class Model:
    """What a batch changed in one buffer, noted reading by reading (the engine's first feed loop)."""

    def __init__(self) -> None:
        self.inserted = self.appended = self.prev_last = _BIG
        self.positive = self.replaced = self.flagged = False
        self.vmax = -math.inf

    def merged(self, o: "Model") -> "Model":
        m = Model()
        m.inserted, m.appended, m.prev_last = (min(a, b) for a, b in ((self.inserted, o.inserted),
                                                                       (self.appended, o.appended),
                                                                       (self.prev_last, o.prev_last)))
        m.positive, m.replaced, m.flagged = self.positive or o.positive, self.replaced or o.replaced, \
            self.flagged or o.flagged
        m.vmax = max(self.vmax, o.vmax)
        return m

    def as_tuple(self, c=None) -> tuple:
        c = c or self
        return (c.inserted, c.appended, c.prev_last, c.positive, c.replaced, c.flagged, c.vmax)


def nan_safe(x: float):
    return "nan" if x != x else x


@st.composite
def deliveries(draw):
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    rows = []
    pool = draw(st.sampled_from([[0.0, 0.0, 0.01, 0.3, 2.0, -1.0, math.nan], [0.0, -1.0, math.nan]]))  # NaN among zeros
    for station, quantity in KEYS:
        for m in range(0, draw(st.integers(1, 60))):
            v = rnd.choice(pool) if rnd.random() < 0.3 or len(pool) == 3 else rnd.random()
            rows.append(reading(at(m), station, quantity, v, rnd.choice(["", "", "", "calibration_overdue"])))
    rnd.shuffle(rows)
    rows.sort(key=lambda r: r.time_ns + rnd.randrange(0, draw(st.sampled_from([1, 5, 30])) * MIN))
    rows += [r._replace(value=rnd.choice([r.value, 0.5, None])) for r in rnd.sample(rows, len(rows) // 8)]
    rnd.shuffle(rows[-len(rows) // 8:])
    batches, i = [], 0
    while i < len(rows):
        k = rnd.randint(1, 25)
        batches.append((rows[i:i + k], rnd.random() < 0.6,                   # evaluated after it (pending consumed)
                        [(key, at(rnd.randrange(-5, 65))) for key in KEYS if rnd.random() < 0.15]))   # trims
        i += k
    return batches


def several_sensors_at_once(station: str, quantity: str) -> list:
    """A logger's backlog batch: several sensors of one quantity at each time (the backlog
    bench's 40 readings a message), the later ones replacing the first where ``feed`` staged
    it: the largest value, a NaN and the flags among the replaced ones, then the same again
    (unchanged), a NaN replaced by a number, a negative by zero."""
    def r(m, v, flags=""):
        return reading(at(m), station, quantity, v, flags)
    first = [r(1, 0.0), r(2, 5.0), r(2, 0.1), r(2, math.nan, "calibration_overdue"), r(2, 0.3), r(2, 0.3),
             r(3, math.nan), r(3, 0.2), r(4, -1.0), r(4, 0.0)]
    later = [r(5, 0.0), r(5, 0.0), r(6, -1.0), r(6, -2.0, "calibration_overdue"), r(2, 0.4), r(7, 2.0), r(7, 1.0)]
    return [(first, True, []), (later, False, [])]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(deliveries())
@example(several_sensors_at_once("RG-1", "rain"))
@example(several_sensors_at_once("OF-1", "flow"))
def test_buffers_and_change_records_are_those_of_one_reading_at_a_time(batches):
    eng = StreamingEngine(registry(), None, eval_interval=timedelta(0))

    def evaluate(due, sites=False, changed=None):   # the pending records are read (and consumed) here
        if changed is not None:   # eval_interval 0, nothing pending: the batch's records, shared by the
            for sub in due:       # subjects due; as pending records, each subject's own inputs'
                eng.pending[sub] = {k: c for k, c in changed.items() if sub in eng.deps.get(k, ())}
        return []
    eng.evaluate = evaluate
    buf = {k: {} for k in KEYS}
    cutoff = {k: _NEVER for k in KEYS}
    last = {k: _NEVER for k in KEYS}
    times: dict[str, set] = {}
    mx: dict[str, int] = {}
    pending: dict = {}
    late = 0
    since, now = _BIG, 0
    for rows, consume, trims in batches:
        changes: dict = {}
        for r in rows:
            if r.value is None:
                continue
            key, t, v, flags = (r.station, r.quantity), r.time_ns, float(r.value), r.flags or ""
            since = min(since, t)
            if t < cutoff[key]:
                late += 1
                continue
            prev = last[key]
            old = buf[key].get(t)
            if old is not None and old[0] == v and old[1] == flags:
                continue
            buf[key][t] = (v, flags)
            last[key] = max(prev, t)
            c = changes.setdefault(key, Model())
            if t > prev:
                c.appended = min(c.appended, t)
            elif t <= c.prev_last:
                c.inserted = min(c.inserted, t)
                c.replaced = c.replaced or old is not None
            if t <= prev and flags:
                c.flagged = True     # an appended reading's flags mark nothing (it lies after every event)
            c.prev_last = min(c.prev_last, prev)
            c.positive = c.positive or not v <= 0.0
            c.vmax = max(c.vmax, v) if v == v else c.vmax
            times.setdefault(r.station, set()).add(t)
            mx[r.station] = max(mx.get(r.station, _NEVER), t)
            now = max(now, t)
        eng.feed(rows)
        for key, c in changes.items():
            for sub in eng.deps.get(key, ()):
                p = pending.setdefault(sub, {})
                p[key] = p[key].merged(c) if key in p else c
        assert {s: {k: Model().as_tuple(c) for k, c in p.items()} for s, p in eng.pending.items()} == \
            {s: {k: c.as_tuple() for k, c in p.items()} for s, p in pending.items()}
        if consume:
            eng.pending.clear()
            pending.clear()
        assert (eng.late_dropped, eng.latest, eng.now_ns, eng.since) == (late, mx, now, None if since == _BIG else since)
        for key in KEYS:
            t, v, f = eng.get(*key)
            want = sorted((x, y) for x, y in buf[key].items() if x >= cutoff[key])
            assert t.tolist() == [x for x, _ in want]
            assert [(nan_safe(a), b) for a, b in zip(v.tolist(), f.tolist())] == [(nan_safe(a), b) for _, (a, b) in want]
        assert {s: eng.times[s].times().tolist() for s in times} == {s: sorted(x) for s, x in times.items()}
        for key, x in trims:
            eng.series[key].trim(x)
            cutoff[key] = max(cutoff[key], x)


def long_run_reaches_reference(t, v, bound, floor, md):
    """Outfalls.flow_may_change's 2. as first written: numpy over the whole buffer."""
    from ms4watch.alerts.rules._common import runs
    above = v > floor
    k = np.flatnonzero(above)
    first, last = runs(above)
    reach = last >= np.searchsorted(t, bound)
    return bool(np.any(t[last[reach]] - t[first[reach]] >= md)), (int(t[k[-1]]) if k.size else _NEVER)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.sampled_from([3.0, 3.0, 3.0, 0.5000001, 0.1, 0.5, math.nan])),
                max_size=120),
       st.integers(-5, 130), st.sampled_from([2, 30, 200]), st.sampled_from([64, 2, 8]))
@example([(1, 3.0), (3, 3.0)], 4, 2, 64)             # a run that goes on before the window reaches the bound
@example([(1, 3.0), (3, 3.0), (1, 0.1)], 4, 2, 64)   # ... and ends at it
@example([(1, 3.0), (2, 3.0), (1, 0.1)], 4, 2, 64)   # ... and ends just before it
def test_the_window_of_the_run_check_gives_what_the_whole_buffer_gives(steps, bound_min, md_min, window):
    """The run check walks the buffer's tail from dwf_min_duration before the bound (a run cut
    short there already lasts long enough): the same answer, and the same latest reading
    above the floor, as numpy over the whole buffer, windows of every size."""
    t = np.cumsum(np.array([d for d, _ in steps], dtype=np.int64)) * MIN + at(0)
    v = np.array([x for _, x in steps], dtype=np.float64)
    bound = at(bound_min)
    last_above = {"OF-1": 12345}
    got = long_run_reaches(last_above, "OF-1", t, v, bound, 0.5, md_min * MIN, window)   # small windows: numpy
    assert (got, last_above["OF-1"]) == long_run_reaches_reference(t, v, bound, 0.5, md_min * MIN)
