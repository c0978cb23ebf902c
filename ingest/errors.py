"""Errors of the ingest side. Third-party errors (sqlite3, HTTP clients) are translated here."""

from __future__ import annotations

from ..contract.errors import Ms4Error


class IngestError(Ms4Error):
    """Root of ingest errors."""


class StoreUnavailable(IngestError):
    """The store cannot take writes now; the batch must be retried (or spooled).

    ``retry_after_s`` carries a server's Retry-After when it sent one.
    """

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class StoreRejected(IngestError):
    """The store refused the data itself (not retryable): log it, keep it aside, go on."""
