"""End-to-end alert latency: from the publish of the reading that completes an alert to the
SMTP server accepting the email, through the production path.

Run: python bench/bench_alert_latency.py [--trials 40] [--broker mosquitto|embedded] [--hops]

``--hops`` also prints where the time goes, hop by hop (median and p99 of each, over the
trials): the bench wraps the production functions on the path (see :class:`Hops`) and
records when each was first entered or left after the completing reading was published.

Path measured: paho publisher → broker (real Mosquitto, or the embedded amqtt) → ingest
(persistent session, ack after the SQLite commit) → streaming engine (every stored batch
evaluated, as in production) → incident → durable queue → delivery worker → SMTP (a real
aiosmtpd server on loopback) → "250 OK". Each trial is a fresh dry-weather-flow episode at
its own outfall: flow readings above the floor every 5 min for 30 min after 3 dry days.
The readings before the last are published first; the clock starts when the last one —
the one that makes the flow "sustained ≥ 30 min" — is published.

The peer printed beside it is the per-message latency of a Node-RED-style batching
pipeline (join 5,000 messages or 1 s, then write) measured in the same run by publishing
through the same broker to a subscriber that batches exactly like that flow; it does no
alerting at all. Target: p99 under 200 ms (issue 22; it was 1 s before).
"""

from __future__ import annotations

import argparse
import email
import email.policy
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import paho.mqtt.client as mqtt  # noqa: E402
from aiosmtpd.controller import Controller  # noqa: E402

from ms4watch.broker import EmbeddedBroker  # noqa: E402
from ms4watch.contract.wire import encode_readings  # noqa: E402
from ms4watch.server import build_server  # noqa: E402
from ms4watch.settings import Settings  # noqa: E402
from tests.support.servers import Mosquitto, free_port  # noqa: E402

MIN = 60 * 10**9
REPORT = lambda line: None  # noqa: E731 — print to watch the events
H = 60 * MIN


class Inbox:
    """aiosmtpd handler: when each message was accepted, by the outfall its subject names
    (ids starting with ``prefix``)."""

    def __init__(self, prefix: str = "OF-") -> None:
        self.prefix = prefix
        self.accepted: dict[str, float] = {}
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 — aiosmtpd's hook name
        t = time.perf_counter()
        subject = str(email.message_from_bytes(envelope.content, policy=email.policy.default)["Subject"] or "")
        for word in subject.replace(",", " ").replace("(", " ").replace(")", " ").split():
            if word.startswith(self.prefix):
                with self.lock:
                    self.accepted.setdefault(word, t)
        return "250 OK"


def registry_text(n: int) -> str:
    outfalls = "\n".join(f"  - {{id: OF-{i}, name: Outfall {i}, rain_gauges: [RG-1], flow_floor_gpm: 0.5}}"
                         for i in range(1, n + 1))
    return f"""municipality: bench
timezone: America/New_York
rain_gauges: [{{id: RG-1, tip_in: 0.01}}]
outfalls:
{outfalls}
contacts: [{{name: Pat Doe, role: smo, email: smo@town.test}}]
"""


