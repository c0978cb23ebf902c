"""Headless Chromium driven over the DevTools protocol (websockets), for the pages we serve.

Debian's ``chromium`` with the flags this machine needs; a missing browser skips the test
with the reason (``make test`` installs it, so CI never skips).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect

from .servers import free_port

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self) -> None:
        self.port = free_port()
        self.profile = tempfile.mkdtemp(prefix="ms4watch-chromium-")
        self.proc = subprocess.Popen([chromium_binary(), *FLAGS, f"--user-data-dir={self.profile}",
                                      f"--remote-debugging-port={self.port}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=1))
                page = next(t for t in targets if t["type"] == "page")
                break
            except (OSError, StopIteration, ValueError):
                if time.monotonic() > deadline:
                    self.close()
                    raise TimeoutError("chromium did not open its DevTools port")
                time.sleep(0.2)
        self.ws = connect(page["webSocketDebuggerUrl"], max_size=None)
        self._ids = itertools.count(1)

    def call(self, method: str, **params):
        i = next(self._ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return r.get("result", {}).get("value")

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")

    def wait_for(self, condition: str, timeout_s: float = 15.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if self.js(f"!!({condition})"):
                    return
            except RuntimeError:  # the page is navigating: ask again on the new one
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"page never satisfied: {condition}")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> None:
        import base64
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
