"""Who may post an inbound SMS: the provider's signature, and how often a code may be tried.

The inbound-SMS webhook acknowledges an incident when a registered number replies with its
5-character code. Anyone who can reach the URL could otherwise post a reply "from" the
SMO's number, and could guess codes. So:

* **Signatures.** Twilio signs each webhook request (``X-Twilio-Signature``: HMAC-SHA1 of
  the full URL and the POST parameters, keyed by the account's auth token); it is checked
  with the ``twilio`` package's own ``RequestValidator``. Any other provider, or a gateway
  of the town's own, signs the raw body with a shared secret: ``X-MS4Watch-Signature:
  sha256=<hex HMAC-SHA256>``. ``none`` accepts unsigned requests and is for a provider
  reached only through a private network; the server logs a warning for it at start.
* **Rate limits.** At most ``per_sender`` replies from one number and ``per_incident``
  acknowledgement attempts on one incident within ``window``: a code is 5 characters of
  32 (33 million), so a guesser gets nowhere at a few tries per quarter hour.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Callable, Mapping
from urllib.parse import parse_qsl

from .errors import IncidentError

SIGNATURE_HEADER = "X-MS4Watch-Signature"
TWILIO_HEADER = "X-Twilio-Signature"


class SmsAuthError(IncidentError):
    """An inbound SMS request that is not shown to come from the provider (HTTP 403)."""


class Scheme(str, enum.Enum):
    TWILIO = "twilio"
    HMAC = "hmac"
    NONE = "none"


def _header(headers: Mapping[str, str], name: str) -> str | None:
    low = name.lower()
    return next((v for k, v in headers.items() if k.lower() == low), None)


@dataclass(frozen=True)
class WebhookVerifier:
    """Checks one inbound request; ``secret`` is Twilio's auth token or the shared HMAC key."""

    scheme: Scheme
    secret: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.scheme is not Scheme.NONE and not self.secret:
            raise ValueError(f"sms webhook auth {self.scheme.value}: no secret given")

    def verify(self, url: str, headers: Mapping[str, str], body: bytes) -> None:
        """Raise :class:`SmsAuthError` unless the request carries a valid signature.

        ``url``: the URL the provider called, as it called it (the public URL behind a
        proxy); ``body``: the raw request body."""
        if self.scheme is Scheme.NONE:
            return
        if self.scheme is Scheme.TWILIO:
            from twilio.request_validator import RequestValidator
            sig = _header(headers, TWILIO_HEADER)
            if not sig:
                raise SmsAuthError(f"inbound SMS: no {TWILIO_HEADER} header")
            try:
                params = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
            except UnicodeDecodeError:
                raise SmsAuthError("inbound SMS: body is not UTF-8 form data") from None
            if not RequestValidator(self.secret).validate(url, params, sig):
                raise SmsAuthError(f"inbound SMS: {TWILIO_HEADER} does not match (check the auth token and that "
                                   "http.public_url is the URL Twilio calls)")
            return
        sig = _header(headers, SIGNATURE_HEADER) or ""
        want = "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(sig.strip(), want):
            raise SmsAuthError(f"inbound SMS: {SIGNATURE_HEADER} missing or wrong")


def sign_body(secret: str, body: bytes) -> str:
    """The ``X-MS4Watch-Signature`` value a sender of our generic webhook puts on ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class ReplyLimiter:
    """Sliding-window counts of replies per sender and acknowledgement attempts per incident."""

    def __init__(self, *, per_sender: int = 10, per_incident: int = 5, window_s: float = 900.0,
                 clock: Callable[[], float] = time.monotonic):
        if per_sender < 1 or per_incident < 1 or window_s <= 0:
            raise ValueError("rate limits must be positive")
        self.per_sender, self.per_incident, self.window_s = per_sender, per_incident, window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, deque[float]] = defaultdict(deque)

    def _take(self, key: str, limit: int) -> bool:
        now = self._clock()
        with self._lock:
            q = self._seen[key]
            while q and now - q[0] > self.window_s:
                q.popleft()
            if len(q) >= limit:
                return False
            q.append(now)
            return True

    def sender(self, number: str) -> bool:
        """Record a reply from ``number``; False when it is over its limit (refuse it)."""
        return self._take(f"sender:{number}", self.per_sender)

    def incident(self, incident_id: int) -> bool:
        """Record an acknowledgement attempt on an incident; False when over the limit."""
        return self._take(f"incident:{incident_id}", self.per_incident)


__all__ = ["WebhookVerifier", "Scheme", "SmsAuthError", "ReplyLimiter", "sign_body", "SIGNATURE_HEADER",
           "TWILIO_HEADER"]
