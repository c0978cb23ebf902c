"""Whether each required construction-site inspection was done in time: the annual report's
judgement, by the alert engine's own rule (``alerts/rules/inspections.py``), so the report,
the incident page and the engine agree.

An item is **on time** only if an inspection *after it opened* and *by its due time* closed
it; **late** if the first inspection after it opened came after the due time; **missed** if
none came and the due time has passed; **not yet due** if none came and it is still due.

* A routine item (every seven calendar days) opens at the inspection that closed the one
  before it, so that inspection never closes it: only one strictly after it does. The
  site's first item opens at local midnight of ``active_from`` (not at an inspection): an
  inspection from that instant on closes it. Items of sites with more than five acres
  disturbed (two a week) are judged by the same rule function, keyed by the event's id.
  Opening and due times are calendar arithmetic in the town's zone (a due time keeps its
  wall time across a DST change); the incident's ``start`` (due less 7 × 24 h) is not used.
* A post-storm item opens at the storm's end: an inspection from that instant on closes it
  ("within 24 hours of the end of a storm event", Schenectady ch. 148 Art. I).

Exactly at the due time is on time; a second later is late.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..alerts.rules.inspections import RoutineItem, routine_inspections
from ..contract.timeutil import from_ns, to_ns

if TYPE_CHECKING:
    from ..contract.registry import Registry


class Kept(str, Enum):
    ON_TIME = "on_time"
    LATE = "late"
    MISSED = "missed"
    NOT_YET_DUE = "not_yet_due"

    @property
    def words(self) -> str:
        """As the report and its pages write it: ``on time``, ``not yet due``."""
        return self.value.replace("_", " ")


@dataclass(frozen=True)
class Judged:
    opened: datetime
    due: datetime
    closed: datetime | None      # the inspection that closed the item (after it opened), if any by ``now``
    status: Kept


ROUTINE = "/routine/"


class InspectionJudge:
    """Judges the inspection items (incidents of kind ``inspection_due``) of one registry
    against the inspections recorded [aware datetimes], as of ``now``."""

    def __init__(self, registry: Registry, inspections: Mapping[str, Sequence[datetime]], now: datetime):
        self.registry = registry
        self.now = now
        self.inspections = {s: sorted(t for t in ts if t <= now) for s, ts in inspections.items()}
        self._routine: dict[str, dict[str, RoutineItem]] = {}

    def _routine_items(self, site_id: str) -> dict[str, RoutineItem]:
        if site_id not in self._routine:
            site = next((s for s in self.registry.construction_sites if s.id == site_id), None)
            items: list[RoutineItem] = []
            if site is not None:
                items = routine_inspections(site, [to_ns(t) for t in self.inspections.get(site_id, [])],
                                            to_ns(self.now), self.registry.tz,
                                            interval=self.registry.rules.routine_inspection_interval)
            self._routine[site_id] = {it.key: it for it in items}
        return self._routine[site_id]

    def _first(self, site: str, t: datetime, *, strictly: bool) -> datetime | None:
        return next((x for x in self.inspections.get(site, []) if (x > t if strictly else x >= t)), None)

    def judge(self, item: Any) -> Judged:
        """``item``: an inspection incident (``subject``, ``start``, ``deadline``, ``event``)."""
        ev = item.event or {}
        due: datetime = item.deadline
        event_id = str(ev.get("id") or "")
        if (ev.get("reason") or "storm") == "routine":
            key = event_id.split(ROUTINE, 1)[1] if ROUTINE in event_id else None
            it = self._routine_items(item.subject).get(key) if key else None
            if it is not None:
                opened, due = from_ns(it.opened_ns), from_ns(it.due_ns)
                closed = from_ns(it.closed_ns) if it.closed_ns is not None else None
            else:       # an item the rule no longer owes (registry changed): after its start, strictly
                opened = item.start
                closed = self._first(item.subject, opened, strictly=True)
        else:
            end = ev.get("storm_end")
            opened = datetime.fromisoformat(str(end).replace("Z", "+00:00")) if end else item.start
            closed = self._first(item.subject, opened, strictly=False)
        if closed is not None:
            status = Kept.ON_TIME if closed <= due else Kept.LATE
        else:
            status = Kept.MISSED if self.now > due else Kept.NOT_YET_DUE
        return Judged(opened, due, closed, status)


def judge_all(registry: Registry, items: Iterable[Any], inspections: Mapping[str, Sequence[datetime]],
              now: datetime) -> list[Judged]:
    j = InspectionJudge(registry, inspections, now)
    return [j.judge(i) for i in items]


__all__ = ["Kept", "Judged", "InspectionJudge", "judge_all"]
