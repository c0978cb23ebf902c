"""The compliance package's errors."""

from __future__ import annotations

from ..contract.errors import Ms4Error


class ComplianceError(Ms4Error):
    """A compliance record cannot be made as asked (the message says which field and why)."""


class NoSuchRecord(ComplianceError):
    """No case, sample, notice, party, release or SWPPP review of that id."""


class ImportRefused(ComplianceError):
    """A lab-results file was refused whole; ``problems`` lists (line, field, message)."""

    def __init__(self, source: str, problems: list[tuple[int, str, str]]):
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}:{line}: {field}: {msg}" if field else f"{source}:{line}: {msg}"
                                   for line, field, msg in problems))


__all__ = ["ComplianceError", "ImportRefused", "NoSuchRecord"]
