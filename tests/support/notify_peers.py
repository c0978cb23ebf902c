"""Real peers for the notification tests, on free loopback ports: an SMTP server
(aiosmtpd) and an HTTP server that records what it is sent. Plus a controllable clock."""

from __future__ import annotations

import email
import email.policy
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.servers import free_port


class Clock:
    """``clock()`` returns the time the test set; ``advance(minutes=5)`` moves it."""

    def __init__(self, start: datetime):
        self.t = start

    def __call__(self) -> datetime:
        return self.t

    def advance(self, **kw: float) -> datetime:
        self.t += timedelta(**kw)
        return self.t

    def set(self, t: datetime) -> None:
        self.t = t


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


class _Handler:
    def __init__(self, sink: "SmtpSink"):
        self.sink = sink

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's name
        with self.sink.lock:
            if self.sink.reply_queue:
                reply = self.sink.reply_queue.pop(0)
                if not reply.startswith("250"):
                    return reply
            msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
            self.sink.messages.append(msg)
            self.sink.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 Message accepted for delivery"


class SmtpSink:
    """aiosmtpd on 127.0.0.1, plain SMTP, no auth, no TLS; stoppable and restartable on its port."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.reply_queue: list[str] = []   # e.g. ["451 try later"]: next DATA replies, in order
        self.lock = threading.Lock()
        self.controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"mailto://127.0.0.1:{self.port}?from=ms4watch@town.test"

    def start(self) -> "SmtpSink":
        self.controller = Controller(_Handler(self), hostname="127.0.0.1", port=self.port)
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if address in str(m["To"])]


@dataclass
class HttpSink:
    """A real HTTP server that records each POST; ``statuses`` scripts the next replies."""

    port: int = field(default_factory=free_port)
    requests: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)

    def start(self) -> "HttpSink":
        sink = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = sink.statuses.pop(0) if sink.statuses else 200
                if status < 300:
                    sink.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def json(self, i: int) -> Any:
        return json.loads(self.requests[i]["body"])


REGISTRY_YAML = """
municipality: schenectady
timezone: America/New_York
rain_gauges: [{id: RG-1}]
outfalls:
  - {id: OF-12, name: "Main St outfall", rain_gauges: [RG-1], flow_floor_gpm: 0.5}
  - {id: OF-14, name: "Canal Rd outfall", rain_gauges: [RG-1]}
turbidity_pairs:
  - {id: TP-1, upstream: TU-1, downstream: TD-1, name: "Elm St creek", construction_site: CS-7}
construction_sites:
  - {id: CS-7, name: "Elm St site", rain_gauges: [RG-1], active_from: 2026-01-01}
contacts:
  - {name: Pat SMO, role: smo, email: pat@town.test, sms: "+15555550101", quiet_hours: "22:00-07:00"}
  - {name: Dee Deputy, role: deputy, email: dee@town.test, sms: "+15555550102"}
  - {name: Ian Inspector, role: inspector, email: ian@town.test}
  - {name: Sam Site, role: site_operator, email: sam@town.test, stations: [CS-7]}
"""


def registry(text: str = REGISTRY_YAML):
    from ms4watch.contract.registry import parse_registry

    return parse_registry(text)


def event(kind: str, *, id: str | None = None, **fields: Any):
    """A typed engine event from ISO times (``"2026-06-01T15:30:00Z"``), with the id the
    engine would give it unless one is given."""
    from ms4watch.alerts.events import AlertEvent, parse_time_ns
    from ms4watch.alerts.rules import dry_weather_flow, inspections, storms, turbidity

    provisions = {"dry_weather_flow": dry_weather_flow.PROVISION, "turbidity_contrast": turbidity.PROVISION,
                  "inspection_due": inspections.PROVISION, "inspection_overdue": inspections.PROVISION,
                  "storm": storms.PROVISION}
    fields.setdefault("provision", provisions.get(kind, ""))
    if id is None:
        subject = next(fields[f] for f in ("outfall", "pair", "site", "gauge", "station") if fields.get(f))
        when = fields.get("start") or fields.get("storm_end") or fields.get("due")
        id = f"{kind}/{subject}/{parse_time_ns(when)}"
    return AlertEvent.from_dict({"kind": kind, **fields, "id": id})


def dwf(start: str, end: str | None = None, outfall: str = "OF-12", **kw: Any):
    return event("dry_weather_flow", **{"outfall": outfall, "start": start, "end": end, "peak_gpm": 4.2,
                                        "suppressed": None, **kw})


def turbidity(start: str, end: str | None = None, pair: str = "TP-1"):
    return event("turbidity_contrast", pair=pair, start=start, end=end, max_delta_ntu=63.0, suppressed=None)


def inspection(due: str, storm_end: str, site: str = "CS-7", **kw: Any):
    return event("inspection_due", site=site, gauge="RG-1", storm_end=storm_end, due=due, reason="storm", **kw)


class BlackHoleSmtp:
    """A port that accepts TCP connections and never says a word: an SMTP server that hangs.
    ``connections`` counts the clients it holds; ``stop()`` closes them (each client reads
    the end of its connection) and frees the port for a real server to come back on."""

    def __init__(self, port: int | None = None):
        import socket
        import threading
        self.port = port or free_port()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", self.port))
        self._sock.listen(128)
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="black-hole-smtp", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:          # stopped
                return
            self._held.append(conn)

    @property
    def connections(self) -> int:
        return len(self._held)

    def url(self, **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in {"from": "ms4watch@town.test", **params}.items())
        return f"mailto://127.0.0.1:{self.port}?{query}"

    def stop(self) -> None:
        import socket
        try:
            self._sock.shutdown(socket.SHUT_RDWR)   # wakes the accepting thread
        except OSError:
            pass
        self._sock.close()
        self._thread.join(5)
        for conn in self._held:
            conn.close()
