"""The streaming engine's rain indexes (issue 10, performance): per gauge, a
:class:`RainIndex` kept and extended with the rows appended since it was last asked for,
built again when a row was inserted or replaced or when its rows no longer meet the
buffer's. Whatever the order, duplicates, corrections, outages, trims (buffers emptied
included) and gauges that never report, the index must judge every flow reading the
buffer's rows are kept for as one built from scratch from the buffer, and from every row
ever kept; and its arrays must be those built from its own rows."""

from __future__ import annotations

import os
import random
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ms4watch.alerts import evaluate as ev
from ms4watch.alerts.engine import StreamingEngine
from ms4watch.alerts.replay import final_state, replay
from ms4watch.alerts.rules._common import td_ns
from ms4watch.alerts.rules.dry_weather import RainIndex
from ms4watch.alerts.rules.storms import decimal_to_micro

from .support import MIN, REGISTRY, at, reading, registry, table

TWO_GAUGES = REGISTRY.replace("  - {id: RG-1}\n", "  - {id: RG-1}\n  - {id: RG-2}\n").replace(
    "rain_gauges: [RG-1], flow", "rain_gauges: [RG-1, RG-2], flow")
RULES = """  dry_lookback: 48h
  dry_after_rain: 6h
  dry_rain_max_gap: 1h
  lateness: 1h
"""
HOURS = 60
STEP = 15  # min


