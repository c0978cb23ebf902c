"""Backlog drain: 200,000 readings waiting in a persistent MQTT session, then ingest starts.

Same run, same Mosquitto, same InfluxDB 1.x (Debian influxd), same backlog for:

* ``ms4watch`` ingest → InfluxDB (``influxdb1://``, behind the SpoolingStore as in production),
* ``ms4watch`` ingest → the embedded SQLite store,
* ``ms4watch serve`` → InfluxDB: what a town runs, ingest plus the streaming alert engine
  evaluating every stored batch, incidents and notifications (a registry makes the
  loggers' stations a rain gauge, outfalls and turbidity pairs); after the drain its
  engine's final events are checked equal to ``replay``'s over the same readings,
* the Node-RED 4 peer (../shared/peers/nodered) → InfluxDB, its function node adapted (in a
  copy) to our readings payload: one point per reading, same tags and fields; its MQTT
  session made persistent (clean session off) like ours,
* two ceilings: a bare paho subscriber that only counts (the limit for a Python ingest)
  and ``mosquitto_sub`` to /dev/null (the broker's delivery rate).

All contenders have their own persistent session, created before the backlog is published
once, so the broker queues the very same messages for each. Two scenarios by default: 4
readings per message (one sample cycle per message) and 40 (loggers sending their backlog
in batches after an outage).

Each ingest runs in its own process, started after the backlog is queued; we time from the
process start until the store holds every reading (and from the first stored reading), and
sample the process's resident memory (peak). Figures and ratios are printed; nothing is
asserted. Usage::

    python bench/bench_backlog.py [--readings 200000] [--per-message 4,40] [--nodered-dir DIR] [--skip-nodered]
                                 [--broker-inflight N] [--only ingest-influx,serve-influx] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import paho.mqtt.client as mqtt
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ms4watch.contract.wire import encode_readings  # noqa: E402
from tests.support.servers import InfluxDB1, Mosquitto, have  # noqa: E402

MUNI = "benchtown"
T0_NS = 1_780_000_000 * 10**9      # the backlog's first sample time; message i of logger d is i×1 min later
PEER = REPO.parent / "shared" / "peers" / "nodered"
NODERED_FUNC = r"""
const p = msg.payload; const out = [];
for (const r of p.readings) {
  const st = r.station || msg.topic.split('/')[2];
  const fields = {flags: (r.flags || []).join(','), seq: p.seq};
  if (r.value !== null) fields.value = r.value;
  out.push({payload: {measurement: 'reading', tags: {station: st, device: p.device, sensor: r.sensor,
            quantity: r.quantity, unit: r.unit}, fields: fields, timestamp: new Date(r.time)}});
}
return [out];
"""


# -- backlog ----------------------------------------------------------------------------------
def make_session(port: int, client_id: str, topic: str) -> None:
    """Create the persistent session (subscribe QoS 1, disconnect) so the broker queues the backlog."""
    done = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False,
                    protocol=mqtt.MQTTv311)
    c.on_connect = lambda cl, *a: cl.subscribe(topic, qos=1)
    c.on_subscribe = lambda *a: done.set()
    c.connect("127.0.0.1", port)
    c.loop_start()
    if not done.wait(10):
        raise RuntimeError(f"could not subscribe {client_id}")
    c.disconnect()
    c.loop_stop()


def backlog_payloads(n_readings: int, per_message: int):
    """(topic, payload) of every backlog message: 10 loggers, one message a minute each, the
    readings of a message at one time (also used by bench_influx_floor.py)."""
    quantities = [("flow", "flow", "gpm"), ("level", "level", "ft"), ("turb", "turbidity", "NTU"),
                  ("rain", "rain", "in"), ("batt", "battery", "V"), ("temp", "temperature", "degC")]
    for i in range(n_readings // per_message):
        dev = i % 10
        seq = i // 10
        t = T0_NS + seq * 60 * 10**9
        rows = []
        for k in range(per_message):
            s, q, u = quantities[k % len(quantities)]
            rows.append((t, f"{s}{k // len(quantities) or ''}", q, round(1.0 + (seq % 50) * 0.1 + k, 2), u, [], None))
        yield f"ms4/{MUNI}/ST-{dev:02d}/LOG-{dev:02d}/readings", encode_readings(f"LOG-{dev:02d}", seq, rows)


def publish_backlog(port: int, n_readings: int, per_message: int) -> int:
    """Publish QoS 1 readings messages from 10 loggers; returns the number of messages."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-pub", protocol=mqtt.MQTTv311)
    c.max_inflight_messages_set(200)
    c.max_queued_messages_set(0)
    c.connect("127.0.0.1", port)
    c.loop_start()
    n_msgs = 0
    last = None
    for topic, payload in backlog_payloads(n_readings, per_message):
        last = c.publish(topic, payload, qos=1)
        n_msgs += 1
        if n_msgs % 1000 == 0:
            last.wait_for_publish(60)
    if last is not None:
        last.wait_for_publish(60)
    c.disconnect()
    c.loop_stop()
    return n_msgs