class Hops:
    """Timestamps of the hops one alert takes, recorded by wrapping the production code on
    its path (the bench's process only; nothing of it is in ms4watch). Trials run one at a
    time, so a hop's first time after the completing reading's publish is that trial's."""

    # (name, when it ends): each hop is measured from the end of the one before it
    ORDER = [("mqtt receive", "recv"), ("batch wait", "batch"), ("store write", "stored"),
             ("engine", "engine"), ("incident commit", "incident"), ("worker wake", "tick"),
             ("tick before sends", "deliver"), ("to the notifier", "send"), ("readings lookup", "lookup"),
             ("chart", "chart"), ("email rest + SMTP", "smtp")]

    def __init__(self) -> None:
        self.t0 = 0.0
        self.marks: dict[str, float] = {}
        self.trials: list[dict[str, float]] = []

    def mark(self, what: str) -> None:
        """``what`` happened now: kept if it is the trial's first, after the hop before it."""
        t = time.perf_counter()
        keys = [k for _, k in self.ORDER]
        before = keys[keys.index(what) - 1] if keys.index(what) else None
        if self.t0 and what not in self.marks and (before is None or before in self.marks):
            self.marks[what] = t

    def begin(self, t_pub: float) -> None:
        self.t0, self.marks = t_pub, {}

    def end(self, t_smtp: float) -> None:
        self.marks["smtp"] = t_smtp
        self.trials.append({"pub": self.t0, **self.marks})
        self.t0 = 0.0

    def install(self) -> None:
        from ms4watch.alerts.delivery.dispatch import Dispatcher
        from ms4watch.alerts.incidents.service import IncidentService
        from ms4watch.alerts.notifiers.email import message
        from ms4watch.alerts.notifiers.email.notifier import EmailNotifier
        from ms4watch.ingest.service import IngestService
        from ms4watch.ingest.stores.sqlite.store import SqliteStore
        from ms4watch.pipeline import AlertPipeline

        def after(cls, name, what):
            real = getattr(cls, name)

            def wrapped(*a, **k):
                try:
                    return real(*a, **k)
                finally:
                    self.mark(what)
            setattr(cls, name, wrapped)

        def before(cls, name, what):
            real = getattr(cls, name)

            def wrapped(*a, **k):
                self.mark(what)
                return real(*a, **k)
            setattr(cls, name, wrapped)

        before(IngestService, "_on_deliveries", "recv")
        before(IngestService, "_store", "batch")
        after(SqliteStore, "write", "stored")
        engine_feed = AlertPipeline.feed

        def feed(pipeline, readings):     # the engine's part of feed, without the incidents'
            real = pipeline.engine.feed
            if not getattr(real, "_hops", False):
                def timed(rs):
                    try:
                        return real(rs)
                    finally:
                        self.mark("engine")
                timed._hops = True
                pipeline.engine.feed = timed
            return engine_feed(pipeline, readings)
        AlertPipeline.feed = feed
        after(IncidentService, "handle", "incident")
        before(Dispatcher, "tick", "tick")
        before(Dispatcher, "_deliver", "deliver")
        before(EmailNotifier, "send", "send")
        before(message, "chart_png", "lookup")
        after(message, "chart_png", "chart")

    def report(self) -> None:
        print("  where the time goes (each hop from the end of the one before; ms over the trials):")
        print(f"    {'hop':<20} {'p50':>7} {'p99':>7}")
        for name, key in self.ORDER:
            i = [k for _, k in self.ORDER].index(key)
            prev = "pub" if i == 0 else self.ORDER[i - 1][1]
            xs = [t[key] - t[prev] for t in self.trials if key in t and prev in t]
            if xs:
                print(f"    {name:<20} {1e3 * statistics.median(xs):7.1f} {1e3 * percentile(xs, 99):7.1f}"
                      f"{'' if len(xs) == len(self.trials) else f'  ({len(xs)} trials)'}")


