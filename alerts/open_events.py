"""The open events a watch has emitted, kept in a JSON state file so a restart neither
repeats nor forgets one: the one piece :class:`~.calibration_watch.CalibrationWatch` and
:class:`~ms4watch.compliance.watch.ComplianceWatch` share. The file is replaced atomically
(written beside it, then renamed), so it is always whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .errors import AlertError
from .events import AlertEvent

STATE_VERSION = 1


class OpenEvents(dict[str, AlertEvent]):
    """id -> the latest version emitted, not yet closed; ``what`` names the watch in errors."""

    def __init__(self, state_path: str | Path | None, what: str):
        super().__init__()
        self.state_path = Path(state_path) if state_path else None
        self.what = what
        if self.state_path is not None and self.state_path.exists():
            self._load()

    def checkpoint(self) -> None:
        if self.state_path is None:
            return
        tmp = self.state_path.with_suffix(self.state_path.suffix + ".tmp")
        try:
            tmp.write_text(json.dumps({"version": STATE_VERSION, "open": [
                e.to_dict() | {"_fields": list(e.fields)} for e in self.values()]}), encoding="utf-8")
            os.replace(tmp, self.state_path)
        except OSError as e:
            raise AlertError(f"{self.state_path}: cannot write the {self.what}'s state: {e.strerror}") from None

    def _load(self) -> None:
        assert self.state_path is not None
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("version") != STATE_VERSION:
                raise AlertError(f"{self.state_path}: state version {state.get('version')!r}, expected {STATE_VERSION}")
            for d in state["open"]:
                order = d.pop("_fields")
                e = AlertEvent.from_dict(d)
                self[e.id] = AlertEvent(e.kind, e.id, {f: e.fields[f] for f in order}, e.params, e.provision, e.status)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise AlertError(f"{self.state_path}: cannot read the {self.what}'s state: {e}") from None


__all__ = ["OpenEvents"]
