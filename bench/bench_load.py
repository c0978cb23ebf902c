"""Load: 2,000 simulated loggers on one Mosquitto for 5 minutes, against the server `serve` runs.

Run: python bench/bench_load.py [--loggers 2000] [--minutes 5] [--every 10] [--alerts-every 15]
                                [--gauge-every 900] [--tracemalloc FRAMES]

Each logger is its own MQTT connection (its own client id and QoS 1 publishes, as the
edge's uplink makes them) at its own outfall, sending one flow reading below the outfall's
floor every ``--every`` seconds (a real logger sends one every 5 min: 2,000 loggers at 10 s
are the load of 60,000 real ones). The loggers are raw sockets on one thread (epoll), so
the bench measures the server and not 2,000 paho threads.

Printed:

* **ingest keeps up** — readings acknowledged by the broker vs stored, sampled every 10 s:
  the largest lag, and whether everything published was stored in the end;
* **memory flat** — the server process's RSS (it runs in this process: ingest, engine,
  incidents, delivery) at the end of the first minute and at the end, and the slope;
* **alert latency under load** — every ``--alerts-every`` seconds a dry-weather-flow episode
  at an outfall of its own completes; the time from the publish of its completing reading
  to the SMTP server's 250, p50 and p99, printed **beside the same measured idle** (the
  same trials before the loggers start), as in ``bench_alert_latency.py``.

``--ingest-only`` hands the stored readings to no engine: the peer that tells whose memory
grows. Measured 2026-11-30 on the 2-core reference machine (neighbours' tests running):
2,000 loggers at 10 s for 5 min — all 59,884 readings stored, largest lag 18 readings
(0.1 s of input); alert p99 904 ms under load beside 1,137 ms idle (p50 452 vs 462 ms);
RSS 191 → 218 MiB, +7.2 MiB/min, where ingest alone grows +1.5 MiB/min (160 → 162 MiB):
the growth is the streaming engine's in-memory series (``alerts/engine.py``), which keeps
each outfall's flow for 3 × the dry-weather minimum duration (90 min) behind its horizon:
at a reading per 10 s per outfall that fills for 90 minutes (~540 readings an outfall)
before it should level off, so 5 minutes cannot show it flat (a 2-hour run was not made).

Where the memory goes (2026-12-01, ``--tracemalloc``, 3-3.5 min, 2,000 loggers, neighbours'
tests running). RSS 234 → 284 MiB after the first minute, yet the Python allocations alive
*fell* by 0.6 MiB between the 68 s and 200 s snapshots: nothing Python holds grows but the
engine's buffers, which held every flow reading (12,871 → 40,255): the bench's rain gauge
(``report_interval`` 7 d) sent its readings once at the start, and an outfall's flow is kept
for lateness + 3 x the dry-weather minimum (2 h + 90 min) behind its gauges' newest rain
reading, so with the gauge silent nothing was ever trimmed. The rest is the allocator:
anonymous memory 188 → 241 MiB while what malloc's main heap had in use stayed 71 → 75 MiB
and what it held free grew 11 → 46 MiB, in steps of 15-20 MiB at engine checkpoints (every
30 s; the ingest lag peaks, up to 1,662 readings, fall on them too): a checkpoint builds the
whole state as Python lists and one JSON string, about 0.3 KiB per reading held, and glibc
keeps the freed peak. So: no leak; windows that fill, a checkpoint whose transient grows
with them. ``bench_engine_window.py`` shows the ceiling at real rates (2,000 outfalls, flow
every 5 min, the gauge every 15 min): 86,000 readings held (43 an outfall) after 4 h, then
flat, a 3.9 MiB checkpoint with a 25 MiB peak; with the gauge silent, +24,000 readings an
hour without end. A dead rain gauge thus grows the server by every flow reading of the
outfalls it serves until it reports again (until the engine, since issue 21, stops waiting
for a station lateness + dry_lookback, 74 h, behind the others: ``bench_engine_window.py
--hours 80`` shows it level off). ``--gauge-every`` (900 s
by default now) keeps the bench's gauge reporting; at 10 s a reading the buffers still fill
for 3.5 h (630,000 readings), so a run of minutes still says RSS does not level off, and
the bench prints why.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import resource
import selectors
import socket
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import paho.mqtt.client as mqtt  # noqa: E402
import psutil  # noqa: E402
from aiosmtpd.controller import Controller  # noqa: E402

from ms4watch.contract.wire import encode_readings  # noqa: E402
from ms4watch.ingest.subscriber import connect_packet  # noqa: E402
from ms4watch.server import build_server  # noqa: E402
from ms4watch.settings import Settings  # noqa: E402
from tests.support.servers import Mosquitto, free_port  # noqa: E402

from bench_alert_latency import Inbox  # noqa: E402 — the same SMTP inbox (this folder is on sys.path when run)

MIN = 60 * 10**9
H = 60 * MIN
ALERT_READINGS = [0]     # readings the alert trials published (stored too, not the loggers')


def registry_text(loggers: int, alert_outfalls: int) -> str:
    rows = [f"  - {{id: OF-{i}, name: Outfall {i}, rain_gauges: [RG-1], flow_floor_gpm: 0.5, report_interval: 1h}}"
            for i in range(1, loggers + 1)]
    rows += [f"  - {{id: AL-{i}, name: Alert outfall AL-{i}, rain_gauges: [RG-1], flow_floor_gpm: 0.5, "
             "report_interval: 7d}" for i in range(1, alert_outfalls + 1)]
    return ("municipality: bench\ntimezone: America/New_York\n"
            "rain_gauges: [{id: RG-1, tip_in: 0.01, report_interval: 7d}]\noutfalls:\n" + "\n".join(rows) +
            "\ncontacts: [{name: Pat Doe, role: smo, email: smo@town.test}]\n")


def publish_packet(topic: str, payload: bytes, pid: int) -> bytes:
    t = topic.encode()
    body = len(t).to_bytes(2, "big") + t + pid.to_bytes(2, "big") + payload
    n, rl = len(body), bytearray()
    while True:
        n, d = divmod(n, 128)
        rl.append(d | (0x80 if n else 0))
        if not n:
            break
    return b"\x32" + bytes(rl) + body


class Loggers:
    """``n`` MQTT connections on one thread: each publishes a reading every ``every_s``,
    QoS 1; PUBACKs are counted (a reading is 'published' once the broker acknowledged it)."""

    def __init__(self, port: int, n: int, every_s: float):
        self.port, self.n, self.every_s = port, n, every_s
        self.sent = 0
        self.received = 0          # bytes from the broker: only PUBACKs (4 bytes each) come
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="loggers", daemon=True)

    @property
    def acked(self) -> int:
        return self.received // 4

    def start(self) -> "Loggers":
        self.thread.start()
        return self

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        socks = []
        for i in range(1, self.n + 1):
            s = socket.create_connection(("127.0.0.1", self.port))
            s.sendall(connect_packet(f"LOG-{i}", clean_session=True, keepalive_s=600))
            assert s.recv(4)[:2] == b"\x20\x02"
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, i)
            socks.append(s)
        seq = [0] * (self.n + 1)
        start = time.monotonic()
        nxt = [start + self.every_s * i / self.n for i in range(self.n + 1)]   # spread over the interval
        while not self.stop.is_set():
            now = time.monotonic()
            t_ns = time.time_ns()
            for i in range(1, self.n + 1):
                if now >= nxt[i]:
                    nxt[i] += self.every_s
                    seq[i] += 1
                    payload = encode_readings(f"LOG-{i}", seq[i], [(t_ns, "flow", "flow", 0.2, "gpm", [], None)])
                    try:
                        socks[i - 1].sendall(publish_packet(f"ms4/bench/OF-{i}/LOG-{i}/readings", payload,
                                                            seq[i] % 65535 + 1))
                        self.sent += 1
                    except (BlockingIOError, OSError):
                        pass
            for key, _ in sel.select(timeout=0.01):
                try:
                    data = key.fileobj.recv(65536)
                except (BlockingIOError, OSError):
                    continue
                self.received += len(data)
        for s in socks:
            s.close()


def alert_trial(pub: mqtt.Client, inbox: Inbox, k: int, seq: list[int]) -> float | None:
    """A dry-weather-flow episode at AL-k: 30 min of flow above the floor; the clock starts at
    the reading that completes it."""
    station = f"AL-{k}"
    now = time.time_ns() // MIN * MIN
    rows = [(now - 30 * MIN + j * 5 * MIN, "flow", "flow", 3.0 + j, "gpm", [], None) for j in range(7)]

    def send(rs: list[tuple]) -> None:
        seq[0] += 1
        pub.publish(f"ms4/bench/{station}/LOG-{station}/readings", encode_readings(f"LOG-{station}", seq[0], rs),
                    qos=1).wait_for_publish(30)

    send(rows[:6])
    ALERT_READINGS[0] += 7
    time.sleep(0.3)
    t = time.perf_counter()
    send(rows[6:])
    deadline = time.monotonic() + 30
    while station not in inbox.accepted and time.monotonic() < deadline:
        time.sleep(0.002)
    return inbox.accepted[station] - t if station in inbox.accepted else None


def levels_off(points: list[tuple[float, float]]) -> str:
    """Whether RSS [MiB] over time [s] levels off: the slope of the second half of the run
    against the first's (least squares each)."""
    if len(points) < 6:
        return "too short a run to say whether RSS levels off (run 3 minutes or more)"

    def slope(ps: list[tuple[float, float]]) -> float:   # MiB/min
        mt, mr = statistics.fmean(t for t, _ in ps), statistics.fmean(r for _, r in ps)
        den = sum((t - mt) ** 2 for t, _ in ps) or 1.0
        return 60 * sum((t - mt) * (r - mr) for t, r in ps) / den

    half = len(points) // 2
    s1, s2 = slope(points[:half]), slope(points[half:])
    flat = s2 <= max(0.5, 0.25 * s1)
    return (f"RSS {'levels off' if flat else 'does NOT level off'}: {s1:+.1f} MiB/min in the first half after the "
            f"first minute, {s2:+.1f} MiB/min in the second")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def memory_parts() -> str:
    """Where the RSS is (Linux, glibc): anonymous vs file-backed pages, what malloc has in use
    and holds free, and what tracemalloc traces — Python's share of the in-use part."""
    parts = {}
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("Anonymous", "Rss"):
                parts[k] = int(v.split()[0]) / 2**10
    except OSError:
        return ""
    out = f"anon {parts.get('Anonymous', 0):.0f}  file {parts.get('Rss', 0) - parts.get('Anonymous', 0):.0f}"
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
        m = libc.mallinfo2()
        out += f"  malloc in use {(m.uordblks + m.hblkhd) / 2**20:.0f}  free in its heap {m.fordblks / 2**20:.0f}"
    except (OSError, AttributeError):
        pass
    if tracemalloc.is_tracing():
        out += f"  traced {tracemalloc.get_traced_memory()[0] / 2**20:.0f}"
    return out + " MiB"


