"""Inbound SMS: a reply carrying an incident's acknowledge code acknowledges it.

The provider POSTs to our webhook (see alerts/notifiers/sms/README.md). Only a number that
belongs to a registry contact may acknowledge; the contact's name goes in the audit log.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence
from urllib.parse import parse_qs

from ms4watch.contract.registry import Contact

from ..notifiers.sms.gsm7 import fit, to_gsm7
from .errors import IncidentError
from .model import Incident
from .sms_auth import ReplyLimiter
from .store import CODE_LENGTH, IncidentStore

_TOKEN = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class InboundSms:
    sender: str
    body: str


@dataclass(frozen=True)
class SmsReply:
    text: str                     # what to text back (one segment)
    incident: Incident | None     # the incident acknowledged, if any


def parse_inbound(content_type: str, raw: bytes) -> InboundSms:
    """Twilio-style form fields (``From``, ``Body``) or JSON (``{"from": ..., "body": ...}``)."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    try:
        if ctype == "application/json":
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("JSON body must be an object")
            sender, body = data.get("from") or data.get("From"), data.get("body") or data.get("Body")
        else:
            form = parse_qs(raw.decode("utf-8"), keep_blank_values=True)
            sender, body = next(iter(form.get("From", [])), None), next(iter(form.get("Body", [])), None)
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"inbound SMS: unreadable body: {e}") from None
    if not sender:
        raise ValueError("inbound SMS: field 'From' is missing")
    if body is None:
        raise ValueError("inbound SMS: field 'Body' is missing")
    return InboundSms(str(sender), str(body))


def normalise_number(number: str) -> str:
    digits = re.sub(r"[^\d+]", "", number.strip())
    if digits and not digits.startswith("+"):
        digits = "+" + (digits if len(digits) > 10 else "1" + digits)  # NANP local numbers
    return digits


def handle_reply(store: IncidentStore, contacts: Sequence[Contact], msg: InboundSms, now: datetime,
                 limiter: ReplyLimiter | None = None) -> SmsReply:
    """Acknowledge the incident whose code the reply carries, on behalf of the sender.

    ``limiter`` bounds replies per sender and acknowledgement attempts per incident, so
    codes cannot be guessed at speed. Only codes are looked up (a number in the body is
    never taken for an incident id)."""
    sender = normalise_number(msg.sender)
    if limiter is not None and not limiter.sender(sender):
        return SmsReply("ms4watch: too many replies from this number; try again in a quarter of an hour.", None)
    contact = next((c for c in contacts if c.sms and normalise_number(c.sms) == sender), None)
    if contact is None:
        return SmsReply("ms4watch: this number is not a registered contact; nothing acknowledged.", None)
    candidates = [t.upper() for t in _TOKEN.findall(msg.body) if len(t) == CODE_LENGTH and not t.isdigit()]
    for code in candidates:
        try:
            inc = store.by_code(code)
        except IncidentError:
            continue
        if limiter is not None and not limiter.incident(inc.id):
            return SmsReply(_one(f"ms4watch: too many attempts on {inc.code}; try again later or use the link."), None)
        try:
            inc = store.acknowledge(inc.id, by=contact.name, how=f"sms reply from {sender}", now=now,
                                    note=msg.body.strip()[:200] or None)
        except IncidentError as e:
            return SmsReply(_one(f"ms4watch: {e}"), None)
        return SmsReply(_one(f"ms4watch: {inc.code} acknowledged by {inc.acknowledged_by} ({inc.subject})."), inc)
    return SmsReply(_one("ms4watch: no acknowledge code found. Reply with the 5-character code from the alert."), None)


def _one(text: str) -> str:
    return fit(to_gsm7(text), 160)