SERVE_REGISTRY = f"""municipality: {MUNI}
timezone: America/New_York
rain_gauges: [{{id: ST-00}}]
outfalls:
""" + "".join(f"  - {{id: ST-0{i}, name: Outfall {i}, rain_gauges: [ST-00], flow_floor_gpm: 0.5}}\n"
              for i in range(1, 6)) + """turbidity_pairs:
  - {id: TP-1, upstream: ST-06, downstream: ST-07}
  - {id: TP-2, upstream: ST-08, downstream: ST-09}
contacts: [{name: Bench SMO, role: smo, email: smo@bench.test}]
"""


def backlog_readings(n_readings: int, per_message: int):
    """The backlog as canonical readings (what publish_backlog sends, in canonical units)."""
    from ms4watch.contract.wire import decode_canonical
    for topic, payload in backlog_payloads(n_readings, per_message):
        yield from decode_canonical(topic, topic.split("/")[2], payload)[2]


def check_serve_alerts(serve_dir: Path, n_readings: int, per_message: int) -> bool:
    """serve's engine (from its checkpoint) against replay over the same readings: same final events."""
    import numpy as np

    from ms4watch.alerts.engine import StreamingEngine
    from ms4watch.alerts.replay import ReadingTable, final_state, replay
    from ms4watch.contract.registry import load_registry
    reg = load_registry(serve_dir / "sites.yaml")
    rs = list(backlog_readings(n_readings, per_message))
    engine = StreamingEngine(reg, serve_dir / "engine-state.json")
    table = ReadingTable(np.array([r.time_ns for r in rs]), np.array([r.station for r in rs], dtype=object),
                         np.array([r.quantity for r in rs], dtype=object), np.array([r.value for r in rs]))
    expected = final_state(replay(reg, table, now_ns=engine.now_ns))
    got = engine.events()
    same = {k: e.fields for k, e in got.items()} == {k: e.fields for k, e in expected.items()}
    if not same:
        print(f"  serve's events differ from replay's: {sorted(set(got) ^ set(expected))[:5]} …", flush=True)
    return same


# -- measuring one contender ---------------------------------------------------------------------
class Sampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.peak = 0
        self.cpu_s = 0.0     # CPU time the process (and its children) used so far [s]: robust on a busy machine
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                rss = self.proc.memory_info().rss
                t = self.proc.cpu_times()
                cpu = t.user + t.system
                for ch in self.proc.children(recursive=True):
                    rss += ch.memory_info().rss
                    ct = ch.cpu_times()
                    cpu += ct.user + ct.system
                self.peak = max(self.peak, rss)
                self.cpu_s = max(self.cpu_s, cpu)
            except psutil.Error:
                return
            self.stop.wait(0.05)


def measure(name: str, start_proc, count, target: int, timeout_s: float = 600) -> dict:
    t0 = time.monotonic()
    proc_pid = start_proc()
    sampler = Sampler(proc_pid)
    sampler.start()
    first = None
    cpu_first = 0.0
    n = 0
    while time.monotonic() - t0 < timeout_s:
        n = count(False)
        if n and first is None:
            first = time.monotonic()
            cpu_first = sampler.cpu_s
        if n >= target or not _alive(proc_pid):
            break
        time.sleep(0.1)
    end = time.monotonic()
    sampler.stop.set()
    sampler.join()
    n = count(True)
    if first is None or end - first < 0.5:   # done between two polls: no separate drain figure
        first = t0
    res = {"name": name, "stored": n, "total_s": end - t0, "drain_s": end - first,
           "rate_total": n / (end - t0), "rate_drain": n / (end - first),
           "peak_rss_mb": sampler.peak / 2**20, "cpu_s": sampler.cpu_s, "cpu_start_s": cpu_first,
           "complete": n >= target}
    print(f"  {name}: {n} readings in {res['total_s']:.1f}s from start ({res['rate_total']:,.0f}/s), "
          f"{res['drain_s']:.1f}s from the first stored ({res['rate_drain']:,.0f}/s); peak RSS {res['peak_rss_mb']:.0f} MB"
          f"; CPU {res['cpu_s']:.1f}s ({res['cpu_start_s']:.1f}s before the first stored)"
          + ("" if res["complete"] else "  INCOMPLETE"), flush=True)
    return res


