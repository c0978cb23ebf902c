"""``POST /sms/inbound``: the SMS provider's webhook (alerts/notifiers/sms/README.md), when
``sms.inbound`` is not ``off``; its signature is checked first (``alerts/incidents/sms_auth.py``).
Twilio's form posts are answered with TwiML (texted back to the sender), JSON with JSON."""

from __future__ import annotations

import html

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from ..deps import Services, client_address
from ..errors import TooLarge

router = APIRouter(include_in_schema=False)
MAX_BODY = 64 * 1024


async def _body(request: Request) -> bytes:
    """The raw body, refused (413) as soon as it passes MAX_BODY, whatever its content type
    (the application's multipart limit is for photos, not for this)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        raise TooLarge(f"inbound SMS: body over {MAX_BODY} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise TooLarge(f"inbound SMS: body over {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/sms/inbound")
async def inbound(request: Request, services: Services) -> Response:
    body = await _body(request)
    ctype = request.headers.get("content-type", "")
    public = services.settings.http.public_url   # the URL the provider called, behind the town's proxy
    url = public + request.url.path if public else str(request.url)
    reply = await run_in_threadpool(lambda: services.sms.receive(
        url=url, headers=dict(request.headers), content_type=ctype, body=body, address=client_address(request)))
    json_body = ctype.split(";")[0].strip().lower() == "application/json"
    if reply is None:   # a replay of a message taken before: nothing done, nothing texted back
        if json_body:
            return JSONResponse({"reply": None, "acknowledged": None, "replay": True})
        return Response('<?xml version="1.0" encoding="UTF-8"?><Response></Response>', media_type="application/xml")
    if json_body:
        return JSONResponse({"reply": reply.text, "acknowledged": reply.incident.id if reply.incident else None})
    return Response(f'<?xml version="1.0" encoding="UTF-8"?><Response><Message>{html.escape(reply.text)}'
                    "</Message></Response>", media_type="application/xml")
