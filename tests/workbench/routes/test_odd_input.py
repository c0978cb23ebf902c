"""Every route of the workbench, walked with odd values — ids that do not exist, a
superscript digit, huge integers, dates in year 1 and 9999 with the widest offsets — in every
path parameter, query parameter, form field and JSON field: each answer is a 4xx naming
the field, or a page; never a 5xx."""

from __future__ import annotations

import enum
import re
import types
import typing
from datetime import date, datetime
from pathlib import Path
from typing import Any

import fastapi.routing
import httpx
import pytest
from fastapi.routing import APIRoute

import ms4watch.workbench
from pydantic import BaseModel

from ms4watch.workbench.app import create_app
from tests.support.notify_peers import dwf

pytestmark = pytest.mark.timeout(600)

ODD_TIMES = ["9999-12-31", "0001-01-01", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00",
             "9999-12-31T23:59", "0001-01-01T00:00"]
ODD = ["999", "²", "0", "-1", str(2**70), "1e309", "nan", "", *ODD_TIMES]
ODD_IDS = ["999", "²", str(2**70), "0001-01-01"]
ODD_BY_HAND = ["999", "²", str(2**70)]
REAL = {"iid": "1", "sid": "OF-12", "oid": "OF-12", "cid": "1", "year": "2026", "fmt": "zip", "section": "illicit_found",
        "sha": "0" * 64}


def _read_by_hand() -> set[str]:
    """Query parameters a route or template reads from ``request.query_params`` itself."""
    root = Path(ms4watch.workbench.__file__).parent
    text = "".join(p.read_text(encoding="utf-8") for p in [*root.rglob("*.py"), *root.rglob("*.html")])
    return set(re.findall(r"query_params\.get\(\s*[\"'](\w+)[\"']", text))


def _routes(bench) -> list[tuple[str, set[str], APIRoute]]:
    """(path, methods, route) of every route of the app, those of included routers too."""
    app = create_app(bench.workbench.settings, bench.workbench)
    contexts = getattr(fastapi.routing, "iter_route_contexts", None)      # FastAPI >= 0.16x: routers stay nested
    found = [(rc.path, set(rc.methods or ()), rc.original_route) for rc in contexts(app.routes)] if contexts else \
        [(r.path, set(r.methods or ()), r) for r in app.routes]
    return [x for x in found if isinstance(x[2], APIRoute)]


def _path(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: values[m.group(1)], path)


def _path_choices(route: APIRoute) -> list[dict[str, str]]:
    """The registry's ids first, then each path parameter odd in turn."""
    names = [p.name for p in route.dependant.path_params]
    real = {n: REAL.get(n, "1") for n in names}
    return [real, *({**real, n: v} for n in names for v in ODD_IDS)]


def _unwrap(t: Any) -> list[Any]:
    if typing.get_origin(t) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(t) if a is not type(None)]
    if typing.get_origin(t) is typing.Annotated:
        return _unwrap(typing.get_args(t)[0])
    return [t]


NAMED = {"site": "CS-7", "outfall": "OF-12", "station": "OF-12", "incident_id": 1, "case_id": 1, "party_id": 1,
         "sample_id": 1, "law": "schenectady-148-II", "credential": "pe"}


def _sample(t: Any, odd: dict[type, Any], name: str = "") -> Any:
    """A plausible JSON value of type ``t`` (the registry's ids where ``name`` says so), with
    the odd value of its kind where ``odd`` has one."""
    if name in NAMED and not any(k in odd for k in (int, str)):
        return NAMED[name]
    for a in _unwrap(t):
        if isinstance(a, type) and "Datetime" in a.__name__:     # pydantic's AwareDatetime, NaiveDatetime
            a = datetime
        origin = typing.get_origin(a)
        if origin in (list, tuple, set, frozenset):
            args = typing.get_args(a)
            return [_sample(args[0], odd)] if args else []
        if origin is dict:
            return {}
        if origin is typing.Literal:
            return typing.get_args(a)[0]
        if isinstance(a, type):
            if issubclass(a, enum.Enum):
                return next(iter(a)).value
            for kind in (datetime, date, bool, int, float, str):
                if issubclass(a, kind):
                    if kind in odd:
                        return odd[kind]
                    return {datetime: "2026-06-01T12:00:00Z", date: "2026-06-01", bool: False, int: 1, float: 1.0,
                            str: "x"}[kind]
            if issubclass(a, BaseModel):
                return {n: _sample(f.annotation, odd, n) for n, f in a.model_fields.items()}
    return None