def count_child(broker_port: int, client_id: str, n: int, out: str) -> None:
    """A ceiling: a bare subscriber that only counts. ``paho-count``: paho (auto-ack);
    ``sub-count``: ms4watch's own subscriber (acknowledging each read's messages at once)."""
    done = threading.Event()
    seen = [0]
    if client_id == "sub-count":
        from ms4watch.contract.mqtt import BrokerURL
        from ms4watch.ingest.subscriber import Subscriber

        def on_deliveries(ds) -> None:
            seen[0] += len(ds)
            sub.ack([d.token for d in ds])
            if seen[0] >= n:
                done.set()
        sub = Subscriber(BrokerURL.parse(f"mqtt://127.0.0.1:{broker_port}"), client_id,
                         [(f"ms4/{MUNI}/+/+/readings", 1)], on_deliveries).start()
        done.wait(600)
        Path(out).write_text(str(seen[0]))
        sub.stop()
        return

    def on_message(*_a) -> None:
        seen[0] += 1
        if seen[0] >= n:
            done.set()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False,
                    protocol=mqtt.MQTTv311)
    c.on_message = on_message
    c.on_connect = lambda cl, *a: cl.subscribe(f"ms4/{MUNI}/+/+/readings", qos=1)
    c.connect("127.0.0.1", broker_port)
    c.loop_start()
    done.wait(600)
    Path(out).write_text(str(seen[0]))
    c.disconnect()
    c.loop_stop()


