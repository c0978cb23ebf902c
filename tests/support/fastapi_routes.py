"""FastAPI's per-application route state, built once per test process instead of once per app.

FastAPI (0.16x) includes a router lazily: the first request an application answers builds,
for every route of every included router, its dependency tree and its response fields
(``_EffectiveRouteContext.from_api_route``: pydantic ``TypeAdapter``\\ s, signatures). That
is 0.14 s of CPU per application (measured: a workbench's first unknown URL 0.14 s, the
second 0.002 s). ``serve`` builds one application; the tests build one per test (a fresh
town per test), so 400-odd workbench tests paid about a minute of CPU for the same work.

What is built depends only on the route and how it is included, which are the same
module-level routers in every test; only ``dependency_overrides_provider`` (the app) differs,
and it is read at request time for ``app.dependency_overrides``, which no test of ours sets.
So the built context is kept per (route, inclusion) and reused; an application with
overrides of its own is built afresh. If FastAPI renames what is patched here, nothing is
cached (the tests are slower, never wrong)."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

try:
    from fastapi.routing import _EffectiveRouteContext   # type: ignore[attr-defined]
except ImportError:   # another FastAPI: leave it alone
    _EffectiveRouteContext = None

_PER_APP = {"dependency_overrides_provider"}


def _inclusion(include_context: Any) -> tuple:
    return tuple(getattr(include_context, f.name) for f in dataclasses.fields(include_context)
                 if f.name not in _PER_APP)


def install() -> bool:
    """Cache ``from_api_route`` in this process; False when this FastAPI has no such thing."""
    if _EffectiveRouteContext is None or not hasattr(_EffectiveRouteContext, "from_api_route"):
        return False
    original = _EffectiveRouteContext.from_api_route.__func__
    if getattr(original, "_ms4watch_cached", False):
        return True
    built: dict[int, list[tuple[Any, tuple, Any]]] = {}   # id(route) -> [(route, inclusion, context)]
    lock = threading.Lock()

    def from_api_route(cls, *, original_route: Any, include_context: Any) -> Any:
        provider = getattr(include_context, "dependency_overrides_provider", None)
        if getattr(provider, "dependency_overrides", None):
            return original(cls, original_route=original_route, include_context=include_context)
        inclusion = _inclusion(include_context)
        with lock:
            for route, seen, context in built.get(id(original_route), ()):
                if route is original_route and seen == inclusion:
                    return context
        context = original(cls, original_route=original_route, include_context=include_context)
        with lock:   # the route is kept with its context: its id is never reused meanwhile
            built.setdefault(id(original_route), []).append((original_route, inclusion, context))
        return context

    from_api_route._ms4watch_cached = True   # type: ignore[attr-defined]
    _EffectiveRouteContext.from_api_route = classmethod(from_api_route)
    return True
