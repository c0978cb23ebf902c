"""Replay throughput and streaming cost per reading, with a plain-Python peer in the same run.

    python bench/bench_replay.py [--stations 10] [--days 365] [--stream-days 2]

Prints figures; asserts nothing. Target (issue 3): a year of one station's 1-minute data
(525,600 rows) replays in under 5 s.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

import numpy as np

from ms4watch.alerts.engine import StreamingEngine
from ms4watch.alerts.replay import ReadingTable, replay
from ms4watch.contract.registry import parse_registry
from ms4watch.contract.wire import CanonicalReading

T0 = 1_780_000_000 * 10**9
MIN = 60 * 10**9


def registry(n_outfalls: int):
    lines = ["municipality: bench", "rain_gauges:", "  - {id: RG-1}", "outfalls:" if n_outfalls else "outfalls: []"]
    lines += [f"  - {{id: OF-{i}, name: o{i}, rain_gauges: [RG-1]}}" for i in range(n_outfalls)]
    lines += ["construction_sites:", "  - {id: CS-1, name: s, rain_gauges: [RG-1], active_from: 2026-01-01}"]
    return parse_registry("\n".join(lines) + "\n")


def data(n_stations: int, minutes: int, seed: int = 1):
    """Station 0 is the rain gauge (1-min rows, storms now and then); the others outfalls' flow."""
    rng = np.random.default_rng(seed)
    t = T0 + np.arange(minutes, dtype=np.int64) * MIN
    rain = np.zeros(minutes)
    for s in rng.integers(0, minutes, size=max(1, minutes // 5000)):
        rain[s:s + 120] = rng.choice([0.0, 0.01], size=len(rain[s:s + 120]), p=[0.6, 0.4])
    cols_t, cols_s, cols_q, cols_v = [t], [np.full(minutes, "RG-1", dtype=object)], [np.full(minutes, "rain", dtype=object)], [rain]
    for i in range(n_stations - 1):
        flow = np.where(rng.random(minutes) < 0.002, 3.0, 0.1)
        flow = np.maximum.accumulate(flow.reshape(-1, 1), axis=1).ravel()
        for s in rng.integers(0, minutes, size=max(1, minutes // 20000)):
            flow[s:s + 60] = 2.5
        cols_t.append(t); cols_s.append(np.full(minutes, f"OF-{i}", dtype=object))
        cols_q.append(np.full(minutes, "flow", dtype=object)); cols_v.append(flow)
    return (np.concatenate(cols_t), np.concatenate(cols_s), np.concatenate(cols_q), np.concatenate(cols_v))


def naive_peer(t, s, q, v, floor=0.5, mit=6 * 60 * MIN, md=30 * MIN, lookback=72 * 60 * MIN, dry_in=0.10):
    """The same questions in a plain-Python loop: storms by inter-event gaps, and flow above
    the floor for 30 min while the trailing 72 h of rain (a deque) is below 0.10 in.
    No QC, health, suppression or event records: a lower bound for a loop implementation."""
    from collections import deque

    rain = sorted((t[i], v[i]) for i in range(len(t)) if q[i] == "rain")
    storms = 0
    last = None
    for ti, vi in rain:
        if vi > 0:
            if last is None or ti - last > mit:
                storms += 1
            last = ti
    flows: dict[str, list] = {}
    for i in range(len(t)):
        if q[i] == "flow":
            flows.setdefault(s[i], []).append((t[i], v[i]))
    episodes = 0
    for rows in flows.values():
        rows.sort()
        window: deque = deque()
        total = 0.0
        j = 0
        run_start = None
        for ti, vi in rows:
            while j < len(rain) and rain[j][0] <= ti:
                window.append(rain[j]); total += rain[j][1]; j += 1
            while window and window[0][0] <= ti - lookback:
                total -= window.popleft()[1]
            if vi > floor and total < dry_in - 1e-9:
                if run_start is None:
                    run_start = ti
                elif ti - run_start == md:
                    episodes += 1
            else:
                run_start = None
    return storms, episodes


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stations", type=int, default=10)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--stream-days", type=float, default=2)
    ap.add_argument("--batch", type=int, default=20)
    a = ap.parse_args()
    minutes = a.days * 1440
    for n in sorted({2, a.stations}):  # 2 = one outfall and its rain gauge
        reg = registry(n - 1)
        t, s, q, v = data(n, minutes)
        tb, table = timed(ReadingTable, t, s, q, v)
        tr, events = timed(replay, reg, table)
        tn, _ = timed(naive_peer, t.tolist(), s.tolist(), q.tolist(), v.tolist())
        total = tb + tr
        print(f"replay {n:>2} stations x {a.days} d of 1-min data: {len(t):,} rows in {total:.2f} s "
              f"({len(t) / total:,.0f} readings/s; grouping {tb:.2f} s, rules {tr:.2f} s; {len(events)} events) | "
              f"plain-Python loop peer {tn:.2f} s ({len(t) / tn:,.0f} readings/s) | ratio peer/replay {tn / total:.1f}x")
    # streaming
    sm = int(a.stream_days * 1440)
    reg = registry(a.stations - 1)
    t, s, q, v = data(a.stations, sm, seed=2)
    o = np.argsort(t, kind="stable")
    rs = [CanonicalReading(int(t[i]), s[i], "LOG", q[i], q[i], float(v[i]), "", "", 0) for i in o]
    tr, _ = timed(replay, reg, ReadingTable(t, s, q, v))
    for minutes_between in (10, 0):
        eng = StreamingEngine(reg, None, eval_interval=timedelta(minutes=minutes_between))
        t0 = time.perf_counter()
        for i in range(0, len(rs), a.batch):
            eng.feed(rs[i:i + a.batch])
        eng.advance(int(t.max()))
        dt = time.perf_counter() - t0
        print(f"streaming {a.stations} stations x {a.stream_days} d, eval_interval {minutes_between} min: "
              f"{len(rs):,} readings in batches of {a.batch}: {dt:.2f} s = {dt / len(rs) * 1e6:.0f} us/reading | "
              f"replay of the same {tr:.2f} s = {tr / len(rs) * 1e6:.1f} us/reading | ratio streaming/replay {dt / tr:.0f}x")


if __name__ == "__main__":
    main()
