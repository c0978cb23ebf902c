"""Storms: every storm the alert engine found at the town's rain gauges (depth, duration,
peak intensities; whether it reached the town's qualifying depth, ``rules.storm_min_depth_in``,
that makes construction sites due for an inspection within ``rules.inspection_after_storm`` of
its end), newest first. Without the engine in the process,
the qualifying storms from the incident database."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable

from ...alerts.events import AlertKind
from ...contract.registry import Registry
from ...contract.timeutil import from_ns, to_ns
from ..roles import Actor, Permission

if TYPE_CHECKING:
    from ...alerts.incidents.service import IncidentService
    from .alertside import AlertSide


@dataclass(frozen=True)
class Storm:
    gauge: str
    gauge_name: str
    start: datetime
    end: datetime | None            # None while it may still be raining (not yet confirmed)
    last_rain: datetime
    depth_in: float
    qualifying: bool
    duration_h: float | None
    peak_i15_in_h: float | None
    peak_i60_in_h: float | None
    sites: tuple[str, ...]          # active construction sites the gauge serves (due for inspection if qualifying)


class StormLog:
    def __init__(self, registry: Registry, incidents: "IncidentService", clock: Callable[[], datetime],
                 alert_side: "AlertSide | None" = None):
        self.registry = registry
        self.incidents = incidents
        self.clock = clock
        self.alert_side = alert_side

    def list(self, actor: Actor, *, gauge: str | None = None, qualifying_only: bool = False,
             days: int | None = None) -> list[Storm]:
        actor.require(Permission.READ)
        since = to_ns(self.clock() - timedelta(days=days)) if days else None
        names = {g.id: g.name or g.id for g in self.registry.rain_gauges}
        out = []
        for f in self._storms():
            if (gauge and f["gauge"] != gauge) or (qualifying_only and not f.get("qualifying")) \
                    or (since is not None and (f.get("end") or f["last_rain"]) < since):
                continue
            start = from_ns(f["start"])
            day = start.astimezone(self.registry.tz).date()
            out.append(Storm(f["gauge"], names.get(f["gauge"], f["gauge"]), start,
                             from_ns(f["end"]) if f.get("end") else None, from_ns(f["last_rain"]),
                             float(f["depth_in"]), bool(f.get("qualifying")), f.get("duration_h"),
                             f.get("peak_i15_in_h"), f.get("peak_i60_in_h"),
                             tuple(s.id for s in self.registry.sites_for_gauge(f["gauge"], day))))
        return sorted(out, key=lambda s: s.start, reverse=True)

    def _storms(self) -> builtins.list[dict]:
        if self.alert_side is not None:
            return [dict(e.fields) for e in self.alert_side.engine_events() if e.kind is AlertKind.STORM]
        out = []
        for inc in self.incidents.list(None, kind=AlertKind.STORM.value, limit=100_000):
            ev = inc.event
            end = to_ns(inc.end) if inc.end else None
            out.append({"gauge": inc.subject, "start": to_ns(inc.start), "end": end,
                        "last_rain": end or to_ns(inc.start), "depth_in": ev.get("depth_in") or 0.0,
                        "qualifying": True, "duration_h": ev.get("duration_h"),
                        "peak_i15_in_h": ev.get("peak_i15_in_h"), "peak_i60_in_h": ev.get("peak_i60_in_h")})
        return out


__all__ = ["StormLog", "Storm"]
