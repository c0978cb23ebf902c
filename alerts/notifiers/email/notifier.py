"""Email over SMTP (smtplib; see url.py for why not apprise's mailto plugin)."""

from __future__ import annotations

import smtplib
import ssl
from datetime import datetime, timezone
from typing import Callable

from ..base import Notification, PermanentError, RetryableError
from . import chart
from .chart import ReadingsLookup
from .message import build
from .url import SmtpConfig, parse_mailto


class EmailNotifier:
    channel = "email"

    def __init__(self, url: str, *, readings_lookup: ReadingsLookup | None = None,
                 clock: Callable[[], datetime] | None = None, timeout_s: float | None = None):
        self.config: SmtpConfig = parse_mailto(url)
        self.readings_lookup = readings_lookup
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.timeout_s = timeout_s if timeout_s is not None else self.config.timeout_s

    def prepare(self) -> None:
        """With charts: draw one and throw it away (matplotlib's imports, fonts and caches),
        so the first alert does not pay them. The delivery worker calls it as it starts."""
        if self.readings_lookup is not None:
            chart.warm_up()

    def send(self, notification: Notification) -> None:
        cfg = self.config
        msg = build(notification, sender=cfg.sender, to=notification.recipient.address, now=self.clock(),
                    readings_lookup=self.readings_lookup)
        where = cfg.describe()
        try:
            if cfg.mode == "ssl":
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=self.timeout_s,
                                                      context=ssl.create_default_context())
            else:
                smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=self.timeout_s)
            with smtp:
                if cfg.mode == "starttls":
                    smtp.starttls(context=ssl.create_default_context())
                if cfg.user:
                    smtp.login(cfg.user, cfg.password or "")
                smtp.send_message(msg, from_addr=cfg.sender, to_addrs=[notification.recipient.address])
        except smtplib.SMTPRecipientsRefused as e:
            codes = [c for c, _ in e.recipients.values()]
            text = f"{where}: recipient refused: {e.recipients}"
            if codes and all(c >= 500 for c in codes):
                raise PermanentError(text) from None
            raise RetryableError(text) from None
        except smtplib.SMTPAuthenticationError as e:
            # A wrong password is fixed by a person and a restart; keep the message until then.
            raise RetryableError(f"{where}: login refused ({e.smtp_code})") from None
        except smtplib.SMTPResponseException as e:
            text = f"{where}: {e.smtp_code} {e.smtp_error!r}"
            if e.smtp_code >= 500:
                raise PermanentError(text) from None
            raise RetryableError(text) from None
        except (smtplib.SMTPException, OSError) as e:
            raise RetryableError(f"{where}: {type(e).__name__}: {e}") from None
