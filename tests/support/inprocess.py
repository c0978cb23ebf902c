"""HTTP to an ASGI app in this process: an httpx transport for synchronous clients.

The app runs on one asyncio event loop in a thread of its own, as uvicorn runs it in
``serve`` (sync endpoints in the loop's worker threads), and sees requests from 127.0.0.1.
No socket, so no server to start or stop: a workbench test pays ~0.3 s less than on
uvicorn. What only a socket shows — h11's parsing, half-sent requests, keep-alive, the
proxy headers uvicorn believes — is tested on a real uvicorn (``Bench.url``).
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from typing import Any

import httpx

CLIENT_ADDRESS = ("127.0.0.1", 50000)


def _sniffio_known_absent() -> None:
    """httpx's ASGITransport asks ``import sniffio`` at each request (``is_running_trio``), as
    httpcore's async clients do; anyio no longer needs sniffio, so it is not installed, and each
    ask went through every finder (pytest's assertion rewriter, the editable install's, sys.path)
    in vain: 0.2-0.4 ms of a 2.4 ms in-process request (measured on a 422 answer, 1,500 times).
    ``None`` in ``sys.modules`` is Python's mark of a module known absent: the import fails at
    once, with the same ModuleNotFoundError. An installed sniffio is left alone."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None   # type: ignore[assignment]


_sniffio_known_absent()


class InProcess(httpx.BaseTransport):
    """One transport, shared by every client of one app: ``close()`` of a client leaves it
    open; ``shutdown()`` stops its loop."""

    def __init__(self, app: Any, *, timeout_s: float = 60.0):
        self.timeout_s = timeout_s
        # raise_app_exceptions False: an error inside the app is a 500 answer, as on uvicorn
        self._asgi = httpx.ASGITransport(app, client=CLIENT_ADDRESS, raise_app_exceptions=False)
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),),
                                        name="inprocess-asgi", daemon=True)
        self._thread.start()

    async def _serve(self) -> None:
        """The loop's root task until shutdown, as uvicorn's ``serve`` is: anyio's worker threads
        (where sync endpoints and dependencies run) live as long as the root task. With none (the
        loop run forever), each request's task counted as the root, and each sync call started
        and ended a thread of its own: 2,669 in one test_odd_input run."""
        await self._stop.wait()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()   # the sync client's stream, read here: then a ByteStream, which the app reads async
        future = asyncio.run_coroutine_threadsafe(self._call(request), self._loop)
        status, headers, raw = future.result(self.timeout_s)
        # the raw bytes with the app's headers: the client decodes (gzip) as from a socket
        return httpx.Response(status, headers=headers, content=raw, request=request)

    async def _call(self, request: httpx.Request) -> tuple[int, httpx.Headers, bytes]:
        response = await self._asgi.handle_async_request(request)
        raw = b"".join([part async for part in response.aiter_raw()])
        await response.aclose()
        return response.status_code, response.headers, raw

    def close(self) -> None:
        """A client closing: the transport stays open for the others."""

    def shutdown(self) -> None:
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)   # run at once, or as the loop starts
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()


__all__ = ["InProcess", "CLIENT_ADDRESS"]
