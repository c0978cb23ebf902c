"""Webhook: one JSON POST per notification, for other systems (a work-order system, a
chat bridge). ``http://`` or ``https://`` URLs.

Body: ``{"schema": "ms4watch.notification/1", "key", "stage", "channel", "recipient",
"incident": {...snapshot...}, "due": {...}, "items": [...], "ack_url", "sent_at"}``; ``due``
is the incident's due date as the API gives it (``contract.duetext.as_json``: its last day,
end instant, provision), or null. Where the town's map says where the subject's runoff goes,
``incident.runoff`` holds it as fields (alerts/kinds/runoff.py): a site's ``site``, ``inlets``,
``found`` (named, nearest, none), ``not_on_map`` and ``outfalls`` (``id``, ``receiving_water``,
``monitored``); for a dry-weather flow the ``outfall`` and the ``sites`` upstream; and its
``text``. The header
``Idempotency-Key`` carries the queue key, so a receiver can drop a repeat.
HTTP 2xx: delivered. 408, 425, 429, 5xx and connection errors: retried. Other 4xx: failed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import asdict
from urllib.parse import urlsplit, urlunsplit

from ....contract import duetext
from ...incidents.due import snapshot_due
from ..base import Notification, PermanentError, RetryableError

SCHEMA = "ms4watch.notification/1"
RETRY_STATUS = {408, 425, 429}


def describe(url: str) -> str:
    """The URL without user info and query (where tokens live)."""
    p = urlsplit(url)
    host = p.hostname or ""
    if p.port:
        host += f":{p.port}"
    return urlunsplit((p.scheme, host, p.path, "", ""))


class WebhookNotifier:
    channel = "webhook"

    def __init__(self, url: str, timeout_s: float = 10.0):
        p = urlsplit(url)
        if p.scheme not in ("http", "https") or not p.hostname:
            raise ValueError(f"webhook URL must be http:// or https:// with a host: {describe(url)}")
        self.url = url
        self.timeout_s = timeout_s

    def payload(self, n: Notification) -> dict:
        due = snapshot_due(n.incident, n.timezone) if n.incident else None
        return {"schema": SCHEMA, "key": n.key, "stage": n.stage, "channel": n.channel,
                "recipient": asdict(n.recipient), "incident": n.incident,
                "due": duetext.as_json(due) if due is not None else None, "items": n.items,
                "station_name": n.station_name, "ack_url": n.ack_url, "routed_to": n.routed_to,
                "queued_at": n.created_at}

    def send(self, notification: Notification) -> None:
        body = json.dumps(self.payload(notification), default=str).encode("utf-8")
        req = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Idempotency-Key": notification.key,
            "User-Agent": "ms4watch-webhook/1"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                resp.read()
        except urllib.error.HTTPError as e:
            msg = f"webhook {describe(self.url)}: HTTP {e.code} {e.reason}"
            if e.code >= 500 or e.code in RETRY_STATUS:
                raise RetryableError(msg) from None
            raise PermanentError(msg) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise RetryableError(f"webhook {describe(self.url)}: {reason}") from None