def engine_buffers(engine) -> dict[str, int]:
    """What the streaming engine holds in memory: readings in its series buffers, reading
    times kept for station health, events, the due-evaluation cache."""
    series = list(engine.series.values())   # noqa: SLF001 — a bench looking inside
    return {"series": len(series), "series readings": sum(len(s.arrays()[0]) for s in series),
            "health times": sum(len(ts.times()) for ts in engine.times.values()),   # noqa: SLF001
            "events": len(engine.events()), "due cache": len(engine._due_cache)}    # noqa: SLF001


def report_growth(first: tuple[float, "tracemalloc.Snapshot", dict[str, int]],
                  last: tuple[float, "tracemalloc.Snapshot", dict[str, int]], top: int = 15) -> None:
    """The allocation sites that grew most between two snapshots, and the engine's buffers."""
    (t1, s1, e1), (t2, s2, e2) = first, last
    minutes = (t2 - t1) / 60
    keep = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap>")]
    diff = s2.filter_traces(keep).compare_to(s1.filter_traces(keep), "traceback")
    grown = sum(d.size_diff for d in diff)
    print(f"tracemalloc, {t1:.0f} s → {t2:.0f} s: Python allocations {grown / 2**20:+.1f} MiB "
          f"({grown / 2**20 / max(minutes, 1e-9):+.1f} MiB/min); the sites that grew most:")
    for d in sorted(diff, key=lambda d: d.size_diff, reverse=True)[:top]:
        where = " ← ".join(f"{Path(f.filename).name}:{f.lineno}" for f in d.traceback)
        print(f"  {d.size_diff / 2**10:+9.0f} KiB  {d.count_diff:+8d} blocks  {where}")
    print("engine buffers: " + ", ".join(f"{k} {e1[k]:,} → {e2[k]:,}" for k in e1))


