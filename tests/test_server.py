"""``ms4watch serve`` end to end on real peers: Mosquitto, an SMTP server, headless Chromium.

A logger's readings show an illicit discharge (flow for 35 min after three dry days); the
SMO's email arrives with a chart and an acknowledge link; the SMO opens the link in a
browser, types a name and clicks Acknowledge; the incident is acknowledged, with who and how.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.wire import encode_readings
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.browser import Browser, chromium_binary
from tests.support.notify_peers import SmtpSink
from tests.support.servers import free_port
from tests.support.towns import SITES, publish_dry_weather_flow
from tests.support.mqtt_clients import stop_client

pytestmark = pytest.mark.mosquitto
MIN = 60 * 10**9
H = 60 * MIN


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
        publish_dry_weather_flow(mosquitto_broker.port)
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


def _cli(*args: str, config) -> subprocess.CompletedProcess[str]:
    """``ms4watch incidents …`` in a process of its own, reading the server's settings file."""
    return subprocess.run([sys.executable, "-m", "ms4watch", "incidents", *args, "--config", str(config)],
                          capture_output=True, text=True)


def _town_config(tmp_path, extra: str = "", **settings: str):
    (tmp_path / "sites.yaml").write_text(SITES + extra)
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'registry = "{tmp_path / "sites.yaml"}"\ndata_dir = "{tmp_path / "data"}"\n'
                   + "".join(f"{k} = {v}\n" for k, v in settings.items()))
    return cfg


SITE = "construction_sites: [{id: CS-7, name: Hillcrest, rain_gauges: [RG-1], active_from: 2026-04-01}]\n"


def test_an_inspection_recorded_at_the_terminal_reaches_the_running_engine(tmp_path, mosquitto_broker):
    """``ms4watch incidents inspected`` records through the town's incident service (the
    root's ``open_town``) in another process; the running server's clock tick notices the
    database changed (SQLite's data_version, no marker file) and tells the engine, once."""
    from ms4watch.settings import load_settings
    from tests.support.waiting import wait_for

    cfg = _town_config(tmp_path, SITE)
    server = build_server(load_settings(cfg, broker={"url": mosquitto_broker.url}, http={"listen": "off"},
                                        engine={"tick": "1s"}), report=lambda line: None).start()
    try:
        out = _cli("inspected", "CS-7", "--by", "J. Rivera", "--at", "2026-06-02T09:00:00-04:00",
                   "--note", "silt fence repaired", config=cfg)
        assert out.returncode == 0, out.stderr
        assert wait_for(lambda: server.pipeline.engine.inspections, timeout_s=10)
        [insp] = server.pipeline.engine.inspections
        assert insp.site == "CS-7" and insp.inspector == "J. Rivera"
        assert server.sync() == 0                      # told once; nothing changed since
        assert [i.site for i in server.pipeline.engine.inspections] == ["CS-7"]
        assert not (tmp_path / "data" / "inspections-synced").exists()
    finally:
        server.stop()


def test_an_acknowledgement_at_the_terminal_stops_the_servers_escalation(tmp_path):
    """The server opens an incident; ``ms4watch incidents ack`` in another process
    acknowledges it through the incident service; past the escalation delay the server
    escalates nothing, and its audit says the terminal did it."""
    from ms4watch.alerts.delivery.routing import Stage
    from ms4watch.contract.timeutil import to_ns
    from ms4watch.settings import load_settings
    from tests.support.notify_peers import dwf, utc

    deputy = "{name: Dee Puty, role: deputy, email: dep@town.test}"
    cfg = _town_config(tmp_path)
    (tmp_path / "sites.yaml").write_text(SITES.replace("email: smo@town.test}]", f"email: smo@town.test}}, {deputy}]"))
    server = build_server(load_settings(cfg, http={"listen": "off"}), report=lambda line: None, simulated=True)
    pipeline = server.pipeline
    try:
        pipeline.advance(to_ns(utc(2026, 6, 1, 16)))
        inc = pipeline.incidents.handle(dwf("2026-06-01T15:30:00Z")).incident
        assert inc is not None
        assert server.sync() == 0                      # the server's own writes are not news to it
        out = _cli("ack", inc.code, "--by", "Pat Doe", "--note", "on my way", config=cfg)
        assert out.returncode == 0, out.stderr
        server.sync()                                  # what the clock tick does
        assert pipeline.incidents.get(inc.id).state.value == "acknowledged"
        assert pipeline.incidents.audit(inc.id)[-1].how == "cli"
        pipeline.advance(to_ns(utc(2026, 6, 1, 17)))   # 60 min later: past escalate_after (30 min)
        pipeline.dispatcher.tick()
        assert pipeline.incidents.notifications(inc.id)
        assert not [n for n in pipeline.incidents.notifications(inc.id) if n.stage == Stage.ESCALATION.value]
        assert not (tmp_path / "data" / "inspections-synced").exists()
    finally:
        pipeline.close()


