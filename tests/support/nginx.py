"""Debian's nginx for tests: the shipped site file (docs/examples/nginx-ms4watch.conf) with
its ports and certificate paths substituted, in a throwaway prefix (``nginx -p``, ``daemon
off``, pid, logs and temporary files in the work folder), on free loopback ports.

Each substitution must find its text in the example: an example that drifts (another
upstream, listen or certificate line) fails the test instead of being tested half."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

from .servers import free_port, have, wait_port

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "nginx-ms4watch.conf"
NGINX = "/usr/sbin/nginx"


def have_nginx() -> bool:
    return have("nginx")


def self_signed(folder: Path, name: str = "127.0.0.1") -> tuple[Path, Path]:
    """A certificate for the IP address ``name`` and its key, made with openssl."""
    crt, key = folder / "proxy.crt", folder / "proxy.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=IP:{name}", "-keyout", str(key), "-out", str(crt)],
                   check=True, capture_output=True, timeout=60)
    return crt, key


def _replace(text: str, old: str, new: str) -> str:
    if old not in text:
        raise AssertionError(f"{EXAMPLE.name} no longer holds {old!r}: the test substitutes it")
    return text.replace(old, new)


def site_for_test(text: str, *, upstream: int, https: int, http: int, cert: Path, key: Path) -> str:
    """The example's server blocks on loopback ports, with a certificate of the test's own."""
    text = _replace(text, "server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};")
    text = _replace(text, "listen 443 ssl;", f"listen 127.0.0.1:{https} ssl;")
    text = _replace(text, "listen 80;", f"listen 127.0.0.1:{http};")
    text = _replace(text, "/etc/ssl/certs/ms4.town.example.crt", str(cert))
    text = _replace(text, "/etc/ssl/private/ms4.town.example.key", str(key))
    # IPv6 listeners: a container may have no ::1
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("listen [::]"))


class Nginx:
    """nginx in the foreground in ``workdir``, serving ``site`` (the inside of ``http {}``)."""

    def __init__(self, workdir: Path, site: str):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.conf = self.workdir / "nginx.conf"
        w = self.workdir
        # As root the workers run as nobody: nginx gives it its temporary folders, and it must
        # walk to them through pytest's 0700 folders.
        user = "user nobody nogroup;\n" if os.geteuid() == 0 else ""
        if os.geteuid() == 0:
            for parent in [w, *w.parents]:
                if parent == Path(tempfile.gettempdir()) or parent == Path("/"):
                    break
                parent.chmod(parent.stat().st_mode | 0o011)
        self.conf.write_text(
            f"{user}daemon off;\nworker_processes 1;\npid {w}/nginx.pid;\nerror_log {w}/error.log info;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            f"access_log {w}/access.log;\n"
            f"client_body_temp_path {w}/body;\nproxy_temp_path {w}/proxy;\nfastcgi_temp_path {w}/fastcgi;\n"
            f"uwsgi_temp_path {w}/uwsgi;\nscgi_temp_path {w}/scgi;\n"
            f"{site}\n}}\n")
        self.proc: subprocess.Popen | None = None

    def start(self, port: int) -> "Nginx":
        with (self.workdir / "error.log").open("ab") as early:     # what it says before it reads its config
            self.proc = subprocess.Popen([NGINX, "-p", str(self.workdir), "-c", str(self.conf),
                                          "-e", str(self.workdir / "error.log")], stdout=subprocess.DEVNULL, stderr=early)
        try:
            wait_port(port, proc=self.proc)
        except (RuntimeError, TimeoutError) as e:
            self.stop()
            raise RuntimeError(f"nginx: {e}; its log ends:\n{self.log()[-2000:]}") from None
        return self

    def log(self) -> str:
        p = self.workdir / "error.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)          # graceful: finish the requests, then exit
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


__all__ = ["Nginx", "EXAMPLE", "self_signed", "site_for_test", "have_nginx", "free_port"]
