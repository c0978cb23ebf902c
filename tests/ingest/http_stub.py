"""A tiny HTTP server answering every request with a fixed status, headers and body.

A stand-in only where no real peer can be made to answer so: InfluxDB cannot be told to
throttle (429) or to be overloaded (503) on demand. Real servers cover everything else.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubServer:
    def __init__(self, status: int, headers: dict[str, str] | None = None, body: bytes = b"",
                 routes: dict[tuple[str, str], tuple[int, bytes]] | None = None):
        """``routes`` maps (method, path without query) to (status, JSON body); others get ``status``."""
        self.status, self.headers, self.body = status, headers or {}, body
        self.routes = routes or {}
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[bytes] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                stub.bodies.append(self.rfile.read(n) if n else b"")
                stub.requests.append((self.command, self.path))
                status, body = stub.routes.get((self.command, self.path.split("?")[0]), (stub.status, stub.body))
                self.send_response(status)
                for k, v in stub.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_HEAD = do_PUT = do_PATCH = _answer

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
