"""The tests' headless Chromium (tests/support/browser.py): one process per test process,
and each Browser a tab in a browser context of its own, so nothing one test's pages stored
is seen by the next."""

from __future__ import annotations

import http.server
import threading
import time

import pytest

from tests.support.browser import Browser, Chromium, chromium_binary


@pytest.fixture
def origin():
    """A page to store things for (cookies and local storage need an http origin)."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<!doctype html><title>t</title><p>t</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_two_browsers_share_one_chromium_and_nothing_else(origin):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    first = Browser()
    try:
        first.goto(origin)
        first.js("document.cookie = 'who=first; path=/'; localStorage.setItem('who', 'first')")
        assert first.js("document.cookie") == "who=first"
    finally:
        first.close()
    second = Browser()
    try:
        assert second.chromium is first.chromium and second.chromium.proc.poll() is None
        second.goto(origin)
        assert second.js("document.cookie") == ""
        assert second.js("localStorage.getItem('who')") is None
    finally:
        second.close()
    assert Chromium.shared() is first.chromium      # still running for the next test


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its descendants, the reaped ones included."""
    import psutil
    root = psutil.Process(pid)
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def test_an_idle_chromium_draws_no_browser_ui_and_spends_next_to_no_cpu(origin):
    """Headless Chromium 156 preloaded the omnibox popup's WebUI (a renderer per window, the
    default one and each test's context), and those renderers spent ~0.1 s of CPU every second
    while nobody looked: ~0.27 s/s for the whole browser, a quarter of a core through every
    browser test file. Nothing of the browser's own UI is drawn now."""
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = Browser()
    try:
        b.goto(origin)
        targets = b.chromium.call("Target.getTargets", filter=[{}])["targetInfos"]
        assert [t["url"] for t in targets if t["type"] == "browser_ui"] == []
        before, began = _tree_cpu_s(b.chromium.proc.pid), time.monotonic()
        time.sleep(2)   # idle on purpose: what an idle browser costs is what is measured
        spent = _tree_cpu_s(b.chromium.proc.pid) - before
        assert spent < 0.1 * (time.monotonic() - began), f"idle Chromium spent {spent:.2f} s of CPU in 2 s"
    finally:
        b.close()


def test_pictures_for_people_are_taken_unless_left_out_and_when_a_test_fails(origin, tmp_path, monkeypatch):
    """``Browser.picture``: a screenshot for a person to look at, taken by default; BROWSER_SHOTS=0
    leaves them out (encoding a full page as PNG costs Chromium ~0.1-0.3 s of CPU a picture), and
    a test that fails then still leaves the page as it was, named after the last picture it would
    have taken."""
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    monkeypatch.setenv("BROWSER_SHOTS", "0")
    b = Browser()
    try:
        b.goto(origin)
        b.picture(tmp_path / "quiet" / "first.png")
        assert not (tmp_path / "quiet").exists()
        monkeypatch.delenv("BROWSER_SHOTS")
        b.picture(tmp_path / "default" / "first.png")
        assert (tmp_path / "default" / "first.png").read_bytes().startswith(b"\x89PNG")
        monkeypatch.setenv("BROWSER_SHOTS", "0")
        b.picture(tmp_path / "failing" / "form.png")
        with pytest.raises(AssertionError):
            try:
                raise AssertionError("a check failed")
            finally:
                b.close()
        assert (tmp_path / "failing" / "failed-after-form.png").read_bytes().startswith(b"\x89PNG")
    finally:
        b.close()


def test_a_picture_taken_twice_in_a_run_fails(origin, tmp_path):
    """A picture is for a person to look at after the run: one taken again under the same name
    (a later step or test of the run) replaced the first, which nobody saw, and its encoding
    (~0.15 s of Chromium's CPU at a phone's size) was for nothing."""
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = Browser()
    try:
        b.goto(origin)
        b.picture(tmp_path / "page.png")
        with pytest.raises(AssertionError, match="page.png was pictured already"):
            b.picture(tmp_path / "page.png")
        b.picture(tmp_path / "other.png")
    finally:
        b.close()


def test_chromium_starts_when_the_port_picked_for_it_is_taken_meanwhile(monkeypatch):
    """Picking a free port and handing it to Chromium races the other workers' servers: one of
    them may bind it first, and the DevTools request then went to a server that never answers
    HTTP (a broker), "chromium did not open its DevTools port" after 30 s (a CI run, under
    load). Chromium takes a port of its own choosing and says which (DevToolsActivePort)."""
    import socket

    import tests.support.browser as browser

    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()          # accepts connections and says nothing, as a broker does to HTTP
    monkeypatch.setattr(browser, "free_port", lambda: taken.getsockname()[1], raising=False)
    c = Chromium()
    try:
        assert c.port != taken.getsockname()[1]
        assert c.call("Browser.getVersion")["product"].startswith(("Chrome", "HeadlessChrome"))
    finally:
        c.close()
        taken.close()


def test_a_chromium_that_ends_before_it_opens_its_port_is_started_again(monkeypatch, tmp_path):
    """Twice on a loaded 2-core machine the shared Chromium ended (exit status 0) before it
    opened its DevTools port, failing a browser test that never reached its page: it is started
    again (twice at most), and what it said is kept for the error."""
    import os

    import tests.support.browser as browser

    real = chromium_binary()
    if real is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    once = tmp_path / "ended-once"
    wrapper = tmp_path / "chromium"
    wrapper.write_text(f'#!/bin/sh\nif [ ! -e {once} ]; then touch {once}; echo "ended early" >&2; exit 0; fi\n'
                       f'exec {real} "$@"\n')
    os.chmod(wrapper, 0o755)
    monkeypatch.setattr(browser, "chromium_binary", lambda: str(wrapper))
    c = Chromium()
    try:
        assert once.exists()
        assert c.call("Browser.getVersion")["product"].startswith(("Chrome", "HeadlessChrome"))
    finally:
        c.close()
