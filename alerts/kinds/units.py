"""Numbers with their units, as the messages write them: ``12 h``, ``45 min``, ``0.25 in``."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal


def duration(td: timedelta) -> str:
    """``72 h``, ``30 min``, ``7 d``, ``0.5 s``; up to three days in hours (``48 h``, ``72 h``)."""
    s = td.total_seconds()
    if s > 3 * 86400 and s % 86400 == 0:
        return f"{int(s // 86400)} d"
    if s >= 3600 and s % 3600 == 0:
        return f"{int(s // 3600)} h"
    if s >= 60 and s % 60 == 0:
        return f"{int(s // 60)} min"
    if s >= 3600:
        return f"{s / 3600:g} h"
    return f"{s:g} s"


def inches(v: Decimal | float) -> str:
    """``0.25 in`` (a registry's Decimal as written, at least two decimals)."""
    d = Decimal(str(v))
    return f"{d:.2f} in" if d == d.quantize(Decimal("0.01")) else f"{d} in"


def number(v: float, unit: str) -> str:
    return f"{float(v):g} {unit}"


def percent(fraction: float) -> str:
    return f"{float(fraction) * 100:g} %"
