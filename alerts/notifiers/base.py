"""The notifier interface: ``send(notification) -> None``, raising :class:`RetryableError`
(try again later: server down, 4xx SMTP reply, HTTP 5xx) or :class:`PermanentError`
(retrying cannot help: address refused, HTTP 4xx). One folder per channel implements it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import AlertError


class NotifierError(AlertError):
    """A notification was not delivered."""


class RetryableError(NotifierError):
    """Not delivered this time; the delivery queue retries with backoff."""


class PermanentError(NotifierError):
    """Not deliverable as addressed; the delivery queue marks it failed and keeps it for a person."""


@dataclass(frozen=True)
class Recipient:
    name: str               # contact name, or the feed's name
    role: str               # smo | deputy | inspector | site_operator | feed
    address: str            # email address, E.164 number, or the feed's (credential-free) label


FEED_WORDS = {"file": "notification log", "webhook": "webhook", "apprise": "message service"}
ROLE_WORDS = {"smo": "SMO", "deputy": "deputy", "inspector": "inspector", "site_operator": "site operator"}


def recipient_words(r: Recipient) -> tuple[str, str]:
    """A recipient as people read it: ``(who, detail)``. A feed's stored name is its label
    (``file:/var/lib/…/notifications.jsonl``, made in urls.py): the kind of feed in words, and
    the path or host as the detail; a person: their name and role."""
    if r.role == "feed":
        kind, _, where = r.name.partition(":")
        return FEED_WORDS.get(kind, kind), where
    return r.name, ROLE_WORDS.get(r.role, r.role.replace("_", " "))


@dataclass(frozen=True)
class Notification:
    """One message to one recipient over one channel, as stored in the delivery queue.

    ``incident`` is the incident snapshot at queue time (``Incident.snapshot()``); a digest
    carries ``items`` (snapshots with the stage each was held at) instead.
    """

    id: int
    key: str                  # the delivery queue's unique key: ref|recipient|channel|stage
    channel: str              # email | sms | webhook | file
    stage: str                # open | escalation | reminder | overdue | recovery | digest
    recipient: Recipient
    incident: dict[str, Any] | None
    created_at: str
    station_name: str = ""    # a readable name for the incident's subject
    timezone: str = "UTC"     # the municipality's, for times shown to people
    ack_url: str | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    routed_to: list[str] = field(default_factory=list)  # contacts this stage reached (for feeds)
    threshold: dict[str, Any] | None = None  # {label, value, unit} drawn on the chart


class Notifier(Protocol):
    channel: str

    def send(self, notification: Notification) -> None:
        """Deliver or raise :class:`RetryableError` / :class:`PermanentError`."""
