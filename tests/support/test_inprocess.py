"""The in-process transport of the workbench tests (tests/support/inprocess.py)."""

from __future__ import annotations

import importlib.machinery
import importlib.util

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
