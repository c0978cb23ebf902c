"""A real Prometheus (Debian's ``prometheus``) on a free loopback port, scraping what a test
names every second, with the alert rules it is given; queried over its HTTP API."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from .servers import _stop, _wait_http, free_port


class Prometheus:
    def __init__(self, workdir: Path, scrape_configs: list[dict[str, Any]], rule_files: list[Path] = ()):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.config = self.workdir / "prometheus.yml"
        self.config.write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(p) for p in rule_files], "scrape_configs": scrape_configs}))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Prometheus":
        binary = shutil.which("prometheus") or "/usr/bin/prometheus"
        self.log = open(self.workdir / "prometheus.log", "ab")
        self.proc = subprocess.Popen(
            [binary, f"--config.file={self.config}", f"--storage.tsdb.path={self.workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"], stdout=self.log, stderr=self.log)
        _wait_http(f"{self.url}/-/ready", self.proc)
        return self

    def api(self, path: str, **params: str) -> Any:
        """``/api/v1/<path>``'s ``data`` (raises on an error status, with Prometheus' message)."""
        url = f"{self.url}/api/v1/{path}" + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                body = json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{path} {params}: {e.read().decode(errors='replace')}") from None
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result vector."""
        return self.api("query", query=expr)["result"]

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None
