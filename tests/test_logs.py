"""``--log-format json`` (``ms4watch/logs.py``): a real ``serve`` on Mosquitto, its workbench
up, a logger's readings raising an incident and its notification, then SIGTERM — every line
it wrote, on stdout and stderr, is one JSON object with an ISO 8601 time carrying its zone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from datetime import datetime

import pytest

from tests.support.servers import free_port
from tests.support.waiting import wait_for
from tests.support.towns import SITES, publish_dry_weather_flow

pytestmark = pytest.mark.mosquitto


class Lines:
    """Every line a stream carries, gathered on a thread of its own."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))


def test_every_line_of_serve_is_one_json_object(tmp_path, mosquitto_broker):
    (tmp_path / "sites.yaml").write_text(SITES)
    env = {**os.environ, "MS4WATCH_LOG_FORMAT": "json", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "ms4watch", "serve", "--registry", str(tmp_path / "sites.yaml"),
                             "--broker", mosquitto_broker.url, "--data-dir", str(tmp_path / "data"),
                             "--http", f"127.0.0.1:{free_port()}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = Lines(proc.stdout), Lines(proc.stderr)
    try:
        assert wait_for(lambda: any("serving town" in line for line in out.lines + err.lines), timeout_s=60)
        publish_dry_weather_flow(mosquitto_broker.port)
        assert wait_for(lambda: any("✉" in line for line in out.lines + err.lines), timeout_s=60)   # notified
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    out.thread.join(10)
    err.thread.join(10)
    lines = out.lines + err.lines
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}\nall output:\n" + "\n".join(lines))
    assert proc.returncode == 0, lines
    messages = [r["message"] for r in records]
    assert any(m.startswith("serving town") for m in messages), messages
    assert any(m.startswith("[") and "dry weather flow OF-12" in m for m in messages), messages   # engine event
    assert any(m.startswith("✉ dry-weather flow at Spook Rock Rd") for m in messages), messages   # notification
    assert "stopping" in messages, messages
    for r in records:
        t = datetime.fromisoformat(r["time"])
        assert t.tzinfo is not None and "T" in r["time"], r
        assert {"level", "logger", "message"} <= set(r), r


def test_every_line_of_a_short_demo_is_one_json_object(tmp_path):
    """The demo (embedded broker, simulated loggers, engine events, notifications, its summary)
    under ``--log-format json``: no progress bar, no table, every line an object."""
    out = subprocess.run([sys.executable, "-m", "ms4watch", "--log-format", "json", "demo", "--days", "0.2",
                          "--speed", "0", "--workdir", str(tmp_path / "demo"), "--http", "off"],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = [line for line in (out.stdout + out.stderr).splitlines()]
    assert out.returncode == 0, lines
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}")
    assert any(r["message"].startswith("✉ ") for r in records)                     # notifications
    assert any(r["message"].startswith("[2026-06-") for r in records)             # engine events
    [summary] = [r for r in records if r["logger"] == "ms4watch.demo"]
    assert summary["readings_stored"] == summary["readings_published"] > 0
    assert all(datetime.fromisoformat(r["time"]).tzinfo is not None for r in records)


SAY_IN_A_FRESH_INTERPRETER = """\
import sys
from ms4watch.logs import json_logs, say, setup_logging
setup_logging(20, FORMAT)
say("an engine event")
print(json_logs(), "pythonjsonlogger.json" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("log_format, expected", [("text", "False False"), ("json", "True True")])
def test_say_asks_for_json_lines_without_importing_them_for_text_logs(log_format, expected):
    """``say`` (each engine event ``serve`` prints, on ingest's writer thread between a store
    write and its acknowledgement) tells text logs from JSON ones without importing
    python-json-logger when none of its formatters can exist; with JSON logs, its line is still one
    JSON object."""
    code = SAY_IN_A_FRESH_INTERPRETER.replace("FORMAT", repr(log_format))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    *logged, asked = out.stderr.splitlines()
    assert asked == expected, out.stderr
    if log_format == "text":
        assert out.stdout == "an engine event\n" and logged == []
    else:
        assert out.stdout == "" and [json.loads(line)["message"] for line in logged] == ["an engine event"]
