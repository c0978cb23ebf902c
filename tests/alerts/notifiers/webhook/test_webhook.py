"""Webhook: JSON POST to a real HTTP server on loopback."""

from __future__ import annotations

import pytest

from ms4watch.alerts.notifiers.base import PermanentError, Recipient, RetryableError
from ms4watch.alerts.notifiers.webhook import SCHEMA, WebhookNotifier
from tests.support.notify_peers import HttpSink
from tests.support.servers import free_port


@pytest.fixture
def hook():
    sink = HttpSink().start()
    yield sink
    sink.stop()


def test_posts_the_notification_as_json(hook, make_notification):
    feed = Recipient("webhook:x", "feed", "webhook:x")
    n = make_notification(channel="webhook", recipient=feed, routed_to=["Pat SMO (smo)"])
    WebhookNotifier(f"http://127.0.0.1:{hook.port}/hooks/ms4?token=abc").send(n)
    req = hook.requests[0]
    assert req["path"] == "/hooks/ms4?token=abc"
    assert req["headers"]["Content-Type"] == "application/json" and req["headers"]["Idempotency-Key"] == n.key
    body = hook.json(0)
    assert body["schema"] == SCHEMA and body["stage"] == "open" and body["routed_to"] == ["Pat SMO (smo)"]
    assert body["incident"]["kind"] == "dry_weather_flow" and body["incident"]["subject"] == "OF-12"
    assert body["incident"]["event"]["peak_gpm"] == 4.2 and body["ack_url"] == n.ack_url


@pytest.mark.parametrize("status, error", [(503, RetryableError), (429, RetryableError), (400, PermanentError),
                                           (404, PermanentError)])
def test_http_errors_are_classified(hook, make_notification, status, error):
    hook.statuses.append(status)
    with pytest.raises(error, match=f"HTTP {status}"):
        WebhookNotifier(f"http://127.0.0.1:{hook.port}/h").send(make_notification(channel="webhook"))


def test_connection_refused_is_retryable(make_notification):
    with pytest.raises(RetryableError, match="refused"):
        WebhookNotifier(f"http://127.0.0.1:{free_port()}/h", timeout_s=2).send(make_notification(channel="webhook"))


def test_bad_url():
    with pytest.raises(ValueError, match="http:// or https://"):
        WebhookNotifier("ftp://x/y")


def test_a_site_alerts_runoff_goes_as_typed_fields(hook, make_notification):
    from tests.support.notify_peers import turbidity
    from tests.support.town_network import main_st_reaches

    n = make_notification(event=turbidity("2026-06-01T15:30:00Z"), channel="webhook", reaches=main_st_reaches())
    WebhookNotifier(f"http://127.0.0.1:{hook.port}/h").send(n)
    runoff = hook.json(0)["incident"]["runoff"]
    assert (runoff["site"], runoff["inlets"], runoff["found"]) == ("CS-7", ["CB-1"], "named")
    assert runoff["outfalls"] == [{"id": "OF-12", "receiving_water": "Mohawk River", "monitored": ["OF-12"]}]
    assert runoff["text"] == "drains to CB-1, reaching outfall OF-12 (Mohawk River)"
