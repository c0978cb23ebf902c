"""A backlog acknowledged just before a crash (issue 21): a logger's 26-hour-old backlog is
stored and acknowledged, then the process dies (kill -9) before the alert engine evaluated it.
On restart the engine is re-fed with what the store *received* after its last checkpoint,
however old the readings' own times: the alert is raised once and its mail delivered once.

The crash window is made certain as in ``test_server_crash.py``: the backlog is stored by
``ms4watch ingest`` alone (as if ``serve`` had died right after acknowledging it), under the
server's client id, then that process is killed -9; a probe on the server's MQTT session
checks that nothing of the backlog waits in the broker, so only the re-feed can raise it.
Both stores: SQLite, and a real InfluxDB 1.x behind its spool.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.broker import mosquitto_settings
from tests.support.faults import ALLOWED_NOTICES, H, MIN, kill9, rig
from tests.support.servers import have
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults]
BACKLOG_AGE = 26 * H


def backlog(rain, flow) -> None:
    """The loggers' backlog, all of it 26 h old: three dry days at the gauge, then an hour of
    flow below the floor and 35 min above it (one dry-weather-flow episode)."""
    end = time.time_ns() // MIN * MIN - BACKLOG_AGE
    rain.take([(end - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in") for k in range(80 * 4 + 1)])
    flow.take([(end - 95 * MIN + k * MIN, "flow", "flow", 0.3, "gpm") for k in range(60)]
              + [(end - 35 * MIN + k * 5 * MIN, "flow", "flow", 9.0 + k, "gpm") for k in range(8)])


def nothing_waiting(broker_port: int, client_id: str) -> list[str]:
    """The topics of messages the broker still holds for ``client_id``'s session (it delivers
    them in order, before the probe published last); none acknowledged here but the probe."""
    got: list[str] = []
    probe = "ms4/town/PROBE/PROBE/events"
    done = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False,
                    protocol=mqtt.MQTTv311, manual_ack=True)

    def on_message(client, _userdata, msg) -> None:
        if msg.topic == probe:
            client.ack(msg.mid, msg.qos)
            done.set()
        else:
            got.append(msg.topic)

    c.on_message = on_message
    c.on_connect = lambda client, *_: client.publish(probe, b"{}", qos=1)
    c.connect("127.0.0.1", broker_port)
    c.loop_start()
    try:
        assert done.wait(15), "the probe never came back"
    finally:
        c.disconnect()
        c.loop_stop()
    return got


def all_acknowledged(broker_log: Path, client_id: str) -> bool:
    """The broker (``log_type debug``) has had a PUBACK from ``client_id`` for every QoS 1 message it sent it."""
    text = broker_log.read_text(errors="replace")
    sent = len(re.findall(rf"Sending PUBLISH to {re.escape(client_id)} \(d0, q1,", text))
    return sent > 0 and text.count(f"Received PUBACK from {client_id} ") == sent


@pytest.mark.parametrize("store", ["sqlite", "influxdb"])
def test_a_backlog_acknowledged_just_before_a_kill_9_is_alerted_after_the_restart(tmp_path, store):
    if not have("mosquitto") or (store == "influxdb" and not have("influxd")):
        pytest.skip("mosquitto (and influxd) are needed")
    # the broker's log says what it sent the server's client and what came back
    town = rig(tmp_path, influx=store == "influxdb",
               broker_settings={**mosquitto_settings(), "autosave_interval": "1", "log_type": "debug"})
    ingest = None
    try:
        if town.influx is not None:
            town.influx.query("CREATE DATABASE ms4")
        town.serve()
        town.stop_serve()                     # a clean stop: the engine checkpointed now
        cfg = town.config()
        store_url = town.influx.store_url("ms4") if town.influx is not None else f"sqlite:///{town.data / 'store.db'}"
        ingest_log = tmp_path / "ingest.log"
        ingest = subprocess.Popen(
            [sys.executable, "-m", "ms4watch", "ingest", "--config", str(cfg), "--store", store_url,
             "--spool-dir", str(town.data)],
            stdout=ingest_log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert wait_for(lambda: "ingest: town" in ingest_log.read_text(errors="replace"), 30), ingest_log.read_text()
        backlog(town.logger("LOG-RG1", "RG-1"), town.logger("LOG-OF1", "OF-1"))
        assert wait_for(town.all_stored, 60, poll_s=0.2), f"{town.counts()}\n{ingest_log.read_text()[-2000:]}"
        assert wait_for(lambda: all(lg.spool.depth() == 0 for lg in town.loggers), 30), town.edge_state()
        # stored is not yet acknowledged: ingest's PUBACKs follow its writes (a whole-suite run killed it
        # with two of them unsent, and the broker still held those messages for the server)
        assert wait_for(lambda: all_acknowledged(town.broker.workdir / "mosquitto.log", "ms4watch-server"), 30)
        kill9(ingest)                         # acknowledged and stored, never evaluated
        assert nothing_waiting(town.broker.port, "ms4watch-server") == []   # only the re-feed can raise it
        assert town.alerts() == []
        town.serve()
        # the backlog is 26 h old and nothing newer comes: on its wall clock the restarted server
        # finds the stations stale at once (true, and held for the digest); the alert is the flow
        town.assert_all_accounted_for(timeout_s=60, notices=ALLOWED_NOTICES | {"stale_station"})
        town.stop_serve()                     # and a restart raises and sends nothing again
        before, queued = town.counts(), town.queue()
        town.serve()                          # re-fed before "serving": anything raised twice is there now,
        after = town.counts()                 # and the mail it owes is a row of the queue (none new: none owed)
        assert (after.alerts, after.notifications, town.queue()) == (before.alerts, before.notifications, queued), \
            (after, town.queue(), queued)
    finally:
        if ingest is not None and ingest.poll() is None:
            kill9(ingest)
        town.close()
