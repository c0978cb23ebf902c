"""Headless Chromium driven over the DevTools protocol (websockets), for the pages we serve.

Debian's ``chromium`` with the flags this machine needs; a missing browser skips the test
with the reason (``make test`` installs it, so CI never skips). One Chromium per test
process (:class:`Chromium`); each :class:`Browser` is a tab in a browser context of its own.
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.sync.client import connect


# The omnibox popup's WebUI, which Chromium (156) preloads for every window, a headless one and
# each browser context's included: a renderer each that spent ~0.1 s of CPU a second while
# nobody looked (an idle browser 0.27 s/s, 0.014 s/s without; tests/test_browser.py).
NO_BROWSER_UI = "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,PreloadTopChromeWebUI"
# V8 compiles no optimized code (TurboFan, Maglev): the pages' scripts and axe run for a fraction of
# a second each, in a document that lives a few seconds, and the optimizing compilers' work on
# background threads did not pay for itself: Chromium's CPU for the every-page checks' work
# -10 % (5 paired runs); what the scripts do is the same in every tier.
NO_OPTIMIZING_JIT = "--js-flags=--max-opt=1"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", NO_BROWSER_UI,
         NO_OPTIMIZING_JIT]


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """One headless Chromium process and its browser-wide DevTools connection. Starting one
    costs ~1 s (0.45 s of CPU) and stopping it ~0.5 s, so a test process starts one
    (:meth:`shared`) and each :class:`Browser` is a tab in a browser context of its own
    (cookies, storage, service workers and permissions of its own, gone when it closes)."""

    _shared: "Chromium | None" = None

    def __init__(self) -> None:
        # port 0: Chromium binds a port of its own choosing and writes it to DevToolsActivePort
        # (port, then the browser's DevTools path). A port picked for it here could be bound by
        # another worker's server before Chromium binds it (tests/test_browser.py). A Chromium
        # that ends before it opens the port (seen twice on a loaded 2-core machine, exit status
        # 0, cause not found) is started again, twice at most, and its stderr kept for the error.
        failures = []
        for _attempt in range(3):
            self.profile = tempfile.mkdtemp(prefix="ms4watch-chromium-")
            errors = Path(self.profile).with_name(Path(self.profile).name + ".stderr")
            with open(errors, "wb") as err:
                self.proc = subprocess.Popen([chromium_binary(), *FLAGS, f"--user-data-dir={self.profile}",
                                              "--remote-debugging-port=0", "about:blank"],
                                             stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_die_with_parent)
            lines = self._devtools_port(deadline=time.monotonic() + 60)
            said = errors.read_text(errors="replace")[-1500:]
            errors.unlink(missing_ok=True)
            if lines:
                break
            failures.append(f"exit status {self.proc.returncode}: {said.strip()}")
            self.close()
        else:
            raise TimeoutError("chromium did not open its DevTools port (" + "; ".join(failures) + ")")
        self.port = int(lines[0])
        # no permessage-deflate: on a loopback socket compressing axe (0.5 MB, sent to every
        # page) and the screenshots costs CPU on both ends and saves nothing
        self.ws = connect(f"ws://127.0.0.1:{self.port}{lines[1]}", max_size=None, compression=None, open_timeout=30)
        self._ids = itertools.count(1)

    def _devtools_port(self, deadline: float) -> list[str]:
        """DevToolsActivePort's two lines once Chromium wrote them; [] if it ended or the
        deadline passed first."""
        active = Path(self.profile) / "DevToolsActivePort"
        while True:
            lines = active.read_text().split() if active.is_file() else []
            if len(lines) == 2:
                return lines
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return []
            time.sleep(0.05)

    @classmethod
    def shared(cls) -> "Chromium":
        """This process's Chromium, started at the first call (stopped when the process ends)."""
        if cls._shared is None or cls._shared.proc.poll() is not None:
            cls._shared = cls()
            atexit.register(cls._shared.close)
        return cls._shared

    def call(self, method: str, **params):
        i = next(self._ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

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


try:   # loaded here, not in the forked child (only a plain call runs there: other threads may hold locks)
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):   # not Linux: Chromium is stopped at exit only
    _PRCTL = None
_PR_SET_PDEATHSIG, _SIGTERM = 1, int(signal.SIGTERM)


