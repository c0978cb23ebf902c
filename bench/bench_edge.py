"""Edge agent budget: backlog drain rate, and memory / CPU per reading on a live logger.

Run: python bench/bench_edge.py [--backlog 100000] [--seconds 30]

1. Drain: a spool holding a backlog (default 100,000 readings) is drained into a real
   Mosquitto; readings/s until the broker has acknowledged all of it. Peer in the same run:
   a bare paho publisher sending the same readings in the same batch size straight from
   memory (no spool, no durability) — the ceiling for any Python logger. Target ≥ 2,000/s.
2. Live: ``ms4watch edge`` with four simulated sensors at one reading per second each, for
   ``--seconds``; peak resident memory (VmHWM) and CPU seconds per reading. Peer: a minimal
   paho script publishing each reading as it is taken (no spool, nothing survives a power
   cut). Target ≤ 60 MB resident.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.servers import Mosquitto  # noqa: E402

import paho.mqtt.client as mqtt  # noqa: E402

from ms4watch.edge.drivers.base import RawReading  # noqa: E402
from ms4watch.edge.spool import Spool  # noqa: E402
from ms4watch.edge.uplink import Uplink  # noqa: E402
from ms4watch.contract.ids import Topic  # noqa: E402
from ms4watch.contract.wire import encode_readings, status_payload  # noqa: E402

T0 = 1_780_000_000_000_000_000
CONFIG = """\
device: LOG-B1
municipality: bench
station: OF-1
sensors:
  - {id: flow, driver: sim, quantity: flow, unit: gpm, interval: 1s, options: {model: runoff}}
  - {id: rain, driver: sim, quantity: rain, unit: in, interval: 1s, options: {model: rain}}
  - {id: turbidity, driver: sim, quantity: turbidity, unit: NTU, interval: 1s, options: {model: turbidity}}
  - {id: battery, driver: sim, quantity: battery, unit: V, interval: 1s, options: {model: battery}}
"""


def drain(broker: Mosquitto, work: Path, n: int, batch: int) -> float:
    spool = Spool(work / "drain.db", "LOG-B1")
    chunk = 10_000
    for k in range(0, n, chunk):
        spool.append([RawReading(T0 + i * 10**9, "flow", "flow", 1.0 + i % 7, "gpm", ()) for i in range(k, min(n, k + chunk))])
    topic = lambda ch: Topic("bench", "OF-1", "LOG-B1", ch)  # noqa: E731
    up = Uplink(spool, topic, broker.url, client_id="bench-drain", batch_readings=batch, drain_rate=1e9,
                status_payload=lambda s: status_payload("LOG-B1", s))
    t = time.perf_counter()
    up.start()
    while spool.depth():
        time.sleep(0.01)
    dt = time.perf_counter() - t
    up.stop()
    spool.close()
    return n / dt


def drain_peer(broker: Mosquitto, n: int, batch: int) -> float:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-peer", protocol=mqtt.MQTTv311)
    c.max_inflight_messages_set(20)
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    t = time.perf_counter()
    infos = []
    for seq, k in enumerate(range(0, n, batch), 1):
        rows = [(T0 + i * 10**9, "flow", "flow", 1.0 + i % 7, "gpm", [], None) for i in range(k, min(n, k + batch))]
        infos.append(c.publish("ms4/bench/OF-1/LOG-P/readings", encode_readings("LOG-P", seq, rows), qos=1))
    for i in infos:
        i.wait_for_publish(60)
    dt = time.perf_counter() - t
    c.loop_stop()
    c.disconnect()
    return n / dt


PEER_LOGGER = r"""
import json, random, sys, time
import paho.mqtt.client as mqtt
c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="naive", protocol=mqtt.MQTTv311)
c.connect("127.0.0.1", int(sys.argv[1])); c.loop_start()
end = time.time() + float(sys.argv[2]); n = 0
while time.time() < end:
    t = time.time()
    for s in ("flow", "rain", "turbidity", "battery"):
        c.publish("ms4/bench/OF-1/NAIVE/readings", json.dumps({"sensor": s, "t": t, "v": random.random()}), qos=1); n += 1
    time.sleep(max(0, 1 - (time.time() - t)))
print(n, flush=True)
"""


def proc_stats(pid: int) -> tuple[float, float]:
    """(peak resident MB, CPU seconds) of a running process, from /proc."""
    hwm = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return hwm, cpu


def live(broker: Mosquitto, work: Path, seconds: float) -> tuple[float, float, int]:
    cfg = work / "LOG-B1.yaml"
    cfg.write_text(CONFIG)
    p = subprocess.Popen([sys.executable, "-m", "ms4watch", "edge", "--config", str(cfg), "--broker", broker.url,
                          "--data-dir", str(work / "live")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.readline()
    time.sleep(2.0)                                   # start-up (imports, config) is not per-reading cost
    _, cpu0 = proc_stats(p.pid)
    n0 = _taken(work)
    time.sleep(seconds)
    rss, cpu = proc_stats(p.pid)
    n = _taken(work) - n0
    p.terminate()
    p.wait(30)
    return rss, cpu - cpu0, n


def _taken(work: Path) -> int:
    spool = Spool(work / "live" / "LOG-B1.spool.db", "LOG-B1", synchronous="NORMAL")
    try:
        return spool.taken
    finally:
        spool.close()


def live_peer(broker: Mosquitto, seconds: float) -> tuple[float, float, int]:
    p = subprocess.Popen([sys.executable, "-c", PEER_LOGGER, str(broker.port), str(seconds + 2.5)],
                         stdout=subprocess.PIPE)
    time.sleep(2.0)
    _, cpu0 = proc_stats(p.pid)
    time.sleep(seconds)
    rss, cpu = proc_stats(p.pid)
    p.wait(30)
    return rss, cpu - cpu0, int(seconds * 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backlog", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        broker = Mosquitto(work / "mosquitto").start()
        try:
            ours = drain(broker, work, a.backlog, a.batch)
            peer = drain_peer(broker, a.backlog, a.batch)
            print(f"backlog drain ({a.backlog:,} readings, {a.batch}/message) into Mosquitto:")
            print(f"  ms4watch edge spool+uplink  {ours:10,.0f} readings/s   (target ≥ 2,000)")
            print(f"  bare paho, from memory      {peer:10,.0f} readings/s   ratio ours/peer {ours / peer:.2f}")
            rss, cpu, n = live(broker, work, a.seconds)
            prss, pcpu, pn = live_peer(broker, a.seconds)
            print(f"live logger, 4 sensors at 1 reading/s each, {a.seconds:.0f} s:")
            print(f"  ms4watch edge   peak RSS {rss:6.1f} MB (target ≤ 60)   CPU {1e3 * cpu / max(n, 1):6.2f} ms/reading ({n} readings)")
            print(f"  naive paho      peak RSS {prss:6.1f} MB                 CPU {1e3 * pcpu / max(pn, 1):6.2f} ms/reading ({pn} readings)")
            print(f"  ratios ours/peer: memory {rss / prss:.2f}, CPU per reading {(cpu / max(n, 1)) / (pcpu / max(pn, 1)):.2f}")
            if a.json:
                a.json.write_text(json.dumps({"drain_rps": ours, "drain_peer_rps": peer, "rss_mb": rss,
                                              "cpu_ms_per_reading": 1e3 * cpu / max(n, 1), "peer_rss_mb": prss}))
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
