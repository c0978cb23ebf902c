"""Every alert kind in one place: ``KINDS[kind]`` is its :class:`KindSpec` (policy, routing,
words from the town's parameters, chart threshold). Adding a kind: one module here and
one line below."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...contract.registry import Registry
from ..events import AlertKind
from . import calibration, compliance_deadline, dry_weather_flow, health, inspection, storm, turbidity
from .spec import Chart, ChartSeries, KindSpec, Priority, Words, notice

if TYPE_CHECKING:
    from ...network.sites import SiteReaches

KINDS: dict[AlertKind, KindSpec] = {AlertKind(s.kind): s for s in (
    dry_weather_flow.SPEC, dry_weather_flow.UNKNOWN,
    turbidity.SPEC, turbidity.NOT_EVALUABLE,
    storm.SPEC,
    inspection.SPEC, inspection.OVERDUE,
    health.STALE, health.LOW_BATTERY,
    calibration.DUE, calibration.OVERDUE,
    compliance_deadline.SPEC,
)}


def spec_for(kind: AlertKind | str) -> KindSpec:
    """The spec of a kind; a kind this version does not know (an old row) is a notice."""
    try:
        return KINDS[AlertKind(kind)]
    except ValueError:
        return KindSpec(str(kind), str(kind).replace("_", " "), Priority.NOTICE)


def describe(registry: Registry, kind: AlertKind | str, subject: str, reaches: "SiteReaches | None" = None) -> Words:
    """``reaches``: the town's construction sites on its map (None: no map imported)."""
    return spec_for(kind).describe(registry, subject, reaches)


def words_of(registry: Registry, kind: AlertKind | str, subject: str,
             reaches: "SiteReaches | None" = None) -> dict[str, Any]:
    """The words an incident snapshot carries into the delivery queue: ``what`` and ``rule``,
    and ``runoff`` (its fields: alerts/kinds/runoff.py) where the town's map says where runoff goes."""
    w = describe(registry, kind, subject, reaches)
    out: dict[str, Any] = {"what": w.what, "rule": w.rule}
    if w.runoff is not None:
        out["runoff"] = w.runoff.as_json()
    return out


__all__ = ["KINDS", "Chart", "ChartSeries", "KindSpec", "Priority", "Words", "describe", "notice", "spec_for", "words_of"]
