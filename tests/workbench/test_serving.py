"""uvicorn serves every connection at once: a slow client holding a half-sent request does
not hold up another user's (wsgiref, before, served one request at a time). A port that is
taken is one line at start-up."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from fastapi import FastAPI, Request

from ms4watch.workbench.errors import WorkbenchError
from ms4watch.workbench.serving import WebServer


def _half_sent(port: int, data: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(data)
    return s


def test_a_slow_client_holding_a_half_sent_request_blocks_nobody(bench):
    port = int(bench.url.rsplit(":", 1)[1])
    session = bench.login("viewer")
    slow = [_half_sent(port, b"GET /incidents HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Ag"),            # half a header
            _half_sent(port, b"POST /sms/inbound HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 5000\r\n\r\n{\"from\": ")]                              # half a body
    try:
        started = time.monotonic()
        page = session.get("/incidents")
        with httpx.Client(base_url=bench.url, timeout=5) as other:
            health = other.get("/health")
        took = time.monotonic() - started
        assert page.status_code == 200 and "Incidents" in page.text and health.json() == {"status": "ok"}
        assert took < 4, f"another user's requests took {took:.1f} s behind the slow clients"
        for s in slow:                                       # the slow clients were not answered meanwhile
            s.settimeout(0.2)
            with pytest.raises(socket.timeout):
                s.recv(1)
    finally:
        for s in slow:
            s.close()


def test_a_port_that_is_taken_is_one_line(bench):
    port = int(bench.url.rsplit(":", 1)[1])
    with pytest.raises(WorkbenchError, match=rf"^http.listen: cannot listen on 127.0.0.1:{port}: Address already in use$"):
        WebServer("127.0.0.1", port)


def _peer_app() -> FastAPI:
    app = FastAPI()

    @app.get("/peer")
    def peer(request: Request) -> dict[str, str]:
        return {"address": request.client.host, "scheme": request.url.scheme}

    return app


@pytest.mark.parametrize("trusted, seen", [((), "127.0.0.1"), (("127.0.0.1",), "203.0.113.9"),
                                           (("10.0.0.0/8",), "127.0.0.1")])
def test_x_forwarded_for_is_believed_only_from_a_configured_proxy(trusted, seen):
    """uvicorn's own default trusts 127.0.0.1: any local process could pick its address."""
    server = WebServer("127.0.0.1", 0, trusted_proxies=trusted).start(_peer_app())
    try:
        r = httpx.get(server.url + "/peer", headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"})
        assert r.json() == {"address": seen, "scheme": "https" if seen != "127.0.0.1" else "http"}
    finally:
        server.stop()


def test_the_login_limit_and_the_audit_log_record_the_peer_not_a_header(bench):
    from tests.support.workbench import csrf_of
    with httpx.Client(base_url=bench.url) as c:
        c.post("/login", data={"username": "smo", "password": "wrong one", "csrf": csrf_of(c.get("/login").text)},
               headers={"X-Forwarded-For": "198.51.100.1"})
    rows = bench.workbench.conn.execute("SELECT address FROM login_attempts").fetchall()
    assert [r[0] for r in rows] == ["127.0.0.1"]
