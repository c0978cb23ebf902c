"""A running clock of the local law (compliance/watch.py): the record states what is due."""

from __future__ import annotations

from ...contract.registry import Registry
from ..events import AlertKind
from .spec import KindSpec, Priority


def rule(reg: Registry, subject: str) -> str:
    return "a clock of the local law (notice of violation, release notice, SWPPP review)"


SPEC = KindSpec(AlertKind.COMPLIANCE_DEADLINE, "compliance deadline", Priority.DEADLINE, rule=rule)
