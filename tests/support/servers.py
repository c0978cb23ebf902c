"""Real servers for tests, started on free loopback ports and stopped afterwards.

Only Debian binaries (mosquitto, influxd, victoria-metrics) are used; a test that needs one
that is missing is skipped with the reason (``.ci/run`` installs them, so CI never skips).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout_s: float = 15.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout_s}s")


class Mosquitto:
    """A real Mosquitto broker on a free loopback port, with persistence, restartable."""

    def __init__(self, workdir: Path, port: int | None = None):
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.conf = self.workdir / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {self.workdir}/\n"
            "autosave_interval 1\n"
            "max_queued_messages 0\n"
            "max_inflight_messages 100\n"
            "log_dest stderr\n"
            "log_type error\nlog_type warning\n"
        )
        if os.geteuid() == 0:
            shutil.chown(self.workdir, user="mosquitto", group="mosquitto")
            self.conf.chmod(0o644)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> "Mosquitto":
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.log = open(self.workdir / "mosquitto.log", "ab")
        self.proc = subprocess.Popen([binary, "-c", str(self.conf)], stdout=self.log, stderr=self.log)
        wait_port(self.port, proc=self.proc)
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # SIGTERM makes mosquitto save its persistence file
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def have(binary: str) -> bool:
    return shutil.which(binary) is not None or Path(f"/usr/sbin/{binary}").exists()


@contextmanager
def mosquitto(workdir: Path) -> Iterator[Mosquitto]:
    m = Mosquitto(workdir).start()
    try:
        yield m
    finally:
        m.stop()