def test_an_inspection_recorded_while_the_server_was_down_reaches_the_engine_once(tmp_path):
    """Recorded while no server ran: the next start tells the engine; after a checkpoint and
    another start it is not told again (the engine's state holds it). No server runs beside the
    command: it runs in this process (``run_cli``; the two tests above keep a process of their own)."""
    from ms4watch.settings import load_settings
    from tests.support.cli import run_cli

    cfg = _town_config(tmp_path, SITE)
    settings = load_settings(cfg, http={"listen": "off"})
    build_server(settings, report=lambda line: None).pipeline.close()   # the town's files exist
    out = run_cli("incidents", "inspected", "CS-7", "--by", "J. Rivera", "--at", "2026-06-02T09:00:00-04:00",
                  "--config", str(cfg))
    assert out.returncode == 0, out.stderr
    for _ in range(2):
        server = build_server(settings, report=lambda line: None)
        try:
            server.sync()
            assert [i.inspector for i in server.pipeline.engine.inspections] == ["J. Rivera"]
            server.pipeline.checkpoint()
        finally:
            server.pipeline.close()


def test_a_loggers_stated_report_interval_keeps_its_event_driven_gauge_from_being_called_stale(tmp_path,
                                                                                              mosquitto_broker):
    """Two tipping-bucket gauges send one row per tip and a heartbeat every 30 min, and nothing
    in the registry says so. RG-1's logger states its 30-min interval in its status; RG-2's does
    not: after an hour of silence RG-2 is stale (judged by the 15-min default), RG-1 is not."""
    from ms4watch.alerts.events import AlertKind
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
        stop_client(pub)
        assert wait_for(lambda: server.pipeline.fed_readings == 2 * len(heartbeats), 20)
        server.pipeline.advance(now)
        stale = {e["station"] for e in server.pipeline.alerts() if e.kind is AlertKind.STALE_STATION}
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
        stop_client(pub)
        assert wait_for(lambda: server.ingest.stats.stored_readings == 1 and server.ingest.stats.rejected_messages == 1)
    finally:
        server.stop()
    [r] = read_rejected(tmp_path / "data").records
    assert r.device == "LOG-OF12" and "is not one of the town's loggers" in r.error


def test_ingest_starts_once_the_delivery_worker_has_drawn_its_first_chart(tmp_path, mosquitto_broker, monkeypatch):
    """Issue 22: the first alert after a start waited ~0.9 s behind the delivery worker's
    warm-up chart (bench_alert_latency's p99). The server now takes readings only once the
    worker is ready. The warm-up here draws once the start waits for the worker's ``ready``
    or has started ingest (at most 2 s for a start that waits some other way), so a server
    that started ingest during the warm-up is seen doing so."""
    import threading

    from ms4watch.alerts.delivery.worker import DeliveryWorker
    from ms4watch.alerts.notifiers.email import chart
    from ms4watch.ingest.service import IngestService
    from tests.support.waiting import wait_for

    order: list[str] = []
    ingest_started, ready_awaited = threading.Event(), threading.Event()
    real_warm_up, real_start, real_init = chart.warm_up, IngestService.start, DeliveryWorker.__init__

    class WatchedReady(threading.Event):
        def wait(self, timeout=None):
            ready_awaited.set()
            return super().wait(timeout)

    def init(self, *a, **k):
        real_init(self, *a, **k)
        self.ready = WatchedReady()

    def warm_up():
        wait_for(lambda: ingest_started.is_set() or ready_awaited.is_set(), 2)
        real_warm_up()
        order.append("warm-up drawn")

    def start(self, *a, **k):
        order.append("ingest started")
        ingest_started.set()
        return real_start(self, *a, **k)
    monkeypatch.setattr(chart, "warm_up", warm_up)
    monkeypatch.setattr(IngestService, "start", start)
    monkeypatch.setattr(DeliveryWorker, "__init__", init)
    (tmp_path / "sites.yaml").write_text(SITES)
    smtp = SmtpSink().start()
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": "off"}, "notify": [smtp.url]}), report=lambda line: None).start()
    try:
        assert order == ["warm-up drawn", "ingest started"]
    finally:
        server.stop()
        smtp.stop()


