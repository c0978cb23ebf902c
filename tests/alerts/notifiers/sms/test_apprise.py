"""Outbound SMS through apprise. No SMS provider can run here: a local HTTP server stands
in for it, reached with apprise's json:// plugin (the number in the payload's "to")."""

from __future__ import annotations

import pytest

from ms4watch.alerts.notifiers.base import Recipient, RetryableError
from ms4watch.alerts.notifiers.sms import SmsNotifier, sms_text
from ms4watch.alerts.notifiers.sms.notifier import describe
from tests.support.notify_peers import HttpSink


@pytest.fixture
def provider():
    sink = HttpSink().start()
    yield sink
    sink.stop()


def test_one_sms_to_the_contacts_number(provider, make_notification):
    n = make_notification(channel="sms", recipient=Recipient("Pat SMO", "smo", "+15555550101"))
    SmsNotifier(f"json://127.0.0.1:{provider.port}/sms?:to={{sms}}").send(n)
    assert len(provider.requests) == 1
    body = provider.json(0)
    assert body["to"] == "+15555550101" and body["message"] == sms_text(n) and provider.requests[0]["path"] == "/sms"


def test_provider_error_is_retryable_with_the_reason(provider, make_notification):
    provider.statuses.append(500)
    n = make_notification(channel="sms", recipient=Recipient("Pat SMO", "smo", "+15555550101"))
    with pytest.raises(RetryableError, match="not accepted"):
        SmsNotifier(f"json://127.0.0.1:{provider.port}/sms?:to={{sms}}").send(n)
    SmsNotifier(f"json://127.0.0.1:{provider.port}/sms?:to={{sms}}").send(n)
    assert len(provider.requests) == 1


def test_urls_are_checked_and_secrets_masked():
    with pytest.raises(ValueError, match="apprise"):
        SmsNotifier("nosuch://x/{sms}")
    shown = describe("twilio://ACabcdefabcdefabcdefabcdefabcdefab:supersecrettoken1234567890abcdef@+15555550100/{sms}")
    assert "supersecret" not in shown and shown.startswith("twilio://")
