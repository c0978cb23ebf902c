"""The server's settings: flags over the environment over the config file over defaults;
secrets only from files or the environment; a mistake is one line naming the setting."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ms4watch.settings import SettingsError, load_settings
from tests.support.cli import run_cli


EMPTY_SETTINGS = Path(__file__).parent / "support" / "empty-settings.toml"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    import os
    for k in list(os.environ):
        if k.startswith("MS4WATCH_"):
            monkeypatch.delenv(k)
    # not this machine's /etc/ms4watch/ms4watch.toml, which tests/test_deb.py installs meanwhile
    monkeypatch.setattr("ms4watch.settings.SYSTEM_CONFIG", tmp_path / "no-system-settings.toml")


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "ms4watch.toml"
    p.write_text(text)
    return p


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.setattr("ms4watch.settings.SYSTEM_CONFIG", tmp_path / "absent.toml")
    s = load_settings()
    assert s.data_dir == Path("/var/lib/ms4watch")
    assert s.store_url == "sqlite:////var/lib/ms4watch/store.db"
    assert s.incidents_db == Path("/var/lib/ms4watch/incidents.db")
    assert s.broker.url == "mqtt://127.0.0.1:1883" and s.http.listen == "127.0.0.1:8000"
    assert s.delivery.retry_first == timedelta(seconds=15) and s.engine.tick == timedelta(seconds=30)


def test_flags_beat_the_environment_which_beats_the_file(tmp_path, monkeypatch):
    cfg = write(tmp_path, '''
data_dir = "/srv/file"
store = "sqlite:////srv/file/store.db"
notify = ["mailto://smtp.file.test?to=a@file.test"]
[broker]
url = "mqtt://file.test:1883"
username = "from-file"
[delivery]
retry_first = "30s"
''')
    monkeypatch.setenv("MS4WATCH_DATA_DIR", "/srv/env")
    monkeypatch.setenv("MS4WATCH_BROKER__USERNAME", "from-env")
    s = load_settings(cfg, data_dir=Path("/srv/flag"), broker={"url": None, "username": None})
    assert s.data_dir == Path("/srv/flag")                       # flag
    assert s.broker.username == "from-env"                       # environment over file
    assert s.broker.url == "mqtt://file.test:1883"               # file (the flag was not given)
    assert s.store_url == "sqlite:////srv/file/store.db"
    assert s.delivery.retry_first == timedelta(seconds=30) and s.delivery.retry_max == timedelta(minutes=5)
    assert s.notify == ["mailto://smtp.file.test?to=a@file.test"]


def test_the_config_file_comes_from_MS4WATCH_CONFIG(tmp_path, monkeypatch):
    monkeypatch.setenv("MS4WATCH_CONFIG", str(write(tmp_path, 'data_dir = "/srv/viaenv"\n')))
    assert load_settings().data_dir == Path("/srv/viaenv")


def test_the_mqtt_password_comes_from_a_file_or_the_environment_never_the_url(tmp_path, monkeypatch):
    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    assert load_settings(write(tmp_path, f'[broker]\npassword_file = "{pw}"\n')).broker.secret() == "s3cret"
    monkeypatch.setenv("MS4WATCH_BROKER__PASSWORD", "from-env")
    s = load_settings(write(tmp_path, f'[broker]\npassword_file = "{pw}"\n'))
    assert s.broker.secret() == "from-env" and "from-env" not in repr(s)
    with pytest.raises(SettingsError, match=r"^broker\.url .*must not carry a password"):
        load_settings(write(tmp_path, '[broker]\nurl = "mqtt://u:p@host:1883"\n'))
    monkeypatch.delenv("MS4WATCH_BROKER__PASSWORD")
    with pytest.raises(SettingsError, match=r"broker\.password_file: cannot read .*/nope"):
        load_settings(write(tmp_path, '[broker]\npassword_file = "/nope"\n')).broker.secret()


@pytest.mark.parametrize("given, listen", [("8000", "127.0.0.1:8000"), ("0.0.0.0:8080", "0.0.0.0:8080"),
                                           (":9000", "127.0.0.1:9000"), ("off", None)])
def test_http_listen_forms(tmp_path, given, listen):
    assert load_settings(write(tmp_path, ""), http={"listen": given}).http.listen == listen


@pytest.mark.parametrize("text, message", [
    ('[http]\nlisten = "localhost:http"\n', r"^http\.listen \(.*ms4watch\.toml\): expected HOST:PORT, PORT or 'off'"),
    ('colour = "blue"\n', r"^colour \(.*\): Extra inputs are not permitted"),
    ('[delivery]\nretry_first = "soon"\n', r"^delivery\.retry_first .*not a duration"),
    ('data_dir = \n', r"ms4watch\.toml: "),
])
def test_a_mistake_is_one_line_naming_the_setting(tmp_path, text, message):
    with pytest.raises(SettingsError, match=message) as e:
        load_settings(write(tmp_path, text))
    assert "\n" not in str(e.value)


def test_a_missing_config_file_is_named(tmp_path):
    with pytest.raises(SettingsError, match=r"absent\.toml: no such config file"):
        load_settings(tmp_path / "absent.toml")


@pytest.mark.parametrize("args, message", [
    (["--http", "eighty"], f"error: http.listen ({EMPTY_SETTINGS}): expected HOST:PORT, PORT or 'off', got 'eighty'"),
    (["--password-file", "/nonexistent/pw"], "error: broker.password_file: cannot read /nonexistent/pw"),
    ([], "error: registry: not set"),
])
def test_serve_start_up_mistakes_are_one_line_not_a_traceback(tmp_path, args, message):
    (tmp_path / "sites.yaml").write_text("municipality: town\n")
    registry = [] if message.startswith("error: registry") else ["--registry", str(tmp_path / "sites.yaml")]
    out = run_cli("serve", "--data-dir", str(tmp_path / "d"), *registry, *args,
                  env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                       # the tests' empty settings, not those of the package test_deb.py installs beside
                       "MS4WATCH_CONFIG": str(EMPTY_SETTINGS)})
    assert out.returncode == 2
    assert out.stderr.startswith(message), out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_the_sms_webhook_is_off_until_configured_and_needs_its_secret(tmp_path, monkeypatch):
    assert load_settings(write(tmp_path, "")).sms.verifier() is None
    with pytest.raises(SettingsError, match=r"sms.inbound = 'twilio' needs sms.secret_file or MS4WATCH_SMS__SECRET"):
        load_settings(write(tmp_path, '[sms]\ninbound = "twilio"\n')).sms.verifier()
    token = tmp_path / "twilio-token"
    token.write_text("abc123\n")
    v = load_settings(write(tmp_path, f'[sms]\ninbound = "twilio"\nsecret_file = "{token}"\n')).sms.verifier()
    assert v.scheme.value == "twilio" and v.secret == "abc123" and "abc123" not in repr(v)
    monkeypatch.setenv("MS4WATCH_SMS__SECRET", "k")
    assert load_settings(write(tmp_path, '[sms]\ninbound = "hmac"\n')).sms.verifier().secret == "k"
    with pytest.raises(SettingsError, match=r"^sms\.inbound .*Input should be 'off', 'twilio', 'hmac' or 'none'"):
        load_settings(write(tmp_path, '[sms]\ninbound = "yes"\n'))


@pytest.mark.parametrize("broker, error", [
    ('url = "mqtt://b:1883"\nca_file = "/x/ca.crt"', "broker (FILE): ca_file is set but url 'mqtt://b:1883' is not TLS"),
    ('url = "mqtts://b:8883"\ncert_file = "/x/c.crt"', "broker (FILE): key_file: needed with cert_file"),
])
def test_tls_files_that_cannot_work_are_refused_in_one_line(tmp_path, monkeypatch, broker, error):
    path = write(tmp_path, f"[broker]\n{broker}\n")
    with pytest.raises(SettingsError) as e:
        load_settings(path)
    assert str(e.value).replace(str(path), "FILE").startswith(error) and "\n" not in str(e.value)


def test_tls_files_are_read_at_start_and_a_wrong_one_is_named(tmp_path):
    (tmp_path / "ca.crt").write_text("not a certificate\n")
    for files, error in [({"ca_file": tmp_path / "absent.crt"}, "broker.ca_file: no such file"),
                         ({"ca_file": tmp_path / "ca.crt"}, "broker.ca_file: " + str(tmp_path / "ca.crt")),
                         ({"cert_file": tmp_path / "ca.crt", "key_file": tmp_path / "absent.key"},
                          "broker.key_file: no such file")]:
        s = load_settings(None, broker={"url": "mqtts://localhost:8883", **files})
        with pytest.raises(SettingsError, match=error.replace(".", r"\.")):
            s.broker.tls()
    assert load_settings(None, broker={"url": "mqtt://localhost:1883"}).broker.tls() is None
    assert load_settings(None, broker={"url": "mqtts://localhost:8883"}).broker.tls().verify_mode.name == "CERT_REQUIRED"


def test_the_broker_password_from_a_systemd_credential(tmp_path, monkeypatch):
    """``LoadCredential=mqtt-password:/etc/ms4watch/mqtt-password``: systemd hands the service a
    copy in ``$CREDENTIALS_DIRECTORY``; a password_file named in the settings comes first."""
    creds = tmp_path / "credentials"
    creds.mkdir()
    (creds / "mqtt-password").write_text("from-systemd\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(creds))
    assert load_settings(write(tmp_path, '[broker]\nusername = "u"\n')).broker.secret() == "from-systemd"
    pw = tmp_path / "pw"
    pw.write_text("from-file\n")
    assert load_settings(write(tmp_path, f'[broker]\npassword_file = "{pw}"\n')).broker.secret() == "from-file"
    (creds / "mqtt-password").unlink()
    assert load_settings(write(tmp_path, '[broker]\nusername = "u"\n')).broker.secret() is None
