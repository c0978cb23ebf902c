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
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from ms4watch.contract.broker import mosquitto_conf, mosquitto_settings


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
    """A real Mosquitto broker on a free loopback port, with persistence, restartable.

    Configured with the settings the pipeline needs (``contract/broker.py``), saving its
    persistence every second; ``settings`` replaces those (e.g. Mosquitto's own defaults).
    """

    def __init__(self, workdir: Path, port: int | None = None, settings: Mapping[str, str] | None = None):
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.conf = self.workdir / "mosquitto.conf"
        self.configure({**mosquitto_settings(), "autosave_interval": "1"} if settings is None else settings)
        if os.geteuid() == 0:
            # Started as root, mosquitto becomes user mosquitto: it must own its persistence
            # folder and be able to walk to it through pytest's 0700 temporary folders.
            shutil.chown(self.workdir, user="mosquitto", group="mosquitto")
            self.conf.chmod(0o644)
            for parent in self.workdir.parents:
                if parent == Path(tempfile.gettempdir()) or parent == Path("/"):
                    break
                parent.chmod(parent.stat().st_mode | 0o011)

    def configure(self, settings: Mapping[str, str]) -> None:
        """Write the config file (taken at the next start): the listener, persistence in the
        work folder, logging, then ``settings``."""
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            f"persistence_location {self.workdir}/\n"
            "log_dest stderr\n"
            "log_type error\nlog_type warning\n"
            + mosquitto_conf({"persistence": "true", **settings})
        )

    def configure_text(self, body: str, port: int) -> None:
        """A config of one's own (e.g. made by ``ms4watch broker-config``) listening on
        ``port``: persistence in the work folder and logging, then ``body``."""
        self.port = port
        self.conf.write_text(f"persistence_location {self.workdir}/\nlog_dest stderr\n"
                             "log_type error\nlog_type warning\nlog_type notice\n" + body)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> "Mosquitto":
        """Start it and wait until it listens. Mosquitto restarted at once on a loaded machine
        has, rarely, exited at start with code 13 (MOSQ_ERR_UNKNOWN; not reproduced in 150
        quick restarts): that start is tried once more, its log tail on stderr."""
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        for attempt in (1, 2):
            self.log = open(self.workdir / "mosquitto.log", "ab")
            self.proc = subprocess.Popen([binary, "-c", str(self.conf)], stdout=self.log, stderr=self.log)
            try:
                wait_port(self.port, proc=self.proc)
                return self
            except RuntimeError as e:
                tail = (self.workdir / "mosquitto.log").read_text(errors="replace")[-2000:]
                if attempt == 2:
                    raise RuntimeError(f"mosquitto: {e}; its log ends:\n{tail}") from None
                print(f"mosquitto: {e}; starting it again. Its log ends:\n{tail}", file=sys.stderr)
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # SIGTERM makes mosquitto save its persistence file
            try:
                self.proc.wait(60)             # a busy machine: killing it would lose what it had not saved
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


