"""Errors of the incident store; each names the incident or the event field at fault."""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..errors import AlertError


class IncidentError(AlertError):
    """An incident operation cannot be done (unknown id or code, already resolved, ...)."""


class EventError(IncidentError):
    """An alert event does not follow the events.jsonl contract. Names the field."""

    def __init__(self, event: Mapping[str, Any], field: str, message: str):
        self.event = dict(event)
        self.field = field
        try:
            shown = json.dumps(self.event, default=str)[:200]
        except (TypeError, ValueError):
            shown = repr(self.event)[:200]
        super().__init__(f"event {shown}: {field}: {message}")