def run_scenario(a, per_message: int, nodered: Path | None) -> list[dict]:
    target = a.readings // per_message * per_message
    n_msgs = target // per_message
    work = Path(tempfile.mkdtemp(prefix="ms4bench-"))
    work.chmod(0o755)      # mosquitto runs as its own user and must reach its persistence dir
    (work / "ms4watch.toml").write_text("")   # the contenders' settings are their flags, not this machine's
    os.environ["MS4WATCH_CONFIG"] = str(work / "ms4watch.toml")             # /etc/ms4watch/ms4watch.toml
    broker = Mosquitto(work / "mosquitto")
    if a.broker_inflight:
        conf = broker.conf.read_text()
        conf = "\n".join(f"max_inflight_messages {a.broker_inflight}" if line.startswith("max_inflight_messages")
                         else line for line in conf.splitlines()) + "\n"
        broker.conf.write_text(conf)
    inflight = next(line.split()[1] for line in broker.conf.read_text().splitlines()
                    if line.startswith("max_inflight_messages"))
    broker.start()
    influx = InfluxDB1(work / "influxdb").start()
    topic = f"ms4/{MUNI}/+/+/readings"
    results: list[dict] = []
    procs: list[subprocess.Popen] = []
    try:
        from ms4watch.ingest.stores.influxdb import Influx1Store
        for db in ("ms4", "nodered", "ms4x2", "serve"):
            Influx1Store.from_url(influx.store_url(db)).ensure_store(timedelta(days=1096))
        print(f"\n== {target} readings, {per_message} per message ({n_msgs} messages); Mosquitto "
              f"max_inflight_messages {inflight}; influxd 1.6", flush=True)
        contenders = ["ingest-influx", "serve-influx", "ingest-sqlite", "paho-count", "sub-count", "mosquitto-sub"]
        if nodered:
            contenders.append("nodered-bench")
        if a.skip_sqlite:
            contenders.remove("ingest-sqlite")
        workers = 2                     # ms4watch ingest --workers 2: one shared-subscription group
        if a.only:
            contenders = [c for c in contenders + [f"ingest-x{workers}"] if c in a.only.split(",")]
        x2 = f"ingest-x{workers}" in contenders or not a.only
        if f"ingest-x{workers}" in contenders:
            contenders.remove(f"ingest-x{workers}")
        for cid in contenders:          # one persistent session each: the broker queues the same backlog for all
            make_session(broker.port, cid, topic)
        for i in range(workers if x2 else 0):
            make_session(broker.port, f"ingest-x{workers}-{i}", f"$share/ingest-x{workers}/{topic}")
        t = time.monotonic()
        publish_backlog(broker.port, target, per_message)
        print(f"  backlog published to {len(contenders)} sessions in {time.monotonic() - t:.1f}s", flush=True)

        last_seq = (n_msgs - 1) // 10
        tail_ns, tail_readings = T0_NS + last_seq * 60 * 10**9, (n_msgs - 10 * last_seq) * per_message

        def count_influx(db: str):
            """Polled 5×/s, so it must stay cheap: counting every stored point each time cost
            influxd most of a core by the end. Until the backlog's last minute is in, report
            only whether anything is stored (1); then (and at the end) count everything."""
            seen = [False]

            def count(q: str) -> int:
                ser = influx.query(q, db)["results"][0].get("series")
                return ser[0]["values"][0][1] if ser else 0

            def f(final: bool) -> int:
                if not final:
                    if not seen[0]:
                        seen[0] = count('SELECT count("seq") FROM "reading" WHERE time < '
                                        f'{T0_NS + 3600 * 10**9}') > 0 or count(
                            f'SELECT count("seq") FROM "reading" WHERE time >= {tail_ns}') > 0
                        if not seen[0]:
                            return 0
                    if count(f'SELECT count("seq") FROM "reading" WHERE time >= {tail_ns}') < tail_readings:
                        return 1
                return count('SELECT count("seq") FROM "reading"')
            return f

        def child(*args: str):
            def start() -> int:
                p = subprocess.Popen([sys.executable, __file__, *args], cwd=REPO)
                procs.append(p)
                return p.pid
            return start

        def ingest_cli(store: str, client_id: str, *extra: str):
            """``ms4watch ingest`` exactly as a town runs it (its start-up counts too)."""
            def start() -> int:
                spool = work / client_id
                spool.mkdir(exist_ok=True)
                p = subprocess.Popen([sys.executable, "-m", "ms4watch", "ingest", "--municipality", MUNI,
                                      "--broker", broker.url, "--store", store, "--client-id", client_id,
                                      "--spool-dir", str(spool), "--rejected", str(spool / "rejected.jsonl"),
                                      *extra], cwd=REPO, stdout=subprocess.DEVNULL)
                procs.append(p)
                return p.pid
            return start

        if "ingest-influx" in contenders:
            results.append(measure("ms4watch→influxdb", ingest_cli(influx.store_url("ms4"), "ingest-influx"),
                                   count_influx("ms4"), target))
            _stop_all(procs)
        serve_dir = work / "serve"
        serve_dir.mkdir()
        (serve_dir / "sites.yaml").write_text(SERVE_REGISTRY)

        def serve_cli() -> int:
            p = subprocess.Popen([sys.executable, "-m", "ms4watch", "serve", "--registry", str(serve_dir / "sites.yaml"),
                                  "--data-dir", str(serve_dir), "--store", influx.store_url("serve"),
                                  "--broker", broker.url, "--http", "off"], cwd=REPO, stdout=subprocess.DEVNULL,
                                 env={**os.environ, "MS4WATCH_BROKER__CLIENT_ID": "serve-influx"})
            procs.append(p)
            return p.pid
        if "serve-influx" in contenders:
            res = measure("ms4watch serve→influxdb", serve_cli, count_influx("serve"), target)
            _stop_all(procs)                # SIGTERM: serve checkpoints its engine on the way out
            res["alerts_equal_replay"] = check_serve_alerts(serve_dir, target, per_message)
            results.append(res)
        if x2:
            results.append(measure(f"ms4watch→influxdb ×{workers}",
                                   ingest_cli(influx.store_url("ms4x2"), f"ingest-x{workers}", "--workers", str(workers)),
                                   count_influx("ms4x2"), target))
            _stop_all(procs)
        if "ingest-sqlite" in contenders:
            sqlite_path = work / "store.sqlite"

            def count_sqlite(final: bool) -> int:
                import sqlite3
                if not sqlite_path.exists():
                    return 0
                try:
                    with sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, timeout=5) as db:
                        return db.execute("SELECT count(*) FROM readings").fetchone()[0]
                except sqlite3.Error:
                    return 0
            results.append(measure("ms4watch→sqlite", ingest_cli(f"sqlite:///{sqlite_path}", "ingest-sqlite"),
                                   count_sqlite, target))
            _stop_all(procs)
        if nodered and "nodered-bench" in contenders:
            results.append(measure("node-red→influxdb", lambda: nodered_start(nodered, broker.port, influx.port),
                                   count_influx("nodered"), target))
            _kill(nodered_pid[0] if nodered_pid else None)
        for label, cid in (("ceiling: bare paho", "paho-count"), ("ceiling: ms4watch subscriber", "sub-count")):
            if cid not in contenders:
                continue
            out = work / f"{cid}.txt"

            def count_file(final: bool, out: Path = out) -> int:
                return int(out.read_text()) * per_message if out.exists() else 0
            results.append(measure(label, child("--count-child", str(broker.port), cid, str(n_msgs), str(out)),
                                   count_file, target))
            _stop_all(procs)
        sub_done = work / "sub.txt"

        def start_sub() -> int:
            p = subprocess.Popen(f"mosquitto_sub -h 127.0.0.1 -p {broker.port} -i mosquitto-sub -c -q 1 "
                                 f"-t '{topic}' -C {n_msgs} > /dev/null && echo {n_msgs} > {sub_done}", shell=True)
            procs.append(p)
            return p.pid
        if "mosquitto-sub" in contenders:
            results.append(measure("ceiling: mosquitto_sub", start_sub,
                                   lambda final: int(sub_done.read_text()) * per_message
                                   if sub_done.exists() and sub_done.read_text().strip() else 0, target))
            _stop_all(procs)
    finally:
        _stop_all(procs)
        influx.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(results, per_message)
    return results