class InfluxDB1:
    """A real InfluxDB 1.x (Debian ``influxd``) on free loopback ports, data in ``workdir``.

    Restartable with the same data (``stop()`` then ``start()``), so tests can take the
    store down for a while and bring it back.
    """

    def __init__(self, workdir: Path, port: int | None = None, auth: bool = False):
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.rpc_port = free_port()
        self.auth = auth                 # ``[http] auth-enabled``: every request needs a user
        self.proc: subprocess.Popen | None = None
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.conf = self.workdir / "influxdb.conf"
        d = self.workdir
        self.conf.write_text(
            "reporting-disabled = true\n"
            f'bind-address = "127.0.0.1:{self.rpc_port}"\n'
            f'[meta]\n  dir = "{d}/meta"\n  logging-enabled = false\n'
            f'[data]\n  dir = "{d}/data"\n  wal-dir = "{d}/wal"\n  query-log-enabled = false\n'
            '  index-version = "inmem"\n'
            "[monitor]\n  store-enabled = false\n"
            "[subscriber]\n  enabled = false\n"
            "[continuous_queries]\n  enabled = false\n"
            "[retention]\n  enabled = false\n"
            f'[http]\n  bind-address = "127.0.0.1:{self.port}"\n  log-enabled = false\n'
            "  suppress-write-log = true\n"
            f"  auth-enabled = {'true' if auth else 'false'}\n"
        )

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def store_url(self, database: str, **query: str) -> str:
        q = "&".join(f"{k}={v}" for k, v in query.items())
        return f"influxdb1://127.0.0.1:{self.port}/{database}" + (f"?{q}" if q else "")

    def start(self) -> "InfluxDB1":
        binary = shutil.which("influxd") or "/usr/bin/influxd"
        self.log = open(self.workdir / "influxd.log", "ab")
        self.proc = subprocess.Popen([binary, "-config", str(self.conf)], stdout=self.log, stderr=self.log)
        wait_port(self.port, timeout_s=30, proc=self.proc)
        _wait_http(f"{self.http_url}/ping", self.proc)
        return self

    def query(self, q: str, database: str | None = None, login: tuple[str, str] | None = None) -> dict:
        """Run InfluxQL through ``/query`` and return the decoded JSON (tests read back with it);
        ``login`` (user, password) for a server with ``auth=True``."""
        import json
        import urllib.parse
        import urllib.request
        params = {"q": q, "epoch": "ns"}
        if database:
            params["db"] = database
        data = urllib.parse.urlencode(params).encode()
        request = urllib.request.Request(f"{self.http_url}/query", data=data)
        if login:
            import base64
            request.add_header("Authorization", "Basic " + base64.b64encode(":".join(login).encode()).decode())
        with urllib.request.urlopen(request, timeout=30) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None


class VictoriaMetrics:
    """A real VictoriaMetrics single-node on a free loopback port; accepts the InfluxDB v2 write API."""

    def __init__(self, workdir: Path, port: int | None = None):
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.workdir.mkdir(parents=True, exist_ok=True)

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "VictoriaMetrics":
        binary = shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics"
        self.log = open(self.workdir / "victoria-metrics.log", "ab")
        self.proc = subprocess.Popen(
            [binary, f"-httpListenAddr=127.0.0.1:{self.port}", f"-storageDataPath={self.workdir}/data",
             "-retentionPeriod=100y", "-search.disableCache", "-loggerLevel=ERROR",
             # one sample per series and timestamp, as InfluxDB keeps it (duplicates written once)
             "-dedup.minScrapeInterval=1ms"],
            stdout=self.log, stderr=self.log)
        wait_port(self.port, timeout_s=30, proc=self.proc)
        _wait_http(f"{self.http_url}/health", self.proc)
        return self

    def flush(self) -> None:
        """Make recently ingested samples visible to queries (VictoriaMetrics buffers ~1 s)."""
        import urllib.request
        urllib.request.urlopen(f"{self.http_url}/internal/force_flush", timeout=30).read()

    def export(self, match: str) -> list[dict]:
        """Raw samples through ``/api/v1/export`` (one JSON object per series and line)."""
        import json
        import urllib.parse
        import urllib.request
        data = urllib.parse.urlencode({"match[]": match, "start": "0"}).encode()
        with urllib.request.urlopen(f"{self.http_url}/api/v1/export", data=data, timeout=60) as r:
            return [json.loads(line) for line in r.read().splitlines() if line.strip()]

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None


def _wait_http(url: str, proc: subprocess.Popen, timeout_s: float = 30.0) -> None:
    import urllib.error
    import urllib.request
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout_s}s")


def _stop(proc: subprocess.Popen | None) -> None:
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def influxdb1(workdir: Path) -> Iterator[InfluxDB1]:
    s = InfluxDB1(workdir).start()
    try:
        yield s
    finally:
        s.stop()


@contextmanager
def victoria_metrics(workdir: Path) -> Iterator[VictoriaMetrics]:
    s = VictoriaMetrics(workdir).start()
    try:
        yield s
    finally:
        s.stop()
