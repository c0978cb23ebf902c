"""A tiny WSGI app behind the email's acknowledge link and the inbound-SMS webhook.

* ``GET  /incidents/<id>/ack?code=CODE`` — a page with the incident and an Acknowledge
  button (a GET never acknowledges: mail scanners follow links);
* ``POST /incidents/<id>/ack`` (form: ``code``, ``by``, ``note``) — acknowledges when the
  code matches the incident;
* ``POST /sms/inbound`` — the SMS provider's webhook (see notifiers/sms/README.md).

The server's own framework can mount it (it is plain WSGI), or ``serve()`` runs it.
"""

from __future__ import annotations

import html
import json
import re
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, make_server

from .errors import IncidentError

if TYPE_CHECKING:
    from .service import IncidentService

_ACK = re.compile(r"^/incidents/(\d+)/ack$")
MAX_BODY = 64 * 1024


def make_app(n: "IncidentService") -> Callable:
    def app(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "")
        try:
            length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_BODY)
        except ValueError:
            length = 0
        body = environ["wsgi.input"].read(length) if length else b""
        if path == "/sms/inbound" and method == "POST":
            return _sms(n, environ.get("CONTENT_TYPE", ""), body, start_response)
        m = _ACK.match(path)
        if m:
            iid = int(m.group(1))
            if method == "GET":
                code = (parse_qs(environ.get("QUERY_STRING", "")).get("code") or [""])[0]
                return _ack_form(n, iid, code, start_response)
            if method == "POST":
                form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
                return _ack_post(n, iid, form, start_response)
        return _page(start_response, "404 Not Found", "Not found", "<p>No such page.</p>")
    return app


def _sms(n: "IncidentService", ctype: str, body: bytes, start_response: Callable) -> Iterable[bytes]:
    try:
        reply = n.inbound_sms(ctype, body)
    except ValueError as e:
        start_response("400 Bad Request", [("Content-Type", "text/plain; charset=utf-8")])
        return [str(e).encode()]
    if ctype.split(";")[0].strip().lower() == "application/json":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"reply": reply.text, "acknowledged": reply.incident.id if reply.incident else None}).encode()]
    start_response("200 OK", [("Content-Type", "application/xml")])  # TwiML: texts the reply back
    return [f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Message>{html.escape(reply.text)}</Message></Response>".encode()]


def _ack_form(n: "IncidentService", iid: int, code: str, start_response: Callable) -> Iterable[bytes]:
    try:
        inc = n.get(iid)
    except IncidentError as e:
        return _page(start_response, "404 Not Found", "Unknown incident", f"<p>{html.escape(str(e))}</p>")
    e = html.escape
    body = (f"<p><b>{e(inc.policy.what)}</b> at {e(inc.subject)} since {e(inc.start.isoformat())} — {e(inc.state.value)}</p>"
            f"<form method=\"post\"><input type=\"hidden\" name=\"code\" value=\"{e(code)}\">"
            "<label>Your name <input name=\"by\" required></label><br>"
            "<label>Note <input name=\"note\"></label><br><button type=\"submit\">Acknowledge</button></form>")
    return _page(start_response, "200 OK", f"Incident {inc.id}", body)


def _ack_post(n: "IncidentService", iid: int, form: dict[str, str], start_response: Callable) -> Iterable[bytes]:
    try:
        inc = n.get(iid)
        if form.get("code", "").strip().upper() != inc.code:
            return _page(start_response, "403 Forbidden", "Wrong code", "<p>The acknowledge code does not match.</p>")
        by = form.get("by", "").strip()
        if not by:
            return _page(start_response, "400 Bad Request", "Name needed", "<p>Say who acknowledges.</p>")
        inc = n.acknowledge(iid, by=by, how="email link", note=form.get("note") or None)
    except IncidentError as e:
        return _page(start_response, "409 Conflict", "Not acknowledged", f"<p>{html.escape(str(e))}</p>")
    return _page(start_response, "200 OK", "Acknowledged",
                 f"<p>Incident {inc.id} ({inc.code}) acknowledged by {html.escape(str(inc.acknowledged_by))}.</p>")


def _page(start_response: Callable, status: str, title: str, body: str) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "text/html; charset=utf-8")])
    return [f"<html><head><title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>{body}</body></html>".encode()]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - wsgiref's name
        pass


def serve(n: "IncidentService", host: str = "127.0.0.1", port: int = 8000):
    """Start the app in a daemon thread; returns the server (``.shutdown()`` stops it)."""
    server = make_server(host, port, make_app(n), handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True, name="ms4watch-ack").start()
    return server
