"""A bad value on a command line or in the settings is a :class:`ConfigError` (under the root
error ``Ms4Error``) from the parser that reads it, so each command catches ``Ms4Error`` (and
``OSError`` where it opens files) and says one line, exit 2 — never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from ms4watch.contract.errors import ConfigError, Ms4Error
from tests.support.cli import run_cli

SITES = Path(__file__).resolve().parents[2] / "firmware_configs" / "demo" / "sites.yaml"


def test_the_value_parsers_raise_config_errors():
    from ms4watch.alerts.notifiers.urls import build_channels
    from ms4watch.contract.mqtt import BrokerURL
    from ms4watch.contract.timeutil import parse_time
    from ms4watch.ingest.stores import build_store

    for bad in (lambda: parse_time("2026-06-01T09:00"), lambda: parse_time("June 1st"),
                lambda: BrokerURL.parse("http://broker:1883"), lambda: build_store("postgres://db/ms4"),
                lambda: build_channels(["not-a-url"], file_path=Path("/nonexistent/n.txt"))):
        with pytest.raises(ConfigError) as e:
            bad()
        assert isinstance(e.value, Ms4Error) and isinstance(e.value, ValueError)   # a ValueError still, for callers


def _one_line_exit_2(args: list[str]) -> str:
    r = run_cli(*args)
    assert r.returncode == 2, (r.output, r.exception)
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    return lines[0]


@pytest.fixture
def no_settings(monkeypatch, tmp_path):
    for k in [k for k in __import__("os").environ if k.startswith("MS4WATCH_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("MS4WATCH_CONFIG", str(tmp_path / "empty.toml"))   # not this machine's /etc/ms4watch


def test_replay_with_a_time_without_its_offset(tmp_path, no_settings):
    (tmp_path / "r.csv").write_text("time,station,quantity,value,unit\n")
    line = _one_line_exit_2(["replay", "--registry", str(SITES), "--readings", str(tmp_path / "r.csv"),
                             "--out", str(tmp_path / "e.jsonl"), "--now", "2026-06-01T09:00", "--no-progress"])
    assert "UTC offset" in line


def test_storms_with_a_bad_duration_and_a_bad_format(tmp_path, no_settings):
    (tmp_path / "r.csv").write_text("time,station,quantity,value,unit\n")
    assert "--inter-event" in _one_line_exit_2(["storms", str(tmp_path / "r.csv"), "--inter-event", "six hours"])
    assert "--format" in _one_line_exit_2(["storms", str(tmp_path / "r.csv"), "--format", "excel"])


def test_import_with_a_bad_store_url(tmp_path, no_settings):
    (tmp_path / "r.csv").write_text("time,station,quantity,value,unit\n")
    line = _one_line_exit_2(["import", str(tmp_path / "r.csv"), "--registry", str(SITES), "--store", "postgres://db/x"])
    assert "postgres" in line


def test_ingest_with_a_bad_store_url(tmp_path, no_settings):
    line = _one_line_exit_2(["ingest", "--municipality", "town", "--store", "postgres://db/x",
                             "--data-dir", str(tmp_path)])
    assert "postgres" in line


def test_device_with_a_bad_broker_url(tmp_path, no_settings):
    line = _one_line_exit_2(["device", "cmd", "LOG-1", "status", "--municipality", "town",
                             "--broker", "http://broker:1883"])
    assert "mqtt://" in line


def test_serve_with_a_bad_notify_url(tmp_path, no_settings):
    line = _one_line_exit_2(["serve", "--registry", str(SITES), "--data-dir", str(tmp_path / "data"),
                             "--http", "off", "--notify", "not-a-url"])
    assert "--notify" in line
