"""The in-process transport of the workbench tests (tests/support/inprocess.py)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import threading

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from tests.support.inprocess import InProcess


@pytest.fixture
def hello():
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("hello"))])
    transport = InProcess(app)
    yield transport
    transport.shutdown()


def test_a_request_answers_as_the_app_does(hello):
    with httpx.Client(transport=hello, base_url="http://127.0.0.1:8080") as c:
        r = c.get("/")
    assert (r.status_code, r.text) == (200, "hello")


def test_a_request_searches_no_module_path(hello, monkeypatch):
    """httpx's ASGITransport asks ``import sniffio`` at each request; sniffio is not installed
    here (anyio no longer needs it), and each ask searched every finder in vain: 0.2-0.4 ms of
    a 2.4 ms request."""
    if importlib.util.find_spec("sniffio") is not None:
        pytest.skip("sniffio is installed: importing it is a lookup in sys.modules")
    searched: list[str] = []
    find_spec = importlib.machinery.PathFinder.find_spec

    def recording(fullname, path=None, target=None):
        searched.append(fullname)
        return find_spec(fullname, path, target)

    with httpx.Client(transport=hello, base_url="http://127.0.0.1:8080") as c:
        assert c.get("/").status_code == 200          # whatever a first request imports, imported
        monkeypatch.setattr(importlib.machinery.PathFinder, "find_spec", recording)
        assert c.get("/").text == "hello"
    assert searched == []


def test_sync_endpoints_share_worker_threads_until_shutdown():
    """Sync endpoints and dependencies run in anyio's worker threads, reused from one request to
    the next as under uvicorn (whose ``serve`` is the loop's root task), and ended at shutdown.
    With no root task (a loop run forever), each request's task counted as the root, and each
    sync call started and ended a thread of its own: 2,669 threads in one test_odd_input run."""
    threads: list[threading.Thread] = []

    def where(request):
        threads.append(threading.current_thread())
        return PlainTextResponse("ok")

    transport = InProcess(Starlette(routes=[Route("/", where)]))
    try:
        with httpx.Client(transport=transport, base_url="http://127.0.0.1:8080") as c:
            for _ in range(20):
                assert c.get("/").text == "ok"
    finally:
        transport.shutdown()
    assert len(threads) == 20
    assert len(set(threads)) <= 2, f"{len(set(threads))} worker threads for 20 requests one after another"
    for t in set(threads):
        t.join(10)
    assert not any(t.is_alive() for t in threads)