def _die_with_parent() -> None:
    """Chromium gets SIGTERM when the thread that started it ends, the test process dying
    however it dies included (Linux; :meth:`Chromium.shared` is called from the main thread)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, _SIGTERM)


class Browser:
    """A tab of :meth:`Chromium.shared` in a fresh browser context: nothing a former test's
    pages stored (cookies, local storage, service workers, permissions) is seen here.

    ``own_chromium``: a Chromium of its own instead, its tab in the default context, stopped
    by :meth:`close` (what needs a real profile: a fresh context is incognito, where
    Chromium would not install a web app)."""

    _pictured: set[Path] = set()   # what :meth:`picture` was asked for in this process

    def __init__(self, *, own_chromium: bool = False) -> None:
        self.own_chromium = own_chromium
        self.chromium = Chromium() if own_chromium else Chromium.shared()
        self.context_id: str | None = None
        if not own_chromium:
            self.context_id = self.chromium.call("Target.createBrowserContext")["browserContextId"]
        target = self.chromium.call("Target.createTarget", url="about:blank",
                                    **({"browserContextId": self.context_id} if self.context_id else {}))
        self.ws = connect(f"ws://127.0.0.1:{self.chromium.port}/devtools/page/{target['targetId']}",
                          max_size=None, compression=None)
        self._ids = itertools.count(1)
        self.events: list[dict] = []   # what the page said meanwhile (console, exceptions, log)
        self._last_picture: tuple[Path, bool] | None = None   # what picture() was last asked for
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

    # ``condition`` asked in the page every 10 ms for up to a second (a promise the evaluation
    # awaits), so the answer comes as soon as it holds: polled from here with a sleep between,
    # each wait cost ~0.1 s more than it needed (about 60 waits in test_in_a_browser alone).
    # A condition that throws (no element yet) is not yet true; a navigation ends the
    # evaluation (its page is gone), and the condition is asked again on the new page.
    _WAIT = """new Promise(resolve => {{
  const until = performance.now() + {slice_ms};
  const ask = () => {{
    let ok = false;
    try {{ ok = !!({condition}); }} catch (e) {{}}
    if (ok || performance.now() > until) resolve(ok); else setTimeout(ask, 10);
  }};
  ask();
}})"""

    def wait_for(self, condition: str, timeout_s: float = 15.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            slice_ms = max(0, min(1000, int((deadline - time.monotonic()) * 1000)))
            try:
                if self.js(self._WAIT.format(condition=condition, slice_ms=slice_ms)):
                    return
            except RuntimeError:  # the page navigated away meanwhile: ask again on the new one
                time.sleep(0.01)
            if time.monotonic() > deadline:
                raise TimeoutError(f"page never satisfied: {condition}")

    def screenshot(self, path: Path, full_page: bool = True) -> None:
        import base64
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png",
                                                    captureBeyondViewport=full_page, optimizeForSpeed=True)["data"]))

    def picture(self, path: Path, full_page: bool = True) -> None:
        """A screenshot for a person to look at (``test-artefacts/``): the pages as the SMO and
        the technician see them, looked at after a run. ``BROWSER_SHOTS=0`` leaves them out
        (encoding a full page as PNG costs Chromium 0.1-0.3 s of CPU each, ~60 a run: for quick
        runs while working). A test that fails while its browser is open gets one picture
        anyway (:meth:`close`): the page as it was, beside this one. A name is pictured once a
        process: a second picture of it would replace the first, unseen."""
        assert path not in Browser._pictured, (f"{path} was pictured already in this run: the first picture "
                                               "would be replaced unseen (name this one apart, or take one)")
        Browser._pictured.add(path)
        self._last_picture = (path, full_page)
        if os.environ.get("BROWSER_SHOTS", "1") != "0":
            self.screenshot(path, full_page)

    def _picture_of_failure(self) -> None:
        """The page as it is, named after the last picture asked for (``failed-after-<name>``)."""
        if self._last_picture is None:
            return
        path, full_page = self._last_picture
        self._last_picture = None
        try:
            self.screenshot(path.with_name(f"failed-after-{path.name}"), full_page)
        except Exception:  # noqa: BLE001 — a browser gone wrong: the test's own error is what matters
            pass

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
        """Close the tab and throw its browser context away (Chromium keeps running). Called
        while an exception is on its way out (``finally:`` of a failing test), the page is
        pictured first."""
        if sys.exc_info()[0] is not None:
            self._picture_of_failure()
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        if self.own_chromium:
            self.chromium.close()
            return
        try:
            self.chromium.call("Target.disposeBrowserContext", browserContextId=self.context_id)
        except (RuntimeError, OSError, TimeoutError):   # a Chromium that died: the next Browser starts one
            pass
