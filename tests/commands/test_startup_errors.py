"""A start-up mistake is one line naming the option, never a traceback (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli

DEMO = Path(__file__).resolve().parents[2] / "firmware_configs" / "demo"


def logger_config(tmp_path, broker: str) -> Path:
    text = (DEMO / "LOG-OF1.yaml").read_text().replace('config_version: "1"', f'config_version: "1"\nbroker: {broker}')
    path = tmp_path / "LOG-OF1.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("args, env, error", [
    (lambda t: ["edge", "--config", str(DEMO / "LOG-OF1.yaml"), "--password-file", str(t / "absent"),
                "--data-dir", str(t)], {}, "error: --password-file: cannot read {t}/absent: No such file or directory"),
    (lambda t: ["edge", "--config", str(logger_config(t, f"{{password_file: {t}/absent}}")), "--data-dir", str(t)], {},
     "error: {t}/LOG-OF1.yaml: broker.password_file: cannot read {t}/absent: No such file or directory"),
    (lambda t: ["edge", "--config", str(logger_config(t, f"{{url: 'mqtts://b:8883', ca_file: {t}/absent}}")),
                "--data-dir", str(t)], {}, "error: {t}/LOG-OF1.yaml: broker.ca_file: no such file: {t}/absent"),
    (lambda t: ["serve", "--registry", str(DEMO / "sites.yaml"), "--data-dir", str(t), "--http", "off"],
     {"MS4WATCH_FIRMWARE_CONFIGS": "{t}/absent"}, "error: firmware_configs: {t}/absent: no such folder"),
    (lambda t: ["serve", "--registry", str(DEMO / "sites.yaml"), "--data-dir", str(t), "--http", "off",
                "--broker", "mqtts://b:8883"], {"MS4WATCH_BROKER__CERT_FILE": "{t}/c.crt"},
     "error: broker: key_file: needed with cert_file"),
    (lambda t: ["serve", "--registry", str(DEMO / "sites.yaml"), "--data-dir", str(t), "--http", "off",
                "--broker", "mqtts://b:8883"], {"MS4WATCH_BROKER__CA_FILE": "{t}/absent"},
     "error: broker.ca_file: no such file: {t}/absent"),
])
def test_one_line_naming_the_option(tmp_path, monkeypatch, args, env, error):
    monkeypatch.delenv("MS4WATCH_CONFIG", raising=False)     # no settings file: the message names none
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(t=tmp_path))
    res = run_cli(*args(tmp_path))
    assert res.returncode == 2, res.output
    assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)
    assert res.output.strip().splitlines()[-1].startswith(error.format(t=tmp_path)), res.output
