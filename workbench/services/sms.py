"""The inbound-SMS webhook's service: the provider's POST, a reply carrying an incident's
code acknowledges it (``alerts/incidents/sms_replies.py``: only a registry contact's number,
rate-limited per sender and per incident).

Whether the POST comes from the provider is the ``WebhookVerifier`` of the ``[sms]``
settings (``alerts/incidents/sms_auth.py``: Twilio's signature, or an HMAC of the body, or
``none`` behind a private network); with ``sms.inbound = "off"`` (the default) the webhook
does not exist (404).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Mapping

from ...alerts.incidents.sms_auth import SmsAuthError, WebhookVerifier
from ...alerts.incidents.sms_replies import SmsReply, parse_inbound
from ..audit import AuditLog
from ..errors import Forbidden, NotFound, WorkbenchError
from ..roles import Via

if TYPE_CHECKING:
    from ...alerts.incidents.service import IncidentService

log = logging.getLogger(__name__)


class SmsInbox:
    def __init__(self, incidents: "IncidentService", audit: AuditLog, municipality: str,
                 verifier: WebhookVerifier | None = None):
        """``verifier`` None: the webhook is off."""
        self.incidents = incidents
        self.audit = audit
        self.municipality = municipality
        self.verifier = verifier

    def receive(self, *, url: str, headers: Mapping[str, str], content_type: str, body: bytes,
                address: str | None) -> SmsReply:
        """``url``: the URL the provider called (``http.public_url`` + path behind a proxy)."""
        if self.verifier is None:
            raise NotFound("the inbound-SMS webhook is off (settings: sms.inbound)")
        try:
            self.verifier.verify(url, headers, body)
        except SmsAuthError as e:
            log.warning("inbound SMS refused from %s: %s", address, e)
            raise Forbidden(str(e)) from None
        try:
            sender = parse_inbound(content_type, body).sender
            reply = self.incidents.inbound_sms(content_type, body)
        except ValueError as e:
            raise WorkbenchError(str(e)) from None
        if reply.incident is not None:
            self.audit.write(who=sender, via=Via.SMS.value, address=address, municipality=self.municipality,
                             action="incident.acknowledge", target=f"incident:{reply.incident.id}",
                             detail=f"by {reply.incident.acknowledged_by}: {reply.text}")
        return reply


__all__ = ["SmsInbox"]
