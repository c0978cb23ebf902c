"""--notify URLs to channels."""

from __future__ import annotations

import pytest

from ms4watch.alerts.notifiers.email import EmailNotifier
from ms4watch.alerts.notifiers.file import FileNotifier
from ms4watch.alerts.notifiers.sms import SmsNotifier
from ms4watch.alerts.notifiers.urls import build_channels
from ms4watch.alerts.notifiers.webhook import WebhookNotifier


def test_each_scheme_to_its_channel(tmp_path):
    ch = build_channels(["mailto://127.0.0.1:2525?to=smo@town.test", "https://ops.test/h?token=secret",
                         "json://127.0.0.1:9/sms?:to={sms}", "ntfy://ms4watch-alerts", f"file://{tmp_path}/o.txt"],
                        file_path=tmp_path / "default.txt")
    assert isinstance(ch.email, EmailNotifier) and ch.email_to == ("smo@town.test",)
    assert isinstance(ch.sms, SmsNotifier) and ch.sms.per_recipient
    names = [r.name for r, _ in ch.feeds]
    assert names[0] == "webhook:https://ops.test/h" and "secret" not in names[0]
    assert names[1].startswith("apprise:ntfy") and "ms4watch-alerts" in names[1]
    assert names[2] == f"file:{tmp_path}/o.txt"
    assert [type(n) for _, n in ch.feeds] == [WebhookNotifier, SmsNotifier, FileNotifier]


def test_no_url_is_the_notifications_file(tmp_path):
    ch = build_channels([], file_path=tmp_path / "notifications.txt")
    assert ch.email is None and ch.sms is None
    assert [(r.name, type(n)) for r, n in ch.feeds] == [(f"file:{tmp_path}/notifications.txt", FileNotifier)]


def test_refusals(tmp_path):
    with pytest.raises(ValueError, match="only one mailto"):
        build_channels(["mailto://a.test", "mailto://b.test"], file_path=tmp_path / "o")
    with pytest.raises(ValueError, match="not a URL"):
        build_channels(["smo@town.test"], file_path=tmp_path / "o")
