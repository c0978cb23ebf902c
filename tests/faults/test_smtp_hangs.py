"""A hung SMTP server never holds up ingest (issue 10, "Delivery never holds up ingest").

Real Mosquitto, the real server from the composition root, and an SMTP port that accepts
connections and never answers. Five outfalls raise dry-weather-flow alerts; once the
delivery worker is connected to the silent server, a stream of readings is published, and
the whole stream must be stored while the worker is still inside that first exchange (no
attempt has ended: its timeout is 10 min). Sending on ingest's thread stored nothing more
until the exchange gave up. The same stream against a healthy SMTP server gives the rates
printed beside each other (figures, not a bound: they move with the machine's load). Then
SMTP comes back on the same port and every notification arrives exactly once.
"""

from __future__ import annotations

import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.wire import encode_readings
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.notify_peers import BlackHoleSmtp, SmtpSink
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults]
MIN = 60 * 10**9
H = 60 * MIN
OUTFALLS = [f"OF-{i}" for i in range(1, 6)]
STREAM_MESSAGES = 1000
STREAM_READINGS = 20

SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01}]
outfalls:
""" + "".join(f"  - {{id: {o}, name: Outfall {o}, rain_gauges: [RG-1], flow_floor_gpm: 0.5}}\n" for o in OUTFALLS) + """\
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
"""


class Logger:
    """A paho publisher standing in for the loggers (QoS 1, in-flight capped)."""

    def __init__(self, port: int, client_id: str):
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311)
        self.c.max_inflight_messages_set(100)
        self.c.connect("127.0.0.1", port)
        self.c.loop_start()
        self.seq: dict[str, int] = {}

    def send(self, station: str, rows: list) -> mqtt.MQTTMessageInfo:
        device = f"LOG-{station}"
        self.seq[device] = self.seq.get(device, 0) + 1
        return self.c.publish(f"ms4/town/{station}/{device}/readings",
                              encode_readings(device, self.seq[device], rows), qos=1)

    def close(self) -> None:
        stop_client(self.c)


def run(tmp_path, broker, name: str, smtp_url: str, before_stream=lambda server: None) -> tuple:
    """Raise five alerts, call ``before_stream(server)``, then time a stream of readings;
    returns (server, readings/s)."""
    data = tmp_path / name
    data.mkdir()
    (data / "sites.yaml").write_text(SITES)
    server = build_server(Settings.model_validate({
        "registry": data / "sites.yaml", "data_dir": data, "notify": [smtp_url], "http": {"listen": "off"},
        "broker": {"url": broker.url, "client_id": f"ingest-{name}"},
        "delivery": {"retry_first": "1s", "retry_max": "2s", "idle": "1s"}}), report=lambda line: None).start()
    assert server.ingest.connected.wait(10)
    log = Logger(broker.port, f"loggers-{name}")
    try:
        now = time.time_ns() // MIN * MIN
        rain = [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4 + 1)]
        log.send("RG-1", rain).wait_for_publish(5)
        for o in OUTFALLS:   # 35 min above the floor after three dry days: an illicit discharge
            log.send(o, [(now - 100 * MIN + k * 5 * MIN, "flow", "flow", 6.0, "gpm", [], None) for k in range(8)])
        incidents = server.pipeline.incidents.store
        assert wait_for(lambda: len(incidents.list()) == len(OUTFALLS), 30), "alerts not raised"
        before_stream(server)
        base = server.ingest.stats.stored_readings
        target = base + STREAM_MESSAGES * STREAM_READINGS
        t0 = time.monotonic()
        step = 60 * MIN // (STREAM_MESSAGES // len(OUTFALLS))
        for i in range(STREAM_MESSAGES):   # the flow goes on over the last hour: every batch is evaluated
            o = OUTFALLS[i % len(OUTFALLS)]
            t = now - 60 * MIN + (i // len(OUTFALLS)) * step
            log.send(o, [(t + k * step // STREAM_READINGS, "flow", "flow", 6.0 + k / 100, "gpm", [], None)
                         for k in range(STREAM_READINGS)])
        assert wait_for(lambda: server.ingest.stats.stored_readings >= target, 120), \
            f"stored {server.ingest.stats.stored_readings - base} of {target - base} readings"
        rate = (target - base) / (time.monotonic() - t0)
    finally:
        log.close()
    return server, rate


def _connected(hole: BlackHoleSmtp) -> None:
    assert wait_for(lambda: hole.connections >= 1, 30), "the delivery worker never connected to the silent server"


def test_a_hung_smtp_server_costs_ingest_nothing_and_every_email_arrives_once(tmp_path, mosquitto_broker):
    healthy = SmtpSink().start()
    try:
        server, healthy_rate = run(tmp_path, mosquitto_broker, "healthy", healthy.url)
        assert wait_for(lambda: len(healthy.to("smo@town.test")) == len(OUTFALLS), 30)
        # the SMTP server has the message a moment before the worker hears "250" and marks the row
        assert wait_for(lambda: server.pipeline.dispatcher.queue.counts() == {"sent": len(OUTFALLS)}, 10), [(r.stage, r.status, r.payload["incident"]["kind"] if r.payload.get("incident") else None, r.last_error) for r in server.pipeline.dispatcher.queue.all()]
        server.stop()
    finally:
        healthy.stop()

    hole = BlackHoleSmtp()
    server, hung_rate = run(tmp_path, mosquitto_broker, "hung", hole.url(timeout="10min"),
                            before_stream=lambda server: _connected(hole))
    back = None
    try:
        queue = server.pipeline.dispatcher.queue
        # the stream is stored, and the worker is still in its first exchange with the silent
        # server: no attempt has ended, nothing got through
        assert hole.connections == 1
        assert [r.attempts for r in queue.all()] == [0] * len(OUTFALLS)
        assert queue.counts().get("sent", 0) == 0
        print(f"ingest with a hung SMTP server: {hung_rate:,.0f} readings/s; healthy: {healthy_rate:,.0f}; "
              f"ratio {hung_rate / healthy_rate:.2f}")

        hole.stop()
        back = SmtpSink(port=hole.port).start()            # the server comes back on its port
        assert wait_for(lambda: queue.counts() == {"sent": len(OUTFALLS)}, 60), [(r.stage, r.status, r.payload["incident"]["kind"] if r.payload.get("incident") else None, r.last_error) for r in queue.all()]
        mails = back.to("smo@town.test")
        assert len(mails) == len(OUTFALLS)
        assert len({m["Message-ID"] for m in mails}) == len(OUTFALLS)
        subjects = " ".join(str(m["Subject"]) for m in mails)
        assert all(f"Outfall {o}" in subjects for o in OUTFALLS)
    finally:
        hole.stop()                                        # first: the worker's exchange ends, the server can stop
        server.stop()
        if back is not None:
            back.stop()