# -- start-up: what `serve --http off` imports ---------------------------------------------------
OFF_THE_INGEST_PATH = ("fastapi", "ms4watch.workbench.app", "ms4watch.workbench.services.compliance", "matplotlib",
                       "apprise", "holidays", "prometheus_client", "ms4watch.workbench.records.inspections")


INFLUX_CLIENTS = ("requests", "urllib3", "influxdb_client", "ms4watch.ingest.stores.influxdb.v1")
MAP_MODULES = ("ms4watch.network.model", "ms4watch.network.store", "ms4watch.network.sites", "ms4watch.network.monitored")
CHANNEL_MODULES = ("ms4watch.alerts.notifiers.email", "ms4watch.alerts.notifiers.sms", "ms4watch.alerts.notifiers.webhook",
                   "ms4watch.alerts.incidents.sms_replies", "smtplib")


OFF_THE_WEB = """\
import json, sys
from ms4watch.server import build_server
from ms4watch.settings import Settings
server = build_server(Settings.model_validate({'registry': REGISTRY, 'data_dir': DATA, 'http': {'listen': 'off'}}),
                      report=lambda line: None)
print(json.dumps({'app': server.app is not None, 'store': type(server.town.store).__name__,
                  'map': server.town.reaches.current() is not None,
                  'feeds': [type(n).__name__ for r, n in server.town.pipeline.dispatcher.channels.feeds],
                  'imported': [m for m in WATCHED if m in sys.modules]}))
"""

