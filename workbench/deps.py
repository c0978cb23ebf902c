"""Typed dependencies routes take: the town's services, who is asking (session or API
token, CSRF checked on every write made with a session), pages' rendering.

    @router.post("/incidents/{iid}/acknowledge")
    def acknowledge(iid: IncidentId, actor: CurrentActor, services: Services): ...
"""

from __future__ import annotations

import hmac
import secrets
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from ..contract.when import plausible_time
from .errors import Forbidden, NotAuthenticated
from .roles import Actor, Via
from .services import Workbench

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf"
SESSION_ID = "sid"   # the cookie's key for the server-side session's id (auth/sessions.py)
MAX_ID = 2**63 - 1   # SQLite's INTEGER


async def get_services(request: Request) -> Workbench:
    """The town's services (async: FastAPI runs a sync dependency in a worker thread, a hop
    of ~70 us of CPU for an attribute's read, in every request)."""
    return request.app.state.workbench


Services = Annotated[Workbench, Depends(get_services)]
IncidentId = Annotated[int, Path(ge=1, le=MAX_ID, description="the incident's id")]
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
Pixels = Annotated[int, Query(ge=200, le=2400, description="the chart's width in pixels (one bucket each)")]
StationPath = Annotated[str, Path(pattern=ID_PATTERN, description="a station id (rain gauge, outfall, turbidity probe)")]
OutfallPath = Annotated[str, Path(pattern=ID_PATTERN, description="an outfall id")]
ReportId = Annotated[int, Path(ge=1, le=MAX_ID, description="the inspection report's id")]
SuppressionId = Annotated[int, Path(ge=1, le=MAX_ID, description="the recorded approval's or exempt flow's id")]
CorrectionId = Annotated[int, Path(ge=1, le=MAX_ID, description="the drift correction's id")]
Sha256 = Annotated[str, Path(pattern=r"^[0-9a-f]{64}$", description="the photo's SHA-256")]

_bearer = HTTPBearer(auto_error=False, description="an API token (`ms4watch users token NAME`)")


def client_address(request: Request) -> str:
    """The peer's address. Behind the town's reverse proxy this is the proxy's unless the
    settings name it (``http.trusted_proxies``: uvicorn then takes the client's from its
    X-Forwarded-For); by default no proxy is trusted, so no client picks its own address."""
    return request.client.host if request.client else "unknown"


def csrf_token(request: Request) -> str:
    """This session's CSRF token (made on first use); every form carries it."""
    token = request.session.get(CSRF_FIELD)
    if not token:
        token = secrets.token_urlsafe(32)
        request.session[CSRF_FIELD] = token
    return token


async def check_csrf(request: Request) -> None:
    """A write made with a session cookie carries the session's CSRF token: the form field
    ``csrf`` or the header ``X-CSRF-Token`` (a script in our own pages)."""
    expected = request.session.get(CSRF_FIELD)
    given = request.headers.get(CSRF_HEADER)
    if given is None and request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")):
        posted = (await request.form()).get(CSRF_FIELD)
        given = posted if isinstance(posted, str) else None
    if not expected or not isinstance(given, str) or not hmac.compare_digest(given, expected):
        raise Forbidden("the form is stale or did not come from this site (CSRF token missing or wrong); "
                        "reload the page and try again")


