"""A sensor's calibration falling due within ``rules.calibration_warn``, and past due
(alerts/rules/calibration.py)."""

from __future__ import annotations

from ...contract.registry import Registry, Role
from ..events import AlertKind
from .spec import KindSpec, Priority
from .units import duration


def due_rule(reg: Registry, subject: str) -> str:
    return f"a sensor's calibration falls due within {duration(reg.rules.calibration_warn)}"


def overdue_rule(reg: Registry, subject: str) -> str:
    return "a sensor is past its calibration due date: its readings are flagged"


_TECH = frozenset({Role.TECHNICIAN})
DUE = KindSpec(AlertKind.CALIBRATION_DUE, "calibration due", Priority.ROUTINE, audience=_TECH, rule=due_rule)
OVERDUE = KindSpec(AlertKind.CALIBRATION_OVERDUE, "calibration overdue", Priority.ROUTINE, recovery=True,
                   audience=_TECH, rule=overdue_rule)   # not a page
