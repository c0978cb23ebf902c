"""Two ``serve`` processes for one town (issue 21): with separate data directories on one
broker both used to store and alert (two incidents, two mails). A town's server holds a lock
on its data directory and one on the broker (``ms4watch/townlock.py``); a second server
refuses to start with one line saying who holds the town, and exits non-zero. Once the first
dies — kill -9 included — the next one starts. Real Mosquitto, real ``serve`` processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.faults import kill9, terminate
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults]
SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01}]
outfalls: [{id: OF-1, name: Mill St, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
"""


def config(tmp: Path, name: str, data: Path, broker_url: str) -> Path:
    (tmp / "sites.yaml").write_text(SITES)
    path = tmp / f"{name}.toml"
    path.write_text(f"""\
registry = "{tmp / 'sites.yaml'}"
data_dir = "{data}"
notify = ["file://{tmp / name}-notifications.txt"]

[broker]
url = "{broker_url}"
client_id = "ms4watch-{name}"

[http]
listen = "off"
""")
    return path


def command(cfg: Path) -> list[str]:
    return [sys.executable, "-m", "ms4watch", "serve", "--config", str(cfg)]


class Serve:
    def __init__(self, cfg: Path, log: Path):
        self.log = log
        self.proc = subprocess.Popen(command(cfg), stdout=log.open("ab"), stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def serving(self) -> bool:
        return "serving town" in self.log.read_text(errors="replace")


def refused(cfg: Path) -> tuple[int, list[str]]:
    """Run a second ``serve`` to its end: (exit code, the lines it wrote)."""
    done = subprocess.run(command(cfg), capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return done.returncode, [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def test_a_second_server_for_a_town_refuses_to_start(tmp_path, mosquitto_broker):
    a_data, b_data = tmp_path / "a", tmp_path / "b"
    cfg_a = config(tmp_path, "a", a_data, mosquitto_broker.url)
    cfg_b = config(tmp_path, "b", b_data, mosquitto_broker.url)
    first = Serve(cfg_a, tmp_path / "a.log")
    second = None
    try:
        assert wait_for(first.serving, 60), first.log.read_text()
        # another machine's server: its own data directory, the same broker
        code, lines = refused(cfg_b)
        errors = [line for line in lines if "error" in line.lower() or "Traceback" in line]
        assert code != 0 and len(errors) == 1, lines
        assert errors[0].startswith("error: town 'town' is already served by pid "), errors
        assert f"pid {first.proc.pid} " in errors[0] and str(a_data) in errors[0] and "broker lock" in errors[0]
        assert not (b_data / "incidents.db").exists() or "serving" not in "\n".join(lines)
        # a second server on the same machine and data directory
        code, lines = refused(cfg_a)
        errors = [line for line in lines if "error" in line.lower() or "Traceback" in line]
        assert code != 0 and len(errors) == 1 and "server.lock is locked" in errors[0], lines
        assert first.proc.poll() is None                              # the first one serves on
        # the first dies without a word (its will clears the broker lock, the kernel its flock)
        kill9(first.proc)
        second = Serve(cfg_b, tmp_path / "b.log")
        assert wait_for(second.serving, 60), second.log.read_text()
        code, lines = refused(cfg_a)                                  # and now it is the one holding the town
        assert code != 0 and any(f"pid {second.proc.pid} " in line for line in lines), lines
    finally:
        terminate(first.proc, 30)
        if second is not None:
            terminate(second.proc, 30)
