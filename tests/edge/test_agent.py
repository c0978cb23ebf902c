"""The edge agent against a real Mosquitto: outages, kill -9, remote config, commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.ids import Channel
from ms4watch.contract.timeutil import parse_time, to_ns
from ms4watch.contract.wire import decode_status
from ms4watch.edge.agent import Agent
from ms4watch.edge.config import load_agent_config, parse_agent_config
from ms4watch.edge.drivers.base import DriverEnv
from ms4watch.edge.drivers.sim.world import World
from ms4watch.edge.spool import Spool
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

pytestmark = pytest.mark.mosquitto
SLOW = os.environ.get("MS4_SLOW") == "1"
T0 = to_ns(parse_time("2026-06-01T00:00:00Z"))
MIN = 60_000_000_000

CONFIG = """\
device: LOG-T1
municipality: town
station: OF-1
config_version: "1"
sensors:
  - {id: flow, driver: sim, quantity: flow, unit: gpm, interval: 1min, options: {model: runoff}}
  - {id: rain, driver: sim, quantity: rain, unit: in, interval: 1min, options: {model: rain}}
  - {id: battery, driver: sim, quantity: battery, unit: V, interval: 5min, options: {model: battery}}
"""


class Collector:
    """A persistent-session subscriber that records every message in arrival order."""

    def __init__(self, port: int, topic: str = "ms4/town/+/+/#"):
        self.messages: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"collector-{port}", clean_session=False,
                        protocol=mqtt.MQTTv311)
        c.reconnect_delay_set(0.2, 1)
        subscribed = threading.Event()
        c.on_connect = lambda cl, *a: cl.subscribe(topic, qos=1)
        c.on_subscribe = lambda *a: subscribed.set()
        c.on_message = self._on_message
        c.connect("127.0.0.1", port)
        c.loop_start()
        self.client = c
        assert subscribed.wait(10), "the collector's subscription was not acknowledged"

    def _on_message(self, client, userdata, msg):
        try:
            body = json.loads(msg.payload) if msg.payload else {}
        except ValueError:
            body = {"raw": msg.payload.decode("utf-8", "replace")}  # a YAML config
        with self.lock:
            self.messages.append((msg.topic.rsplit("/", 1)[1], body))

    def of(self, channel: str) -> list[dict]:
        with self.lock:
            return [b for ch, b in self.messages if ch == channel]

    def wait(self, pred, timeout=30.0) -> bool:
        return wait_for(pred, timeout, poll_s=0.05)

    def close(self):
        stop_client(self.client)


def make_agent(tmp_path: Path, url: str, text: str = CONFIG, **kw) -> Agent:
    config, options = parse_agent_config(text, "firmware.yaml")
    env = DriverEnv(data_dir=tmp_path, shared={"world": World(start_ns=T0, hours=24 * 8)})
    return Agent(config, options, data_dir=tmp_path, env=env, broker_url=url, **kw).start()


def check_sequence(readings_msgs: list[dict], taken: int) -> None:
    """Every seq arrived, first arrivals in order, every reading once."""
    first: dict[int, dict] = {}
    order = []
    for m in readings_msgs:
        if m["seq"] not in first:
            first[m["seq"]] = m
            order.append(m["seq"])
    assert order == sorted(order), "sequence numbers arrived out of order"
    assert sorted(first) == list(range(1, max(first) + 1)), "a sequence number is missing"
    keys = [(r["sensor"], r["time"]) for m in first.values() for r in m["readings"]]
    assert len(keys) == len(set(keys)) == taken


@pytest.mark.slow  # runs by default at reduced size; MS4_SLOW=1 (make soak) at full size
def test_broker_stopped_then_restarted_every_seq_arrives_once_in_order(tmp_path, mosquitto_broker):
    """The agent samples (a simulated minute every 5 ms) before, throughout and after an outage:
    until 20 messages were published; with the broker stopped, until the uplink knows and 400
    readings wait in the spool (MS4_SLOW=1: a 60 s outage); with it back, until the uplink is
    connected again and published 20 more. Phases end on what they are for, not on a clock
    (they were 1.5 s, 4 s and 1.5 s)."""
    collector = Collector(mosquitto_broker.port)
    agent = make_agent(tmp_path / "edge", mosquitto_broker.url)
    up = agent.uplink
    t = T0

    def sample_until(done, timeout_s: float = 60.0) -> None:
        nonlocal t
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"not done after {timeout_s} s; spool depth {agent.spool.depth()}"
            agent.sample_due(t)
            t += MIN
            time.sleep(0.005)

    try:
        sample_until(lambda: up.published_messages >= 20)
        mosquitto_broker.stop()
        outage_end = time.monotonic() + (60 if SLOW else 0)
        sample_until(lambda: not up.connected and agent.spool.depth() >= 400 and time.monotonic() >= outage_end, 120)
        mosquitto_broker.start()
        published = up.published_messages
        sample_until(lambda: up.connected and up.published_messages >= published + 20)
        assert agent.uplink.wait_drained(30)
        taken = agent.spool.taken
        assert collector.wait(lambda: len({m["seq"] for m in collector.of("readings")})
                              >= agent.uplink.published_messages)
    finally:
        agent.stop()
        collector.close()
    check_sequence(collector.of("readings"), taken)
    assert taken > 500


@pytest.mark.slow  # runs by default at reduced size; MS4_SLOW=1 (make soak) at full size
def test_agent_killed_in_a_loop_loses_nothing_it_took(tmp_path, mosquitto_broker):
    cfg = tmp_path / "LOG-T1.yaml"
    cfg.write_text(CONFIG.replace("1min", "1s").replace("5min", "1s"))
    data = tmp_path / "data"
    collector = Collector(mosquitto_broker.port)
    cmd = [sys.executable, "-m", "ms4watch", "edge", "--config", str(cfg), "--broker", mosquitto_broker.url,
           "--data-dir", str(data)]
    kills = 10 if SLOW else 4

    def started():
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert p.stdout.readline().startswith(b"edge: LOG-T1")
        return p

    for k in range(kills):
        proc = started()
        time.sleep(0.5 + (k % 3) * 0.6)   # at varying moments of the sample / publish cycle
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    last_start = time.time()
    proc = started()
    try:
        # The clean stop comes once this run is connected (its "online" status, sent on
        # connecting, arrived; a stop before connecting leaves the spool for the next start)
        # and the runs together took readings of several cycles.
        def online_since(t: float) -> bool:
            return any(s.get("state") == "online" and s.get("time") and parse_time(s["time"]).timestamp() >= t
                       for s in collector.of("status"))

        def readings_arrived() -> int:
            return len({(r["sensor"], r["time"]) for m in collector.of("readings") for r in m["readings"]})

        assert collector.wait(lambda: online_since(last_start) and readings_arrived() >= 3 * 3), \
            f"the last run did not connect, or too few readings arrived ({readings_arrived()})"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        spool = Spool(data / "LOG-T1.spool.db", "LOG-T1")
        taken, depth = spool.taken, spool.depth()
        spool.close()
        assert depth == 0, "a clean stop drains the spool"   # usually empty anyway here; the drain: test_uplink.py
        assert collector.wait(lambda: sum(len(m["readings"]) for m in
                                          {m["seq"]: m for m in collector.of("readings")}.values()) >= taken)
    finally:
        if proc.poll() is None:
            proc.kill()
        collector.close()
    check_sequence(collector.of("readings"), taken)
    assert taken >= 3 * 3  # three sensors, several seconds of life in all


def test_remote_config_validated_applied_reported_or_refused(tmp_path, mosquitto_broker):
    collector = Collector(mosquitto_broker.port)
    path = tmp_path / "LOG-T1.yaml"
    path.write_text(CONFIG)
    config, options = load_agent_config(path)
    env = DriverEnv(data_dir=tmp_path, shared={"world": World(start_ns=T0, hours=24)})
    agent = Agent(config, options, data_dir=tmp_path, env=env, broker_url=mosquitto_broker.url,
                  config_path=path).start()
    pub = collector.client
    topic = str(agent.topic(Channel.CONFIG))
    try:
        assert collector.wait(lambda: agent.uplink.listening)
        v2 = CONFIG.replace('config_version: "1"', 'config_version: "2"').replace("interval: 1min", "interval: 5min")
        pub.publish(topic, v2.encode(), qos=1, retain=True).wait_for_publish(5)
        assert collector.wait(lambda: (agent.process_control(), agent.config.config_version == "2")[1])
        bad = v2.replace('"2"', '"3"').replace("model: runoff", "model: lava")
        pub.publish(topic, bad.encode(), qos=1, retain=True).wait_for_publish(5)
        hijack = v2.replace('"2"', '"4"').replace("station: OF-1", "station: OF-9")
        pub.publish(topic, hijack.encode(), qos=1, retain=True).wait_for_publish(5)
        assert collector.wait(lambda: (agent.process_control(), len(collector.of("events")) >= 3)[1])
        assert collector.wait(lambda: any(s.get("config_version") == "2" for s in collector.of("status")))
    finally:
        agent.stop()
        collector.close()
    kinds = [(e["kind"], e["data"]) for e in collector.of("events")]
    assert kinds[0] == ("config_applied", {"version": "2", "previous": "1"})
    assert kinds[1][0] == "config_rejected" and "sensors[0].options.model" in kinds[1][1]["error"]
    assert kinds[2][0] == "config_rejected" and "cannot change the station" in kinds[2][1]["error"]
    assert agent.config.config_version == "2"
    assert 'config_version: "2"' in path.read_text()            # a reboot comes back with it
    assert 'config_version: "1"' in path.with_suffix(".yaml.prev").read_text()


def test_commands_are_acknowledged_on_events(tmp_path, mosquitto_broker):
    collector = Collector(mosquitto_broker.port)
    agent = make_agent(tmp_path, mosquitto_broker.url, clock=lambda: T0 + 90 * MIN)
    topic = str(agent.topic(Channel.CMD))
    try:
        assert collector.wait(lambda: agent.uplink.listening)
        for payload in (b'{"id": "1", "command": "read_now"}', b'{"id": "2", "command": "sample_now"}',
                        b'{"id": "3", "command": "self_destruct"}', b"garbage",
                        b'{"id": "5", "command": "reboot_agent"}'):
            collector.client.publish(topic, payload, qos=1).wait_for_publish(5)
        assert collector.wait(lambda: (agent.process_control(), len(collector.of("events")) >= 5)[1])
        assert collector.wait(lambda: len(collector.of("readings")) >= 1)
    finally:
        agent.stop()
        collector.close()
    acks = [e["data"] for e in collector.of("events") if e["kind"] == "cmd_ack"]
    assert [(a["id"], a["ok"]) for a in acks] == [("1", True), ("2", False), ("3", False), (None, False), ("5", True)]
    assert acks[0]["detail"] == "3 readings taken"
    assert "no autosampler" in acks[1]["detail"] and "unknown command" in acks[2]["detail"]
    assert agent.restart_requested


def test_readings_taken_with_an_unsynchronised_clock_are_flagged(tmp_path, mosquitto_broker):
    collector = Collector(mosquitto_broker.port)
    agent = make_agent(tmp_path, mosquitto_broker.url, clock_synced=lambda: False)
    try:
        agent.sample_due(T0 + 10 * MIN)
        assert agent.uplink.wait_drained(10)
        assert collector.wait(lambda: collector.of("readings"))
        assert collector.wait(lambda: any(s.get("clock") == "unsynced" for s in collector.of("status")))
    finally:
        agent.stop()
        collector.close()
    flags = {tuple(r["flags"]) for m in collector.of("readings") for r in m["readings"]}
    assert flags == {("simulated", "clock_unsynced")}


def test_status_reports_each_sensors_calibration(tmp_path, mosquitto_broker):
    text = CONFIG.replace(
        "options: {model: runoff}}",
        "options: {model: runoff},\n     calibration: {performed: 2026-05-01, due: 2026-08-01, slope: 1.03}}").replace(
        "options: {model: rain}}",
        "station: RG-1, options: {model: rain},\n     calibration: {performed: 2026-04-07, due: 2026-10-07}}")
    collector = Collector(mosquitto_broker.port)
    agent = make_agent(tmp_path, mosquitto_broker.url, text=text)
    try:
        assert collector.wait(lambda: any(s.get("state") == "online" for s in collector.of("status")))
    finally:
        agent.stop()
    try:
        assert collector.wait(lambda: any(s.get("state") == "offline" for s in collector.of("status")))
    finally:
        collector.close()
    online = next(s for s in collector.of("status") if s.get("state") == "online")
    assert online["calibrations"] == [
        {"sensor": "flow", "performed": "2026-05-01", "due": "2026-08-01"},
        {"sensor": "rain", "performed": "2026-04-07", "due": "2026-10-07", "station": "RG-1"}]  # battery: none
    st = decode_status(str(agent.topic(Channel.STATUS)), json.dumps(online))
    assert [(c.sensor, c.due.isoformat()) for c in st.calibrations] == [("flow", "2026-08-01"), ("rain", "2026-10-07")]
    offline = [s for s in collector.of("status") if s.get("state") == "offline"]
    assert all("calibrations" not in s for s in offline)  # offline (and the last will) say nothing about it
    # the longest interval of the sensors reporting for OF-1 (flow 1 min, battery 5 min; rain is RG-1's)
    assert online["report_interval_s"] == 300.0 and st.report_interval_s == 300.0
    assert all("report_interval_s" not in s for s in offline)


def test_live_readings_overtake_a_long_backlog(tmp_path, mosquitto_broker):
    """Taken during a rate-limited drain, a live reading goes out before the backlog ends."""
    collector = Collector(mosquitto_broker.port)
    config, options = parse_agent_config(CONFIG, "firmware.yaml")
    env = DriverEnv(data_dir=tmp_path, shared={"world": World(start_ns=T0, hours=24 * 8)})
    agent = Agent(config, options, data_dir=tmp_path, env=env, broker_url="mqtt://127.0.0.1:1",  # nobody there
                  drain_rate=2000)
    t = T0
    for _ in range(2 * 24 * 60):      # two days offline: ~6,300 readings
        agent.sample_due(t)
        t += MIN
    backlog = agent.spool.depth()
    agent.uplink.url = type(agent.uplink.url).parse(mosquitto_broker.url)
    agent.start()
    try:
        assert collector.wait(lambda: len(collector.of("readings")) >= 2)
        agent.sample_due(t)              # a live sample cycle while the backlog drains
        assert agent.uplink.wait_drained(30)
        assert collector.wait(lambda: sum(len(m["readings"]) for m in collector.of("readings")) >= backlog + 3)
    finally:
        agent.stop()
        collector.close()
    msgs = collector.of("readings")
    newest = max(r["time"] for m in msgs for r in m["readings"])
    live_index = next(i for i, m in enumerate(msgs) if any(r["time"] == newest for r in m["readings"]))
    assert live_index < len(msgs) - 3, "the live reading waited for the whole backlog"
    check_sequence(msgs, backlog + 3)


def test_the_loop_sleeps_until_due_and_wakes_for_a_command_and_for_stop(tmp_path, mosquitto_broker, monkeypatch):
    """The loop makes one pass a reading (its CPU per reading, bench/bench_edge.py), yet a
    command sent while it sleeps is handled at once, and stop ends it at once."""
    import ms4watch.edge.agent as agent_module
    monkeypatch.setattr(agent_module, "HOUSEKEEPING_S", 3600.0)   # only a wake can end a sleep
    collector = Collector(mosquitto_broker.port)
    hourly = CONFIG.replace("interval: 1min", "interval: 1h").replace("interval: 5min", "interval: 1h")
    agent = make_agent(tmp_path, mosquitto_broker.url, hourly)
    stop = threading.Event()
    loop = threading.Thread(target=agent.run, args=(stop,), daemon=True)
    try:
        assert collector.wait(lambda: agent.uplink.listening)
        loop.start()
        assert wait_for(lambda: agent.next_due_ns() is not None, 10)   # first pass made; now asleep
        collector.client.publish(str(agent.topic(Channel.CMD)), b'{"id": "7", "command": "status"}', qos=1)
        assert wait_for(lambda: agent.control_handled == 1, 10)
        stop.set()
        agent.wake()
        loop.join(10)
        assert not loop.is_alive()
    finally:
        stop.set()
        agent.wake()
        agent.stop()
        collector.close()