def _bodies(route: APIRoute) -> list[tuple[str, str, Any]]:
    """(kind, what is odd, body): JSON bodies and form fields with odd values, one kind at a time."""
    params = route.dependant.body_params
    if not params:
        return []
    forms = [p.alias for p in params if type(p.field_info).__name__ == "Form"]
    if forms or any(type(p.field_info).__name__ == "File" for p in params):
        return [("data", f"form={v!r}", {n: v for n in forms}) for v in ODD]
    variants = [(f"times={t}", {datetime: t, date: t}) for t in ODD_TIMES] + [
        ("huge", {int: 2**70, float: 1e308}), ("superscript", {str: "²"}), ("negative", {int: -1})]
    out = []
    for label, odd in variants:
        if len(params) == 1:
            out.append(("json", label, _sample(params[0].field_info.annotation, odd)))
        else:
            out.append(("json", label, {p.alias: _sample(p.field_info.annotation, odd, p.alias) for p in params}))
    return out


def test_no_route_answers_odd_input_with_a_server_error(bench, clock):
    bench.subscribed()          # else /health/ready answers 503, rightly: no broker here
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    failures: dict[tuple[str, str, str], str] = {}       # (method, route, what was odd) -> an example
    asked = 0
    with bench.api("admin") as c:
        assert c.post("/api/v1/cases", json={"origin": "incident", "incident_id": 1, "location": "Main St",
                                             "description": "grey water", "observed_at": "2026-06-01T15:30:00Z"}
                      ).status_code == 201
        routes = _routes(bench)
        by_hand = _read_by_hand()
        assert len(routes) > 80 and "case" in by_hand
        for template, methods, route in routes:
            if template.startswith(("/logout", "/login")):
                continue           # a session's own business (the auth tests); the token here has none
            for method in sorted(methods - {"HEAD"}):
                for i, values in enumerate(_path_choices(route)):
                    path = _path(template, values)
                    requests: list[tuple[str, dict[str, Any]]] = [("", {})]
                    if i == 0 and method == "GET":
                        declared = {q.alias for q in route.dependant.query_params}
                        requests += [(q, {"params": {q: v}}) for q in sorted(declared) for v in ODD]
                        requests += [(q, {"params": {q: v}}) for q in sorted(by_hand - declared) for v in ODD_BY_HAND]
                    elif i == 0:
                        requests += [(label, {kind: body}) for kind, label, body in _bodies(route)]
                    else:
                        requests[0] = (f"path {values}", {})
                    for what, kw in requests:
                        asked += 1
                        status: int | str = "no answer"
                        for _ in range(2):          # a connection a crash before closed is tried once more
                            try:
                                status = c.request(method, path, **kw).status_code
                                break
                            except httpx.TransportError as e:      # the server dropped the connection: a crash
                                status = type(e).__name__
                        if not isinstance(status, int) or status >= 500:
                            failures.setdefault((method, template, what), f"{path} {kw} -> {status}")
    assert asked > 500
    assert failures == {}, "\n".join(f"{m} {t} [{what}]: {example}" for (m, t, what), example in failures.items())


@pytest.mark.parametrize("method, path, kw, status, named", [
    ("GET", "/cases/999", {}, 404, "no case 999"),
    ("POST", "/cases/999/entries", {"data": {"kind": "note"}}, 404, "no case 999"),
    ("GET", "/stations/OF-12", {"params": {"end": "9999-12-31"}}, 400, "end: 9999-12-31"),
    ("GET", "/stations/OF-12/chart.svg", {"params": {"end": "9999-12-31"}}, 400, "end: 9999-12-31"),
    ("GET", "/stations/OF-12/readings.csv", {"params": {"start": "0001-01-01T00:00"}}, 400, "start: 0001-01-01"),
    ("GET", "/api/v1/stations/OF-12/readings", {"params": {"end": "9999-12-31T23:59:59-12:00"}}, 422, '"end"'),
    ("GET", "/api/v1/stations/OF-12/readings", {"params": {"start": "0001-01-01T00:00:00+14:00"}}, 422, '"start"'),
    ("POST", "/api/v1/inspections", {"json": {"at": "0001-01-01T00:00:00+14:00"}}, 422, '"at"'),
    ("POST", "/api/v1/cases", {"json": {"observed_at": "0001-01-01T00:00:00+14:00"}}, 422, '"observed_at"'),
])
def test_odd_input_is_a_4xx_naming_the_field(bench, method, path, kw, status, named):
    with bench.api("admin") as c:
        r = c.request(method, path, **kw)
    assert r.status_code == status, r.text
    assert named in r.text and ("outside the years 2000-2100" in r.text or "no case" in named), r.text


def test_a_superscript_case_in_the_notices_query_is_no_case(bench):
    with bench.api("admin") as c:
        assert c.get("/notices", params={"case": "²"}).status_code == 200
