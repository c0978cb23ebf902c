"""Turbidity contrast across a construction site (alerts/rules/turbidity.py) and its
not-evaluable notice: downstream - upstream above max(``turbidity_delta_ntu``,
``turbidity_fraction`` of upstream) for ``turbidity_min_duration``, or above the backstop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...contract.registry import Registry, Role
from ..events import AlertKind
from . import runoff as _runoff
from .spec import Chart, ChartSeries, KindSpec, Priority, notice
from .units import duration, number, percent

if TYPE_CHECKING:
    from ...network.sites import SiteReaches


def _limit(reg: Registry) -> str:
    r = reg.rules
    return f"max({number(r.turbidity_delta_ntu, 'NTU')}, {percent(r.turbidity_fraction)} of upstream)"


def _qc(reg: Registry) -> str:
    r = reg.rules
    return (f"readings paired within {duration(r.turbidity_align_tolerance)}, both probes passing QC "
            f"(fail above {number(r.qc_turbidity_max_ntu, 'NTU')}, spikes over {number(r.qc_turbidity_spike_ntu, 'NTU')}, "
            f"unchanged for {duration(r.qc_flat_line)})")


def rule(reg: Registry, subject: str) -> str:
    r = reg.rules
    return (f"downstream - upstream > {_limit(reg)} for >= {duration(r.turbidity_min_duration)} (backstop "
            f"{number(r.turbidity_backstop_ntu, 'NTU')} downstream; {_qc(reg)})")


def not_evaluable_rule(reg: Registry, subject: str) -> str:
    return f"the contrast cannot be judged without {_qc(reg)}"


def threshold(reg: Registry, subject: str) -> dict[str, Any] | None:
    r = reg.rules
    return {"label": f"upstream + {_limit(reg)}", "kind": "turbidity_contrast",
            "delta": r.turbidity_delta_ntu, "fraction": r.turbidity_fraction, "unit": "NTU"}


def chart(reg: Registry, incident: dict[str, Any]) -> Chart:
    """Both probes, and the line downstream must stay under: upstream + the town's limit."""
    pid = (incident.get("event") or {}).get("pair") or incident["subject"]
    pair = next(p for p in reg.turbidity_pairs if p.id == pid)
    r = reg.rules

    def limit(cols: dict[str, Any]) -> Any:
        up = cols["turbidity_up_ntu"]
        return up + (up * r.turbidity_fraction).clip(lower=r.turbidity_delta_ntu)
    return Chart((ChartSeries("turbidity_up_ntu", pair.upstream, "turbidity"),
                  ChartSeries("turbidity_down_ntu", pair.downstream, "turbidity")), "threshold_ntu", limit)


def runoff(reg: Registry, subject: str, reaches: "SiteReaches") -> _runoff.Runoff | None:
    """Where the runoff of the pair's construction site goes (none: the pair names no site)."""
    pair = next((p for p in reg.turbidity_pairs if p.id == subject), None)
    return _runoff.site(reg, pair.construction_site if pair is not None else None, reaches)


SPEC = KindSpec(AlertKind.TURBIDITY_CONTRAST, "turbidity contrast", Priority.ROUTINE, escalates=True, recovery=True,
                audience=frozenset({Role.SITE_OPERATOR}), rule=rule, threshold=threshold, chart=chart, runoff=runoff)
NOT_EVALUABLE = notice(AlertKind.TURBIDITY_NOT_EVALUABLE, not_evaluable_rule)
