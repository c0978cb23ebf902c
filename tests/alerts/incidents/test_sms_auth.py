"""Inbound SMS: the provider's signature (Twilio's own validator; HMAC for others) and the
rate limits that make acknowledge codes impossible to guess."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from ms4watch.alerts.incidents import IncidentStore, State, connect
from ms4watch.alerts.incidents.sms_auth import ReplyLimiter, Scheme, SmsAuthError, WebhookVerifier, sign_body
from ms4watch.alerts.incidents.sms_replies import InboundSms, handle_reply
from tests.support.notify_peers import dwf, registry, utc

URL = "https://ms4.town.example/sms/inbound"
FORM = urlencode({"From": "+15555550101", "Body": "ACK K7Q2M", "To": "+15555550100",
                  "MessageSid": "SM0123456789abcdef"}).encode()


def twilio_signature(token: str, url: str, body: bytes) -> str:
    from urllib.parse import parse_qsl

    from twilio.request_validator import RequestValidator
    return RequestValidator(token).compute_signature(url, dict(parse_qsl(body.decode())))


def test_twilio_requests_are_checked_with_twilios_validator():
    v = WebhookVerifier(Scheme.TWILIO, "auth-token-123")
    v.verify(URL, {"X-Twilio-Signature": twilio_signature("auth-token-123", URL, FORM)}, FORM)
    with pytest.raises(SmsAuthError, match="does not match"):
        v.verify(URL, {"X-Twilio-Signature": twilio_signature("another-token", URL, FORM)}, FORM)
    with pytest.raises(SmsAuthError, match="does not match"):   # signed for another URL (a proxy rewrote it)
        v.verify(URL, {"x-twilio-signature": twilio_signature("auth-token-123", "http://127.0.0.1:8000/sms/inbound",
                                                              FORM)}, FORM)
    with pytest.raises(SmsAuthError, match="no X-Twilio-Signature"):
        v.verify(URL, {}, FORM)
    forged = FORM.replace(b"K7Q2M", b"AAAAA")
    with pytest.raises(SmsAuthError):
        v.verify(URL, {"X-Twilio-Signature": twilio_signature("auth-token-123", URL, FORM)}, forged)


def test_other_providers_sign_the_body_with_a_shared_secret():
    v = WebhookVerifier(Scheme.HMAC, "s3cret")
    body = b'{"from": "+15555550101", "body": "K7Q2M"}'
    v.verify(URL, {"X-MS4Watch-Signature": sign_body("s3cret", body)}, body)
    for headers in ({}, {"X-MS4Watch-Signature": sign_body("other", body)}, {"X-MS4Watch-Signature": "sha256="}):
        with pytest.raises(SmsAuthError, match="missing or wrong"):
            v.verify(URL, headers, body)
    with pytest.raises(ValueError, match="no secret"):
        WebhookVerifier(Scheme.HMAC, "")
    WebhookVerifier(Scheme.NONE).verify(URL, {}, body)        # explicitly unsigned


class Clock:
    t = 0.0

    def __call__(self) -> float:
        return self.t


def test_replies_are_limited_per_sender_and_attempts_per_incident(tmp_path):
    store = IncidentStore(connect(tmp_path / "s.db"))
    contacts = registry().contacts
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), utc(2026, 6, 1, 16)).incident
    clock = Clock()
    lim = ReplyLimiter(per_sender=3, per_incident=2, window_s=900, clock=clock)
    now = utc(2026, 6, 1, 16)
    guesses = [handle_reply(store, contacts, InboundSms("+15555550101", f"{g}"), now, lim).text
               for g in ("AAAAA", "BBBBB", "CCCCC", inc.code)]
    assert "too many replies from this number" in guesses[-1]      # the 4th reply within 15 min
    assert store.get(inc.id).state is State.OPEN
    clock.t = 901                                                  # the window has passed
    reply = handle_reply(store, contacts, InboundSms("+15555550101", inc.code), now, lim)
    assert reply.incident is not None and store.get(inc.id).state is State.ACKNOWLEDGED
    other = store.apply_event(dwf("2026-06-01T15:30:00Z", outfall="OF-14"), now).incident
    for sender in ("+15555550101", "+15555550102"):              # per incident, whoever sends
        handle_reply(store, contacts, InboundSms(sender, f"ok {other.code.lower()}"), now, lim)
    assert "too many attempts" in handle_reply(store, contacts, InboundSms("+15555550102", other.code), now, lim).text


def test_a_number_in_a_reply_is_never_taken_for_an_incident_id(tmp_path):
    store = IncidentStore(connect(tmp_path / "s.db"))
    now = utc(2026, 6, 1, 16)
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), now).incident
    reply = handle_reply(store, registry().contacts, InboundSms("+15555550101", f"call me at {inc.id:05d}"), now)
    assert reply.incident is None and store.get(inc.id).state is State.OPEN
