"""``ms4watch serve --check`` (``ms4watch/check.py``) against real peers: Mosquitto, an SMTP
server (aiosmtpd), the embedded SQLite store and InfluxDB 1.x. It reaches each, names every
problem on a line of its own, and starts nothing."""

from __future__ import annotations

import os
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from tests.support.cli import run_cli
from tests.support.notify_peers import SmtpSink
from tests.support.servers import free_port, have, influxdb1
from tests.support.towns import SITES
from tests.support.mqtt_clients import stop_client

pytestmark = pytest.mark.mosquitto


def settings_file(tmp_path, *, broker: str, notify: str, store: str | None = None, extra: str = "") -> str:
    (tmp_path / "sites.yaml").write_text(SITES)
    (tmp_path / "data").mkdir(exist_ok=True)
    toml = tmp_path / "ms4watch.toml"
    toml.write_text(f'registry = "{tmp_path}/sites.yaml"\ndata_dir = "{tmp_path}/data"\nnotify = ["{notify}"]\n'
                    + (f'store = "{store}"\n' if store else "")
                    + f'{extra}\n[broker]\nurl = "{broker}"\n[http]\nlisten = "off"\n')
    return str(toml)


def run_check(config: str):
    return run_cli("serve", "--check", "--config", config)


def retained_lock(port: int) -> list[bytes]:
    """What the broker holds on the town's server-lock topic (a started server leaves its lock)."""
    got: list[bytes] = []
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-reader", protocol=mqtt.MQTTv311)
    c.on_message = lambda _c, _u, m: got.append(m.payload)
    c.connect("127.0.0.1", port)
    c.subscribe("ms4/town/_server/lock", qos=1)
    c.loop_start()
    import time
    deadline = time.monotonic() + 1.0        # retained messages arrive right after SUBACK
    while not got and time.monotonic() < deadline:
        time.sleep(0.05)
    stop_client(c)
    return got


def test_all_good_exits_0_and_starts_nothing(tmp_path, mosquitto_broker):
    smtp = SmtpSink().start()
    try:
        config = settings_file(tmp_path, broker=mosquitto_broker.url, notify=smtp.url + "&to=smo@town.test")
        res = run_check(config)
        assert res.returncode == 0, res.output
        lines = res.output.strip().splitlines()
        assert any(line.startswith(f"ok: broker: connected to {mosquitto_broker.url}") for line in lines), res.output
        assert any(line.startswith("ok: store sqlite:") for line in lines), res.output
        assert any(line.startswith(f"ok: smtp mailto://127.0.0.1:{smtp.port}") for line in lines), res.output
        assert lines[-1] == "all checks passed; nothing was started"
        assert list((tmp_path / "data").iterdir()) == []       # no store, no lock, no queue made
        assert smtp.messages == []                              # no mail sent
        assert retained_lock(mosquitto_broker.port) == []      # no server lock taken on the broker
    finally:
        smtp.stop()


def test_each_problem_named_on_its_own_line(tmp_path, monkeypatch):
    """A wrong broker port, an unreachable store, an SMTP server that is not there and a
    world-readable token file: four lines, exit 1, nothing started."""
    token = tmp_path / "influx-token"
    token.write_text("ms4watch:secret\n")
    token.chmod(0o644)
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN_FILE", str(token))
    broker_port, store_port, smtp_port = free_port(), free_port(), free_port()
    config = settings_file(tmp_path, broker=f"mqtt://127.0.0.1:{broker_port}",
                           notify=f"mailto://127.0.0.1:{smtp_port}?to=smo@town.test",
                           store=f"influxdb1://127.0.0.1:{store_port}/ms4?timeout=2s")
    res = run_check(config)
    assert res.returncode == 1, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error: ")]
    expected = [f"error: MS4WATCH_INFLUX_TOKEN_FILE: {token} is readable or writable by everyone (mode 0644)",
                f"error: broker: cannot reach mqtt://127.0.0.1:{broker_port}: Connection refused",
                f"error: store influxdb1://127.0.0.1:{store_port}/ms4: ",
                f"error: smtp mailto://127.0.0.1:{smtp_port} (insecure): cannot reach it: Connection refused"]
    assert len(errors) == len(expected), res.output
    for line, start in zip(errors, expected):
        assert line.startswith(start), res.output
    assert "Connection refused" in errors[2] or "refused" in errors[2].lower(), res.output
    assert res.output.strip().splitlines()[-1] == "4 problems found; nothing was started"
    assert list((tmp_path / "data").iterdir()) == []


