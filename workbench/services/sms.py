"""The inbound-SMS webhook's service: the provider's POST, a reply carrying an incident's
code acknowledges it (``alerts/incidents/sms_replies.py``: only a registry contact's number,
rate-limited per sender and per incident).

Whether the POST comes from the provider is the ``WebhookVerifier`` of the ``[sms]``
settings (``alerts/incidents/sms_auth.py``: Twilio's signature, or an HMAC of the body, or
``none`` behind a private network); with ``sms.inbound = "off"`` (the default) the webhook
does not exist (404).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Mapping
from urllib.parse import parse_qs

from ...alerts.incidents.sms_auth import SmsAuthError, WebhookVerifier
from ...alerts.incidents.sms_replies import SmsReply, parse_inbound
from ..audit import AuditLog
from ..errors import Forbidden, NotFound, WorkbenchError
from ..records import ReceivedSms
from ..roles import Via

if TYPE_CHECKING:
    from ...alerts.incidents.service import IncidentService

log = logging.getLogger(__name__)


class SmsInbox:
    def __init__(self, incidents: "IncidentService", audit: AuditLog, municipality: str,
                 verifier: WebhookVerifier | None = None, received: ReceivedSms | None = None):
        """``verifier`` None: the webhook is off; ``received``: the posts taken so far
        (None: replays are not recognised)."""
        self.incidents = incidents
        self.audit = audit
        self.municipality = municipality
        self.verifier = verifier
        self.received = received

    def receive(self, *, url: str, headers: Mapping[str, str], content_type: str, body: bytes,
                address: str | None) -> SmsReply | None:
        """``url``: the URL the provider called (``http.public_url`` + path behind a proxy).
        None: this message was taken before (a replay), nothing is done."""
        if self.verifier is None:
            raise NotFound("the inbound-SMS webhook is off (settings: sms.inbound)")
        try:
            self.verifier.verify(url, headers, body)
        except SmsAuthError as e:
            log.warning("inbound SMS refused from %s: %s", address, e)
            raise Forbidden(str(e)) from None
        key = message_id(content_type, body)
        if self.received is not None and not self.received.first_time(key, municipality=self.municipality,
                                                                      at=datetime.now(timezone.utc)):
            log.warning("inbound SMS %s from %s taken before: a replay, ignored", key, address)
            return None
        try:
            sender = parse_inbound(content_type, body).sender
            reply = self.incidents.inbound_sms(content_type, body)
        except ValueError as e:
            self._forget(key)
            raise WorkbenchError(str(e)) from None
        except BaseException:
            self._forget(key)
            raise
        if reply.incident is not None:
            self.audit.write(who=sender, via=Via.SMS.value, address=address, municipality=self.municipality,
                             action="incident.acknowledge", target=f"incident:{reply.incident.id}",
                             detail=f"by {reply.incident.acknowledged_by}: {reply.text}")
        return reply

    def _forget(self, key: str) -> None:
        if self.received is not None:
            self.received.forget(key)


def message_id(content_type: str, body: bytes) -> str:
    """The provider's id of the message (Twilio's ``MessageSid`` or ``SmsSid``; ``id`` or
    ``message_id`` in JSON), else ``sha256:`` of the body (the same signed body again is a
    replay)."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    found = None
    try:
        if ctype == "application/json":
            data = json.loads(body.decode("utf-8"))
            if isinstance(data, dict):
                found = next((data[k] for k in ("MessageSid", "SmsSid", "message_id", "id") if data.get(k)), None)
        else:
            form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
            found = next((form[k][0] for k in ("MessageSid", "SmsSid") if form.get(k) and form[k][0]), None)
    except (UnicodeDecodeError, ValueError):
        pass
    if isinstance(found, (str, int)) and 0 < len(str(found)) <= 100:
        return f"id:{found}"
    return "sha256:" + hashlib.sha256(body).hexdigest()


__all__ = ["SmsInbox", "message_id"]
