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
BACKUP = REPO / "ms4watch" / "systemd" / "ms4watch-backup.service"
TIMER = REPO / "ms4watch" / "systemd" / "ms4watch-backup.timer"
SERVICES = [*UNITS, BACKUP]


@pytest.mark.parametrize("unit", SERVICES, ids=lambda p: p.name)
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


def _security_exposure(unit: Path, tmp_path: Path) -> tuple[float, str]:
    """``systemd-analyze security --offline=yes``'s overall exposure of the unit (0 best, 10 worst)."""
    import re
    copy = tmp_path / unit.name
    copy.write_text(unit.read_text())
    out = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(copy)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    m = re.search(rf"Overall exposure level for {re.escape(unit.name)}: ([0-9.]+)", out.stdout + out.stderr)
    if m is None:
        pytest.skip(f"systemd-analyze security --offline=yes cannot run here: {(out.stderr or out.stdout)[-300:]}")
    return float(m.group(1)), out.stdout


@pytest.mark.parametrize("unit", SERVICES, ids=lambda p: p.name)
def test_security_exposure_at_most_2(unit, tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    exposure, report = _security_exposure(unit, tmp_path)
    assert exposure <= 2.0, report


@pytest.mark.parametrize("unit", UNITS, ids=lambda p: p.name)
def test_a_configuration_error_is_not_restarted(unit):
    """Exit 2 is a bad setting or file: restarting every 5 s for ever only floods the journal."""
    assert "RestartPreventExitStatus=2" in unit.read_text().splitlines()


@pytest.mark.parametrize("unit", SERVICES, ids=lambda p: p.name)
def test_no_secret_in_the_environment(unit):
    """``Environment=`` is readable by anyone with ``systemctl show``: secrets come from files
    or ``LoadCredential=``."""
    for line in unit.read_text().splitlines():
        if line.startswith("Environment="):
            name = line.removeprefix("Environment=").split("=", 1)[0].upper()
            assert not any(w in name for w in ("PASSWORD", "TOKEN", "SECRET", "KEY")), line


def test_the_edge_unit_is_hardened():
    """It reads serial ports and GPIO lines and writes its spool and its own config, nothing else;
    its key, certificates and password stay read-only even in /etc/ms4watch."""
    lines = UNITS[1].read_text().splitlines()
    for line in ("UMask=0077", "NoNewPrivileges=yes", "ProtectSystem=strict", "DevicePolicy=closed",
                 "SystemCallFilter=@system-service adjtimex", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
                 "CapabilityBoundingSet=", "DeviceAllow=char-ttyUSB rw", "DeviceAllow=char-gpiochip rw",
                 "ReadWritePaths=/etc/ms4watch"):
        assert line in lines, line
    readonly = " ".join(x.removeprefix("ReadOnlyPaths=") for x in lines if x.startswith("ReadOnlyPaths="))
    for secret in ("mqtt.pass", "client.key", "client.crt", "ca.crt"):
        assert f"-/etc/ms4watch/{secret}" in readonly.split(), secret


def test_the_credentials_the_serve_unit_shows_verify(tmp_path):
    """The ``LoadCredential=`` lines the unit shows (commented: a missing file would stop the
    start) are valid when a town adds them with ``systemctl edit``."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    unit = UNITS[0]
    shown = [line.strip("# ").strip() for line in unit.read_text().splitlines() if "LoadCredential=" in line]
    assert {s.split(":")[0] for s in shown} == {"LoadCredential=mqtt-password", "LoadCredential=influx-token"}
    exe = Path(sys.executable).parent / "ms4watch"
    text = unit.read_text().replace("/opt/ms4watch/venv/bin/ms4watch", str(exe))
    copy = tmp_path / unit.name
    copy.write_text(text.replace("[Install]", "\n".join(shown) + "\n\n[Install]"))
    out = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, cwd=tmp_path)
    problems = [line for line in (out.stdout + out.stderr).splitlines() if unit.name in line]
    assert out.returncode == 0 and not problems, out.stdout + out.stderr


def test_the_edge_unit_lets_the_agent_ask_whether_the_clock_is_synchronised():
    """``edge/clock.py`` asks the kernel with ``adjtimex`` (read-only) to flag readings taken
    before NTP synchronised the clock. ``@system-service`` lacks it and ``ProtectClock=`` denies
    it, which would make every reading's clock state unknown; with no capabilities the agent
    still cannot set the time. (Checked on the file: no systemd runs the unit in this container.)"""
    lines = UNITS[1].read_text().splitlines()
    allowed = [x.removeprefix("SystemCallFilter=").split() for x in lines
               if x.startswith("SystemCallFilter=") and not x.startswith("SystemCallFilter=~")]
    assert any("adjtimex" in a for a in allowed), allowed
    assert "ProtectClock=yes" not in lines
    assert "CapabilityBoundingSet=" in lines        # so adjtimex can read, never set


def test_the_backup_timer_verifies_with_its_service(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    exe = Path(sys.executable).parent / "ms4watch"
    for unit in (BACKUP, TIMER):
        (tmp_path / unit.name).write_text(unit.read_text().replace("/opt/ms4watch/venv/bin/ms4watch", str(exe)))
    out = subprocess.run(["systemd-analyze", "verify", str(tmp_path / TIMER.name), str(tmp_path / BACKUP.name)],
                         capture_output=True, text=True, cwd=tmp_path)
    problems = [line for line in (out.stdout + out.stderr).splitlines() if "ms4watch-backup" in line]
    assert out.returncode == 0 and not problems, out.stdout + out.stderr


def test_the_backup_runs_daily_as_the_service_user_with_the_shared_settings():
    """A day missed while the machine was off is caught up at boot (Persistent=); the backup
    takes the settings folder and the broker's CA (its key needs root: not here) and keeps two
    weeks; it needs no network and writes only its backup folder, made for it at each start."""
    timer = TIMER.read_text().splitlines()
    for line in ("OnCalendar=daily", "Persistent=yes", "Unit=ms4watch-backup.service", "WantedBy=timers.target"):
        assert line in timer, line
    lines = BACKUP.read_text().splitlines()
    for line in ("Type=oneshot", "User=ms4watch", "Group=ms4watch", "UMask=0077", "ProtectSystem=strict",
                 "NoNewPrivileges=yes", "PrivateNetwork=yes", "CapabilityBoundingSet=",
                 "Environment=MS4WATCH_CONFIG=/etc/ms4watch/ms4watch.toml",
                 "ReadWritePaths=/var/backups/ms4watch",
                 "ReadWritePaths=/var/lib/ms4watch",          # SQLite's -shm and -wal of a WAL database
                 "ExecStartPre=+/usr/bin/install -d -o ms4watch -g ms4watch -m 0700 /var/backups/ms4watch",
                 "ExecStart=/opt/ms4watch/venv/bin/ms4watch backup create --into /var/backups/ms4watch --keep 14"):
        assert line in lines, line
    assert not any(x.startswith(("Restart=", "StateDirectory=")) for x in lines)   # it only reads the data


def test_the_backup_units_are_shipped_with_the_package():
    import tomllib
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "ms4watch.systemd" in setuptools["packages"]          # the folder of unit files, shipped as data
    data = setuptools["package-data"]["ms4watch.systemd"]
    assert "*.service" in data and "*.timer" in data
