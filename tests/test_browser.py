"""The tests' headless Chromium (tests/support/browser.py): one process per test process,
and each Browser a tab in a browser context of its own, so nothing one test's pages stored
is seen by the next."""

from __future__ import annotations

import http.server
import threading

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
