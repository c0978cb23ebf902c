"""The composition root's ingest part: the ingest service a town's settings describe.

:func:`~ms4watch.server.build_server` makes each town's with it (the alert pipeline told of
every stored batch) and ``ms4watch ingest`` makes its own with it (nothing told), so the
``[broker]`` and ``[ingest]`` settings mean the same in both. Light to import: nothing of
the alert side nor of the registry, which ``ms4watch ingest`` starts without.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .contract.bounds import DEFAULT_WINDOW, TimeWindow
from .ingest.service import IngestService, OnStatus, OnStored
from .settings import Settings

if TYPE_CHECKING:
    from .ingest.identity import Identity
    from .ingest.stores.base import ReadingsStore


def build_ingest(settings: Settings, municipality: str, store: "ReadingsStore", *, client_id: str | None = None,
                 rejected_path: Path | None = None, identity: "Identity | None" = None,
                 on_stored: OnStored | None = None, on_status: OnStatus | None = None,
                 shared_group: str | None = None, time_window: TimeWindow = DEFAULT_WINDOW) -> IngestService:
    """``municipality``'s ingest into ``store``: its broker session (``client_id``, else the
    town's from the settings), who may send what (``identity``), where contract breakers go
    (``rejected_path``, else ``rejected.jsonl`` in the town's data directory) and the batch
    wait of ``[ingest]``. Refuses a bad broker setting (Ms4Error) before anything connects."""
    broker = settings.broker
    return IngestService(
        broker.url, municipality, store, client_id=client_id or settings.town_client_id(municipality),
        username=broker.username, password=broker.secret(), tls=broker.tls(), identity=identity,
        on_stored=on_stored, on_status=on_status,
        rejected_path=rejected_path or settings.town_data_dir(municipality) / "rejected.jsonl",
        batch_wait_s=settings.ingest.batch_wait.total_seconds(), shared_group=shared_group,
        time_window=time_window)


__all__ = ["build_ingest"]
