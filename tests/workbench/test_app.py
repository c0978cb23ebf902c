"""What ``app.py`` adds to every answer: authenticated pages, API answers, PDFs and exports
say ``Cache-Control: no-store`` (a shared computer's browser or a proxy keeps none of a
town's records); the static files may be cached."""

from __future__ import annotations

import os
from importlib.resources import files

from tests.support.notify_peers import dwf

STATIC = str(files("ms4watch.workbench") / "static")


def test_pages_api_answers_and_pdfs_are_not_stored_by_caches(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    s = bench.login("smo")
    answers = {path: s.get(path) for path in ("/", "/incidents", "/incidents/1", "/stations", "/api/v1/me",
                                              "/api/v1/incidents", "/api/v1/stations.csv", "/incidents/1/packet.pdf")}
    with bench.api("viewer") as c:
        answers["token: /api/v1/incidents/1"] = c.get("/api/v1/incidents/1")
        answers["token: /api/v1/nothing"] = c.get("/api/v1/nothing")          # an error answer too
    for path, r in answers.items():
        assert r.status_code in (200, 404), (path, r.status_code)
        assert r.headers.get("cache-control") == "no-store", path
    assert answers["/incidents/1/packet.pdf"].content.startswith(b"%PDF")
    static = s.get("/static/" + next(p for p in os.listdir(STATIC) if p.endswith(".css")))
    assert static.status_code == 200 and "no-store" not in static.headers.get("cache-control", "")



def test_the_number_filter_strips_only_decimal_zeros():
    """``num`` shows 300 gpm as "300", not "3" (it stripped the zeros of whole numbers)."""
    from ms4watch.workbench.app import number_text
    assert [number_text(v, d) for v, d in ((300, 0), (300.0, 2), (2.50, 2), (0.0, 1), (-40, 0), (1e3, 2), (None, 2))] \
        == ["300", "300", "2.5", "0", "-40", "1000", ""]


def test_a_request_is_matched_against_each_route_once(bench, monkeypatch):
    """The app finds a request's route in one pass over one list. FastAPI 0.16x matches an
    included router's routes twice (once to choose the router, again inside it), and a
    router's context per route at each step: half of an in-process request's calls."""
    from collections import Counter

    from fastapi.routing import APIRoute

    tried: Counter[int] = Counter()
    matches = APIRoute.matches

    def counted(self, scope):
        tried[id(self)] += 1
        return matches(self, scope)

    monkeypatch.setattr(APIRoute, "matches", counted)
    with bench.api("viewer") as c:
        for path in ("/api/v1/me", "/api/v1/field/form", "/incidents", "/health"):
            tried.clear()
            assert c.get(path).status_code == 200, path
            assert tried and max(tried.values()) == 1, path


def test_two_towns_applications_share_their_routes_and_answer_the_same(tmp_path, clock):
    """A route is built once, by its module's router; a town's application builds none at
    its first request (FastAPI's included routers built every route's state again per
    application: 0.14 s of CPU, which each test's fresh town paid)."""
    from fastapi.routing import APIRoute

    from tests.support.workbench import start_bench

    first, second = start_bench(tmp_path / "a", clock), start_bench(tmp_path / "b", clock)
    try:
        with first.api("smo") as a, second.api("smo") as b:
            assert a.get("/api/v1/nothing-here").status_code == b.get("/api/v1/nothing-here").status_code == 404
            assert a.get("/api/v1/me").json() == b.get("/api/v1/me").json()
        routes = [[r for r in bench.web.app.routes if isinstance(r, APIRoute)] for bench in (first, second)]
        assert len(routes[0]) > 80 and [id(r) for r in routes[0]] == [id(r) for r in routes[1]]
    finally:
        first.close()
        second.close()


def test_only_what_may_block_runs_in_a_worker_thread(bench, monkeypatch):
    """A request hops to a worker thread (~70 us of CPU each) for what may block: the
    token's lookup and the endpoint (and, for a sync endpoint, FastAPI's check of its
    answer); not for reading the town's services off the application."""
    import anyio.to_thread

    ran: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def recorded(func, *args, **kw):
        inner = func
        while hasattr(inner, "func"):          # functools.partial
            inner = inner.func
        ran.append(getattr(inner, "__name__", type(inner).__name__))
        return await run_sync(func, *args, **kw)

    monkeypatch.setattr(anyio.to_thread, "run_sync", recorded)
    with bench.api("viewer") as c:
        assert c.get("/api/v1/me").status_code == 200
    assert "by_token" in ran and "get_services" not in ran, ran
