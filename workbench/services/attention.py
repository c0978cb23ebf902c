"""What needs attention today, for the status page: what is overdue, due today and due
this week (inspection items, the laws' deadlines in the compliance records), what is
alerting now, and the episodes that ended by themselves and nobody has reviewed. Each
item names the record it links to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Iterable

from .incidents import IncidentView

if TYPE_CHECKING:
    from ...compliance.deadlines import Deadline
    from .inspections import DueItem

WEEK_DAYS = 7      # "this week": today and the six days after it, in the town's zone


@dataclass(frozen=True)
class Task:
    """Something with a deadline: an inspection to make, a deadline of the law to meet."""

    what: str
    where: str
    due: datetime
    href: str        # the record, under the town's base path
    kind: str        # inspection | deadline


@dataclass(frozen=True)
class Attention:
    now: datetime
    overdue: list[Task]
    today: list[Task]
    week: list[Task]
    alerting: list[IncidentView]
    unreviewed: list[IncidentView]

    @property
    def empty(self) -> bool:
        return not (self.overdue or self.today or self.week or self.alerting or self.unreviewed)


def inspection_tasks(items: Iterable["DueItem"]) -> list[Task]:
    return [Task(f"{d.reason.capitalize()} inspection", d.site_name, d.deadline,
                 f"/inspections?site={d.incident.subject}#due-{d.incident.id}", "inspection")
            for d in items if d.deadline is not None]


def deadline_tasks(deadlines: Iterable["Deadline"]) -> list[Task]:
    return [Task(f"{d.label} ({d.number})", d.who, d.due, d.href, "deadline")
            for d in deadlines if d.running and d.due is not None]


def gather(now: datetime, tz: tzinfo, tasks: Iterable[Task], alerting: list[IncidentView],
           unreviewed: list[IncidentView]) -> Attention:
    """Sort ``tasks`` into overdue, due today and due this week (later ones are left out)."""
    today = now.astimezone(tz).date()
    last = today + timedelta(days=WEEK_DAYS - 1)
    overdue, due_today, week = [], [], []
    for t in sorted(tasks, key=lambda t: t.due):
        day = t.due.astimezone(tz).date()
        if t.due < now:
            overdue.append(t)
        elif day == today:
            due_today.append(t)
        elif day <= last:
            week.append(t)
    return Attention(now, overdue, due_today, week, alerting, unreviewed)


__all__ = ["Attention", "Task", "gather", "inspection_tasks", "deadline_tasks", "WEEK_DAYS"]