def report(results: list[dict], per_message: int) -> None:
    print(f"\n  {'contender':<30} {'readings/s drain':>17} {'readings/s total':>17} {'peak RSS MB':>12}")
    for r in results:
        print(f"  {r['name']:<30} {r['rate_drain']:>17,.0f} {r['rate_total']:>17,.0f} {r['peak_rss_mb']:>12.0f}"
              + ("" if r["complete"] else "  (incomplete)"))
    by = {r["name"]: r for r in results}
    ours, nr, sq = by.get("ms4watch→influxdb"), by.get("node-red→influxdb"), by.get("ms4watch→sqlite")
    if ours and nr:
        print(f"  ms4watch/Node-RED ({per_message}/msg): rate {ours['rate_drain'] / nr['rate_drain']:.2f}× drain, "
              f"{ours['rate_total'] / nr['rate_total']:.2f}× total (target ≥ 3×); memory "
              f"{ours['peak_rss_mb'] / nr['peak_rss_mb']:.2f}× (target < 0.25×)")
    if ours and sq:
        print(f"  embedded SQLite vs InfluxDB: {sq['rate_drain'] / ours['rate_drain']:.2f}× drain (target ≥ 1×)")
    sv = by.get("ms4watch serve→influxdb")
    if ours and sv:
        print(f"  serve/ingest ({per_message}/msg): {sv['rate_drain'] / ours['rate_drain']:.2f}× drain "
              f"(target ≥ 0.8×), {sv['rate_total'] / ours['rate_total']:.2f}× total (target ≥ 0.7×, issue 22); CPU "
              f"{sv['cpu_s'] / max(ours['cpu_s'], 1e-9):.2f}× ingest's; memory "
              f"{sv['peak_rss_mb'] / ours['peak_rss_mb']:.2f}×; alerts equal to replay's: {sv.get('alerts_equal_replay')}")
    x2 = by.get("ms4watch→influxdb ×2")
    if x2 and nr:
        print(f"  ms4watch ×2 workers/Node-RED ({per_message}/msg): rate {x2['rate_drain'] / nr['rate_drain']:.2f}× drain, "
              f"{x2['rate_total'] / nr['rate_total']:.2f}× total; memory {x2['peak_rss_mb'] / nr['peak_rss_mb']:.2f}×")
    for ceiling in ("ceiling: bare paho", "ceiling: ms4watch subscriber"):
        c = by.get(ceiling)
        if ours and c:
            print(f"  ms4watch→influxdb reaches {ours['rate_total'] / c['rate_total']:.0%} of the {ceiling[9:]} (count only)")


