"""``ms4watch ingest --workers``: the broker password reaches the workers through their
environment, never their command lines (which ``ps`` shows every user). Real Mosquitto
with a password file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import psutil
import pytest

from ms4watch.contract.wire import encode_readings
from tests.support.cli import EMPTY_SETTINGS, env_without_settings, run_cli
from tests.support.sqlite_store import readings_stored
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

SECRET = "s3cret-Pw"


def locked_broker(tmp_path: Path, broker) -> None:
    passwd = tmp_path / "passwd"
    for user, pw in (("ingest", SECRET), ("logger", "lg")):
        subprocess.run(["mosquitto_passwd", *(["-c"] if user == "ingest" else []), "-b", str(passwd), user, pw],
                       check=True)
    passwd.chmod(0o644)
    broker.stop()
    broker.conf.write_text(broker.conf.read_text().replace("allow_anonymous true",
                                                           f"allow_anonymous false\npassword_file {passwd}"))
    broker.start()


def stored(store: Path) -> int:
    return readings_stored(store)


@pytest.mark.mosquitto
def test_workers_get_the_password_from_their_environment_not_their_command_line(tmp_path, mosquitto_broker):
    locked_broker(tmp_path, mosquitto_broker)
    pw = tmp_path / "mqtt-password"
    pw.write_text(SECRET + "\n")
    store = tmp_path / "store.db"
    for i in range(2):   # the workers' persistent sessions first, as a running deployment has them
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"ingest-w-{i}", clean_session=False,
                        protocol=mqtt.MQTTv311)
        c.username_pw_set("ingest", SECRET)
        c.connect("127.0.0.1", mosquitto_broker.port)
        c.subscribe("$share/ingest-w/ms4/town/+/+/readings", qos=1)
        c.loop(1)
        c.disconnect()
    proc = subprocess.Popen([sys.executable, "-m", "ms4watch", "ingest", "--municipality", "town",
                             "--broker", mosquitto_broker.url, "--username", "ingest", "--password-file", str(pw),
                             "--store", f"sqlite:///{store}", "--client-id", "ingest-w", "--workers", "2",
                             "--data-dir", str(tmp_path / "data")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # a worker once exec'd (between fork and exec a child still shows its parent's command line)
        workers = lambda: [c for c in psutil.Process(proc.pid).children() if "--shared-group" in c.cmdline()]  # noqa: E731
        assert wait_for(lambda: len(workers()) == 2, 30)
        for w in workers():
            assert not any(SECRET in part for part in w.cmdline())
            assert w.environ().get("MS4WATCH_BROKER__PASSWORD") == SECRET
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="logger", protocol=mqtt.MQTTv311)
        pub.username_pw_set("logger", "lg")
        pub.connect("127.0.0.1", mosquitto_broker.port)
        pub.loop_start()
        t = time.time_ns() // 10**9 * 10**9
        for seq in range(1, 41):
            pub.publish("ms4/town/OF-1/LOG-1/readings", encode_readings(
                "LOG-1", seq, [(t + seq * 10**9, "flow", "flow", 1.0, "gpm", [], None)]), qos=1).wait_for_publish(5)
        stop_client(pub)
        assert wait_for(lambda: stored(store) == 40, 60)     # the workers did log in
    finally:
        proc.terminate()
        proc.wait(60)


def test_a_broker_url_with_a_password_is_refused_in_one_line(tmp_path):
    out = run_cli("ingest", "--municipality", "town", "--broker", "mqtt://ingest:pw@127.0.0.1:1",
                  "--data-dir", str(tmp_path))
    assert out.returncode == 2
    # (the settings file in effect, if any, is named after the setting)
    assert re.match(r"error: broker\.url( \([^)]*\))?: a broker URL must not carry a password", out.stderr), out.stderr
    assert "pw@" not in out.stderr and "Traceback" not in out.stderr


def test_help_shows_no_password_in_a_url():
    out = run_cli("ingest", "--help", env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and "user:pass" not in out.stdout and "[USER@]HOST" in out.stdout


def test_ingest_without_a_registry_imports_nothing_of_it(tmp_path):
    """Start-up: without a registry in the settings, ingest takes no identity and imports
    neither the registry models nor YAML (~80 ms of its start-up)."""
    code = ("import sys; from ms4watch.commands.ingest import _identity; "
            "from ms4watch.commands._settings import settings_or_exit; "
            f"s = settings_or_exit(None, store='sqlite:///{tmp_path}/s.db', data_dir={str(tmp_path)!r}, "
            "broker={'url': 'mqtt://127.0.0.1:1883'}); "
            "print(_identity(s, 'town'), 'ms4watch.contract.registry' in sys.modules, 'yaml' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env_without_settings(),
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "False", "False"]


def test_ingest_with_a_registry_checks_who_sends_what(tmp_path):
    from ms4watch.commands.ingest import _identity
    from ms4watch.contract.registry import load_registry
    from ms4watch.ingest.identity import Identity
    from ms4watch.settings import load_settings
    sites = Path(__file__).resolve().parents[2] / "firmware_configs" / "demo" / "sites.yaml"
    settings = load_settings(None, store=f"sqlite:///{tmp_path}/s.db", data_dir=tmp_path, registry=sites,
                             broker={"url": "mqtt://127.0.0.1:1883"})
    assert isinstance(_identity(settings, load_registry(sites).municipality), Identity)


def test_the_ingest_command_wires_its_service_as_serve_does(tmp_path, monkeypatch):
    """``ms4watch ingest`` takes its ingest service from the composition root
    (``ms4watch.wiring.build_ingest``, which ``serve`` uses too): the ``[ingest]`` settings
    apply to it as they do to ``serve``'s."""
    import threading

    from ms4watch.ingest.service import IngestService

    started: list[IngestService] = []
    monkeypatch.setattr(IngestService, "start", lambda self, *a, **k: started.append(self) or self)
    monkeypatch.setattr(IngestService, "stop", lambda self, *a, **k: None)
    done = threading.Event()
    done.set()
    monkeypatch.setattr("ms4watch.commands.ingest.stop_on_signals", lambda: done)
    for k in [k for k in os.environ if k.startswith("MS4WATCH_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("MS4WATCH_CONFIG", str(EMPTY_SETTINGS))    # not /etc/ms4watch's, which test_deb installs meanwhile
    monkeypatch.setenv("MS4WATCH_INGEST__BATCH_WAIT", "250ms")
    r = run_cli("ingest", "--municipality", "town", "--broker", "mqtt://127.0.0.1:1",
                "--store", f"sqlite:///{tmp_path}/s.db", "--data-dir", str(tmp_path))
    assert r.returncode == 0, r.output
    [service] = started
    assert service.batch_wait_s == 0.25 and service.municipality == "town"
    assert service.client_id == "ms4watch-ingest-town"
