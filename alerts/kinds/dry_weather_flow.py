"""Dry-weather flow at an outfall (alerts/rules/dry_weather_flow.py) and its data-gap notice:
flow above the outfall's floor for ``rules.dwf_min_duration`` with less than
``rules.dry_max_rain_in`` of rain in ``rules.dry_lookback``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...contract.registry import Registry
from ..events import AlertKind
from . import runoff as _runoff
from .spec import Chart, ChartSeries, KindSpec, Priority, notice
from .units import duration, inches, number

if TYPE_CHECKING:
    from ...network.sites import SiteReaches


def _floor(reg: Registry, subject: str) -> str:
    try:
        return f" ({number(reg.outfall(subject).flow_floor_gpm, 'gpm')})"
    except StopIteration:
        return ""


def _dry(reg: Registry) -> str:
    r = reg.rules
    text = f"< {inches(r.dry_max_rain_in)} of rain in {duration(r.dry_lookback)}"
    if r.dry_after_rain.total_seconds() > 0:
        text += f" and none in the last {duration(r.dry_after_rain)}"
    return text


def rule(reg: Registry, subject: str) -> str:
    return (f"flow above the outfall's floor{_floor(reg, subject)} in every reading for >= "
            f"{duration(reg.rules.dwf_min_duration)} with {_dry(reg)}")


def unknown_rule(reg: Registry, subject: str) -> str:
    return (f"flow above the outfall's floor{_floor(reg, subject)} for >= {duration(reg.rules.dwf_min_duration)}, "
            f"but rain data missing (gaps over {duration(reg.rules.dry_rain_max_gap)}) in the "
            f"{duration(reg.rules.dry_lookback)} before: dry weather ({_dry(reg)}) cannot be judged")


def threshold(reg: Registry, subject: str) -> dict[str, Any] | None:
    try:
        return {"label": "flow floor", "value": reg.outfall(subject).flow_floor_gpm, "unit": "gpm"}
    except StopIteration:
        return None


def chart(reg: Registry, incident: dict[str, Any]) -> Chart:
    """The outfall's flow, the rain at the gauges the rule judged by (one column per gauge
    when there are several), the floor as a line."""
    event = incident.get("event") or {}
    outfall = reg.outfall(event.get("outfall") or incident["subject"])
    gauges = event.get("rain_gauges_used") or list(outfall.rain_gauges)
    series = [ChartSeries("flow_gpm", outfall.id, "flow")]
    series += [ChartSeries("rain_in" if len(gauges) == 1 else f"rain_{g}_in", g, "rain") for g in gauges]

    def floor(cols: dict[str, Any]) -> Any:
        return cols["flow_gpm"] * 0 + outfall.flow_floor_gpm
    return Chart(tuple(series), "threshold_gpm", floor)


def runoff(reg: Registry, subject: str, reaches: "SiteReaches") -> _runoff.Runoff | None:
    """The construction sites whose runoff reaches the outfall, a lead for the search (none: no words)."""
    return _runoff.outfall(reg, subject, reaches)


SPEC = KindSpec(AlertKind.DRY_WEATHER_FLOW, "dry-weather flow", Priority.URGENT, escalates=True, recovery=True,
                rule=rule, threshold=threshold, chart=chart, runoff=runoff)
UNKNOWN = notice(AlertKind.DRY_WEATHER_UNKNOWN, unknown_rule, "dry weather unknown")
