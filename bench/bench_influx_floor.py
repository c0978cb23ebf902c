"""What InfluxDB itself costs for the backlog bench's readings: the floor under any ingest.

``bench_backlog.py`` times ingest from process start until InfluxDB holds 200,000 readings
(40 per message). On a 2-core machine InfluxDB runs on the same cores, so its own CPU for
those points bounds how fast any contender can drain them. This bench takes the very same
readings through ms4watch's decoder and line encoder once, then posts the prepared lines to
a fresh database of its own ``influxd`` per run, in requests of ``--lines`` lines with
``--parallel`` in flight (ingest's defaults: 5,000 and 2), and reports the wall time and
influxd's CPU (user + system) from the first request to the last answer, median of
``--repeat`` runs, alternating the variants. Nothing of ingest runs while it is measured.

Variants (``--variants``): ``ns`` (what ingest writes), ``s`` (second precision),
``noflags`` (no ``flags=""`` on clean readings), ``noseq`` (no ``seq`` field) and ``sorted``
(lines grouped by series). Only ``ns`` is what ms4watch stores; the others show what the
server's cost depends on. Prints figures; asserts nothing::

    python bench/bench_influx_floor.py [--readings 200000] [--repeat 5] [--lines 5000] [--parallel 2]
                                       [--variants ns,noflags,noseq]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_backlog import backlog_payloads  # noqa: E402
from ms4watch.contract.wire import decode_canonical  # noqa: E402
from ms4watch.ingest.stores.base import StoredMessage  # noqa: E402
from ms4watch.ingest.stores.influxdb.lineproto import LineEncoder  # noqa: E402
from tests.support.servers import InfluxDB1  # noqa: E402

def backlog_lines(n_readings: int, per_message: int = 40) -> list[str]:
    """bench_backlog.py's backlog, decoded and encoded as ingest does."""
    messages = []
    for topic, payload in backlog_payloads(n_readings, per_message):
        device, seq, readings, epoch = decode_canonical(topic, topic.split("/")[2], payload, None)
        messages.append(StoredMessage(device, seq, tuple(readings), epoch, None))
    return [line for lines in LineEncoder().messages(messages) for line in lines]


def variants(lines: list[str]) -> dict[str, tuple[list[str], str]]:
    """name → (lines, precision)."""
    return {
        "ns": (lines, "ns"),
        "s": ([line[:-9] for line in lines], "s"),
        "noflags": ([line.replace(',flags=""', "") for line in lines], "ns"),
        "noseq": ([re.sub(r",seq=\d+i", "", line) for line in lines], "ns"),
        "sorted": (sorted(lines, key=lambda line: line.split(" ", 1)[0]), "ns"),
    }


def cpu_s(p: psutil.Process) -> float:
    t = p.cpu_times()
    return t.user + t.system


def wait_idle(p: psutil.Process, below_s: float = 0.03, window_s: float = 0.7) -> None:
    """Until influxd used less than ``below_s`` CPU in ``window_s`` (its compactions of the run
    before are over)."""
    while True:
        c0 = cpu_s(p)
        time.sleep(window_s)
        if cpu_s(p) - c0 < below_s:
            return


def one_run(influx: InfluxDB1, proc: psutil.Process, lines: list[str], precision: str, n_lines: int,
            parallel: int, run_id: int) -> tuple[float, float]:
    db = f"floor{run_id}"
    http = requests.Session()
    http.post(f"{influx.http_url}/query", params={"q": f"CREATE DATABASE {db}"}).raise_for_status()
    bodies = ["\n".join(lines[i:i + n_lines]).encode() for i in range(0, len(lines), n_lines)]
    wait_idle(proc)

    def post(body: bytes) -> None:
        r = requests.post(f"{influx.http_url}/write", params={"db": db, "precision": precision}, data=body)
        if r.status_code != 204:
            raise RuntimeError(f"influxd answered {r.status_code}: {r.text[:200]}")

    c0, t0 = cpu_s(proc), time.monotonic()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(post, bodies))
    wall, cpu = time.monotonic() - t0, cpu_s(proc) - c0
    http.post(f"{influx.http_url}/query", params={"q": f"DROP DATABASE {db}"}).raise_for_status()
    return wall, cpu


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readings", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lines", type=int, default=5000, help="lines per request (ingest: 5,000)")
    ap.add_argument("--parallel", type=int, default=2, help="requests in flight (ingest: 2)")
    ap.add_argument("--variants", default="ns,noflags,noseq", help="comma-separated: ns, s, noflags, noseq, sorted")
    a = ap.parse_args(argv)
    lines = backlog_lines(a.readings)
    every = variants(lines)
    chosen = [v.strip() for v in a.variants.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in every]
    if unknown:
        ap.error(f"--variants: unknown {', '.join(unknown)} (known: {', '.join(every)})")
    print(f"{len(lines):,} points, {sum(map(len, lines)) / len(lines):.0f} bytes a line; requests of {a.lines:,} "
          f"lines, {a.parallel} in flight; median of {a.repeat} (alternating)", flush=True)
    work = Path(tempfile.mkdtemp(prefix="ms4floor-"))
    influx = InfluxDB1(work / "influxdb").start()
    try:
        proc = psutil.Process(influx.proc.pid)
        results: dict[str, list[tuple[float, float]]] = {v: [] for v in chosen}
        run_id = 0
        for rep in range(a.repeat):
            for v in (chosen if rep % 2 == 0 else chosen[::-1]):
                vl, precision = every[v]
                results[v].append(one_run(influx, proc, vl, precision, a.lines, a.parallel, run_id))
                run_id += 1
        print(f"  {'variant':10} {'wall s':>8} {'influxd CPU s':>14} {'CPU µs/point':>13}   CPU of each run")
        for v, runs in results.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"  {v:10} {wall:8.2f} {cpu:14.2f} {cpu / len(lines) * 1e6:13.1f}   "
                  + " ".join(f"{c:.2f}" for _, c in runs))
    finally:
        influx.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