def test_a_real_influxdb_with_a_private_token_passes(tmp_path, monkeypatch, mosquitto_broker):
    if not have("influxd"):
        pytest.skip("influxd is not installed (apt-get install influxdb)")
    smtp = SmtpSink().start()
    token = tmp_path / "influx-token"
    token.write_text("ms4watch:secret\n")
    token.chmod(0o640)
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN_FILE", str(token))
    try:
        with influxdb1(tmp_path / "influx") as influx:
            influx.query('CREATE DATABASE "ms4"')
            config = settings_file(tmp_path, broker=mosquitto_broker.url, notify=smtp.url,
                                   store=influx.store_url("ms4", allow_short_retention="1"))
            res = run_check(config)
            assert res.returncode == 0, res.output
            assert f"ok: MS4WATCH_INFLUX_TOKEN_FILE: {token} (mode 0640)" in res.output.splitlines(), res.output
            assert any(line.startswith(f"ok: store influxdb1://127.0.0.1:{influx.port}/ms4")
                       for line in res.output.splitlines()), res.output
            missing = settings_file(tmp_path, broker=mosquitto_broker.url, notify=smtp.url,
                                    store=influx.store_url("absent"))
            res = run_check(missing)
            assert res.returncode == 1, res.output
            assert "database 'absent' does not exist" in res.output, res.output
    finally:
        smtp.stop()


def test_a_data_dir_the_service_user_cannot_write(tmp_path, mosquitto_broker):
    """Run as another user than the data directory's owner (as root, the test runs the check
    as ``nobody``: root may write anything), the data directory is named as not writable."""
    import shutil
    import subprocess
    import sys
    import tempfile

    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot run the check as another user")
    base = Path(tempfile.mkdtemp(prefix="ms4watch-check-"))   # outside pytest's 0700 folders: nobody can read it
    try:
        base.chmod(0o755)
        config = settings_file(base, broker=mosquitto_broker.url, notify=f"file://{base}/notifications.txt")
        for p in (base / "sites.yaml", Path(config)):
            p.chmod(0o644)
        (base / "data").chmod(0o555 if os.geteuid() != 0 else 0o755)    # root owns it: not nobody's
        as_other = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if os.geteuid() == 0 else []
        out = subprocess.run([*as_other, sys.executable, "-m", "ms4watch", "serve", "--check", "--config", config],
                             capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(base)})
        assert out.returncode == 1, out.stdout + out.stderr
        errors = [ln for ln in (out.stdout + out.stderr).splitlines() if ln.startswith("error: ")]
        assert errors[0].startswith(f"error: data_dir: {base}/data is not writable by "), errors
        store = f"error: store sqlite:///{base}/data/store.db: cannot create {base}/data/store.db"
        assert any(ln.startswith(store) for ln in errors), errors
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_broker_url_naming_another_service_s_port(tmp_path):
    """The SMTP server's port given as the broker's: named as such, within the timeout."""
    smtp = SmtpSink().start()
    try:
        config = settings_file(tmp_path, broker=f"mqtt://127.0.0.1:{smtp.port}", notify=smtp.url)
        res = run_check(config)
        assert res.returncode == 1, res.output
        [line] = [ln for ln in res.output.splitlines() if ln.startswith("error: ")]
        assert line.startswith(f"error: broker: mqtt://127.0.0.1:{smtp.port} "), res.output
    finally:
        smtp.stop()


