"""HTTP answers and transport failures of InfluxDB, translated into ingest errors.

429 and 503 (and other 5xx, 401/403/404: fixable without losing data) → StoreUnavailable,
with the server's Retry-After when it sent one (a 401/403 naming the token to fix); 400/413/422 (the data itself) →
StoreRejected; connection refused, resets and timeouts → StoreUnavailable.
"""

from __future__ import annotations

import email.utils
import time
from typing import Callable, Mapping

from ...errors import IngestError, StoreRejected, StoreUnavailable
from ...errors import MessagesRejected  # noqa: F401 — raised by these stores; its home is ingest/errors.py


class StoreMisconfigured(IngestError):
    """The store exists but is not fit for ms4watch (missing database, retention too short).

    Not retried: ingest refuses to start and says what to run (``ms4watch store init``).
    """


def retry_after_s(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date; None when absent/bad."""
    if not headers:
        return None
    value = None
    for k, v in headers.items():
        if k.lower() == "retry-after":
            value = str(v).strip()
            break
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def from_status(where: str, status: int, body: str, headers: Mapping[str, str] | None,
                login_hint: Callable[[int], str] | None = None) -> IngestError:
    """The ingest error for a non-2xx answer of an InfluxDB write endpoint; a 401 or 403 also
    says which token (setting and file, never the secret) to fix, through ``login_hint``."""
    text = _short(body)
    if status in (400, 413, 422):
        return StoreRejected(f"{where}: HTTP {status}: {text}")
    if status in (401, 403) and login_hint is not None:
        text = f"{text}: {login_hint(status)}"
    return StoreUnavailable(f"{where}: HTTP {status}: {text}", retry_after_s=retry_after_s(headers))


def _short(body: str | bytes | None, limit: int = 300) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    body = body.strip().replace("\n", " ")
    return body if len(body) <= limit else body[:limit] + "…"


def connection_reason(e: Exception) -> str:
    """A transport error in a few words, for StoreUnavailable messages."""
    text = str(e)
    if "Connection refused" in text:
        return "connection refused"
    return text[:200]
