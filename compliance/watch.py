"""Compliance deadlines as events on the alert pipeline's clock: a running, actionable
deadline is an open ``compliance_deadline`` event with its ``due`` (the incident's
deadline, so the Dispatcher reminds before it and tells the deputies once it passes); a
deadline met or closed is the same event with ``end`` set (its incident resolves).

Like :class:`~ms4watch.alerts.calibration_watch.CalibrationWatch`, ``advance`` returns only
what is new or changed, and what was emitted is kept in ``state_path`` so a restart
neither repeats nor forgets a deadline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable

from ..alerts.errors import AlertError
from ..alerts.events import Event, EventKind
from ..contract.timeutil import to_ns
from .deadlines import Deadline

STATE_VERSION = 1


def deadline_event(d: Deadline) -> Event:
    fields = {"record": d.record, "number": d.number, "what_due": d.label, "who": d.who,
              "start": to_ns(d.start), "due": to_ns(d.due), "end": None, "href": d.href}
    if d.place:
        fields = {"site" if d.record.startswith("swppp") else "outfall": d.place, **fields}
    params = {"clock": d.rule.describe()}
    return Event(EventKind.COMPLIANCE_DEADLINE, f"compliance/{d.key}", fields, params, d.rule.provision)


class ComplianceWatch:
    def __init__(self, state_path: str | Path | None = None):
        self.state_path = Path(state_path) if state_path else None
        self._open: dict[str, Event] = {}
        if self.state_path and self.state_path.exists():
            self._load()

    def advance(self, now_ns: int, deadlines: Iterable[Deadline]) -> list[Event]:
        changes: list[Event] = []
        current: dict[str, tuple[Deadline, Event]] = {}
        for d in deadlines:
            if d.actionable:
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
            changes.append(Event(old.kind, old.id, {**f, "end": max(end, f["start"]), "closed_by": why}, old.params,
                                 old.provision, old.status))
        return changes

    def checkpoint(self) -> None:
        if self.state_path is None:
            return
        tmp = self.state_path.with_suffix(self.state_path.suffix + ".tmp")
        try:
            tmp.write_text(json.dumps({"version": STATE_VERSION, "open": [
                e.to_dict() | {"_fields": list(e.fields)} for e in self._open.values()]}), encoding="utf-8")
            os.replace(tmp, self.state_path)
        except OSError as e:
            raise AlertError(f"{self.state_path}: cannot write the compliance watch's state: {e.strerror}") from None

    def _load(self) -> None:
        assert self.state_path is not None
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("version") != STATE_VERSION:
                raise AlertError(f"{self.state_path}: state version {state.get('version')!r}, expected {STATE_VERSION}")
            for d in state["open"]:
                order = d.pop("_fields")
                e = Event.from_dict(d)
                self._open[e.id] = Event(e.kind, e.id, {f: e.fields[f] for f in order}, e.params, e.provision,
                                         e.status)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise AlertError(f"{self.state_path}: cannot read the compliance watch's state: {e}") from None


__all__ = ["ComplianceWatch", "deadline_event"]
