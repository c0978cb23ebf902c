"""FastAPI's route state built once per test process (tests/support/fastapi_routes.py), not
once per application: the same routes answer the same, and an application with overrides of
its own still gets its own."""

from __future__ import annotations

import httpx
from fastapi import Depends, FastAPI, Request

from tests.support import fastapi_routes
from tests.support.inprocess import InProcess
from tests.support.notify_peers import Clock, utc
from tests.support.workbench import start_bench


def _contexts(app: FastAPI) -> list:
    """What an application built for its included routers' routes (after its first request)."""
    out = []
    for r in app.router.routes:
        if hasattr(r, "effective_candidates"):
            out += r.effective_candidates()
    return out


def test_a_second_town_reuses_what_the_first_built_and_answers_the_same(tmp_path):
    assert fastapi_routes.install()
    first = start_bench(tmp_path / "a", Clock(utc(2026, 6, 1, 12)))
    second = start_bench(tmp_path / "b", Clock(utc(2026, 6, 1, 12)))
    try:
        with first.api("smo") as a, second.api("smo") as b:
            assert a.get("/api/v1/nothing-here").status_code == 404
            assert b.get("/api/v1/nothing-here").status_code == 404
            assert a.get("/api/v1/me").json() == b.get("/api/v1/me").json()
        built_a, built_b = _contexts(first.web.app), _contexts(second.web.app)
        assert built_a and [id(c) for c in built_a] == [id(c) for c in built_b]
    finally:
        first.close()
        second.close()


def test_an_app_with_overrides_of_its_own_builds_its_own():
    assert fastapi_routes.install()

    def who(request: Request) -> str:
        return "real"

    def answer(name: str = Depends(who)) -> dict:
        return {"name": name}

    from fastapi import APIRouter
    router = APIRouter()
    router.add_api_route("/who", answer)
    plain, overridden = FastAPI(), FastAPI()
    plain.include_router(router)
    overridden.include_router(router)
    overridden.dependency_overrides[who] = lambda: "override"
    for app, name in ((plain, "real"), (overridden, "override")):
        transport = InProcess(app)
        try:
            with httpx.Client(transport=transport, base_url="http://test") as c:
                assert c.get("/who").json() == {"name": name}
        finally:
            transport.shutdown()
