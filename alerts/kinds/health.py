"""Station health notices (alerts/rules/health.py): a station silent for more than
``rules.stale_intervals`` of its report interval; a battery below ``rules.low_battery_v``."""

from __future__ import annotations

from ...contract.registry import Registry
from ..events import AlertKind
from .spec import notice
from .units import duration, number


def stale_rule(reg: Registry, subject: str) -> str:
    """The interval is the registry's for the station; unstated there, the one its logger
    states, else ``rules.report_interval`` (alerts/evaluate.py: report_interval)."""
    iv = reg.report_interval(subject)
    which = duration(iv) if iv is not None else f"its logger's, else {duration(reg.rules.report_interval)}"
    return f"no reading for more than {reg.rules.stale_intervals} x the station's report interval ({which})"


def battery_rule(reg: Registry, subject: str) -> str:
    r = reg.rules
    return (f"battery below {number(r.low_battery_v, 'V')} (recovered at "
            f"{number(round(r.low_battery_v + r.low_battery_hysteresis_v, 3), 'V')})")


STALE = notice(AlertKind.STALE_STATION, stale_rule, "stale station")
LOW_BATTERY = notice(AlertKind.LOW_BATTERY, battery_rule, "low battery")
