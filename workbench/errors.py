"""Errors of the workbench; the application turns each into an HTTP status at the boundary
(``app.py``): a page shows it, the API answers ``{"detail": ...}``."""

from __future__ import annotations

from ..compliance.errors import ComplianceError, NoSuchRecord
from ..contract.errors import Ms4Error


class WorkbenchError(Ms4Error):
    """Root of the workbench's errors. ``status``: the HTTP status it becomes."""

    status = 400


class NotAuthenticated(WorkbenchError):
    """No session, no valid API token: log in first."""

    status = 401


class Forbidden(WorkbenchError):
    """Logged in, but the role (in this municipality) is too small, or a CSRF token is wrong."""

    status = 403


class NotFound(WorkbenchError):
    status = 404


class Conflict(WorkbenchError):
    """The action does not fit the thing's state (acknowledging a resolved incident)."""

    status = 409


class LinkExpired(WorkbenchError):
    """A signed acknowledge link older than its lifetime."""

    status = 410


class TooLarge(WorkbenchError):
    """A request body (or a photo) larger than allowed."""

    status = 413


class RateLimited(WorkbenchError):
    """Too many failed logins; ``retry_after_s`` says when to try again."""

    status = 429

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class StoreDown(WorkbenchError):
    """The readings store does not answer (the page or answer would be incomplete): try again."""

    status = 503


class UserError(WorkbenchError):
    """A user, membership or token cannot be made or changed as asked (the terminal's errors)."""


def from_compliance(e: ComplianceError) -> "WorkbenchError":
    """A compliance record's error as the workbench answers it: no such record, 404; any
    other (well-formed, but not possible as given), 409."""
    return (NotFound if isinstance(e, NoSuchRecord) else Conflict)(str(e))


__all__ = ["from_compliance",
           "WorkbenchError", "NotAuthenticated", "Forbidden", "NotFound", "Conflict", "LinkExpired", "StoreDown",
           "RateLimited", "UserError", "TooLarge"]
