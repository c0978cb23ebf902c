"""Compliance deadlines as events on the alert pipeline's clock: a running, actionable
deadline is an open ``compliance_deadline`` event with its ``due`` (the incident's
deadline, so the Dispatcher reminds before it and tells the deputies once it passes) and
its whole due date (``due_form``, ``due_day``…: the incident renders the same day as the
board); a deadline met or closed is the same event with ``end`` set (its incident
resolves). A pending clock (its starting event not yet recorded) has no day and raises no
event until it has one.

Like :class:`~ms4watch.alerts.calibration_watch.CalibrationWatch`, ``advance`` returns only
what is new or changed, and what was emitted is kept in ``state_path`` so a restart
neither repeats nor forgets a deadline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..alerts.events import AlertEvent, AlertKind
from ..alerts.open_events import OpenEvents
from ..contract.timeutil import to_ns
from .deadlines import Deadline


def deadline_event(d: Deadline) -> AlertEvent:
    """The deadline as an open event; its due date travels as :meth:`~ms4watch.contract.due.Due.to_fields`."""
    if d.start is None or d.due is None:
        raise ValueError(f"{d.key}: a pending clock (no day yet) is no deadline event")
    fields = {"record": d.record, "number": d.number, "what_due": d.label, "who": d.who,
              "start": to_ns(d.start), **d.when.to_fields(), "end": None, "href": d.href}
    if d.place:
        fields = {"site" if d.record.startswith("swppp") else "outfall": d.place, **fields}
    params = {"clock": d.rule.describe()}
    return AlertEvent(AlertKind.COMPLIANCE_DEADLINE, f"compliance/{d.key}", fields, params, d.rule.provision)


class ComplianceWatch:
    def __init__(self, state_path: str | Path | None = None):
        self._open = OpenEvents(state_path, "compliance watch")    # id -> the latest version emitted, not yet closed

    def advance(self, now_ns: int, deadlines: Iterable[Deadline]) -> list[AlertEvent]:
        changes: list[AlertEvent] = []
        current: dict[str, tuple[Deadline, AlertEvent]] = {}
        for d in deadlines:
            if d.actionable and d.due is not None:   # a clock awaiting its start (a delivery) has no due time yet
                current[f"compliance/{d.key}"] = (d, deadline_event(d))
        for eid, (d, e) in current.items():
            if not d.running:
                continue
            if self._open.get(eid) is None or self._open[eid].fields != e.fields:
                self._open[eid] = e
                changes.append(e)
        for eid in list(self._open):
            d_e = current.get(eid)
            if d_e is not None and d_e[0].running:
                continue
            old = self._open.pop(eid)
            if d_e is None:
                why, end = "the record no longer runs this clock", now_ns
            else:
                d = d_e[0]
                why = f"met {d.met_at.isoformat()}" if d.met_at else f"closed: {d.closed}"
                end = to_ns(d.met_at) if d.met_at else now_ns
            f = old.fields
            changes.append(AlertEvent(old.kind, old.id, {**f, "end": max(end, f["start"]), "closed_by": why}, old.params,
                                 old.provision, old.status))
        return changes

    def checkpoint(self) -> None:
        self._open.checkpoint()


__all__ = ["ComplianceWatch", "deadline_event"]
