"""``/api/v1/field``: what the offline field form asks (JSON the phone caches: the law's
items, the sites and their due items, the open cases, the session's CSRF token) and the
records it sends when back online (multipart: ``record`` as JSON, then the photos; the
``Idempotency-Key`` header makes each record once — a resend answers the first result)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from ...deps import CurrentActor, Services, base_path, csrf_token, session_id
from ...errors import NotFound, WorkbenchError
from ...records.field_sends import KEY_PATTERN, FieldSend
from ...schemas import BAD, CONFLICT, ERRORS, TOO_LARGE
from ...services.field import FIELD_RECORD, FieldDesk

router = APIRouter(prefix="/api/v1/field", tags=["field"], responses=ERRORS)


class NoKey(WorkbenchError):
    """A send without its idempotency key (the schema requires it)."""

    status = 422


class Unreadable(WorkbenchError):
    """A ``record`` that is not JSON of the form's shape: well-formed as the schema says (a
    string), refused as given — 409, as the API's other refusals of a body's content."""

    status = 409


KEY_HEADER = "Idempotency-Key"
SEND_SCHEMA: dict[str, Any] = {
    "parameters": [{"name": KEY_HEADER, "in": "header", "required": True,
                    "description": "the phone's key for this record (16-80 of A-Z a-z 0-9 _ -): a resend with it "
                                   "answers the first result",
                    "schema": {"type": "string", "pattern": KEY_PATTERN}}],
    "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["record"],
        "properties": {"record": {"type": "string", "description": "the record as JSON: {kind: inspection, item?, "
                                                                   "report: <as POST /api/v1/inspections>} or {kind: "
                                                                   "visit, case, entry: <as POST .../entries>}, with "
                                                                   "drafted_at, position, photos [{name, taken_at, "
                                                                   "position}]"},
                       "photos": {"type": "array", "items": {"type": "string", "format": "binary"}}}}}}},
}


def _desk(services: Any) -> FieldDesk:
    if services.field is None:
        raise NotFound("the field form is not served here")
    return services.field


@router.get("/form", summary="What the field form asks: the law's items, sites and their due items, open cases "
                             "(JSON the phone caches; with a session, its CSRF token)")
def form(request: Request, actor: CurrentActor, services: Services) -> dict[str, Any]:
    out = _desk(services).form(actor)
    out["base"] = base_path(request)
    out["csrf"] = csrf_token(request) if session_id(request) else None
    return out


def _answer(request: Request, send: FieldSend, replayed: bool) -> JSONResponse:
    body = {"key": send.key, "kind": send.kind, "status": send.status, "replayed": replayed,
            "received_at": send.received_at.isoformat(), **send.result}
    if "path" in body:
        body["path"] = base_path(request) + body["path"]
    return JSONResponse(body, status_code=send.status, headers={"Idempotency-Replayed": "true" if replayed else "false"})


@router.post("/sends", summary="Send one record made in the field (an inspection report or an outfall visit) once: "
                               "multipart `record` (JSON) and `photos`; the Idempotency-Key header names it",
             status_code=201, openapi_extra=SEND_SCHEMA,
             responses={**CONFLICT, **BAD, **TOO_LARGE, 422: {"description": "no Idempotency-Key"}})
async def send(request: Request, actor: CurrentActor, services: Services) -> JSONResponse:
    desk = _desk(services)
    await run_in_threadpool(desk.admit, actor)
    key = request.headers.get(KEY_HEADER)
    if key is None or not re.fullmatch(KEY_PATTERN, key):
        raise NoKey(f"{KEY_HEADER}: a key of 16 to 80 letters, digits, '-' or '_' names each record")
    form = await request.form()
    raw = form.get("record")
    if not isinstance(raw, str):
        raise Unreadable("record: the record as JSON (a form field) is missing")
    try:
        record = FIELD_RECORD.validate_json(raw)
    except ValidationError as e:
        raise Unreadable("; ".join(f"{'.'.join(str(p) for p in x['loc']) or 'record'}: "
                                f"{x['msg'].removeprefix('Value error, ')}" for x in e.errors()[:6])) from None
    photos: list[tuple[str, bytes]] = []
    for f in form.getlist("photos"):
        if isinstance(f, UploadFile):
            photos.append((f.filename or "photo", await f.read()))
    done, replayed = await run_in_threadpool(desk.send, actor, key, record, photos)
    return _answer(request, done, replayed)
