"""``create_app(settings, services)``: the workbench as a FastAPI application.

Settings say how sessions behave; ``services`` (:class:`~.services.Workbench`) are the
town's, opened by the composition root. Nothing here is module-level state: two apps in
one process (tests) are two independent applications.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..settings import Settings
from .deps import csrf_token, render
from .errors import NotAuthenticated, RateLimited, WorkbenchError
from .routes import ROUTERS
from .services import Workbench

SESSION_COOKIE = "ms4watch_session"
API_PREFIX = "/api/v1"
# Everything from our own origin: no CDN, no inline script; no Referer (acknowledge links carry a token).
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; object-src 'none'; "
                                 b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


def create_app(settings: Settings, services: Workbench) -> FastAPI:
    app = FastAPI(
        title=f"ms4watch workbench — {services.municipality}", version=__version__,
        description="The SMO's workbench: incidents (list, acknowledge, resolve) and CSV exports. "
                    "Authenticate with `Authorization: Bearer <token>` (`ms4watch users token NAME`).",
        openapi_url=f"{API_PREFIX}/openapi.json", docs_url=None, redoc_url=None)  # the docs UIs load a CDN
    app.state.workbench = services
    app.state.templates = _templates(services.tz)
    app.add_middleware(SessionMiddleware, secret_key=services.secret, session_cookie=SESSION_COOKIE,
                       max_age=int(settings.web.session_max_age.total_seconds()), same_site="lax",
                       https_only=bool(settings.http.public_url and settings.http.public_url.startswith("https:")))
    app.add_middleware(_SecurityHeaders)
    app.mount("/static", StaticFiles(directory=str(files("ms4watch.workbench") / "static")), name="static")
    for router in ROUTERS:
        app.include_router(router)
    _error_handlers(app)
    return app


def _templates(tz: tzinfo) -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(files("ms4watch.workbench") / "templates"))
    env = templates.env
    env.globals["csrf_token"] = csrf_token

    def local(dt: datetime | None, fmt: str = "%Y-%m-%d %H:%M %Z") -> str:
        return dt.astimezone(tz).strftime(fmt) if dt else ""

    env.filters["local"] = local
    env.filters["label"] = lambda s: str(s or "").replace("_", " ")
    return templates


class _SecurityHeaders:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
            await send(message)

        await self.app(scope, receive, with_headers)


def _wants_json(request: Request) -> bool:
    path = request.url.path
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
            return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
        return render(request, "error.html", exc.status, title=_TITLES.get(exc.status, "Error"), message=str(exc),
                      headers=headers)

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
           409: "Not done", 410: "Link expired", 429: "Too many attempts"}

__all__ = ["create_app", "SESSION_COOKIE", "API_PREFIX"]
