"""Outbound SMS through apprise (Twilio, Vonage, SNS, ... — any apprise URL).

The URL is a template: ``{sms}`` stands for the recipient's E.164 number, e.g.
``twilio://ACCOUNT_SID:AUTH_TOKEN@+15555550100/{sms}``. Without ``{sms}`` the URL is a
fixed destination (a group chat, ntfy topic, a pager gateway) that gets every message.

apprise reports success as a boolean; a ``False`` is taken as retryable (the delivery queue tries
again with backoff) and the reason apprise logged is kept in the queued row.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..base import Notification, PermanentError, RetryableError
from .format import sms_text

if TYPE_CHECKING:
    import apprise

PLACEHOLDER = "{sms}"
_EXAMPLE = "+15555550100"


def _apprise() -> "type[apprise.Apprise]":
    """apprise's Apprise, imported where an SMS URL is first used: a server without one (most
    of ``serve --http off``'s start-up budget) does not pay its ~0.2 s import."""
    import apprise

    return apprise.Apprise


def render_url(template: str, number: str) -> str:
    return template.replace(PLACEHOLDER, quote(number, safe=""))


def describe(url: str) -> str:
    """The URL with secrets masked (apprise's privacy form), safe for logs and the database."""
    obj = _apprise().instantiate(render_url(url, _EXAMPLE))
    if obj is None:
        return url.split("://", 1)[0] + "://?"
    return str(obj.url(privacy=True)).replace(quote(_EXAMPLE, safe=""), PLACEHOLDER)


class SmsNotifier:
    channel = "sms"

    def __init__(self, url: str):
        self.template = url
        self.per_recipient = PLACEHOLDER in url
        if _apprise().instantiate(render_url(url, _EXAMPLE)) is None:
            raise ValueError(f"not a URL apprise can send to: {describe(url)}")

    def send(self, notification: Notification) -> None:
        text = sms_text(notification)
        url = render_url(self.template, notification.recipient.address) if self.per_recipient else self.template
        import apprise

        a = apprise.Apprise()
        if not a.add(url):
            raise PermanentError(f"apprise refused the URL for {notification.recipient.name}")
        with apprise.LogCapture(level=logging.WARNING) as log:
            ok = a.notify(body=text, title="")
        if not ok:
            reason = " ".join(str(log.getvalue()).split())[:300] or "no reason given"
            raise RetryableError(f"SMS to {notification.recipient.address} not accepted: {reason}")
