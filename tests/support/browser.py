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
        self.events: list[dict] = []   # what the page said meanwhile (console, exceptions, log)
        self.call("Runtime.enable")
        self.call("Log.enable")

    def call(self, method: str, **params):
        return self.call_in(None, method, **params)

    def call_in(self, session: str | None, method: str, **params):
        """A DevTools command to the browser, or to an attached target's ``session`` (a service worker)."""
        i = next(self._ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params,
                                 **({"sessionId": session} if session else {})}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if "method" in msg:
                self.events.append(msg)
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

    def wait_event(self, method: str, timeout_s: float = 15.0) -> dict:
        """The next event ``method`` (``Page.loadEventFired`` after ``Page.enable``), taken out
        of what the page said meanwhile if it came already."""
        for e in self.events:
            if e["method"] == method:
                self.events.remove(e)
                return e
        deadline = time.monotonic() + timeout_s
        while True:
            msg = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)

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

    def screenshot(self, path: Path, full_page: bool = True) -> None:
        import base64
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png",
                                                    captureBeyondViewport=full_page)["data"]))

    def viewport(self, width: int, height: int, *, mobile: bool = False, scale: float = 1.0) -> None:
        """Lay pages out as a device of that size would (a phone: 375 x 812, mobile)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=scale,
                  mobile=mobile)

    KEYS = {"Tab": ("Tab", 9, ""), "Enter": ("Enter", 13, "\r"), "Space": (" ", 32, " "),
            "Escape": ("Escape", 27, "")}

    def press(self, key: str) -> None:
        """A key as a person presses it (it moves the focus, submits a form, ...)."""
        name, code, text = self.KEYS[key]
        down = {"key": name, "code": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        self.call("Input.dispatchKeyEvent", type="keyDown", **down, **({"text": text} if text else {}))
        self.call("Input.dispatchKeyEvent", type="keyUp", **down)

    def type(self, text: str) -> None:
        """Text typed into the focused field."""
        self.call("Input.insertText", text=text)

    def set_files(self, selector: str, paths: list[Path]) -> None:
        """Choose files in a file input, as a person picking photos would."""
        root = self.call("DOM.getDocument", depth=0)["root"]["nodeId"]
        node = self.call("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        if not node:
            raise RuntimeError(f"no element {selector}")
        self.call("DOM.setFileInputFiles", files=[str(p) for p in paths], nodeId=node)

    def console_errors(self) -> list[str]:
        """Errors the pages reported so far: uncaught exceptions, console.error, failed loads."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"{p['entry'].get('url', '')}: {p['entry']['text']}")
        return out

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
