"""Construction-site inspection items (alerts/rules/inspections.py): within
``rules.inspection_after_storm`` of a qualifying storm's end, and at least every
``rules.routine_inspection_interval``; the engine's escalation of one past due."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...contract.registry import Registry, Role
from ..events import AlertKind
from . import runoff as _runoff
from .spec import KindSpec, Priority
from .units import duration, inches

if TYPE_CHECKING:
    from ...network.sites import SiteReaches


def rule(reg: Registry, subject: str) -> str:
    r = reg.rules
    return (f"inspection within {duration(r.inspection_after_storm)} of the end of a storm >= "
            f"{inches(r.storm_min_depth_in)}, and at least every {duration(r.routine_inspection_interval)}")


def runoff(reg: Registry, subject: str, reaches: "SiteReaches") -> _runoff.Runoff | None:
    """Where the site's runoff goes: what the inspector looks at the end of."""
    return _runoff.site(reg, subject, reaches)


SPEC = KindSpec(AlertKind.INSPECTION_DUE, "inspection due", Priority.DEADLINE,
                audience=frozenset({Role.INSPECTOR, Role.SITE_OPERATOR}), rule=rule, runoff=runoff)
OVERDUE = KindSpec(AlertKind.INSPECTION_OVERDUE, "inspection overdue", Priority.NOTICE, rule=rule, runoff=runoff)
