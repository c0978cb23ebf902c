"""``POST /sms/inbound``: the SMS provider's webhook (alerts/notifiers/sms/README.md), when
``sms.inbound`` is not ``off``; its signature is checked first (``alerts/incidents/sms_auth.py``).
Twilio's form posts are answered with TwiML (texted back to the sender), JSON with JSON."""

from __future__ import annotations

import html

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from ..deps import Services, client_address
from ..errors import WorkbenchError

router = APIRouter(include_in_schema=False)
MAX_BODY = 64 * 1024


@router.post("/sms/inbound")
async def inbound(request: Request, services: Services) -> Response:
    body = await request.body()
    if len(body) > MAX_BODY:
        raise WorkbenchError(f"inbound SMS: body over {MAX_BODY} bytes")
    ctype = request.headers.get("content-type", "")
    public = services.settings.http.public_url   # the URL the provider called, behind the town's proxy
    url = public + request.url.path if public else str(request.url)
    reply = await run_in_threadpool(lambda: services.sms.receive(
        url=url, headers=dict(request.headers), content_type=ctype, body=body, address=client_address(request)))
    if ctype.split(";")[0].strip().lower() == "application/json":
        return JSONResponse({"reply": reply.text, "acknowledged": reply.incident.id if reply.incident else None})
    return Response(f'<?xml version="1.0" encoding="UTF-8"?><Response><Message>{html.escape(reply.text)}'
                    "</Message></Response>", media_type="application/xml")