RUN_PHASES = """\
import contextlib, io, json
out = {}
for name, code in PHASES:       # in order, each in a namespace of its own; what it prints is its answer
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, name, "exec"), {"__name__": name})
    out[name] = printed.getvalue()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def one_interpreter(tmp_path_factory) -> dict[str, str]:
    """The module's checks of what a server imports and when, asked of one fresh interpreter
    (each asked its own: ~1 s of CPU apiece), in an order where each phase imports more than the
    one before and a phase's check holds only if the phases before it imported none of its
    modules (a false failure is possible, a false pass is not):
    ``off the web``, ``build_server`` with ``--http off`` (it imports no workbench, matplotlib,
    pandas, map, other channel or InfluxDB client); ``judge``, a simulated server judging every
    kind of reading (without pandas); ``workbench``, a server with the workbench started on a real
    Mosquitto (the workbench's web side imported only once ingest runs). Returns what each printed."""
    from tests.support.servers import have, mosquitto

    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    tmp = tmp_path_factory.mktemp("one-interpreter")
    for name in ("off the web", "judge", "workbench"):
        (tmp / name).mkdir()
    (tmp / "off the web" / "sites.yaml").write_text(SITES)
    (tmp / "judge" / "sites.yaml").write_text(SITES + PAIR_AND_SITE)
    (tmp / "workbench" / "sites.yaml").write_text(SITES)

    def placed(code: str, name: str) -> str:
        return code.replace("REGISTRY", repr(str(tmp / name / "sites.yaml"))).replace("DATA", repr(str(tmp / name / "data")))
    watched = sorted({*OFF_THE_INGEST_PATH, *INFLUX_CLIENTS, *MAP_MODULES, *CHANNEL_MODULES})
    with mosquitto(tmp / "mosquitto") as broker:
        phases = [("off the web", placed(OFF_THE_WEB, "off the web").replace("WATCHED", repr(watched))),
                  ("judge", placed(JUDGE_EVERY_KIND, "judge")),
                  ("workbench", placed(WORKBENCH_AFTER_INGEST, "workbench").replace("BROKER", repr(broker.url))
                   .replace("MODULES", repr(("fastapi", "uvicorn", "ms4watch.workbench.app",
                                             "ms4watch.workbench.services.compliance"))))]
        out = subprocess.run([sys.executable, "-c", RUN_PHASES.replace("PHASES", repr(phases))],
                             capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def built_off_the_web(one_interpreter) -> dict:
    """``build_server`` with ``--http off`` on SITES, in a fresh interpreter: whether it made an
    app, its store's type, its map (None: no map), its notification feeds, and which of the
    modules named here it imported."""
    return json.loads(one_interpreter["off the web"])


def test_a_server_without_the_workbench_imports_none_of_it(built_off_the_web):
    """``serve --http off`` (a town's ingest-and-alerts server, the backlog bench): building it
    imports neither FastAPI and the workbench's pages and desks, nor matplotlib, nor apprise
    when no SMS channel is configured, nor the public holidays before a compliance clock needs
    them — a second or more of start-up before the first message is taken — nor the
    metrics, served only by the workbench (``/metrics``), nor the workbench's records but the
    approvals the engine judges by (``workbench.records.suppressions``)."""
    assert built_off_the_web["app"] is False
    assert [m for m in built_off_the_web["imported"] if m in OFF_THE_INGEST_PATH] == []


def test_a_server_of_a_town_without_a_map_imports_none_of_the_maps_modules(built_off_the_web):
    """No map imported (``ms4watch map import`` never ran): building the server imports none of
    the map's model, store and tracing (~10-15 ms of CPU before the first reading); the clock
    reads a map imported later (``test_the_clock_reads_a_newly_imported_map_before_any_alert_needs_it``)."""
    assert built_off_the_web["map"] is False
    assert [m for m in built_off_the_web["imported"] if m in MAP_MODULES] == []


def test_a_server_notifying_its_file_imports_no_other_channel(built_off_the_web):
    """No ``--notify`` URL (the notifications file, the backlog bench's server): building the
    server imports neither the email, SMS or webhook channels (each is imported by a URL of its
    scheme: tests/alerts/notifiers/test_urls.py) nor the inbound-SMS replies (the workbench's
    webhook imports them: tests/workbench/routes/test_sms.py)."""
    assert "FileNotifier" in built_off_the_web["feeds"]
    assert [m for m in built_off_the_web["imported"] if m in CHANNEL_MODULES] == []


def test_a_server_on_sqlite_imports_no_influxdb_client(built_off_the_web):
    """A server whose store is the embedded SQLite (the default, and every test's ``serve``)
    imports neither ``requests`` (the InfluxDB 1.x store's HTTP client, ~0.2 s of CPU with
    urllib3's regexes) nor influxdb-client: the alert pipeline writes its records through
    the store it was given, only their shape comes from the InfluxDB schema."""
    assert built_off_the_web["store"] == "SqliteStore"
    assert [m for m in built_off_the_web["imported"] if m in INFLUX_CLIENTS] == []


WORKBENCH_AFTER_INGEST = """\
import sys, httpx
from ms4watch.server import build_server
from ms4watch.settings import Settings
server = build_server(Settings.model_validate({'registry': REGISTRY, 'data_dir': DATA, 'broker': {'url': BROKER},
                                              'http': {'listen': '127.0.0.1:0'}}), report=lambda line: None)
print(sorted(m for m in MODULES if m in sys.modules))      # built: nothing of the workbench's web side yet
town = server.town
opened_by_root = town.open_workbench
def opening():                                  # the root's own opener, watched: is ingest taking readings?
    print(town.ingest.connected.is_set())
    return opened_by_root()
town.open_workbench = opening
server.start()
print(httpx.get(server.web_url + '/health').status_code, server.town.opened_workbench is not None)
server.stop()
"""


def test_the_workbench_is_opened_once_ingest_takes_readings(one_interpreter):
    """``serve`` with the workbench: its services (databases, desks) and the FastAPI app are
    made once ingest is connected and taking readings, not before (~1 s of CPU a town's
    server spent before its first reading); its port is still bound first (a port that is
    taken stops the start before anything runs), and it answers once the server started.
    In the module's one interpreter (``one_interpreter``), after the phases that import none of it."""
    assert one_interpreter["workbench"].splitlines() == ["[]", "True", "200 True"], one_interpreter["workbench"]


def test_a_workbench_that_cannot_open_stops_the_server_it_started(tmp_path, mosquitto_broker):
    """The workbench opens once ingest runs; when it cannot (its corrections database is a
    folder), the start fails with that error and what it had started is stopped as a signal
    would stop it: ingest's writer gone, the town's lock released (a second server starts)."""
    (tmp_path / "sites.yaml").write_text(SITES)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corrections.db").mkdir()
    settings = Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": "127.0.0.1:0"}})
    server = build_server(settings, report=lambda line: None)
    with pytest.raises(Exception, match="corrections|database"):
        server.start()
    assert not any(t.name == "ingest-writer" and t.is_alive() for t in threading.enumerate())   # ingest stopped
    (tmp_path / "data" / "corrections.db").rmdir()
    again = build_server(settings, report=lambda line: None).start()
    try:
        assert again.ingest.connected.is_set() and again.town.opened_workbench is not None
    finally:
        again.stop()


def test_a_taken_port_stops_the_start_before_ingest(tmp_path, mosquitto_broker):
    """The workbench's port is bound before anything starts: taken, the start fails with the
    port named and ingest never connected."""
    import socket

    (tmp_path / "sites.yaml").write_text(SITES)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": f"127.0.0.1:{port}"}}), report=lambda line: None)
    try:
        with pytest.raises(Exception, match=str(port)):
            server.start()
        assert not server.ingest.connected.is_set() and server.town.opened_workbench is None
    finally:
        taken.close()


PAIR_AND_SITE = """\
turbidity_pairs: [{id: TP-1, upstream: TU-1, downstream: TD-1, name: Hillcrest creek, construction_site: CS-7}]
construction_sites: [{id: CS-7, name: Hillcrest, rain_gauges: [RG-1], active_from: 2026-04-01, drains_to: [CB-1]}]
"""

JUDGE_EVERY_KIND = """\
import sys
from ms4watch.contract.wire import CanonicalReading as R
from ms4watch.server import build_server
from ms4watch.settings import Settings
MIN = 60 * 10**9; H = 60 * MIN; T0 = 1_780_272_000 * 10**9     # 2026-06-01 00:00 UTC
server = build_server(Settings.model_validate({'registry': REGISTRY, 'data_dir': DATA, 'http': {'listen': 'off'}}),
                      report=lambda line: None, simulated=True)
rs = []
for k in range(4 * 90):                          # 72 dry hours, a 0.6-inch storm in the 74th, then dry again
    t = T0 + k * 15 * MIN
    rs.append(R(t, 'RG-1', 'LOG-RG1', 'rain', 'rain', 0.05 if 292 <= k < 304 else 0.0, 'in', '', 0))
    rs.append(R(t, 'OF-12', 'LOG-OF12', 'battery', 'battery', 11.0 if k > 200 else 12.6, 'V', '', 0))
    if 280 <= k < 288:                           # flow on the 71st hour: dry weather
        rs.append(R(t, 'OF-12', 'LOG-OF12', 'flow', 'flow', 60.0, 'gpm', '', 0))
    if k % 2 == 0:                               # the probe below CS-7 muddy for two hours; the one above
        # moves a little (a probe reading one value for 12 h fails the flat-line test)
        rs.append(R(t, 'TU-1', 'LOG-TU1', 'turbidity', 'turbidity', 10.0 + k // 2 % 4 * 0.5, 'NTU', '', 0))
        rs.append(R(t + MIN, 'TD-1', 'LOG-TD1', 'turbidity', 'turbidity', 40.0 if 100 <= k < 108 else 11.0, 'NTU', '', 0))
rs.sort(key=lambda r: r.time_ns)
for i in range(0, len(rs), 200):                 # in batches, as ingest hands them over
    server.pipeline.feed(rs[i:i + 200])
server.pipeline.advance(T0 + 6 * 24 * H)         # days later: the inspection is overdue
print(sorted({e.kind.value for e in server.pipeline.events()}))
print('pandas' in sys.modules)
server.pipeline.close()
"""


def test_a_server_judges_every_kind_of_reading_without_pandas(one_interpreter):
    """The streaming engine's path (the rules on arrays) runs without pandas, ~0.3 s of CPU in
    the imports of a server's start before its first message; pandas is for replay, the
    charts and the reports. A fresh interpreter (the module's one, after it built a server
    off the web: ``one_interpreter``) builds a server and feeds it readings that
    raise every kind the engine judges from readings and the clock: a storm and the
    inspection it makes due (then overdue), dry-weather flow (and unknown weather once the
    gauge falls silent), a turbidity contrast (and a pair not evaluable), a low battery, a
    silent station."""
    kinds, pandas_imported = one_interpreter["judge"].splitlines()
    assert kinds == str(sorted({"storm", "inspection_due", "inspection_overdue", "dry_weather_flow", "dry_weather_unknown",
                                "turbidity_contrast", "turbidity_not_evaluable", "low_battery", "stale_station"})), kinds
    assert pandas_imported == "False", "pandas imported by the judging (or the server built before it)"


def _muddy(start_ns: int) -> list:
    """Two hours of both probes every 5 min, the one below CS-7 muddy (40 NTU over 10) for 30 min."""
    from ms4watch.contract.wire import CanonicalReading
    rs = []
    for i in range(24):
        t = start_ns + i * 5 * MIN
        rs.append(CanonicalReading(t, "RG-1", "LOG-RG1", "rain", "rain", 0.0, "in", "", 0))
        rs.append(CanonicalReading(t, "TU-1", "LOG-TU1", "turbidity", "turbidity", 10.0, "NTU", "", 0))
        rs.append(CanonicalReading(t + MIN, "TD-1", "LOG-TD1", "turbidity", "turbidity",
                                   40.0 if 6 <= i < 12 else 11.0, "NTU", "", 0))
    return rs


def test_a_site_alerts_email_names_the_outfall_its_runoff_reaches_and_follows_a_reimported_map(tmp_path):
    """The town's map is imported (Main St: CB-1 -> MH-2 -> MH-1 -> OF-12 on the Mohawk River)
    and the registry says CS-7 drains to CB-1. A real turbidity contrast below CS-7 (the
    engine judging the probes' readings) reaches the SMO by email (real SMTP) naming CB-1 and
    OF-12. The town re-imports its map with CB-1 moved and piped to a new outfall OF-14 on
    Canal Creek: the next contrast's email names OF-14, with no restart."""
    from dataclasses import replace

    from ms4watch.contract.timeutil import to_ns
    from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Structure, StructureKind
    from tests.support.notify_peers import utc
    from tests.support.town_network import main_st_network, store_network
    from tests.support.waiting import wait_for

    (tmp_path / "sites.yaml").write_text(SITES + PAIR_AND_SITE)
    store_network(tmp_path / "data")
    smtp = SmtpSink().start()
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "data_dir": tmp_path / "data", "notify": [smtp.url],
        "http": {"listen": "off"}}), report=lambda line: None, simulated=True)
    pipeline = server.pipeline

    def contrast_emails():
        return [m for m in smtp.to("smo@town.test") if "turbidity contrast" in str(m["Subject"]).lower()]
    try:
        for n, start in enumerate((utc(2026, 6, 1, 12), utc(2026, 6, 1, 14))):     # the readings run on
            rs = _muddy(to_ns(start))
            pipeline.feed(rs)
            pipeline.advance(max(r.time_ns for r in rs))
            pipeline.dispatcher.tick()
            assert wait_for(lambda: len(contrast_emails()) > n, timeout_s=10), "no turbidity email"
            text = contrast_emails()[n].get_body(("plain",)).get_content()
            if n == 0:
                assert re.search(r"^Runoff +drains to CB-1, reaching outfall OF-12 \(Mohawk River\)\r?$", text, re.M), text
                inspections = [m for m in smtp.to("smo@town.test") if "inspection" in str(m["Subject"]).lower()]
                assert inspections and all("drains to CB-1, reaching outfall OF-12 (Mohawk River)"
                                           in m.get_body(("plain",)).get_content() for m in inspections)
                net = main_st_network()         # re-imported: CB-1 moved west, piped to a new outfall
                net.structures["CB-1"] = replace(net.structures["CB-1"], lon=-73.9470)
                net.structures["OF-14"] = Structure("OF-14", StructureKind.OUTFALL, -73.9480, 42.8160,
                                                    receiving_water="Canal Creek")
                net.conveyances["P5"] = Conveyance("P5", ConveyanceKind.PIPE, "CB-1", "OF-14",
                                                   DirectionSource.DRAWING, 250.0)
                store_network(tmp_path / "data", net)
            else:
                assert re.search(r"^Runoff +drains to CB-1, reaching outfall OF-14 \(Canal Creek\)\r?$", text, re.M), text
                assert "OF-12" not in text
    finally:
        pipeline.close()
        smtp.stop()


