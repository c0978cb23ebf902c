"""The incident service and the dispatcher over one incident database, wired as the
pipeline wires them, for tests that drive them by hand (``tick`` instead of the worker)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ms4watch.alerts.delivery.dispatch import Dispatcher
from ms4watch.alerts.delivery.routing import RoutingPolicy
from ms4watch.alerts.incidents import IncidentStore, connect
from ms4watch.alerts.incidents.service import IncidentService
from ms4watch.alerts.notifiers.urls import build_channels


class Alerting:
    def __init__(self, registry, db: str | Path, urls: list[str] | None = None, clock: Any = None, *,
                 policy: RoutingPolicy | None = None, on_incident: Any = None, readings_lookup: Any = None,
                 stream: Any = None, **dispatcher_kw: Any):
        policy = policy or RoutingPolicy()
        channels = build_channels(list(urls or []), file_path=Path(db).parent / "notifications.txt",
                                  readings_lookup=readings_lookup, clock=clock, stream=stream)
        conn = connect(db)
        lock = threading.RLock()
        self.store = IncidentStore(conn, hold_off=policy.hold_off, tz=registry.tz)
        self.dispatcher = Dispatcher(registry, conn, lock, self.store, channels, clock=clock, policy=policy,
                                     **dispatcher_kw)
        self.incidents = IncidentService(registry, self.store, self.dispatcher, lock, clock=clock,
                                         on_incident=on_incident)
        self.queue = self.dispatcher.queue
        self.handle = self.incidents.handle
        self.acknowledge = self.incidents.acknowledge
        self.resolve = self.incidents.resolve
        self.record_inspection = self.incidents.record_inspection
        self.inbound_sms = self.incidents.inbound_sms
        self.tick = self.dispatcher.tick
        self.contacts = self.dispatcher.contacts
        self.channels = self.dispatcher.channels
        self.close = self.incidents.close