def compile_sources() -> None:
    """Byte-compile ms4watch's sources as ``pip install`` does, so each contender process
    starts from bytecode as an installed ms4watch would. From a checkout (editable install)
    with stale or no ``__pycache__`` — or ``PYTHONDONTWRITEBYTECODE`` set, as on this machine —
    every start recompiled them: 45–90 ms of a ~0.5 s start-up that no town's server pays."""
    dirs = [str(REPO / d) for d in ("ms4watch", "contract", "edge", "ingest", "alerts", "workbench", "compliance")
            if (REPO / d).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readings", type=int, default=200_000)
    ap.add_argument("--per-message", default="4,40",
                    help="readings per MQTT message, comma-separated scenarios: 4 = one sample cycle, "
                         "40 = a logger's backlog batch after an outage")
    ap.add_argument("--nodered-dir", default=os.path.join(tempfile.gettempdir(), "ms4bench-nodered"),
                    help="where Node-RED is installed (kept between runs)")
    ap.add_argument("--skip-nodered", action="store_true")
    ap.add_argument("--skip-sqlite", action="store_true")
    ap.add_argument("--only", help="comma-separated contenders to run (ingest-influx, serve-influx, ingest-x2, "
                                   "ingest-sqlite, nodered-bench, paho-count, sub-count, mosquitto-sub); default all")
    ap.add_argument("--broker-inflight", type=int, default=None,
                    help="Mosquitto max_inflight_messages (unacknowledged QoS 1 messages per client); "
                         "default: the test helper's setting")
    ap.add_argument("--count-child", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write all figures to this file")
    a = ap.parse_args(argv)
    if a.count_child:
        count_child(int(a.count_child[0]), a.count_child[1], int(a.count_child[2]), a.count_child[3])
        return 0
    for b in ("mosquitto", "influxd", "mosquitto_sub"):
        if not have(b):
            print(f"{b} is not installed", file=sys.stderr)
            return 2
    nodered = None if a.skip_nodered or (a.only and "nodered-bench" not in a.only) else nodered_setup(Path(a.nodered_dir))
    compile_sources()
    everything = {}
    for pm in [int(x) for x in a.per_message.split(",")]:
        everything[pm] = run_scenario(a, pm, nodered)
    if a.json:
        Path(a.json).write_text(json.dumps(everything, indent=1))
    return 0


nodered_pid: list[int] = []


def nodered_setup(work: Path) -> Path:
    """Copy the peer's run.sh and flow, adapting the function node to our payload and the session."""
    if not shutil.which("node"):
        raise RuntimeError("node is not installed")
    mine = work / "peer"
    mine.mkdir(parents=True, exist_ok=True)
    shutil.copy(PEER / "run.sh", mine / "run.sh")
    flow = json.loads((PEER / "flows.json").read_text())
    for n in flow:
        if n["type"] == "function":
            n["func"] = NODERED_FUNC
        if n["type"] == "mqtt-broker":
            n["clientid"] = "nodered-bench"
            n["cleansession"] = False       # a persistent session, like ours, so the backlog waits
        if n["type"] == "influxdb batch":
            n["precision"] = "ms"
    (mine / "flows.json").write_text(json.dumps(flow, indent=1))
    if not (work / "node_modules" / "node-red").exists():     # as run.sh does, but outside the timing
        print(f"Node-RED: installing into {work} (npm, once)", flush=True)
        subprocess.run("npm init -y >/dev/null && npm install --no-audit --no-fund node-red@4 "
                       "node-red-contrib-influxdb@0.7 >npm.log 2>&1", shell=True, cwd=work, check=True)
    return mine


def nodered_start(peer: Path, mport: int, iport: int) -> int:
    out = subprocess.run(["bash", str(peer / "run.sh"), str(peer.parent), str(mport), str(iport), "nodered",
                          f"ms4/{MUNI}/+/+/readings"], capture_output=True, text=True, check=True)
    pid = int(out.stdout.strip().splitlines()[-1])
    nodered_pid[:] = [pid]
    return pid


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _kill(pid: int | None) -> None:
    if not pid:
        return
    try:
        p = psutil.Process(pid)
        p.terminate()
        p.wait(15)
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        p.kill()


def _stop_all(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
    procs.clear()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
