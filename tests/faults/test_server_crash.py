"""The engine survives a crash (issue 10): readings acknowledged and stored, then the
server killed (-9) before the engine's next checkpoint; on restart the engine is re-fed
from the store and the alert is raised once, the SMO notified once.

Real Mosquitto, the real ``ms4watch serve`` process, a real SMTP server. Whether the
killed process had evaluated the readings before it died depends on timing, so a second
case makes the window certain: the readings are stored by ``ms4watch ingest`` alone (as
if the server had died right after acknowledging them) and ``serve`` starts on that store.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.wire import encode_readings
from tests.support.notify_peers import SmtpSink
from tests.support.waiting import wait_for
from tests.support.towns import SITES
from tests.support.mqtt_clients import stop_client

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults]
MIN = 60 * 10**9
H = 60 * MIN


def config(tmp_path: Path, broker, smtp: SmtpSink) -> Path:
    (tmp_path / "sites.yaml").write_text(SITES)
    path = tmp_path / "ms4watch.toml"
    path.write_text(f"""\
registry = "{tmp_path / 'sites.yaml'}"
data_dir = "{tmp_path / 'data'}"
notify = ["{smtp.url}"]

[broker]
url = "{broker.url}"
client_id = "ms4watch-server"

[http]
listen = "off"

[engine]
tick = "1h"          # no checkpoint but the one at start: the crash window stays open

[delivery]
retry_first = "1s"
retry_max = "2s"
idle = "1s"
""")
    return path


def publish_illicit_discharge(port: int) -> int:
    """Three dry days at RG-1, then 35 min of flow at OF-12: one dry-weather-flow episode."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="loggers", protocol=mqtt.MQTTv311)
    c.connect("127.0.0.1", port)
    c.loop_start()
    now = time.time_ns() // MIN * MIN
    rain = [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4 + 1)]
    flow = [(now - 35 * MIN + k * 5 * MIN, "flow", "flow", 0.3 if k < 1 else 4.0 + k / 10, "L/s", [], None)
            for k in range(8)]
    c.publish("ms4/town/RG-1/LOG-RG1/readings", encode_readings("LOG-RG1", 1, rain), qos=1).wait_for_publish(5)
    c.publish("ms4/town/OF-12/LOG-OF12/readings", encode_readings("LOG-OF12", 1, flow), qos=1).wait_for_publish(5)
    stop_client(c)
    return len(rain) + len(flow)


def stored(data: Path) -> int:
    db = data / "store.db"
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        try:
            return c.execute("SELECT count(*) FROM samples").fetchone()[0]
        except sqlite3.Error:
            return 0


def incidents(data: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{data / 'incidents.db'}?mode=ro", uri=True) as c:
        return c.execute("SELECT kind, subject, state FROM incidents").fetchall()


def queue(data: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{data / 'incidents.db'}?mode=ro", uri=True) as c:
        return dict(c.execute("SELECT status, count(*) FROM notification_queue GROUP BY status").fetchall())


def serve(cfg: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ms4watch", "serve", "--config", str(cfg)],
                            stdout=log.open("ab"), stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def started(log: Path) -> bool:
    return log.exists() and "serving town" in log.read_text(errors="replace")


def stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def test_kill_9_after_the_readings_were_stored_alerts_once(tmp_path, mosquitto_broker):
    smtp = SmtpSink().start()
    cfg = config(tmp_path, mosquitto_broker, smtp)
    data = tmp_path / "data"
    log = tmp_path / "serve.log"
    p = serve(cfg, log)
    try:
        assert wait_for(lambda: started(log), 30), log.read_text()
        n = publish_illicit_discharge(mosquitto_broker.port)
        assert wait_for(lambda: stored(data) >= n, 30)
        p.send_signal(signal.SIGKILL)               # acknowledged and stored; no checkpoint since start
        p.wait()
        p = serve(cfg, log)
        assert wait_for(lambda: len(smtp.to("smo@town.test")) >= 1, 60), log.read_text()[-3000:]
        assert wait_for(lambda: queue(data) == {"sent": 1}, 30), queue(data)
        assert incidents(data) == [("dry_weather_flow", "OF-12", "open")]
        assert len(smtp.to("smo@town.test")) == 1
    finally:
        stop(p)
        smtp.stop()


def test_readings_stored_but_never_evaluated_raise_their_alert_when_serve_starts(tmp_path, mosquitto_broker):
    smtp = SmtpSink().start()
    cfg = config(tmp_path, mosquitto_broker, smtp)
    data = tmp_path / "data"
    data.mkdir()
    ingest_log = tmp_path / "ingest.log"
    ingest = subprocess.Popen([sys.executable, "-m", "ms4watch", "ingest", "--municipality", "town",
                               "--broker", mosquitto_broker.url, "--store", f"sqlite:///{data / 'store.db'}",
                               "--client-id", "ms4watch-server", "--spool-dir", str(data)],
                              stdout=ingest_log.open("wb"), stderr=subprocess.STDOUT)
    p = None
    try:
        assert wait_for(lambda: "ingest: town" in ingest_log.read_text(errors="replace"), 30), ingest_log.read_text()
        n = publish_illicit_discharge(mosquitto_broker.port)
        assert wait_for(lambda: stored(data) >= n, 30)
        stop(ingest)
        assert not (data / "incidents.db").exists()   # nobody evaluated them
        log = tmp_path / "serve.log"
        p = serve(cfg, log)
        assert wait_for(lambda: len(smtp.to("smo@town.test")) >= 1, 60), log.read_text()[-3000:]
        assert wait_for(lambda: queue(data) == {"sent": 1}, 30), queue(data)
        assert incidents(data) == [("dry_weather_flow", "OF-12", "open")]
        stop(p)                                        # and a clean restart raises nothing again
        p = serve(cfg, log)
        assert wait_for(lambda: log.read_text().count("serving town") == 2, 30)
        assert incidents(data) == [("dry_weather_flow", "OF-12", "open")]
        assert queue(data) == {"sent": 1} and len(smtp.to("smo@town.test")) == 1
    finally:
        stop(ingest)
        if p is not None:
            stop(p)
        smtp.stop()
