"""The construction sites' subjects: inspection items (``rules/inspections``), from the
gauges' confirmed qualifying storms and the inspections recorded, on the engine's clock.
Not time-series subjects: no buffer, no horizon; evaluated when a storm was confirmed, an
inspection recorded, or an item falls due."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .. import evaluate as ev
from ..events import AlertEvent
from .state import Subject

if TYPE_CHECKING:
    from .scheduler import StreamingEngine


class Sites:
    """Every construction site of the engine's registry."""

    def __init__(self, eng: "StreamingEngine") -> None:
        self.eng = eng

    def evaluate(self, sid: str) -> list[AlertEvent]:
        eng = self.eng
        storms: dict[str, Sequence[int]] = {g: list(d.values()) for g, d in eng.confirmed.items()}
        computed = ev.site_inspections(eng.reg, sid, storms, [i.time_ns for i in eng.inspected if i.site == sid],
                                       eng.now_ns)
        sub = eng.subjects.setdefault(("site", sid), Subject({}, set()))
        changes = []
        seen = set()
        for e in computed:
            seen.add(e.id)
            if sub.emitted.get(e.id) is None or sub.emitted[e.id].fields != e.fields:
                sub.emitted[e.id] = sub.live[e.id] = e
                changes.append(e)
        for eid in [i for i in sub.emitted if i not in seen]:
            sub.live.pop(eid, None)
            changes.append(sub.emitted.pop(eid).retracted())
        return changes

