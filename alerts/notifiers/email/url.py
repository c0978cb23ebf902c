"""``mailto://`` / ``mailtos://`` URLs, apprise's syntax, parsed here.

We send email with the standard library's smtplib rather than apprise's mailto plugin:
our messages need a plain-text part written separately from the HTML part (apprise
derives one from the other), a Message-ID derived from the queue key (so a repeat after
a crash is recognisable), and the SMTP reply code to tell a retryable 4xx from a permanent
5xx (apprise's notify() returns only True/False). The URL syntax stays apprise's:

    mailto://[user:password@]host[:port][?to=a@x.test,b@x.test][&from=ms4watch@x.test][&mode=insecure|starttls|ssl][&timeout=15s]

``mailto://`` is plain SMTP (port 25 by default; no TLS, no login unless a user is given);
``mailtos://`` is STARTTLS on 587 by default, or implicit TLS with ``mode=ssl`` (465).
``timeout`` bounds each SMTP exchange (default 15 s): a server that accepts the connection
and never answers costs the delivery worker that long per attempt, and nobody else anything.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from ms4watch.contract.timeutil import parse_duration

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
MODES = {"insecure": 25, "starttls": 587, "ssl": 465}


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    mode: str                  # insecure | starttls | ssl
    user: str | None
    password: str | None
    sender: str
    to: tuple[str, ...]        # standing recipients named in the URL (may be empty)
    timeout_s: float = 15.0    # each SMTP exchange

    def describe(self) -> str:
        auth = f"{self.user}:***@" if self.user else ""
        return f"{'mailtos' if self.mode != 'insecure' else 'mailto'}://{auth}{self.host}:{self.port} ({self.mode})"


def parse_mailto(url: str) -> SmtpConfig:
    """Refuse a bad URL with a message naming the part at fault."""
    p = urlsplit(url)
    if p.scheme not in ("mailto", "mailtos"):
        raise ValueError(f"not a mailto:// or mailtos:// URL: {p.scheme}://")
    if not p.hostname:
        raise ValueError("mailto URL: no SMTP host (write mailto://host:port?to=...)")
    q = {k.lower(): v[-1] for k, v in parse_qs(p.query, keep_blank_values=True).items()}
    mode = q.get("mode", "insecure" if p.scheme == "mailto" else "starttls").lower()
    if mode not in MODES:
        raise ValueError(f"mailto URL: mode must be one of {', '.join(MODES)}, got {mode!r}")
    if p.scheme == "mailtos" and mode == "insecure":
        raise ValueError("mailtos:// asks for TLS; use mailto:// for plain SMTP")
    try:
        port = p.port or MODES[mode]
    except ValueError as e:
        raise ValueError(f"mailto URL: bad port: {e}") from None
    to = tuple(a.strip() for a in re.split(r"[,;\s]+", unquote(q.get("to", ""))) if a.strip())
    for a in to:
        if not _EMAIL.match(a):
            raise ValueError(f"mailto URL: to: not an email address: {a!r}")
    sender = unquote(q.get("from", "")) or _default_sender(p.hostname, p.username)
    if not _EMAIL.match(sender):
        raise ValueError(f"mailto URL: from: not an email address: {sender!r}")
    try:
        timeout_s = parse_duration(q.get("timeout", "15s")).total_seconds()
    except ValueError as e:
        raise ValueError(f"mailto URL: timeout: {e}") from None
    if not 0 < timeout_s <= 600:
        raise ValueError(f"mailto URL: timeout must be between 0 and 10 min, got {q.get('timeout')!r}")
    return SmtpConfig(host=p.hostname, port=port, mode=mode, user=unquote(p.username) if p.username else None,
                      password=unquote(p.password) if p.password else None, sender=sender, to=to,
                      timeout_s=timeout_s)


def _default_sender(host: str, user: str | None) -> str:
    if user and "@" in unquote(user):
        return unquote(user)
    try:
        ipaddress.ip_address(host)
        domain = "localhost"
    except ValueError:
        domain = host if "." in host else "localhost"
    return f"ms4watch@{domain}"
