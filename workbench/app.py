"""``create_app(settings, services)``: the workbench as a FastAPI application.

Settings say how sessions behave; ``services`` (:class:`~.services.Workbench`) are the
town's, opened by the composition root. Nothing here is module-level state: two apps in
one process (tests) are two independent applications.

A coalition's server (``create_coalition_app(settings, towns)``) is one application too:
each town's own application (the same routes, over that town's services only) mounted
under ``/t/<municipality>``, and at the root the login, the choice of town, ``/health``
and the static files. A town's application asks its own town whether the user holds a role
there, so one town's user reaches nothing of another's.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..alerts.incidents.due import incident_due
from ..alerts.notifiers.base import recipient_words
from ..contract import duetext
from ..contract.timeutil import from_ns
from ..settings import Settings
from .deps import csrf_token, render
from ..compliance.errors import ComplianceError
from ..compliance.labs import VERDICT_WORDS
from .errors import NotAuthenticated, RateLimited, TooLarge, WorkbenchError, from_compliance
from .routes import ROUTERS
from .services import Workbench

SESSION_COOKIE = "ms4watch_session"
API_PREFIX = "/api/v1"
TOWN_PREFIX = "/t"
BODY_MAX = 1_048_576           # a request body without photos
DESCRIPTION = ("The SMO's workbench: incidents (list, acknowledge, resolve), stations and their readings, "
               "inspections (due items, reports with photos), the outfall inventory, approved discharges and exempt "
               "flows, storms, calibrations; CSV exports. Authenticate with `Authorization: Bearer <token>` "
               "(`ms4watch users token NAME`).")


def security_headers(settings: Settings) -> list[tuple[bytes, bytes]]:
    """Everything from our own origin — no CDN, no inline script — except map tiles from the
    tile server the settings name; no Referer (acknowledge links carry a token)."""
    tiles = settings.web.tile_origin()
    img = "'self' data:" + (f" {tiles}" if tiles else "")
    return [
        (b"content-security-policy", f"default-src 'self'; img-src {img}; object-src 'none'; frame-ancestors 'none'; "
                                     "base-uri 'none'; form-action 'self'".encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
    ]


def create_app(settings: Settings, services: Workbench) -> FastAPI:
    """One town's workbench, served at the root of its own server."""
    app = town_app(settings, services)
    _outer(app, settings, services.secret)
    return app


def town_app(settings: Settings, services: Workbench) -> FastAPI:
    """A town's routes over its services, without the session and security layers (the
    application it is served in adds them: itself, or a coalition's)."""
    app = FastAPI(title=f"ms4watch workbench — {services.municipality}", version=__version__,
                  description=DESCRIPTION, openapi_url=f"{API_PREFIX}/openapi.json", docs_url=None,
                  redoc_url=None)  # the docs UIs load a CDN
    app.state.workbench = services
    app.state.templates = templates(services.tz, settings)
    _add_routes(app, ROUTERS)
    _error_handlers(app)
    return app


def _add_routes(app: FastAPI, routers: list[APIRouter]) -> None:
    """The routers' routes in the application's own list, as ``@app.get`` puts them: a
    request is matched in one pass. ``include_router`` (FastAPI 0.16x) keeps each router
    nested and matches the routes before the one asked for twice, with a per-router context
    at each step: ``/api/v1/me`` took 6,500 Python calls in process, 4,600 here; an unknown
    URL 8,800, 4,300 here. A route is built once by its module's router
    (path with the prefix, tags, answers) and holds no state of an application, so the towns'
    applications share them; ``dependency_overrides`` are the one thing this gives up (no
    application of ours sets any)."""
    for router in routers:
        app.router.routes.extend(router.routes)


def create_coalition_app(settings: Settings, towns: list[Workbench]) -> FastAPI:
    """One server for several municipalities: each town's application under ``/t/<town>``."""
    from .routes import lobby
    from .services.lobby import Lobby

    first = towns[0]
    app = FastAPI(title="ms4watch workbench", version=__version__, description=DESCRIPTION, openapi_url=None,
                  docs_url=None, redoc_url=None)
    app.state.lobby = Lobby(settings, towns)
    app.state.workbench = first            # the root's pages render with a town's templates' helpers
    app.state.templates = templates(first.tz, settings)
    _add_routes(app, [lobby.router])
    for t in towns:
        app.mount(f"{TOWN_PREFIX}/{t.municipality}", town_app(settings, t))
    _error_handlers(app)
    _outer(app, settings, first.secret)
    return app


def _outer(app: FastAPI, settings: Settings, secret: str) -> None:
    app.add_middleware(SessionMiddleware, secret_key=secret, session_cookie=SESSION_COOKIE,
                       max_age=int(settings.web.session_max_age.total_seconds()), same_site="lax",
                       https_only=bool(settings.http.public_url and settings.http.public_url.startswith("https:")))
    app.add_middleware(_BodyLimit, multipart_max=settings.web.upload_max_bytes)
    app.add_middleware(_SecurityHeaders, headers=security_headers(settings))
    app.mount("/static", StaticFiles(directory=str(files("ms4watch.workbench") / "static")), name="static")


