"""The annual report's hours with readings, counted once and then kept up to date from the
store's receipts: the same count as a full recount after new readings, a logger's backlog of
an old hour, or a later ``upto``; no re-reading of the year when nothing was stored."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from ms4watch.compliance.uptime import HoursWithReadings, count_hours
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.stores import SqliteStore
from ms4watch.ingest.stores.base import StoredMessage

T0 = datetime(2026, 1, 3, 5, tzinfo=timezone.utc)
H = 3_600_000_000_000


class Counting:
    """The store, counting the summaries asked of it."""

    def __init__(self, inner):
        self.inner, self.summaries = inner, 0

    def summary(self, *a, **kw):
        self.summaries += 1
        return self.inner.summary(*a, **kw)

    def readings(self, *a, **kw):
        return self.inner.readings(*a, **kw)

    def received_since(self, since_ns):
        return self.inner.received_since(since_ns)


def write(sink, seq, hours, station="OF-1", value=1.0):
    rows = tuple(CanonicalReading(to_ns(T0) + h * H + 60 * 10**9, station, "LOG", "flow", "flow", value, "gpm", "", 0)
                 for h in hours)
    sink.write([StoredMessage("LOG-" + station, seq, rows)])


def test_kept_up_to_date_from_the_receipts(tmp_path, monkeypatch):
    from ms4watch.ingest.stores.sqlite import store as store_module
    clock = [to_ns(datetime(2026, 12, 1, tzinfo=timezone.utc))]      # ingest's clock: the receipts' times
    monkeypatch.setattr(store_module, "time", SimpleNamespace(time_ns=lambda: clock[0]))

    def later(minutes):
        clock[0] += minutes * 60 * 10**9
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    try:
        write(sink, 1, range(0, 48, 2))                # every other hour of two days
        write(sink, 2, range(0, 10), station="OF-2")
        later(10)
        store = Counting(sink)
        hours = HoursWithReadings(store, clock_ns=lambda: clock[0])
        upto = T0 + timedelta(hours=30)
        assert hours("OF-1", "flow", T0, upto) == count_hours(sink, "OF-1", "flow", T0, upto) == 15
        asked = store.summaries
        later(10)
        assert hours("OF-1", "flow", T0, upto) == 15 and store.summaries == asked     # nothing stored since
        write(sink, 3, [5, 7])                        # a logger's backlog: two old hours without readings
        later(10)
        assert hours("OF-1", "flow", T0, upto) == count_hours(sink, "OF-1", "flow", T0, upto) == 17
        later = T0 + timedelta(hours=47, minutes=30)  # the year goes on: the hours after are counted too
        assert hours("OF-1", "flow", T0, later) == count_hours(sink, "OF-1", "flow", T0, later) == 26
        assert hours("OF-2", "flow", T0, later) == count_hours(sink, "OF-2", "flow", T0, later) == 10
        assert hours("OF-1", "flow", T0, T0 + timedelta(hours=10)) == count_hours(
            sink, "OF-1", "flow", T0, T0 + timedelta(hours=10))                     # an earlier upto
    finally:
        sink.close()


def test_a_store_without_receipts_is_counted_every_time(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    try:
        write(sink, 1, range(0, 6))

        class Plain:
            summary = sink.summary
        hours = HoursWithReadings(Plain())
        assert hours("OF-1", "flow", T0, T0 + timedelta(hours=6)) == 6
        write(sink, 2, range(6, 9))
        assert hours("OF-1", "flow", T0, T0 + timedelta(hours=12)) == 9
    finally:
        sink.close()