async def current_actor(request: Request, services: Services,
                        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> Actor:
    """Who is asking: an API token (``Authorization: Bearer …``) or the session's user, with
    their role in this municipality. NotAuthenticated otherwise; a write made with a
    session must carry its CSRF token."""
    address = client_address(request)
    if credentials is not None:
        actor = await run_in_threadpool(services.accounts.by_token, credentials.credentials, address)
        if actor is None:
            raise NotAuthenticated("invalid, revoked or disabled API token")
        return actor
    sid = request.session.get(SESSION_ID)
    if not isinstance(sid, str):
        raise NotAuthenticated("log in first")
    via = Via.API if request.url.path.startswith("/api/") else Via.WEB
    actor = await run_in_threadpool(services.accounts.by_session, sid, via, address)
    if actor is None:   # logged out, expired, password changed, user disabled
        request.session.pop(SESSION_ID, None)
        raise NotAuthenticated("the session has ended; log in again")
    if request.method not in SAFE_METHODS:
        await check_csrf(request)
    return actor


def start_session(request: Request, session_id: str) -> None:
    """A fresh cookie (and CSRF token) for every login, carrying the server-side session's id."""
    request.session.clear()
    request.session[SESSION_ID] = session_id
    csrf_token(request)


def session_id(request: Request) -> str | None:
    sid = request.session.get(SESSION_ID)
    return sid if isinstance(sid, str) else None


CurrentActor = Annotated[Actor, Depends(current_actor)]


def base_path(request: Request) -> str:
    """Where the town's pages are: "" (one town), ``/t/<town>`` (a coalition)."""
    return request.scope.get("root_path", "")


def render(request: Request, template: str, status_code: int = 200, *, headers: dict[str, str] | None = None,
           **context: Any) -> HTMLResponse:
    """A page from ``templates/``; every page gets the request, the actor (if any), the town,
    ``base`` (the town's path prefix) and the towns the server serves."""
    services: Workbench = request.app.state.workbench
    return request.app.state.templates.TemplateResponse(
        request, template, {"municipality": services.municipality, "actor": None, "base": base_path(request),
                            "towns": services.towns if services.coalition else (), **context},
        status_code=status_code, headers=headers)


def parse_when(text: str, tz: Any, *, end: bool = False) -> datetime:
    """A time a person types: ``YYYY-MM-DD`` (local midnight; with ``end``, the day's last microsecond),
    ``YYYY-MM-DDTHH:MM`` (local, as a datetime-local input sends it), or ISO 8601 with an
    offset; in the years 2000-2100 (:mod:`ms4watch.contract.when`). ValueError otherwise."""
    text = text.strip()
    if len(text) == 10:
        d = plausible_time(datetime.fromisoformat(text)).replace(tzinfo=tz)
        return d + timedelta(days=1, microseconds=-1) if end else d
    dt = plausible_time(datetime.fromisoformat(text.replace("Z", "+00:00")))
    return dt if dt.tzinfo is not None else _one_instant(dt, tz)


def _one_instant(wall: datetime, tz: Any) -> datetime:
    """A naive local wall time in ``tz`` as the one instant it names. A wall time the clocks
    show twice (the hour repeated when they go back) or never (the hour skipped when they go
    forward) is refused, not guessed: an inspection typed "01:30" on the night the clocks go
    back was at 01:30 EDT or an hour later at 01:30 EST, and "within 24 hours of the end of
    a storm" (Schenectady ch. 148 Art. I) may hang on which."""
    first, second = wall.replace(tzinfo=tz, fold=0), wall.replace(tzinfo=tz, fold=1)
    if first.utcoffset() == second.utcoffset():
        return first
    name = getattr(tz, "key", str(tz))
    a, b = (x.isoformat(timespec="minutes") for x in (first, second))
    round_trip = first.astimezone(timezone.utc).astimezone(tz).replace(tzinfo=None)
    if round_trip != wall:   # skipped: no instant shows this wall time
        raise ValueError(f"{wall:%Y-%m-%dT%H:%M} does not exist in {name}: the clocks skip that hour "
                         f"when they go forward; give the time the clocks showed")
    raise ValueError(f"{wall:%Y-%m-%dT%H:%M} happens twice in {name} (the clocks go back an hour): "
                     f"give it with its offset, {a} (the first) or {b} (an hour later)")


__all__ = ["Services", "CurrentActor", "IncidentId", "StationPath", "OutfallPath", "ReportId", "SuppressionId", "Sha256",
           "get_services", "current_actor", "client_address", "csrf_token", "check_csrf", "start_session",
           "session_id", "render",
           "base_path", "parse_when", "CSRF_HEADER", "CSRF_FIELD"]
