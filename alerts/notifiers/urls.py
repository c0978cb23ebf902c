"""Turn ``--notify`` URLs into channels.

==========================  =======================================================
``mailto://`` ``mailtos://``  email transport for every contact with an email address;
                              its ``to=`` addresses are extra recipients routed as SMO
``http://`` ``https://``      webhook feed: every notification as JSON
``file:///path``              notifications file feed
any other apprise URL         with ``{sms}``: SMS transport for every contact with a
                              number; without: a feed getting every message as SMS text
(no URL at all)               notifications file feed (``notifications.txt`` beside the database)
==========================  =======================================================

A feed receives every stage of every incident, without quiet hours or caps: it is a
system or a log, not a person's phone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable
from urllib.parse import unquote, urlsplit

from ms4watch.contract.errors import ConfigValueError

from .base import Notifier, Recipient

if TYPE_CHECKING:   # each channel's module imported by the URL that asks for it: a server without
    from .email import EmailNotifier   # email, SMS or webhooks (the notifications file) imports none of them
    from .email.chart import ReadingsLookup
    from .file.notifier import EntryStream
    from .sms import SmsNotifier


@dataclass
class Channels:
    email: EmailNotifier | None = None
    sms: SmsNotifier | None = None
    feeds: list[tuple[Recipient, Notifier]] = field(default_factory=list)
    email_to: tuple[str, ...] = ()

    def prepare(self) -> None:
        """The channels' one-time costs (the email's first chart), paid before the first alert."""
        if self.email is not None:
            self.email.prepare()

    def feed(self, name: str) -> Notifier | None:
        name = "file:" + name.removeprefix("outbox:") if name.startswith("outbox:") else name  # rows from before
        return next((n for r, n in self.feeds if r.name == name), None)


def build_channels(urls: list[str], *, file_path: Path, readings_lookup: ReadingsLookup | None = None,
                   clock: Callable[[], datetime] | None = None, stream: EntryStream | None = None) -> Channels:
    """Refuses a bad or unsupported URL with a ConfigValueError (a ValueError too) naming it
    (secrets masked)."""
    try:
        return _build_channels(urls, file_path=file_path, readings_lookup=readings_lookup, clock=clock, stream=stream)
    except ConfigValueError:
        raise
    except ValueError as e:   # the notifiers' URL parsers: a setting the user wrote
        raise ConfigValueError(str(e)) from None


def _build_channels(urls: list[str], *, file_path: Path, readings_lookup: ReadingsLookup | None,
                    clock: Callable[[], datetime] | None, stream: EntryStream | None) -> Channels:
    ch = Channels()
    if not urls:
        urls = [Path(file_path).resolve().as_uri()]
    for url in urls:
        scheme = url.split("://", 1)[0].lower() if "://" in url else ""
        if not scheme:
            raise ValueError(f"--notify {url!r}: not a URL (e.g. mailto://127.0.0.1:2525?to=smo@town.test)")
        if scheme in ("mailto", "mailtos"):
            from .email import EmailNotifier
            if ch.email is not None:
                raise ValueError("--notify: only one mailto:// URL (put several addresses in to=a@x,b@y)")
            ch.email = EmailNotifier(url, readings_lookup=readings_lookup, clock=clock)
            ch.email_to = ch.email.config.to
        elif scheme in ("http", "https"):
            from .webhook import WebhookNotifier
            from .webhook.notifier import describe as describe_http
            label = f"webhook:{describe_http(url)}"
            ch.feeds.append((Recipient(label, "feed", label), WebhookNotifier(url)))
        elif scheme == "file":
            from .file import FileNotifier
            path = Path(unquote(urlsplit(url).path))
            label = f"file:{path}"
            ch.feeds.append((Recipient(label, "feed", str(path)), FileNotifier(path, stream=stream)))
        else:
            from .sms import SmsNotifier
            from .sms.notifier import PLACEHOLDER
            from .sms.notifier import describe as describe_apprise
            notifier = SmsNotifier(url)
            if PLACEHOLDER in url:
                if ch.sms is not None:
                    raise ValueError("--notify: only one SMS URL with {sms}")
                ch.sms = notifier
            else:
                label = f"apprise:{describe_apprise(url)}"
                ch.feeds.append((Recipient(label, "feed", label), notifier))
    return ch
