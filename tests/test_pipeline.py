"""The alert pipeline's clock never holds up ingest: what ``advance`` asks of a network
store (the calibration state, from InfluxDB) is asked before it takes the lock ``feed``
needs, so a store that does not answer delays the calibration notices, not the readings."""

from __future__ import annotations

import threading

from ms4watch.pipeline import AlertPipeline
from tests.alerts.support import at, reading, registry
from tests.support.waiting import wait_for


class HungStore:
    """A calibration-history port whose reads block until released (a black-holed InfluxDB)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()

    def calibration_history(self, **kw):
        return []

    def calibrations_due(self, now, *, warn_days=14):
        self.asked.set()
        self.release.wait(60)
        return []


def test_a_hung_store_read_on_the_clock_does_not_hold_up_feed(tmp_path):
    store = HungStore()
    p = AlertPipeline(registry(), tmp_path, report=lambda line: None, calibrations=store, now_ns=lambda: at(0))
    fed = threading.Event()
    try:
        ticker = threading.Thread(target=p.advance, args=(at(60),), daemon=True)
        ticker.start()
        assert store.asked.wait(10)                                  # the clock is waiting on the store …
        feeder = threading.Thread(target=lambda: (p.feed([reading(at(61), "OF-1", "flow", 0.2)]), fed.set()),
                                  daemon=True)
        feeder.start()
        assert wait_for(fed.is_set, 10), "feed waited for the store's calibration read"   # … feed does not
        assert p.fed_readings == 1 and not store.release.is_set()
    finally:
        store.release.set()
        ticker.join(10)
        p.close()
    assert not ticker.is_alive()
