"""Backup while the server runs, restore on a fresh server: nothing acknowledged is lost
and nothing is notified twice (issue 14, "Running it"). Real Mosquitto and SMTP."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.backup import BackupError, create_backup, restore_backup
from ms4watch.contract.wire import encode_readings
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.notify_peers import SmtpSink
from tests.support.waiting import wait_for

MIN = 60 * 10**9
H = 60 * MIN
SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01}]
outfalls: [{id: OF-12, name: Spook Rock Rd, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
"""


def server_for(tmp_path, data, broker, smtp, client_id):
    return build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "data_dir": data, "notify": [smtp.url], "http": {"listen": "off"},
        "broker": {"url": broker.url, "client_id": client_id},
        "delivery": {"retry_first": "1s", "retry_max": "2s", "idle": "1s"}}), report=lambda line: None)


def stored(data) -> int:
    with sqlite3.connect(f"file:{data / 'store.db'}?mode=ro", uri=True) as c:
        return c.execute("SELECT count(*) FROM samples").fetchone()[0]


@pytest.mark.mosquitto
def test_a_backup_taken_while_serving_restores_on_a_fresh_server(tmp_path, mosquitto_broker):
    (tmp_path / "sites.yaml").write_text(SITES)
    smtp = SmtpSink().start()
    data = tmp_path / "data"
    server = server_for(tmp_path, data, mosquitto_broker, smtp, "server-1").start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="loggers", protocol=mqtt.MQTTv311)
    pub.connect("127.0.0.1", mosquitto_broker.port)
    pub.loop_start()
    try:
        assert server.ingest.connected.wait(10)
        now = time.time_ns() // MIN * MIN
        rain = [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4 + 1)]
        flow = [(now - 40 * MIN + k * 5 * MIN, "flow", "flow", 4.0, "gpm", [], None) for k in range(9)]
        pub.publish("ms4/town/RG-1/LOG-RG1/readings", encode_readings("LOG-RG1", 1, rain), qos=1).wait_for_publish(5)
        pub.publish("ms4/town/OF-12/LOG-OF12/readings", encode_readings("LOG-OF12", 1, flow), qos=1).wait_for_publish(5)
        n = len(rain) + len(flow)
        assert wait_for(lambda: server.ingest.stats.stored_readings == n
                        and server.pipeline.dispatcher.queue.counts() == {"sent": 1}, 30)
        before = stored(data)
        items = create_backup(data, tmp_path / "backup")          # while the server runs
        # no engine checkpoint yet (the clock ticks every 30 s): the restored server re-feeds from the store
        assert {i.name for i in items} >= {"store.db", "incidents.db"}
        assert all(i.sqlite for i in items if i.name.endswith(".db"))
    finally:
        pub.loop_stop()
        server.stop()

    fresh = tmp_path / "fresh"
    restore_backup(tmp_path / "backup", fresh)
    assert stored(fresh) == before == n                         # every acknowledged reading
    again = server_for(tmp_path, fresh, mosquitto_broker, smtp, "server-2").start()
    try:
        incidents = again.pipeline.incidents.store.list()
        assert [(i.kind, i.subject) for i in incidents] == [("dry_weather_flow", "OF-12")]
        assert again.pipeline.dispatcher.queue.counts() == {"sent": 1}
        again.pipeline.delivery.flush(10)
        assert len(smtp.messages) == 1                          # restored, not notified again
    finally:
        again.stop()
        smtp.stop()


def test_a_damaged_backup_is_refused_before_anything_is_written(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "incidents.db") as c:
        c.execute("CREATE TABLE t (x)")
        c.execute("INSERT INTO t VALUES (1)")
    (data / "engine-state.json").write_text("{}")
    create_backup(data, tmp_path / "b")
    with pytest.raises(BackupError, match="not empty; back up into a new folder"):
        create_backup(data, tmp_path / "b")
    (tmp_path / "b" / "engine-state.json").write_text('{"x": 1}')
    with pytest.raises(BackupError, match=r"engine-state\.json: SHA-256 differs"):
        restore_backup(tmp_path / "b", tmp_path / "restored")
    assert not (tmp_path / "restored").exists()
    with pytest.raises(BackupError, match="not empty; stop the server"):
        create_backup(data, tmp_path / "c")
        restore_backup(tmp_path / "c", data)


def test_the_commands_use_the_servers_settings(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "rejected.jsonl").write_text('{"error": "x"}\n')
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'data_dir = "{data}"\n')
    run = lambda *a: subprocess.run([sys.executable, "-m", "ms4watch", "backup", *a, "--config", str(cfg)],  # noqa: E731
                                    capture_output=True, text=True, timeout=60)
    out = run("create", "--to", str(tmp_path / "b"))
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "b" / "MANIFEST.json").read_text())
    assert [f["name"] for f in manifest["files"]] == ["rejected.jsonl"]
    out = run("restore", "--from", str(tmp_path / "b"))
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "not empty" in out.stderr
    out = run("restore", "--from", str(tmp_path / "b"), "--force")
    assert out.returncode == 0, out.stderr


def test_a_backup_is_readable_by_its_owner_only_whatever_the_umask(tmp_path):
    """workbench.db holds password and token hashes: under sudo's usual umask (022) a
    backup's files were 0644 and its folders 0755. Files 0600, folders 0700, the manifest
    too, for SQLite snapshots and plain copies, at every depth."""
    import os
    import stat
    data = tmp_path / "data"
    (data / "town").mkdir(parents=True)
    for db in (data / "workbench.db", data / "town" / "incidents.db"):
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE users (name, password_hash)")
    (data / "town" / "engine-state.json").write_text("{}")
    (data / "session-secret").write_text("s3cret")
    for p in data.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'data_dir = "{data}"\n')
    out = subprocess.run([sys.executable, "-m", "ms4watch", "backup", "create", "--to", str(tmp_path / "b" / "today"),
                          "--config", str(cfg)], capture_output=True, text=True, timeout=60,
                         preexec_fn=lambda: os.umask(0o022))
    assert out.returncode == 0, out.stderr
    modes = {str(p.relative_to(tmp_path / "b")): stat.S_IMODE(p.stat().st_mode)
             for p in [tmp_path / "b" / "today", *(tmp_path / "b" / "today").rglob("*")]}
    assert modes == {"today": 0o700, "today/town": 0o700, "today/MANIFEST.json": 0o600,
                     "today/workbench.db": 0o600, "today/session-secret": 0o600,
                     "today/town/incidents.db": 0o600, "today/town/engine-state.json": 0o600}