@st.composite
def deliveries(draw):
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    rows = []
    for gauge in ("RG-1", "RG-2"):
        if gauge == "RG-2" and draw(st.booleans()):
            continue   # a gauge that never reports
        outages = [(rnd.randrange(0, HOURS * 60), rnd.randrange(30, 600)) for _ in range(rnd.randrange(0, 3))]
        for m in range(0, HOURS * 60, STEP):
            if any(a <= m < a + n for a, n in outages):
                continue
            rows.append(reading(at(m), gauge, "rain", 0.0))
        for _ in range(rnd.randrange(0, 4)):
            start = rnd.randrange(0, HOURS * 60 - 60)
            rows += [reading(at(start + 3 * k + 0.5), gauge, "rain", rnd.choice([0.01, 0.04, 0.3]))
                     for k in range(rnd.randrange(1, 20))]
    for m in range(0, HOURS * 60, STEP):
        rows.append(reading(at(m), "OF-1", "flow", rnd.choice([0.1, 0.1, 2.0])))
    jitter = draw(st.sampled_from([1, 20, 59])) * MIN
    keyed = [(r.time_ns + rnd.randrange(0, jitter), r) for r in rows]
    keyed += [(r.time_ns + rnd.randrange(0, jitter), r) for r in rnd.sample(rows, len(rows) // 10)]   # duplicates
    for r in rnd.sample(rows, min(len(rows), draw(st.integers(0, 8)))):                             # corrections
        if r.quantity == "rain":
            keyed.append((r.time_ns + rnd.randrange(0, jitter), r._replace(value=rnd.choice([0.0, 0.02, 0.5]))))
    keyed.sort(key=lambda x: x[0])
    batch = draw(st.integers(1, 40))
    delivered = [r for _, r in keyed]
    batches = [delivered[i:i + batch] for i in range(0, len(delivered), batch)]
    # trims beyond the engine's own (up to the batch's latest time: a buffer may be emptied)
    trims = [[(g, rnd.randrange(at(0), max(r.time_ns for r in b) + 1)) for g in ("RG-1", "RG-2")
              if rnd.random() < 0.1] for b in batches]
    return batches, trims


# 25 scenarios by default (each replays many batches and trims: ~0.3 s apiece, 60 cost ~17 s of
# the default run); MS4_SLOW=1 (make soak) runs the former 60.
@pytest.mark.slow  # runs by default at reduced size; MS4_SLOW=1 (make soak) at full size
@settings(max_examples=60 if os.environ.get("MS4_SLOW") else 25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(deliveries())
def test_the_kept_rain_index_judges_as_one_built_from_scratch(scenario):
    batches, trims = scenario
    reg = registry(TWO_GAUGES, RULES)
    r = reg.rules
    kw = dict(lookback_ns=td_ns(r.dry_lookback), max_rain_uin=decimal_to_micro(r.dry_max_rain_in),
              after_rain_ns=td_ns(r.dry_after_rain))
    gap = td_ns(r.dry_rain_max_gap)
    eng = StreamingEngine(reg, None, eval_interval=timedelta(0))
    kept: dict[str, dict[int, float]] = {"RG-1": {}, "RG-2": {}}   # every row a buffer has held, latest value
    for rows, cuts in zip(batches, trims):
        eng.feed(rows)
        for g in ("RG-1", "RG-2"):
            t, v, _ = eng.get(g, "rain")
            kept[g].update(zip(t.tolist(), v.tolist()))
        for g, x in cuts:
            eng.series[(g, "rain")].trim(x)
        for g in ("RG-1", "RG-2"):
            s = eng.series.get((g, "rain"))
            t, v, _ = eng.get(g, "rain")
            kept[g].update(zip(t.tolist(), v.tolist()))
            index = eng.outfalls.rain_index(g)
            if not t.size:
                assert index is None
                continue
            n = index.n
            it = index.t[:n]
            # its rows: the buffer's, after rows the buffer held before, with no hole between
            assert it[n - t.size:].tolist() == t.tolist()
            assert np.all(np.diff(it) > 0)
            ever = np.array(sorted(kept[g]), dtype=np.int64)
            assert it.tolist() == ever[(ever >= it[0]) & (ever <= it[-1])].tolist()
            # its arrays: those built from its rows
            built = RainIndex(it, np.array([kept[g][x] for x in it.tolist()]), gap)
            assert (built.n, built.npos, built.ns) == (index.n, index.npos, index.ns)
            for name, size in (("t", n), ("cum", n + 1), ("tpos", index.npos), ("ca", index.ns), ("cb", index.ns)):
                assert getattr(index, name)[:size].tolist() == getattr(built, name)[:size].tolist(), name
            # its judgements, from where the buffer's rows are enough (the look-back and two gaps
            # after its cut-off): those of the buffer's rows and of every row ever kept
            start = max(s.cutoff, int(t[0])) + kw["lookback_ns"] + 2 * gap
            at_ns = np.arange(start, int(t[-1]) + 2 * gap, 5 * MIN, dtype=np.int64)
            if not at_ns.size:   # no reading to judge yet (most batches): two more indexes would compare nothing
                continue
            whole = RainIndex(ever, np.array([kept[g][x] for x in ever.tolist()]), gap)
            for a, b, c in zip(index.states(at_ns, **kw), RainIndex(t, v, gap).states(at_ns, **kw),
                               whole.states(at_ns, **kw)):
                assert a.tolist() == b.tolist() == c.tolist()
        # the outfall's events with the engine's indexes: those built from the rows (replay's way),
        # at the flow readings the rain buffers keep the look-back and two gaps for
        fl = eng.get("OF-1", "flow")
        since = max(eng.series[(g, "rain")].cutoff for g in ("RG-1", "RG-2")) + kw["lookback_ns"] + 2 * gap
        k = int(np.searchsorted(fl[0], since))
        flow = (fl[0][k:], fl[1][k:], fl[2][k:])
        rain = {g: eng.get(g, "rain") for g in ("RG-1", "RG-2")}
        index = {g: x for g in ("RG-1", "RG-2") if (x := eng.outfalls.rain_index(g)) is not None}
        got, want = ev.outfall_events(reg, "OF-1", flow, rain, index), ev.outfall_events(reg, "OF-1", flow, rain)
        assert [(e.id, e.fields) for e in got] == [(e.id, e.fields) for e in want]


def test_depths_at_two_gauges_are_never_added_with_the_kept_indexes():
    """0.06 in at each of an outfall's two gauges (0.12 in together): dry at both, so an
    episode of flow above the floor is dry-weather flow, each gauge's depth its own; and
    the same with one gauge that never reports. Streaming (indexes kept) = replay."""
    for gauges in (("RG-1", "RG-2"), ("RG-1",)):
        reg = registry(TWO_GAUGES, RULES)
        rs = []
        for g in gauges:
            rs += [reading(at(m), g, "rain", 0.0) for m in range(0, HOURS * 60, STEP)]
            rs += [reading(at(60 + k + 0.5), g, "rain", 0.01) for k in range(6)]   # 0.06 in
        rs += [reading(at(m), "OF-1", "flow", 2.0 if 49 * 60 <= m < 51 * 60 else 0.1)
               for m in range(0, HOURS * 60, STEP)]
        rs.sort(key=lambda x: x.time_ns)
        eng = StreamingEngine(reg, None, eval_interval=timedelta(0))
        out = []
        for i in range(0, len(rs), 7):
            out += eng.feed(rs[i:i + 7])
        out += eng.advance(max(x.time_ns for x in rs))
        got = {k: e for k, e in final_state(out).items() if e.status.value == "active"}
        expected = final_state(replay(reg, table(rs)))
        assert set(got) == set(expected)
        for k in expected:
            assert got[k].fields == expected[k].fields, k
        dwf = [e for k, e in got.items() if k.startswith("dwf/OF-1/")]
        assert len(dwf) == 1
        assert dwf[0]["rain_gauges_used"] == list(gauges)
        assert dwf[0]["rain_in_by_gauge"] == {g: 0.06 for g in gauges}


@settings(max_examples=300 if os.environ.get("MS4_SLOW") else 60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 2 * 3600, 6 * 3600]), st.booleans())
def test_states_at_a_few_times_equal_the_array_form(seed, after_rain_s, extended):
    """RainIndex.states_at (the open-episode extension's few new flow readings, in Python)
    gives the codes and depths of RainIndex.states, built or extended, at any times: on
    rows, between them, in outages, before the first and after the last, at the threshold."""
    rnd = random.Random(seed)
    gap, lb = 3600 * 10**9, 48 * 3600 * 10**9
    t = [m for m in range(0, 80 * 60, rnd.choice([5, 15, 30])) if rnd.random() < 0.97] if rnd.random() < 0.95 else []
    t = [at(m) for m in t if not any(a <= m < a + n for a, n in [(rnd.randrange(0, 4800), rnd.randrange(60, 600))])]
    wet = rnd.choice([0.0, 0.01, 0.05])   # the share of rows with rain (dry windows need few)
    v = [rnd.choice([0.01, 0.05, 0.1, float("nan")]) if rnd.random() < wet else 0.0 for _ in t]
    if extended and t:
        k = rnd.randrange(0, len(t) + 1)
        index = RainIndex(np.array(t[:k], dtype=np.int64), np.array(v[:k]), gap)
        index.extend(np.array(t[k:], dtype=np.int64), np.array(v[k:]))
    else:
        index = RainIndex(np.array(t, dtype=np.int64), np.array(v), gap)
    times = {at(rnd.uniform(-120, 80 * 60 + 120)) for _ in range(rnd.randrange(1, 6))}
    for d in (0, gap, lb, lb + gap, lb - gap, after_rain_s * 10**9):   # at the edges of every rule
        for x in rnd.sample(t, min(len(t), 3)):
            times |= {x + d - 1, x + d, x + d + 1}
    for x in [a for a, x in zip(t, v) if not x <= 0][-3:]:   # where recent rain ends
        times |= {x + after_rain_s * 10**9 + d for d in (-1, 0, 1)}
    for x in [a for a, b in zip(t, t[1:] + [None]) if b is None or b - a > gap]:   # where coverage ends
        times |= {x + gap - 1, x + gap, x + gap + 1}
    times = sorted(times)
    kw = dict(lookback_ns=lb, max_rain_uin=decimal_to_micro("0.10"), after_rain_ns=after_rain_s * 10**9)
    codes, totals = index.states_at(times, **kw)
    want_codes, want_totals = index.states(np.array(times, dtype=np.int64), **kw)
    assert codes == want_codes.tolist() and totals == want_totals.tolist()
