"""The workbench on uvicorn in a background thread of the server's process.

The socket is bound by :meth:`WebServer.bind` before anything else starts, so a port that
is taken is one clear line at start-up (not a log line from a thread), and port 0 takes a
free port whose address the acknowledge links then use. uvicorn's event loop serves every
connection concurrently: a slow client holding a half-sent request blocks nobody else
(wsgiref, before it, served one request at a time)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import TYPE_CHECKING, Sequence

from .errors import WorkbenchError

if TYPE_CHECKING:      # imported when it starts: the server binds its port before ingest, serves after
    import uvicorn
    from fastapi import FastAPI

log = logging.getLogger(__name__)


class WebServer:
    def __init__(self, host: str, port: int, *, keep_alive_s: int = 5, trusted_proxies: Sequence[object] = ()):
        """``trusted_proxies``: addresses or networks (``http.trusted_proxies``) whose
        X-Forwarded-For and X-Forwarded-Proto are believed; none: the headers are ignored
        (uvicorn would otherwise trust them from 127.0.0.1, i.e. from any local process)."""
        self.host = host
        self.keep_alive_s = keep_alive_s
        self.trusted_proxies = [str(p) for p in trusted_proxies]
        self._sock = self.bind(host, port)
        self.port: int = self._sock.getsockname()[1]
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @staticmethod
    def bind(host: str, port: int) -> socket.socket:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Connections accepted from it inherit it (Linux): h11 writes a response's head and body
        # apart, and without it the body waited for the client's delayed ACK — 40 ms a request
        # on a kept-alive connection (asyncio does not set it on sockets it accepts here).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((host.strip("[]"), port))
        except OSError as e:
            sock.close()
            raise WorkbenchError(f"http.listen: cannot listen on {host}:{port}: {e.strerror}") from None
        sock.listen(128)
        sock.setblocking(False)
        return sock

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    def start(self, app: FastAPI, timeout_s: float = 15.0) -> "WebServer":
        import uvicorn
        # log_config None: uvicorn's lines go through our handler (JSON lines under --log-format json)
        config = uvicorn.Config(app, log_config=None, log_level="warning", timeout_keep_alive=self.keep_alive_s,
                                access_log=False,
                                lifespan="off", server_header=False, proxy_headers=bool(self.trusted_proxies),
                                forwarded_allow_ips=self.trusted_proxies or [])
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="ms4watch-web", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise WorkbenchError(f"the workbench did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():   # a client that will not finish: stop waiting for it
                assert self._server is not None
                self._server.force_exit = True
                self._thread.join(timeout_s)
        self._sock.close()


__all__ = ["WebServer"]