def test_the_clock_reads_a_newly_imported_map_before_any_alert_needs_it(tmp_path, mosquitto_broker):
    """Reading a town-sized map takes seconds (20,000 structures: ~2 s, most of it loading
    network.db): the running server's clock tick reads a new import, so the first alert after
    it does not wait in the incident transaction."""
    from tests.support.town_network import store_network
    from tests.support.waiting import wait_for

    (tmp_path / "sites.yaml").write_text(SITES + PAIR_AND_SITE)
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": "off"}, "engine": {"tick": "1s"}}), report=lambda line: None).start()
    try:
        assert server.town.reaches.cached is None
        store_network(tmp_path / "data")
        assert wait_for(lambda: server.town.reaches.cached is not None, timeout_s=10)
        cs7 = server.town.reaches.cached.of("CS-7")
        assert cs7 is not None and [o.id for o in cs7.outfalls] == ["OF-12"]
    finally:
        server.stop()


def test_a_fresh_data_directory_gets_each_schema_in_one_transaction(tmp_path, monkeypatch):
    """What ``serve`` makes before ingest starts on a new data directory (the incident database
    with its delivery queue, the compliance records): every CREATE inside a transaction, so
    one commit each, not one fsync per statement (~90 of them: ~0.3 s of the start, the
    backlog bench's; docs/store.md)."""
    (tmp_path / "sites.yaml").write_text(SITES)
    outside: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        state = {"in": False}

        def note(q: str) -> None:
            word = q.split()[0].rstrip(";").upper() if q.split() else ""
            if word == "BEGIN":
                state["in"] = True
            elif word in ("COMMIT", "ROLLBACK", "END"):
                state["in"] = False
            elif word == "CREATE" and not state["in"]:
                outside.append(f"{args[0]}: {q.splitlines()[0]}")
        conn.set_trace_callback(note)
        return conn
    monkeypatch.setattr(sqlite3, "connect", traced)
    settings = Settings.model_validate({"registry": str(tmp_path / "sites.yaml"), "data_dir": str(tmp_path / "data"),
                                        "http": {"listen": "off"}, "store": "influxdb1://127.0.0.1:9/x"})
    server = build_server(settings, report=lambda line: None)
    try:
        assert (tmp_path / "data" / "incidents.db").exists() and (tmp_path / "data" / "compliance.db").exists()
        assert outside == []
    finally:
        for t in server.towns:
            t.pipeline.close()


