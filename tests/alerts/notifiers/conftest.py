from __future__ import annotations

import pytest

from ms4watch.alerts.incidents import IncidentStore, connect
from ms4watch.alerts.notifiers.base import Notification, Recipient
from ms4watch.alerts.delivery.dispatch import snapshot
from tests.support.notify_peers import SmtpSink, dwf, registry, utc

T0 = utc(2026, 6, 1, 16, 0)


@pytest.fixture
def smtp():
    sink = SmtpSink().start()
    yield sink
    sink.stop()


@pytest.fixture
def make_notification(tmp_path):
    """A notification built from a real incident, as the delivery queue would hand it over."""
    store = IncidentStore(connect(tmp_path / "n.db"))
    town = registry()

    def make(event=None, stage="open", recipient=Recipient("Pat SMO", "smo", "pat@town.test"), channel="email",
             station_name="Main St outfall", reaches=None, **kw) -> Notification:
        """``reaches``: the town's sites on its map (network.sites; None: no map imported)."""
        inc = store.apply_event(event or dwf("2026-06-01T15:30:00Z"), T0).incident
        return Notification(id=1, key=f"incident:{inc.id}|{recipient.name}|{channel}|{stage}", channel=channel,
                            stage=stage, recipient=recipient, incident=snapshot(town, inc, reaches),
                            created_at=T0.isoformat(), station_name=station_name, timezone="America/New_York",
                            ack_url=f"http://ms4.town.test/incidents/{inc.id}/ack?code={inc.code}", **kw)
    return make
