"""Backup while the server runs, restore on a fresh server: nothing acknowledged is lost
and nothing is notified twice (issue 14, "Running it"). Real Mosquitto and SMTP."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.backup import BackupError, create_backup, restore_backup
from ms4watch.contract.wire import encode_readings
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.cli import ENTRY_POINT, run_cli
from tests.support.notify_peers import SmtpSink
from tests.support.waiting import wait_for
from tests.support.towns import SITES
from tests.support.mqtt_clients import stop_client

MIN = 60 * 10**9
H = 60 * MIN


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
        stop_client(pub)
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
    (tmp_path / "b" / "data" / "engine-state.json").write_text('{"x": 1}')
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
    run = lambda *a: run_cli("backup", *a, "--config", str(cfg), "--data-only")  # noqa: E731
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
    out = subprocess.run([*ENTRY_POINT, "backup", "create", "--to", str(tmp_path / "b" / "today"),
                          "--config", str(cfg), "--data-only"], capture_output=True, text=True, timeout=60,
                         preexec_fn=lambda: os.umask(0o022))   # the umask is the process's: a process of its own
    assert out.returncode == 0, out.stderr
    modes = {str(p.relative_to(tmp_path / "b")): stat.S_IMODE(p.stat().st_mode)
             for p in [tmp_path / "b" / "today", *(tmp_path / "b" / "today").rglob("*")]}
    assert modes == {"today": 0o700, "today/data": 0o700, "today/data/town": 0o700, "today/MANIFEST.json": 0o600,
                     "today/data/workbench.db": 0o600, "today/data/session-secret": 0o600,
                     "today/data/town/incidents.db": 0o600, "today/data/town/engine-state.json": 0o600}


# --- a whole server: /etc/ms4watch and the broker's CA beside the data (issue 26) ---------

def _server_files(root):
    """A server's files under ``root``: data, /etc/ms4watch, broker-config's folder."""
    import os
    data, etc, broker = root / "var/lib/ms4watch", root / "etc/ms4watch", root / "etc/mosquitto/ms4watch"
    (data / "photos" / "ab").mkdir(parents=True)
    with sqlite3.connect(data / "incidents.db") as c:
        c.execute("CREATE TABLE incidents (id INTEGER PRIMARY KEY, kind TEXT)")
        c.executemany("INSERT INTO incidents (kind) VALUES (?)", [(f"kind {i}",) for i in range(500)])
        c.execute("CREATE INDEX incidents_kind ON incidents (kind)")
    (data / "photos" / "ab" / "abcd").write_bytes(b"\xff\xd8photo")
    (etc / "loggers").mkdir(parents=True)
    (etc / "ms4watch.toml").write_text(f'data_dir = "{data}"\nregistry = "{etc}/sites.yaml"\n')
    (etc / "sites.yaml").write_text(SITES)
    (etc / "loggers" / "LOG-OF12.yaml").write_text("device: LOG-OF12\nstation: OF-12\n")
    (etc / "mqtt-password").write_text("hunter2")
    (etc / "mqtt-ca.crt").write_text("CA CERT")
    for p, mode in ((etc / "ms4watch.toml", 0o640), (etc / "sites.yaml", 0o640), (etc / "mqtt-password", 0o640),
                    (etc / "mqtt-ca.crt", 0o644), (etc / "loggers" / "LOG-OF12.yaml", 0o640)):
        p.chmod(mode)
    broker.mkdir(parents=True)
    for name, text, mode in (("ca.crt", "CA CERT", 0o644), ("ca.key", "CA KEY", 0o600), ("crl.pem", "CRL", 0o644),
                             ("revoked.json", "[17]", 0o600), ("passwd", "x:$7$...", 0o640), ("server.key", "K", 0o640)):
        (broker / name).write_text(text)
        os.chmod(broker / name, mode)
    return data, etc, broker


def _cli(*args):
    """``ms4watch backup`` in process (tests/support/cli.py); the umask test runs the real
    entry point as a separate process."""
    return run_cli("backup", *args)


def test_a_backup_holds_the_settings_and_the_brokers_ca_its_key_only_when_asked(tmp_path):
    data, etc, broker = _server_files(tmp_path / "old")
    dirs = ("--config", etc / "ms4watch.toml", "--config-dir", etc, "--broker-dir", broker)
    out = _cli("create", "--to", tmp_path / "b", *dirs)
    assert out.returncode == 0, out.stderr
    names = {(f["part"], f["name"]) for f in json.loads((tmp_path / "b" / "MANIFEST.json").read_text())["files"]}
    assert names == {("data", "incidents.db"), ("data", "photos/ab/abcd"),
                     ("config", "ms4watch.toml"), ("config", "sites.yaml"), ("config", "loggers/LOG-OF12.yaml"),
                     ("config", "mqtt-password"), ("config", "mqtt-ca.crt"),
                     ("broker", "ca.crt"), ("broker", "crl.pem")}        # no CA key (nor its revoked serials), no passwd
    assert "ca.key: left out (--include-ca-key to include it)" in out.stdout, out.stdout
    out = _cli("create", "--to", tmp_path / "k", *dirs, "--include-ca-key")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "k" / "broker" / "ca.key").read_text() == "CA KEY"
    assert (tmp_path / "k" / "broker" / "revoked.json").read_text() == "[17]"      # broker-config needs both
    assert oct((tmp_path / "k" / "broker" / "ca.key").stat().st_mode & 0o777) == oct(0o600)
    (broker / "ca.key").unlink()
    out = _cli("create", "--to", tmp_path / "n", *dirs, "--include-ca-key")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "ca.key" in out.stderr, out.stderr


def test_verify_names_each_problem(tmp_path):
    data, etc, broker = _server_files(tmp_path / "old")
    b = tmp_path / "b"
    create_backup(data, b, config_dir=etc, broker_dir=broker)
    ok = _cli("verify", b)
    assert ok.returncode == 0 and ok.stdout.startswith("ok: 9 files"), ok.stdout + ok.stderr
    # a database damaged inside, its SHA-256 brought in line with the manifest: only SQLite sees it
    db = b / "data" / "incidents.db"
    raw = bytearray(db.read_bytes())
    raw[4096 * 2 + 100: 4096 * 2 + 400] = b"\x07" * 300
    db.write_bytes(bytes(raw))
    manifest = json.loads((b / "MANIFEST.json").read_text())
    import hashlib
    for f in manifest["files"]:
        if f["name"] == "incidents.db":
            f["sha256"] = hashlib.sha256(bytes(raw)).hexdigest()
    (b / "MANIFEST.json").write_text(json.dumps(manifest))
    (b / "config" / "sites.yaml").write_text("changed")
    (b / "broker" / "crl.pem").unlink()
    (b / "config" / "stray.txt").write_text("?")
    out = _cli("verify", b)
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 5 and lines[-1] == "4 problems found", out.stderr
    assert any("data/incidents.db" in x and "integrity" in x for x in lines), lines
    assert any("config/sites.yaml" in x and "SHA-256 differs" in x for x in lines), lines
    assert any("broker/crl.pem" in x and "missing" in x for x in lines), lines
    assert any("config/stray.txt" in x and "not in the manifest" in x for x in lines), lines
    assert _cli("verify", tmp_path / "nothing").returncode == 1


def test_restore_on_a_fresh_server_creates_what_is_missing_with_owner_and_modes(tmp_path):
    """A scratch root stands for the fresh server: no /var/lib/ms4watch, no /etc/ms4watch, no
    broker folder. The service user is ``nobody`` here (``ms4watch`` on a server)."""
    import grp
    import os
    import pwd
    import stat
    if os.geteuid() != 0:
        pytest.skip("giving files to the service user needs root")
    data, etc, broker = _server_files(tmp_path / "old")
    create_backup(data, tmp_path / "b", config_dir=etc, broker_dir=broker, include_ca_key=True)
    new = tmp_path / "new"
    out = _cli("restore", "--from", tmp_path / "b", "--data-dir", new / "var/lib/ms4watch",
               "--config-dir", new / "etc/ms4watch", "--broker-dir", new / "etc/mosquitto/ms4watch", "--owner", "nobody")
    assert out.returncode == 0, out.stderr
    gid = pwd.getpwnam("nobody").pw_gid
    group = grp.getgrgid(gid).gr_name

    def who(p):
        s = p.stat()
        return pwd.getpwuid(s.st_uid).pw_name, grp.getgrgid(s.st_gid).gr_name, oct(stat.S_IMODE(s.st_mode))

    d, e, k = new / "var/lib/ms4watch", new / "etc/ms4watch", new / "etc/mosquitto/ms4watch"
    assert who(d) == ("nobody", group, oct(0o750))
    assert who(d / "incidents.db") == ("nobody", group, oct(0o600))
    assert who(d / "photos") == who(d / "photos/ab") == ("nobody", group, oct(0o700))
    assert who(e) == who(e / "loggers") == ("root", group, oct(0o750))
    assert who(e / "mqtt-password") == who(e / "ms4watch.toml") == ("root", group, oct(0o640))
    assert who(e / "mqtt-ca.crt") == ("root", group, oct(0o644))
    assert who(k) == ("root", "root", oct(0o755))
    assert who(k / "ca.key") == who(k / "revoked.json") == ("root", "root", oct(0o600))
    assert who(k / "ca.crt") == who(k / "crl.pem") == ("root", "root", oct(0o644))
    assert (e / "loggers/LOG-OF12.yaml").read_text() == "device: LOG-OF12\nstation: OF-12\n"
    with sqlite3.connect(d / "incidents.db") as c:
        assert c.execute("SELECT count(*) FROM incidents").fetchone()[0] == 500
    assert not (k / "passwd").exists()
    # again: everything is there now, so it is refused without --force
    again = _cli("restore", "--from", tmp_path / "b", "--data-dir", d, "--config-dir", e, "--broker-dir", k,
                 "--owner", "nobody")
    assert again.returncode == 2 and "not empty" in again.stderr and again.stderr.count("\n") == 1


def _as_nobody(fn):
    """``fn()`` in a forked child running as nobody (everything it needs imported first: the
    interpreter lies under root's 0700 home). Returns what it returned."""
    import os
    import pickle
    import pwd
    nobody = pwd.getpwnam("nobody")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            result = fn()
        except BaseException as e:                  # noqa: BLE001 - handed to the parent
            result = e
        with os.fdopen(w, "wb") as f:
            pickle.dump(result, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        got = pickle.loads(f.read())
    os.waitpid(pid, 0)
    return got


def test_as_the_service_user_a_folder_it_may_not_write_is_one_line_not_a_traceback(tmp_path):
    import os
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")
    from typer.testing import CliRunner

    import ms4watch.backup  # noqa: F401 - imported before the child drops root
    import ms4watch.settings  # noqa: F401
    from ms4watch.cli import build_app
    app = build_app("backup")
    data = tmp_path / "data"
    data.mkdir()
    (data / "rejected.jsonl").write_text("{}\n")
    for p in (tmp_path, *tmp_path.parents):
        if str(p) in ("/", "/tmp"):
            break
        p.chmod(p.stat().st_mode | 0o005)
    data.chmod(0o755)
    (data / "rejected.jsonl").chmod(0o644)
    backups = tmp_path / "backups"
    backups.mkdir(mode=0o755)                               # root's, as /var/backups is
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'data_dir = "{data}"\n')
    cfg.chmod(0o644)

    def run():
        res = CliRunner().invoke(app, ["backup", "create", "--to", str(backups / "2026-12-01"), "--config", str(cfg),
                                       "--data-only"])
        return res.exit_code, res.stderr, res.stdout, repr(res.exception)

    code, err, out, exc = _as_nobody(run)
    assert code == 2 and "Traceback" not in err + out, (err, out, exc)
    assert err.count("\n") == 1 and err.startswith("error: ") and f"{backups / '2026-12-01'}" in err, err
    assert "Permission denied" in err and "nobody" in err, err

    # a secret of the settings folder the service user may not read (root's, 0600)
    etc = tmp_path / "etc"
    etc.mkdir(mode=0o755)
    (etc / "influx-token").write_text("u:p")
    (etc / "influx-token").chmod(0o600)
    mine = tmp_path / "mine"
    mine.mkdir()
    os.chown(mine, 65534, 65534)

    def run_config():
        res = CliRunner().invoke(app, ["backup", "create", "--to", str(mine / "b"), "--config", str(cfg),
                                       "--config-dir", str(etc), "--broker-dir", str(tmp_path)])
        return res.exit_code, res.stderr

    code, err = _as_nobody(run_config)
    assert code == 2 and err == f"error: {tmp_path}/ca.crt: no such file (the folder `ms4watch broker-config --out` made)\n"

    def run_secret():
        res = CliRunner().invoke(app, ["backup", "create", "--to", str(mine / "b"), "--config", str(cfg),
                                       "--config-dir", str(etc)])
        return res.exit_code, res.stderr

    code, err = _as_nobody(run_secret)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{etc / 'influx-token'}: Permission denied (running as user nobody, who may not read it)" in err, err

    # what the daily timer does: the broker's CA key and revoked serials are root's and left out
    (etc / "influx-token").chmod(0o644)
    _, _, broker = _server_files(tmp_path / "server")
    broker.chmod(0o755)

    def run_daily():
        res = CliRunner().invoke(app, ["backup", "create", "--into", str(mine), "--keep", "3", "--config", str(cfg),
                                       "--config-dir", str(etc), "--broker-dir", str(broker)])
        return res.exit_code, res.stdout + res.stderr

    code, out = _as_nobody(run_daily)
    assert code == 0, out
    [made] = [p for p in mine.iterdir() if p.name != "b"]
    assert sorted(p.name for p in (made / "broker").iterdir()) == ["ca.crt", "crl.pem"]


def test_a_backup_of_the_first_format_still_restores(tmp_path):
    """Before issue 26 a backup held the data directory alone, its files at the top."""
    import hashlib
    b = tmp_path / "old-backup"
    b.mkdir()
    (b / "engine-state.json").write_text("{}")
    (b / "MANIFEST.json").write_text(json.dumps({"format": "ms4watch.backup/1", "created": 0, "source": "/var/lib/ms4watch",
                                                 "files": [{"name": "engine-state.json", "bytes": 2, "sqlite": False,
                                                            "sha256": hashlib.sha256(b"{}").hexdigest()}]}))
    assert _cli("verify", b).returncode == 0
    restore_backup(b, tmp_path / "data", config_dir=tmp_path / "etc")
    assert (tmp_path / "data" / "engine-state.json").read_text() == "{}" and not (tmp_path / "etc").exists()


def test_into_makes_a_dated_folder_and_keep_removes_the_oldest_backups_only(tmp_path):
    """What the daily timer runs: ``--into /var/backups/ms4watch --keep 14``."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "rejected.jsonl").write_text("{}\n")
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'data_dir = "{data}"\n')
    into = tmp_path / "backups"
    for old in ("2026-11-28T031500Z", "2026-11-29T031500Z", "2026-11-30T031500Z"):
        (into / old).mkdir(parents=True)
        (into / old / "MANIFEST.json").write_text("{}")
    (into / "2026-11-01T000000Z-by-hand").mkdir()            # not one of ours: kept
    (into / "2026-11-27T031500Z").mkdir()                     # no manifest (a backup that failed half-way): kept
    out = _cli("create", "--into", into, "--keep", "2", "--config", cfg, "--data-only")
    assert out.returncode == 0, out.stderr
    left = sorted(p.name for p in into.iterdir())
    new = left[-1]
    assert left == ["2026-11-01T000000Z-by-hand", "2026-11-27T031500Z", "2026-11-30T031500Z", new], left
    assert new.startswith(time.strftime("%Y-%m-%dT", time.gmtime())) and new.endswith("Z") and len(new) == 18
    assert _cli("verify", into / new).returncode == 0
    assert f"removed {into / '2026-11-28T031500Z'}" in out.stdout and f"removed {into / '2026-11-29T031500Z'}" in out.stdout
    both = _cli("create", "--into", into, "--to", tmp_path / "x", "--config", cfg, "--data-only")
    assert both.returncode == 2 and "--to or --into" in both.stderr
