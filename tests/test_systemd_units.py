"""The systemd units we ship pass ``systemd-analyze verify`` (with the program path pointed
at this venv's ``ms4watch``, since /opt/ms4watch is where an install puts it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UNITS = [REPO / "ms4watch" / "systemd" / "ms4watch-serve.service", REPO / "edge" / "systemd" / "ms4watch-edge.service"]


@pytest.mark.parametrize("unit", UNITS, ids=lambda p: p.name)
def test_unit_verifies(unit, tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    exe = Path(sys.executable).parent / "ms4watch"
    copy = tmp_path / unit.name
    copy.write_text(unit.read_text().replace("/opt/ms4watch/venv/bin/ms4watch", str(exe)))
    out = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, cwd=tmp_path)
    problems = [line for line in (out.stdout + out.stderr).splitlines() if unit.name in line]
    assert out.returncode == 0 and not problems, out.stdout + out.stderr


def test_the_server_unit_is_hardened_and_uses_the_shared_settings():
    text = UNITS[0].read_text()
    for line in ("User=ms4watch", "ProtectSystem=strict", "NoNewPrivileges=yes", "StateDirectory=ms4watch",
                 "Environment=MS4WATCH_CONFIG=/etc/ms4watch/ms4watch.toml", "ExecStart=/opt/ms4watch/venv/bin/ms4watch serve",
                 "CapabilityBoundingSet=", "Restart=always"):
        assert line in text.splitlines(), line
