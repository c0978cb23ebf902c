"""The engine's state on disk, and each subject's events (:class:`Subject`).

``save`` writes everything (its :func:`snapshot`) the engine holds (buffers, reading times, each subject's events
and cut-off, confirmed storms, inspections, the clock) as one JSON file, atomically; ``load``
reads it back. A version the engine does not know, or a file it cannot read, is an
:class:`~..errors.AlertError` naming the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import evaluate as ev
from ..errors import AlertError
from ..events import AlertEvent
from .buffers import NEVER

if TYPE_CHECKING:
    from .scheduler import StreamingEngine

STATE_VERSION = 1


@dataclass
class Subject:
    """One subject's events (a gauge's storms, an outfall's episodes, …)."""

    emitted: dict[str, AlertEvent]           # the current version of every event (frozen ones included)
    frozen: set[str]
    cutoff: int = NEVER
    live: dict[str, AlertEvent] = field(default_factory=dict)   # emitted and not frozen: what can still change

    def __post_init__(self) -> None:
        self.live = {k: e for k, e in self.emitted.items() if k not in self.frozen}


def snapshot(eng: "StreamingEngine") -> dict[str, Any]:
    """The engine's state as :func:`save` writes it (JSON-ready values): what a test compares
    batch by batch without writing and reading a file each time."""
    return {
        "version": STATE_VERSION, "now_ns": eng.now_ns, "late_dropped": eng.late_dropped,
        "series": [[s, q, ser.cutoff, ser.rows()] for (s, q), ser in eng.series.items()],
        "times": [[s, ser.cutoff, ser.times().tolist()] for s, ser in eng.times.items()],
        "max": eng.latest,
        "subjects": [[k, n, sub.cutoff, sorted(sub.frozen), [e.to_dict() | {"_fields": list(e.fields)}
                                                             for e in sub.emitted.values()]]
                     for (k, n), sub in eng.subjects.items()],
        "confirmed": eng.confirmed,
        "inspections": [[i.site, i.time_ns, i.inspector, i.note] for i in eng.inspected],
        "since": eng.since, "status_intervals": eng.status_intervals,
    }


def save(eng: "StreamingEngine", path: Path) -> None:
    """Write the engine's state atomically to ``path``."""
    state = snapshot(eng)
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(json.dumps(state, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        raise AlertError(f"{path}: cannot write engine state: {e.strerror}") from None


def load(eng: "StreamingEngine", path: Path) -> None:
    """Read the engine's state from ``path`` (what :func:`save` wrote)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("version") != STATE_VERSION:
            raise AlertError(f"{path}: engine state version {state.get('version')!r}, "
                             f"expected {STATE_VERSION}")
        eng.now_ns = state["now_ns"]
        eng.checkpoint_ns = eng.now_ns
        eng.late_dropped = state["late_dropped"]
        for s, q, cut, rows in state["series"]:
            eng.series[(s, q)].load(cut, rows)
        for s, cut, ts in state["times"]:
            eng.times[s].load(cut, ts)
        eng.latest = {k: int(v) for k, v in state["max"].items()}
        for k, n, cut, frozen, evs in state["subjects"]:
            emitted = {}
            for d in evs:
                order = d.pop("_fields")
                e = AlertEvent.from_dict(d)
                emitted[e.id] = AlertEvent(e.kind, e.id, {f: e.fields[f] for f in order}, e.params, e.provision,
                                      e.status)
            eng.subjects[(k, n)] = Subject(emitted, set(frozen), cut)
        for g, d in state["confirmed"].items():
            eng.confirmed[g] = {k: int(v) for k, v in d.items()}
        eng.inspected = [ev.Inspection(s, int(t), i, n) for s, t, i, n in state["inspections"]]
        since = state.get("since")       # both absent from a state written before issue 10
        eng.since = None if since is None else int(since)
        eng.status_intervals = {k: float(v) for k, v in (state.get("status_intervals") or {}).items()}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise AlertError(f"{path}: cannot read engine state: {e}") from None
