"""A qualifying storm at a rain gauge (alerts/rules/storms.py): ``rules.storm_min_depth_in``
over storms split by ``rules.storm_inter_event``."""

from __future__ import annotations

from ...contract.registry import Registry, Role
from ..events import AlertKind
from .spec import KindSpec, Priority
from .units import duration, inches


def what(reg: Registry, subject: str) -> str:
    return f"storm >= {inches(reg.rules.storm_min_depth_in)}"


def rule(reg: Registry, subject: str) -> str:
    r = reg.rules
    return (f"storm depth >= {inches(r.storm_min_depth_in)} ({duration(r.storm_inter_event)} minimum inter-event "
            f"time; a tip within {duration(r.double_tip)} of the last is not counted)")


SPEC = KindSpec(AlertKind.STORM, "qualifying storm", Priority.ROUTINE, audience=frozenset({Role.INSPECTOR}),
                what=what, rule=rule)