def percentile(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loggers", type=int, default=2000)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--every", type=float, default=10.0, help="seconds between one logger's readings")
    ap.add_argument("--alerts-every", type=float, default=15.0, help="seconds between alert trials under load")
    ap.add_argument("--idle-trials", type=int, default=10)
    ap.add_argument("--gauge-every", type=float, default=900.0,
                    help="seconds between the rain gauge's heartbeats (0: silent after its first readings, as before "
                         "2026-12-01: the engine then keeps every flow reading, waiting for rain data)")
    ap.add_argument("--ingest-only", action="store_true",
                    help="stored readings go to no engine (no alerts): whose memory grows, ingest's or the engine's")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="FRAMES",
                    help="trace Python allocations (FRAMES deep; 0: off) from the first minute to the end and print "
                         "the sites that grew most, and the engine's buffers (slower: for finding what grows)")
    a = ap.parse_args()
    if a.ingest_only:
        a.idle_trials, a.alerts_every = 0, float("inf")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    trials_under_load = 0 if a.ingest_only else int(a.minutes * 60 / a.alerts_every)
    inbox = Inbox("AL-")
    smtp_port = free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    proc = psutil.Process(os.getpid())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        broker = Mosquitto(work / "mosquitto").start()
        (work / "sites.yaml").write_text(registry_text(a.loggers, a.idle_trials + trials_under_load + 5))
        server = build_server(Settings.model_validate({
            "registry": work / "sites.yaml", "data_dir": work / "data", "http": {"listen": "off"},
            "notify": [f"mailto://127.0.0.1:{smtp_port}?to=smo@town.test"],
            "broker": {"url": broker.url, "client_id": "bench-ingest"}}), report=lambda line: None)
        if a.ingest_only:
            server.ingest.on_stored = None
        server.start()
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-alerts", protocol=mqtt.MQTTv311)
        pub.connect("127.0.0.1", broker.port)
        pub.loop_start()
        seq = [0]
        now = time.time_ns() // MIN * MIN      # three dry days at the gauge, before anything
        pub.publish("ms4/bench/RG-1/LOG-RG1/readings", encode_readings(
            "LOG-RG1", 1, [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(321)]),
            qos=1).wait_for_publish(30)
        base = server.ingest.stats.stored_readings
        while server.ingest.stats.stored_readings < base + 321:
            time.sleep(0.05)
        idle = [x for x in (alert_trial(pub, inbox, k, seq) for k in range(1, a.idle_trials + 1)) if x is not None]

        print(f"{a.loggers} loggers, one reading each every {a.every:g} s ({a.loggers / a.every:.0f} messages/s), "
              f"{a.minutes:g} min; server RSS at start {proc.memory_info().rss / 2**20:.0f} MiB", flush=True)
        stored0 = server.ingest.stats.stored_readings

        def logger_readings_stored() -> int:
            return server.ingest.stats.stored_readings - stored0 - (ALERT_READINGS[0] - 7 * a.idle_trials)
        loggers = Loggers(broker.port, a.loggers, a.every).start()
        if a.tracemalloc:
            tracemalloc.start(a.tracemalloc)
        traces: list[tuple[float, tracemalloc.Snapshot, dict[str, int]]] = []   # (t, snapshot, engine buffers)
        t0 = time.monotonic()
        end = t0 + a.minutes * 60
        samples: list[tuple[float, int, int, float]] = []    # (t, acked, stored, rss MiB)
        loaded: list[float] = []
        k = a.idle_trials
        next_alert, next_sample = t0 + a.alerts_every, t0 + 10
        next_gauge = t0 + a.gauge_every if a.gauge_every > 0 else float("inf")
        while time.monotonic() < end:
            if time.monotonic() >= next_gauge:         # the gauge's heartbeat: no rain
                seq[0] += 1
                pub.publish("ms4/bench/RG-1/LOG-RG1/readings", encode_readings(
                    "LOG-RG1", 10**6 + seq[0], [(time.time_ns(), "rain", "rain", 0.0, "in", [], None)]), qos=1)
                ALERT_READINGS[0] += 1
                next_gauge += a.gauge_every
            if time.monotonic() >= next_alert:
                k += 1
                x = alert_trial(pub, inbox, k, seq)
                if x is None:
                    print(f"  alert AL-{k}: no email within 30 s", flush=True)
                else:
                    loaded.append(x)
                next_alert += a.alerts_every
            if time.monotonic() >= next_sample:
                stored = logger_readings_stored()
                samples.append((time.monotonic() - t0, loggers.acked, stored, proc.memory_info().rss / 2**20))
                t, acked, st, rss = samples[-1]
                print(f"  {t:5.0f} s  acknowledged {acked:8d}  stored {st:8d}  lag {acked - st:6d}  "
                      f"RSS {rss:6.0f} MiB{'  (' + memory_parts() + ')' if a.tracemalloc else ''}", flush=True)
                next_sample += 10
                if a.tracemalloc and (not traces and t >= 60 or time.monotonic() + 10 >= end):
                    with server.pipeline._lock:   # noqa: SLF001 — a consistent look at the engine's buffers
                        held = engine_buffers(server.pipeline.engine)
                    traces.append((t, tracemalloc.take_snapshot(), held))
            time.sleep(0.05)
        loggers.stop.set()
        loggers.thread.join(30)
        drain_t = time.monotonic()
        while logger_readings_stored() < loggers.acked and time.monotonic() - drain_t < 60:
            time.sleep(0.05)
        drained = time.monotonic() - drain_t
        stored = logger_readings_stored()
        pub.loop_stop()
        server.stop()
        broker.stop()
    smtp.stop()
    if len(traces) >= 2:
        report_growth(traces[0], traces[-1])

    lag = max((acked - st for _, acked, st, _ in samples), default=0)
    first = next((rss for t, _, _, rss in samples if t >= 60), samples[0][3] if samples else 0.0)
    last = samples[-1][3] if samples else 0.0
    span_min = max(1e-9, (samples[-1][0] - 60) / 60) if samples and samples[-1][0] > 60 else None
    print(f"ingest: {loggers.acked} readings acknowledged by the broker, {stored} stored "
          f"({'all' if stored >= loggers.acked else 'NOT all'}; the last stored {drained:.1f} s after the loggers "
          f"stopped); largest lag {lag} readings ({lag / max(1.0, a.loggers / a.every):.1f} s of input)")
    slope = f", {(last - first) / span_min:+.1f} MiB/min after the first minute" if span_min else ""
    print(f"memory: server RSS {first:.0f} MiB after the first minute, {last:.0f} MiB at the end{slope}")
    print(f"memory: {levels_off([(t, rss) for t, _, _, rss in samples if t >= 60])}")
    rules = server.registry.rules
    keep_s = (rules.lateness + 3 * rules.dwf_min_duration).total_seconds()
    print(f"memory: the engine keeps an outfall's flow for lateness + 3 x the dry-weather minimum = {keep_s / 3600:g} h "
          f"behind its gauges' newest rain reading: at one reading every {a.every:g} s its buffers fill for that long "
          f"({keep_s / a.every * a.loggers:,.0f} readings) before they level off"
          + ("; the gauge is silent (--gauge-every 0): they never do" if a.gauge_every <= 0 else "")
          + " (bench/bench_engine_window.py: the ceiling at real rates)")
    if a.ingest_only:
        return
    if idle and loaded:
        print(f"alert latency, publish → SMTP 250:  idle p50 {1e3 * statistics.median(idle):6.1f} ms  "
              f"p99 {1e3 * percentile(idle, 99):6.1f} ms ({len(idle)} trials)")
        print(f"                          under load p50 {1e3 * statistics.median(loaded):6.1f} ms  "
              f"p99 {1e3 * percentile(loaded, 99):6.1f} ms ({len(loaded)} trials)   "
              f"ratio p99 load/idle {percentile(loaded, 99) / percentile(idle, 99):.2f}")
    else:
        print("alert latency: no alert email arrived (idle %d, under load %d)" % (len(idle), len(loaded)))
        sys.exit(1)


if __name__ == "__main__":
    asyncio.set_event_loop(asyncio.new_event_loop())
    main()
