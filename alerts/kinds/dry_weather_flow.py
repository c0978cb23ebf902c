"""Dry-weather flow at an outfall (alerts/rules/dry_weather_flow.py) and its data-gap notice:
flow above the outfall's floor for ``rules.dwf_min_duration`` with less than
``rules.dry_max_rain_in`` of rain in ``rules.dry_lookback``."""

from __future__ import annotations

from typing import Any

from ...contract.registry import Registry
from ..events import EventKind
from .spec import KindSpec, Priority, notice
from .units import duration, inches, number


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


SPEC = KindSpec(EventKind.DRY_WEATHER_FLOW, "dry-weather flow", Priority.URGENT, escalates=True, recovery=True,
                rule=rule, threshold=threshold)
UNKNOWN = notice(EventKind.DRY_WEATHER_UNKNOWN, unknown_rule, "dry weather unknown")
