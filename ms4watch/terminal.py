"""What the server and the demo print for a person watching the terminal: one line per
event that opens, closes or is retracted, and one per notification the file channel
writes. Values are rounded as a person reads them (storm depths to 0.01 in)."""

from __future__ import annotations

from datetime import tzinfo
from typing import Any, Callable

from .alerts.events import AlertEvent, AlertKind, AlertEventStatus

Reporter = Callable[[str], None]


def event_line(e: AlertEvent, tz: tzinfo) -> str:
    """``[2026-06-03 01:00] storm RG-1 0.85 in, qualifying, ended 09:10``."""
    f = e.fields

    def at(name: str, fmt: str = "%Y-%m-%d %H:%M") -> str:
        t = e.instant(name)
        return t.astimezone(tz).strftime(fmt) if t else ""

    when = at("start") or at("due") or at("time")
    kind = e.kind
    detail = ""
    if kind is AlertKind.INSPECTION_OVERDUE:
        when = at("due")
    if kind is AlertKind.STORM:
        detail = f"{_num(f.get('depth_in'), 2)} in" + (", qualifying" if f.get("qualifying") else "")
        detail += f", ended {at('end', '%H:%M')}" if f.get("end") else ", raining"
    elif kind in (AlertKind.INSPECTION_DUE, AlertKind.INSPECTION_OVERDUE):
        why = f"after the storm at {f['gauge']}" if f.get("reason") == "storm" else "routine (7-day)"
        detail = f"{why}, due {at('due')}"
        if f.get("closed_at"):
            detail += f", inspected {at('closed_at')}"
    elif kind is AlertKind.DRY_WEATHER_FLOW:
        detail = f"peak {_num(f.get('peak_gpm'), 1)} gpm" + (f", suppressed: {f['suppressed']}"
                                                              if f.get("suppressed") else "")
    elif kind is AlertKind.TURBIDITY_CONTRAST:
        if f.get("max_delta_ntu") is None:   # the backstop, judged on the downstream probe alone
            detail = f"downstream up to {_num(f.get('max_downstream_ntu'), 1)} NTU (backstop)"
        else:
            detail = f"max +{_num(f.get('max_delta_ntu'), 1)} NTU"
    elif kind in (AlertKind.CALIBRATION_DUE, AlertKind.CALIBRATION_OVERDUE):
        detail = f"sensor {f.get('sensor')} of {f.get('device')}, due {f.get('due_day')}" + (
            f" ({f['closed_by']})" if f.get("closed_by") else "")
    if f.get("uncalibrated"):
        detail += " [uncalibrated data]"
    if e.status is AlertEventStatus.RETRACTED:
        detail += " (retracted)"
    elif f.get("end") and kind is not AlertKind.STORM:
        detail += f", closed {at('end', '%H:%M')}"
    return f"[{when}] {kind.value.replace('_', ' ')} {e.subject} {detail}".rstrip()


def _num(value: Any, digits: int) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


class NotificationEcho:
    """A stream for the file channel: each notification it writes becomes one line —
    ``✉ headline → recipients``."""

    def __init__(self, report: Reporter):
        self.report = report
        self._buf = ""

    def write(self, text: str) -> int:
        self._buf += text
        return len(text)

    def flush(self) -> None:
        """An entry is: a header line (time, stage, key), ``To: …``, the headline, details."""
        entry, self._buf = self._buf.strip(), ""
        lines = [ln.strip() for ln in entry.splitlines() if ln.strip() and not set(ln.strip()) <= set("-=")]
        if len(lines) >= 3:
            self.report(f"  ✉ {lines[2][:110]} → {lines[1].removeprefix('To: ')}")
        elif lines:
            self.report("  ✉ " + " · ".join(lines)[:160])
