"""``ms4watch serve`` end to end on real peers: Mosquitto, an SMTP server, headless Chromium.

A logger's readings show an illicit discharge (flow for 35 min after three dry days); the
SMO's email arrives with a chart and an acknowledge link; the SMO opens the link in a
browser, types a name and clicks Acknowledge; the incident is acknowledged, with who and how.
"""

from __future__ import annotations

import re
import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.wire import encode_readings
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.browser import Browser, chromium_binary
from tests.support.notify_peers import SmtpSink
from tests.support.servers import free_port

pytestmark = pytest.mark.mosquitto
MIN = 60 * 10**9
H = 60 * MIN

SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01}]
outfalls: [{id: OF-12, name: Spook Rock Rd, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
"""


def test_alert_email_and_acknowledge_link_in_a_real_browser(tmp_path, mosquitto_broker):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    (tmp_path / "sites.yaml").write_text(SITES)
    smtp = SmtpSink().start()
    http_port = free_port()
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "notify": [smtp.url], "http": {"listen": f"127.0.0.1:{http_port}"}, "engine": {"tick": "1s"}}),
        report=lambda line: None).start()
    browser = None
    try:
        assert server.ingest.connected.wait(10)
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="logger", protocol=mqtt.MQTTv311)
        pub.connect("127.0.0.1", mosquitto_broker.port)
        pub.loop_start()
        now = time.time_ns() // MIN * MIN
        rain = [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4 + 1)]
        flow = [(now - 35 * MIN + k * 5 * MIN, "flow", "flow", 0.3 if k < 1 else 4.0 + k / 10, "L/s", [], None)
                for k in range(8)]
        pub.publish("ms4/town/RG-1/LOG-RG1/readings", encode_readings("LOG-RG1", 1, rain), qos=1).wait_for_publish(5)
        pub.publish("ms4/town/OF-12/LOG-OF12/readings", encode_readings("LOG-OF12", 1, flow), qos=1).wait_for_publish(5)
        pub.loop_stop()
        deadline = time.monotonic() + 20
        while not smtp.to("smo@town.test") and time.monotonic() < deadline:
            time.sleep(0.1)
        msgs = smtp.to("smo@town.test")
        assert msgs, "no alert email"
        msg = msgs[0]
        assert "Spook Rock Rd" in str(msg["Subject"]) and "dry-weather flow" in str(msg["Subject"]).lower()
        text = msg.get_body(("plain",)).get_content()
        assert "Ramapo ch. 218" in text or "illicit" in text.lower()
        kinds = {part.get_content_type() for part in msg.iter_attachments()}
        assert {"image/png", "text/csv"} <= kinds      # the chart and the readings behind it
        link = re.search(rf"http://127\.0\.0\.1:{http_port}/ack/[\w.-]+", text).group(0)   # signed, expiring
        incident_id = int(msg["X-MS4Watch-Incident"])

        browser = Browser()
        browser.goto(link)
        assert "Acknowledge" in browser.js("document.body.innerText")
        assert server.pipeline.incidents.get(incident_id).state.value == "open"     # a GET changes nothing
        browser.js("document.querySelector('input[name=by]').value = 'Pat Doe'")
        browser.js("document.querySelector('button[type=submit]').click()")
        browser.wait_for("document.title === 'Acknowledged'")
        assert "acknowledged by Pat Doe" in browser.js("document.body.innerText")
        browser.screenshot(tmp_path / "acknowledged.png")
        assert browser.console_errors() == []
        incident = server.pipeline.incidents.get(incident_id)
        assert incident.state.value == "acknowledged" and incident.acknowledged_by == "Pat Doe"
        assert server.pipeline.incidents.audit(incident_id)[-1].how == "email link"
    finally:
        if browser is not None:
            browser.close()
        server.stop()
        smtp.stop()


def test_an_inspection_recorded_at_the_terminal_reaches_the_running_engine(tmp_path):
    """``ms4watch incidents inspected`` writes the incident database from another process;
    the server's clock tick tells the engine, once, so its inspection items close too."""
    import subprocess
    import sys

    (tmp_path / "sites.yaml").write_text(SITES + "construction_sites: [{id: CS-7, name: Hillcrest, "
                                         "rain_gauges: [RG-1], active_from: 2026-04-01}]\n")
    server = build_server(Settings.model_validate({"registry": tmp_path / "sites.yaml", "data_dir": tmp_path / "data",
                                                   "http": {"listen": "off"}}), report=lambda line: None)
    try:
        out = subprocess.run([sys.executable, "-m", "ms4watch", "incidents", "inspected", "CS-7", "--by", "J. Rivera",
                              "--at", "2026-06-02T09:00:00-04:00", "--note", "silt fence repaired",
                              "--db", str(tmp_path / "data" / "incidents.db")], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert server.sync_inspections() == 1
        assert server.sync_inspections() == 0          # told once
        [insp] = server.pipeline.engine.inspections
        assert insp.site == "CS-7" and insp.inspector == "J. Rivera"
    finally:
        server.pipeline.close()


def test_a_loggers_stated_report_interval_keeps_its_event_driven_gauge_from_being_called_stale(tmp_path,
                                                                                              mosquitto_broker):
    """Two tipping-bucket gauges send one row per tip and a heartbeat every 30 min, and nothing
    in the registry says so. RG-1's logger states its 30-min interval in its status; RG-2's does
    not: after an hour of silence RG-2 is stale (judged by the 15-min default), RG-1 is not."""
    from ms4watch.alerts.events import EventKind
    from ms4watch.contract.wire import status_payload
    from tests.support.waiting import wait_for

    (tmp_path / "sites.yaml").write_text("municipality: town\nrain_gauges: [{id: RG-1}, {id: RG-2}]\n")
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": "off"}, "engine": {"tick": "1h"}}), report=lambda line: None).start()
    try:
        assert server.ingest.connected.wait(10)
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="loggers", protocol=mqtt.MQTTv311)
        pub.connect("127.0.0.1", mosquitto_broker.port)
        pub.loop_start()
        now = time.time_ns() // MIN * MIN
        pub.publish("ms4/town/RG-1/LOG-RG1/status", status_payload("LOG-RG1", "online", report_interval_s=1800.0),
                    qos=1, retain=True).wait_for_publish(5)
        heartbeats = [(now - 4 * H + k * 30 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(7)]  # to now-1h
        for station, device in (("RG-1", "LOG-RG1"), ("RG-2", "LOG-RG2")):
            pub.publish(f"ms4/town/{station}/{device}/readings", encode_readings(device, 1, heartbeats),
                        qos=1).wait_for_publish(5)
        pub.loop_stop()
        assert wait_for(lambda: server.pipeline.fed_readings == 2 * len(heartbeats), 20)
        server.pipeline.advance(now)
        stale = {e["station"] for e in server.pipeline.alerts() if e.kind is EventKind.STALE_STATION}
        assert stale == {"RG-2"}
    finally:
        server.stop()


def test_serve_takes_messages_only_from_the_loggers_the_town_listed(tmp_path, mosquitto_broker):
    """``firmware_configs`` in the settings: a logger not listed there is set aside, with the reason."""
    from ms4watch.ingest.rejected import read_rejected
    from tests.support.waiting import wait_for

    (tmp_path / "sites.yaml").write_text(SITES)
    loggers = tmp_path / "loggers"
    loggers.mkdir()
    (loggers / "LOG-RG1.yaml").write_text("device: LOG-RG1\nmunicipality: town\nstation: RG-1\nsensors:\n"
                                          "  - {id: rain, driver: sim, quantity: rain, unit: in}\n")
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "firmware_configs": loggers, "broker": {"url": mosquitto_broker.url},
        "data_dir": tmp_path / "data", "http": {"listen": "off"}}), report=lambda line: None).start()
    try:
        assert server.ingest.connected.wait(10)
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="loggers", protocol=mqtt.MQTTv311)
        pub.connect("127.0.0.1", mosquitto_broker.port)
        pub.loop_start()
        now = time.time_ns() // MIN * MIN
        for station, device in (("OF-12", "LOG-OF12"), ("RG-1", "LOG-RG1")):
            pub.publish(f"ms4/town/{station}/{device}/readings", encode_readings(
                device, 1, [(now, "x", "rain" if station == "RG-1" else "flow", 0.0, "in" if station == "RG-1" else "gpm",
                             [], None)]), qos=1).wait_for_publish(5)
        pub.loop_stop()
        assert wait_for(lambda: server.ingest.stats.stored_readings == 1 and server.ingest.stats.rejected_messages == 1)
    finally:
        server.stop()
    [r] = read_rejected(tmp_path / "data").records
    assert r.device == "LOG-OF12" and "is not one of the town's loggers" in r.error
