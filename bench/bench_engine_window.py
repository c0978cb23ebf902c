"""How much the streaming engine holds in memory over (simulated) time, and what a
checkpoint costs: the ceiling its windows reach at a registry's real sampling rates, beside
the same town with its rain gauge silent.

    python bench/bench_engine_window.py [--outfalls 2000] [--flow-every 300] [--gauge-every 900] [--hours 8]

Every outfall sends a flow reading below its floor every ``--flow-every`` seconds (5 min: a
real logger); the rain gauge a heartbeat (0.0 in) every ``--gauge-every`` seconds (15 min).
Each simulated hour prints the readings the engine holds (series buffers and the reading
times it keeps for station health), the checkpoint file and the checkpoint's peak Python
memory and time (tracemalloc, around the checkpoint only). The second run is the same town
with the gauge silent after its first hour (a dead gauge, or ``bench_load.py``'s, whose
``report_interval`` is 7 days): an outfall's flow is judged against its gauges' rain, so the
engine keeps every flow reading since the gauge's last one, and the checkpoint grows with it,
until the gauge is ``lateness`` + ``dry_lookback`` (74 h by default) behind: then it holds the
outfalls back no more (issue 21) and the buffers drop to their level (``--hours 80`` or more).
Runs on simulated time: no broker, no store; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ms4watch.alerts.engine import StreamingEngine  # noqa: E402
from ms4watch.contract.registry import parse_registry  # noqa: E402
from ms4watch.contract.wire import CanonicalReading  # noqa: E402

S = 10**9
T0 = 1_780_000_000 * S


def registry(outfalls: int):
    rows = [f"  - {{id: OF-{i}, name: Outfall {i}, rain_gauges: [RG-1], flow_floor_gpm: 0.5}}"
            for i in range(1, outfalls + 1)]
    return parse_registry("municipality: bench\ntimezone: America/New_York\nrain_gauges: [{id: RG-1}]\noutfalls:\n"
                          + "\n".join(rows) + "\n")


def held(engine: StreamingEngine) -> tuple[int, int]:
    """(readings in the series buffers, reading times kept for station health)."""
    series = engine.series.values()   # noqa: SLF001 — a bench looking inside
    return (sum(len(s.arrays()[0]) for s in series),
            sum(len(t.times()) for t in engine.times.values()))   # noqa: SLF001


def run(a: argparse.Namespace, silent_after_h: float | None) -> list[tuple[int, int, int, float, float, float]]:
    reg = registry(a.outfalls)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "engine-state.json"
        engine = StreamingEngine(reg, state)
        step = min(a.flow_every, a.gauge_every)
        t, next_flow, next_gauge, next_report = T0, T0, T0, T0 + 3600 * S
        end = T0 + int(a.hours * 3600) * S
        while t <= end:
            batch = []
            if t >= next_gauge:
                if silent_after_h is None or t < T0 + int(silent_after_h * 3600) * S:
                    batch.append(CanonicalReading(t, "RG-1", "LOG-RG1", "rain", "rain", 0.0, "in", "", 0))
                next_gauge += a.gauge_every * S
            if t >= next_flow:
                batch += [CanonicalReading(t, f"OF-{i}", f"LOG-{i}", "flow", "flow", 0.2, "gpm", "", 0)
                          for i in range(1, a.outfalls + 1)]
                next_flow += a.flow_every * S
            if batch:
                engine.feed(batch)
            if t >= next_report:
                engine.advance(t)
                series, times = held(engine)
                tracemalloc.start()
                c0 = time.perf_counter()
                engine.checkpoint()
                took = time.perf_counter() - c0
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                out.append(((t - T0) // (3600 * S), series, times, state.stat().st_size / 2**20, peak / 2**20, took))
                h, *_ = out[-1]
                print(f"  {h:3d} h  series readings {series:9,}  health times {times:9,}  "
                      f"checkpoint {out[-1][3]:6.1f} MiB file, {out[-1][4]:6.1f} MiB peak, {took:5.2f} s", flush=True)
                next_report += 3600 * S
            t += step * S
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outfalls", type=int, default=2000)
    ap.add_argument("--flow-every", type=int, default=300, help="seconds between an outfall's flow readings")
    ap.add_argument("--gauge-every", type=int, default=900, help="seconds between the rain gauge's heartbeats")
    ap.add_argument("--hours", type=float, default=8.0, help="simulated hours")
    a = ap.parse_args()
    print(f"{a.outfalls} outfalls, flow every {a.flow_every} s, the gauge every {a.gauge_every} s, "
          f"{a.hours:g} simulated hours")
    live = run(a, None)
    print("the same, the gauge silent after the first hour:")
    dead = run(a, 1.0)
    if live and dead:
        print(f"held at the end: {live[-1][1]:,} readings with the gauge reporting "
              f"({'level: under 1 % more in the last hour' if len(live) > 2 and live[-1][1] - live[-2][1] < live[-1][1] / 100 else 'still growing'}), "
              f"{dead[-1][1]:,} with it silent ({dead[-1][1] / max(1, live[-1][1]):.1f}x); checkpoint peak "
              f"{live[-1][4]:.1f} vs {dead[-1][4]:.1f} MiB")


if __name__ == "__main__":
    main()
