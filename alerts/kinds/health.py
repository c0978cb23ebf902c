"""Station health notices (alerts/rules/health.py): a station silent for more than
``rules.stale_intervals`` of its report interval; a battery below ``rules.low_battery_v``."""

from __future__ import annotations

from ...contract.registry import Registry
from ..events import EventKind
from .spec import notice
from .units import duration, number


def stale_rule(reg: Registry, subject: str) -> str:
    iv = reg.report_interval(subject) or reg.rules.report_interval
    return f"no reading for more than {reg.rules.stale_intervals} x the station's report interval ({duration(iv)})"


def battery_rule(reg: Registry, subject: str) -> str:
    r = reg.rules
    return (f"battery below {number(r.low_battery_v, 'V')} (recovered at "
            f"{number(round(r.low_battery_v + r.low_battery_hysteresis_v, 3), 'V')})")


STALE = notice(EventKind.STALE_STATION, stale_rule, "stale station")
LOW_BATTERY = notice(EventKind.LOW_BATTERY, battery_rule, "low battery")
