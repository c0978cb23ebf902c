"""Errors of the ingest side. Third-party errors (sqlite3, HTTP clients) are translated here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..contract.errors import Ms4Error

if TYPE_CHECKING:
    from .stores.base import StoredMessage, WriteResult


class IngestError(Ms4Error):
    """Root of ingest errors."""


class StoreUnavailable(IngestError):
    """The store cannot take writes now; the batch must be retried (or spooled).

    ``retry_after_s`` carries a server's Retry-After when it sent one.
    """

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class SetAsideFailed(IngestError):
    """The rejected file cannot take what is set aside (a full disk): it is not acknowledged,
    and is written again like a batch the store could not take."""


class StoreRejected(IngestError):
    """The store refused the data itself (not retryable): log it, keep it aside, go on."""


class MessagesRejected(StoreRejected):
    """Some messages of a batch were refused as bad data; every other one was written.

    ``rejected`` lists each refused message with the reason; ``result`` is what was written
    of the rest (readings, duplicates). Raised by a store's ``write`` once the rest is durable.
    """

    def __init__(self, message: str, rejected: list[tuple[StoredMessage, str]], result: WriteResult):
        super().__init__(message)
        self.rejected = rejected
        self.result = result

    @property
    def written(self) -> int:
        """Readings written of the messages that were not refused."""
        return self.result.readings_written


def refused_summary(where: str, rejected: list[tuple[StoredMessage, str]], of: int) -> str:
    """``where: 2 of 40 messages refused (LOG-1 seq 3: …, …); the other 38 were written``."""
    names = "; ".join(f"{m.device} seq {m.seq}: {reason}" for m, reason in rejected[:3])
    more = "; …" if len(rejected) > 3 else ""
    return (f"{where}: {len(rejected)} of {of} messages refused ({names}{more}); "
            f"the other {of - len(rejected)} were written")
