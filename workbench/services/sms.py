"""The inbound-SMS webhook's service: the provider's POST, a reply carrying an incident's
code acknowledges it (``alerts/incidents/sms_replies.py``: only a registry contact's number).

Verifying that the POST really comes from the provider (Twilio's ``X-Twilio-Signature``…)
is issue 14: it plugs in as an :class:`SmsVerifier`; until then every POST is taken, as the
old acknowledge endpoint took it, and the number must still be a contact's.
"""

from __future__ import annotations

import logging
from typing import Mapping, Protocol

from ...alerts.incidents.sms_replies import SmsReply, parse_inbound
from ..audit import AuditLog
from ..errors import Forbidden, WorkbenchError
from ..roles import Via
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...alerts.incidents.service import IncidentService

log = logging.getLogger(__name__)


class SmsVerifier(Protocol):
    def verify(self, url: str, headers: Mapping[str, str], body: bytes) -> bool:
        """True when the request is the provider's own (its signature checks out)."""


class AcceptAll:
    """No provider signature checked yet (issue 14)."""

    def verify(self, url: str, headers: Mapping[str, str], body: bytes) -> bool:
        return True


class SmsInbox:
    def __init__(self, incidents: "IncidentService", audit: AuditLog, municipality: str,
                 verifier: SmsVerifier | None = None):
        self.incidents = incidents
        self.audit = audit
        self.municipality = municipality
        self.verifier: SmsVerifier = verifier or AcceptAll()

    def receive(self, *, url: str, headers: Mapping[str, str], content_type: str, body: bytes,
                address: str | None) -> SmsReply:
        if not self.verifier.verify(url, headers, body):
            raise Forbidden("inbound SMS: the provider's signature does not check out")
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


__all__ = ["SmsInbox", "SmsVerifier", "AcceptAll"]