def test_stop_waits_for_the_web_warm_up_so_no_thread_is_drawing_when_the_process_exits(tmp_path, mosquitto_broker,
                                                                                        monkeypatch):
    """The web's warm-up draws a chart (matplotlib, C++) in a thread of its own. A process
    that exits while it draws dies with SIGABRT ("terminate called without an active
    exception": Python ends the thread inside C++ at finalization), as `ms4watch demo` did
    on a Ctrl-C in its first seconds. ``stop()`` waits for the warm-up (bounded)."""
    import threading

    from ms4watch.workbench import warmup

    drawing, release = threading.Event(), threading.Event()

    def slow_chart() -> None:
        drawing.set()
        release.wait(30)

    monkeypatch.setattr(warmup, "_chart", slow_chart)
    monkeypatch.setattr(warmup, "_pdf", lambda: None)
    monkeypatch.setattr(warmup, "_started", threading.Lock())      # once per process otherwise
    (tmp_path / "sites.yaml").write_text(SITES)
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": f"127.0.0.1:{free_port()}"}}), report=lambda line: None).start()
    try:
        assert drawing.wait(20), "the warm-up did not start"
    finally:
        timer = threading.Timer(3.0, release.set)     # the chart ends 3 s from now, well after a stop's usual time
        timer.start()
        server.stop()
    alive = [t.name for t in threading.enumerate() if t.name == "ms4watch-warm-up" and t.is_alive()]
    assert alive == [], "stop() returned while the warm-up still drew"
    timer.join()
