"""What the workbench asks of the town's alert pipeline (``ms4watch.pipeline.AlertPipeline``
is one), passed in by the composition root; none in a process without the engine."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ...alerts.events import AlertEvent
    from ...alerts.incidents import Incident
    from ...contract.registry import Registry


@runtime_checkable
class AlertSide(Protocol):
    def engine_events(self) -> "list[AlertEvent]":
        """Every event the engine holds (storms, inspection items, episodes), final ones included."""

    def record_inspection(self, site: str, at: datetime, by: str, note: str = "",
                          how: str = "api") -> "list[Incident]":
        """Record an inspection: the site's due incidents resolved, then the engine's items
        closed; the incidents it resolved."""

    def use_registry(self, registry: "Registry") -> None:
        """Judge from now on by the registry with the approvals and exempt flows recorded on the workbench."""

    def sync_compliance(self) -> None:
        """A compliance record changed: its clocks become (or stop being) deadline incidents now."""


__all__ = ["AlertSide"]