def templates(tz: tzinfo, settings: Settings) -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(files("ms4watch.workbench") / "templates"))
    env = templates.env
    env.globals["csrf_token"] = csrf_token
    env.globals["map_tiles"] = settings.web.map_tiles
    env.globals["map_attribution"] = settings.web.map_attribution

    def local(dt: datetime | None, fmt: str = "%Y-%m-%d %H:%M %Z") -> str:
        return dt.astimezone(tz).strftime(fmt) if dt else ""

    env.filters["local"] = local
    env.filters["ns_local"] = lambda ns, fmt="%Y-%m-%d %H:%M %Z": local(from_ns(ns), fmt) if ns is not None else ""
    env.filters["label"] = lambda s: str(s or "").replace("_", " ")
    env.filters["verdict"] = lambda v: VERDICT_WORDS.get(v, str(v or "").replace("_", " "))
    # a due date (contract/due.py) is rendered by its one formatter, as in letters and messages
    env.filters["due_short"] = lambda due: duetext.short(due) if due is not None else ""
    env.filters["due_notes"] = lambda due: [x for x in (duetext.moved_note(due), duetext.closures_note(due)) if x] \
        if due is not None else []

    def deadline_text(inc: Any) -> str:
        """An incident's deadline: its due date's day (compliance, calibration) or instant (inspections)."""
        due = incident_due(inc.kind, inc.deadline, inc.event, getattr(tz, "key", "UTC"))
        return duetext.short(due) if due is not None else local(inc.deadline)

    env.filters["deadline_text"] = deadline_text
    env.filters["num"] = number_text
    env.filters["recipient"] = recipient_words
    return templates


def number_text(v: float | None, digits: int = 2) -> str:
    """A number with at most ``digits`` decimals and no trailing decimal zeros: 2.5, 300, 0."""
    if v is None:
        return ""
    text = f"{v:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class _SecurityHeaders:
    """The security headers on every answer, and ``Cache-Control: no-store`` on every one but
    the static files: pages, API answers, PDFs and exports hold a town's records, and must not
    stay in a shared computer's cache or a proxy's."""

    def __init__(self, app: ASGIApp, headers: list[tuple[bytes, bytes]]):
        self.app = app
        self.headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cache = [] if scope["path"].startswith("/static/") else [(b"cache-control", b"no-store")]

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if not (cache and h[0].lower() == b"cache-control")]
                message["headers"] = headers + self.headers + cache
            await send(message)

        await self.app(scope, receive, with_headers)


class _BodyLimit:
    """Request bodies of at most 1 MB, or ``web.upload_max_bytes`` for a form with photos
    (multipart): refused by their Content-Length at once, else when the bytes read pass it
    (a chunked upload cannot fill the disk with temporary files)."""

    def __init__(self, app: ASGIApp, multipart_max: int):
        self.app = app
        self.multipart_max = multipart_max

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        ctype = headers.get(b"content-type", b"").decode("latin-1").lower()
        limit = self.multipart_max if ctype.startswith("multipart/form-data") else BODY_MAX
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            body = f'{{"detail": "the request is larger than {limit} bytes"}}'.encode()
            await send({"type": "http.response.start", "status": 413,
                        "headers": [(b"content-type", b"application/json"), (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": body})
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise TooLarge(f"the request is larger than {limit} bytes")
            return message

        await self.app(scope, counted, send)


def _wants_json(request: Request) -> bool:
    path = request.url.path.removeprefix(request.scope.get("root_path", ""))
    return path.startswith(("/api/", "/sms/", "/health", "/metrics"))


def _error_handlers(app: FastAPI) -> None:
    @app.exception_handler(WorkbenchError)
    async def workbench_error(request: Request, exc: WorkbenchError) -> Response:
        headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, RateLimited) else None
        if _wants_json(request):
            if isinstance(exc, NotAuthenticated):
                headers = {"WWW-Authenticate": "Bearer"}
            return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=headers)
        if isinstance(exc, NotAuthenticated) and request.method == "GET":
            login = request.scope.get("root_path", "") + "/login"
            return RedirectResponse(f"{login}?next={request.url.path}", status_code=303)
        return render(request, "error.html", exc.status, title=_TITLES.get(exc.status, "Error"), message=str(exc),
                      headers=headers)

    @app.exception_handler(ComplianceError)
    async def compliance_error(request: Request, exc: ComplianceError) -> Response:
        return await workbench_error(request, from_compliance(exc))      # /cases/999: a 404, not a 500

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if _wants_json(request) or request.url.path.startswith("/static/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        return render(request, "error.html", exc.status_code, title=_TITLES.get(exc.status_code, "Error"),
                      message=str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if _wants_json(request):
            return await request_validation_exception_handler(request, exc)   # the schema's 422
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        return render(request, "error.html", 400, title="Not understood", message=problems)


_TITLES = {400: "Not understood", 401: "Log in", 403: "Not allowed", 404: "Not found", 405: "Not allowed",
           409: "Not done", 410: "Link expired", 413: "Too large", 429: "Too many attempts"}

__all__ = ["create_app", "create_coalition_app", "town_app", "SESSION_COOKIE", "API_PREFIX", "TOWN_PREFIX"]