@pytest.mark.parametrize("auth", ["both", "password"])
def test_the_broker_broker_config_makes_tls_client_certificates_and_a_password(tmp_path, auth):
    """The broker as a town runs it (``ms4watch broker-config``: TLS on its own port, client
    certificates, passwords, the ACL): ingest's credentials pass; a wrong password is named
    where the broker reads one (``--auth password``: with a certificate its name is the user)."""
    from ms4watch.brokerconf import Auth, generate
    from ms4watch.contract.devices import load_devices
    from ms4watch.contract.registry import load_registry
    from tests.brokerconf.support import town
    from tests.support.servers import Mosquitto

    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    reg, loggers = town(tmp_path / "town")
    out, port = tmp_path / "broker-etc", free_port()
    generate(load_devices(load_registry(reg), loggers), out, auth=Auth(auth), port=port, bind="127.0.0.1",
             hosts=["localhost", "127.0.0.1"])
    broker = Mosquitto(tmp_path / "mosquitto")
    broker.configure_text((out / "mosquitto.conf").read_text(), port)
    broker.start()
    client = out / "clients" / "ms4watch-ingest"
    wrong = tmp_path / "wrong-password"
    wrong.write_text("not-the-password\n")
    wrong.chmod(0o600)
    try:
        def check(password_file, ca="ca.crt"):
            config = tmp_path / "ms4watch.toml"
            config.write_text(f'registry = "{reg}"\nfirmware_configs = "{loggers}"\ndata_dir = "{tmp_path}/data"\n'
                              f'[broker]\nurl = "mqtts://localhost:{port}"\nusername = "ms4watch-ingest"\n'
                              f'password_file = "{password_file}"\nca_file = "{client}/{ca}"\n'
                              f'cert_file = "{client}/client.crt"\nkey_file = "{client}/client.key"\n'
                              '[http]\nlisten = "off"\n')
            return run_check(str(config))

        res = check(client / "password")
        assert res.returncode == 0, res.output
        assert f"ok: broker: connected to mqtts://localhost:{port} as ms4watch-ingest" in res.output, res.output
        res = check(wrong)
        if auth == "password":
            assert res.returncode == 1, res.output
            [line] = [ln for ln in res.output.splitlines() if ln.startswith("error: ")]
            assert line.startswith(f"error: broker: mqtts://localhost:{port} refused the connection: Not authorized"), \
                res.output
        else:
            assert res.returncode == 0, res.output
        res = check(client / "password", ca="client.crt")      # not the CA that signed the broker's certificate
        assert res.returncode == 1, res.output
        [line] = [ln for ln in res.output.splitlines() if ln.startswith("error: ")]
        assert line.startswith(f"error: broker: TLS with mqtts://localhost:{port} failed: CERTIFICATE_VERIFY_FAILED"), \
            res.output
    finally:
        broker.stop()


def test_an_smtp_login_the_server_refuses(tmp_path, mosquitto_broker):
    """aiosmtpd asking for a login: the right one passes, a wrong password is named (535)."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    def authenticator(_server, _session, _envelope, _mechanism, data):
        return AuthResult(success=(data.login, data.password) == (b"ms4watch", b"right"), handled=False)

    port = free_port()
    controller = Controller(object(), hostname="127.0.0.1", port=port, authenticator=authenticator,
                            auth_require_tls=False, auth_required=True)
    controller.start()
    try:
        def check(password: str):
            return run_check(settings_file(tmp_path, broker=mosquitto_broker.url,
                                           notify=f"mailto://ms4watch:{password}@127.0.0.1:{port}?to=smo@town.test"))
        res = check("right")
        assert res.returncode == 0, res.output
        assert f"ok: smtp mailto://ms4watch:***@127.0.0.1:{port} (insecure): answers, login as ms4watch accepted" \
            in res.output.splitlines(), res.output
        res = check("wrong")
        assert res.returncode == 1, res.output
        assert f"error: smtp mailto://ms4watch:***@127.0.0.1:{port} (insecure): login refused (535)" \
            in res.output.splitlines(), res.output
        assert "wrong" not in res.output                        # never the password
    finally:
        controller.stop()