def percentile(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def run_ours(broker_url: str, port: int, trials: int, work: Path, smtp_port: int, inbox: Inbox,
             hops: Hops | None = None) -> list[float]:
    (work / "sites.yaml").write_text(registry_text(trials))
    server = build_server(Settings.model_validate({   # the server `ms4watch serve` runs
        "registry": work / "sites.yaml", "data_dir": work, "http": {"listen": "off"},
        "notify": [f"mailto://127.0.0.1:{smtp_port}?to=smo@town.test"],
        "broker": {"url": broker_url, "username": "bench", "password": "x", "client_id": "bench-ingest"}}),
        report=REPORT).start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-logger", protocol=mqtt.MQTTv311)
    pub.username_pw_set("bench", "x")
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    seq = [0]

    def send(station: str, rows: list[tuple]) -> None:
        seq[0] += 1
        pub.publish(f"ms4/bench/{station}/LOG-{station}/readings",
                    encode_readings(f"LOG-{station}", seq[0], rows), qos=1).wait_for_publish(10)

    now = time.time_ns() // MIN * MIN
    t0 = now - (80 + trials) * H
    # three dry days of rain data at the gauge; then each trial an hour later in data time
    send("RG-1", [(t0 + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4)])
    latencies = []
    try:
        for i in range(1, trials + 1):
            station = f"OF-{i}"
            start = t0 + (80 + i) * H
            send("RG-1", [(start - H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(7)])
            rows = [(start + k * 5 * MIN, "flow", "flow", 3.0 + k, "gpm", [], None) for k in range(7)]
            send(station, rows[:6])     # 0 … 25 min: not yet sustained
            time.sleep(0.3)             # let those settle: the clock starts at the completing reading
            t_pub = time.perf_counter()
            if hops is not None:
                hops.begin(t_pub)
            send(station, rows[6:])     # 30 min: sustained ≥ 30 min, the alert is due
            deadline = time.monotonic() + 10
            while station not in inbox.accepted and time.monotonic() < deadline:
                time.sleep(0.001)
            if station in inbox.accepted:
                latencies.append(inbox.accepted[station] - t_pub)
                if hops is not None:
                    hops.end(inbox.accepted[station])
            else:
                print(f"  trial {i}: no email within 10 s", file=sys.stderr)
    finally:
        pub.loop_stop()
        server.stop()
    return latencies


def run_peer(port: int, n: int) -> list[float]:
    """A subscriber that batches like the Node-RED flow (5,000 messages or 1 s) and 'writes'
    each batch: the latency a reading waits before it is even stored."""
    done: dict[int, float] = {}
    batch: list[int] = []
    lock = threading.Lock()
    first = [0.0]

    def on_message(client, userdata, msg):
        with lock:
            if not batch:
                first[0] = time.perf_counter()
            batch.append(int(msg.payload))
            if len(batch) >= 5000:
                flush()

    def flush():
        t = time.perf_counter()
        for k in batch:
            done[k] = t
        batch.clear()

    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="peer-sub", protocol=mqtt.MQTTv311)
    sub.username_pw_set("bench", "x")
    sub.on_message = on_message
    sub.on_connect = lambda c, *a: c.subscribe("peer/#", qos=1)
    sub.connect("127.0.0.1", port)
    sub.loop_start()
    stop = threading.Event()

    def timer():
        while not stop.is_set():
            time.sleep(0.01)
            with lock:
                if batch and time.perf_counter() - first[0] >= 1.0:
                    flush()

    threading.Thread(target=timer, daemon=True).start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="peer-pub", protocol=mqtt.MQTTv311)
    pub.username_pw_set("bench", "x")
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    time.sleep(0.5)
    sent = {}
    for k in range(n):
        sent[k] = time.perf_counter()
        pub.publish("peer/x", str(k).encode(), qos=1).wait_for_publish(10)
        time.sleep(0.137)  # readings arrive spread out, as from loggers
    time.sleep(1.5)
    stop.set()
    pub.loop_stop()
    sub.loop_stop()
    return [done[k] - sent[k] for k in sent if k in done]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--broker", choices=["mosquitto", "embedded"], default="mosquitto")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--hops", action="store_true", help="also print the time of each hop on the path")
    a = ap.parse_args()
    hops = Hops() if a.hops else None
    if hops is not None:
        hops.install()
    inbox = Inbox()
    smtp_port = free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if a.broker == "mosquitto":
            broker = Mosquitto(work / "mosquitto").start()
            url, port, stop = broker.url, broker.port, broker.stop
        else:
            port = free_port()
            eb = EmbeddedBroker(port).start()
            url, stop = eb.url, eb.stop
        try:
            ours = run_ours(url, port, a.trials, work, smtp_port, inbox, hops)
            peer = run_peer(port, 30)
        finally:
            stop()
            smtp.stop()
    if not ours:
        print("no alert email arrived: the pipeline is broken")
        sys.exit(1)
    p50, p99 = statistics.median(ours), percentile(ours, 99)
    q50, q99 = statistics.median(peer), percentile(peer, 99)
    print(f"alert latency, publish of the completing reading → SMTP 250 ({len(ours)}/{a.trials} trials, {a.broker}):")
    print(f"  ms4watch (ingest → engine → incident → queue → SMTP)  p50 {1e3 * p50:7.1f} ms   p99 {1e3 * p99:7.1f} ms"
          f"   (target p99 < 200 ms)")
    print(f"  Node-RED-style batch (join 5,000 msgs or 1 s), stored  p50 {1e3 * q50:7.1f} ms   p99 {1e3 * q99:7.1f} ms"
          f"   (no alerting at all)")
    print(f"  ratio p99 ours/peer {p99 / q99:.2f}")
    if hops is not None:
        hops.report()
    if a.json:
        a.json.write_text(json.dumps({"p50_s": p50, "p99_s": p99, "peer_p50_s": q50, "peer_p99_s": q99}))


if __name__ == "__main__":
    asyncio.set_event_loop(asyncio.new_event_loop())
    main()
