"""What the workbench reads of a store besides single readings: a window summarised in time
buckets (``Summarising``), the newest reading of every station and each logger's latest
status with its calibrations (``StationState``) — SQLite, InfluxDB 1.x on a real ``influxd``,
and the spooling sink (store plus spool)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from ms4watch.contract.timeutil import from_ns
from ms4watch.contract.wire import SensorCalibration
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.base import DeviceStatus, StationState, Summarising
from ms4watch.ingest.stores.spooling import SpoolingStore
from ms4watch.ingest.stores.sqlite import SqliteStore
from ms4watch.ingest.stores.summary import merge, summarise
from tests.support.influx_fixtures import make_messages
from tests.support.servers import free_port

END = 1_780_000_000 * 10**9
MIN = 60 * 10**9


def _expected(msgs, start_ns: int, width_ns: int, quantity: str = "flow"):
    rows = [(r.time_ns, r.value) for m in msgs for r in m.readings if r.quantity == quantity and r.time_ns >= start_ns]
    out: dict[int, list[float]] = {}
    for t, v in rows:
        out.setdefault(start_ns + (t - start_ns) // width_ns * width_ns, []).append(v)
    return [(k, len(v), min(v), max(v), round(sum(v), 6)) for k, v in sorted(out.items())]


def _check_summary(source: Summarising, msgs) -> None:
    start = msgs[0].readings[0].time_ns + 7 * MIN      # not on a bucket boundary of the data's own
    end = msgs[-1].readings[0].time_ns
    for width in (13 * MIN, 60 * MIN, 10**18, 10**9):   # 1 s: more buckets than SQLite seeks one by one
        got = source.summary("OF-12", "flow", from_ns(start), from_ns(end), width)
        assert [(b.start_ns, b.count, b.min, b.max, round(b.sum, 6)) for b in got] == _expected(msgs, start, width)
    assert source.summary("OF-99", "flow", from_ns(start), from_ns(end), 60 * MIN) == []
    # only what a chart draws: the greatest, the mean (a store may give more)
    part = source.summary("OF-12", "flow", from_ns(start), from_ns(end), 60 * MIN, frozenset({"max", "mean"}))
    assert [(b.start_ns, b.max, round(b.mean, 6)) for b in part] == \
        [(k, hi, round(s / n, 6)) for k, n, lo, hi, s in _expected(msgs, start, 60 * MIN)]


STATUS = DeviceStatus("LOG-OF12", "OF-12", END, "online", 12.6, -71.0, 0, 0, "cfg-3", "0.1.0", "synced",
                      (SensorCalibration(sensor="flow", performed=date(2026, 1, 5), due=date(2026, 7, 5)),
                       SensorCalibration(sensor="turb", performed=date(2025, 11, 1), due=date(2026, 5, 1),
                                         station="DS-3")))


def _check_state(source: StationState, msgs) -> None:
    latest = {(x.station, x.quantity): x for x in source.latest_readings(from_ns(0))}
    last = msgs[-1].readings
    assert set(latest) == {("OF-12", q) for q in ("flow", "rain", "turbidity", "battery")}
    assert (latest[("OF-12", "flow")].time_ns, latest[("OF-12", "flow")].value) == (last[0].time_ns, last[0].value)
    assert source.latest_readings(from_ns(END + MIN)) == []
    [st] = source.device_statuses()
    assert (st.device, st.station, st.state, st.battery_v, st.signal_dbm, st.clock) == \
        ("LOG-OF12", "OF-12", "online", 12.6, -71.0, "synced")
    assert sorted((c.sensor, c.due, c.station or "OF-12") for c in st.calibrations) == \
        [("flow", date(2026, 7, 5), "OF-12"), ("turb", date(2026, 5, 1), "DS-3")]
    # a later status listing one calibration replaces the device's list
    source.write_status(DeviceStatus(**{**{f: getattr(STATUS, f) for f in STATUS.__slots__},
                                        "received_ns": END + MIN, "battery_v": 12.1, "calibrations": STATUS.calibrations[:1]}))
    [st] = source.device_statuses()
    assert st.battery_v == 12.1 and [c.sensor for c in st.calibrations] == ["flow"]


def test_summarise_in_numpy_and_merge():
    msgs = make_messages(240, 4, end_ns=END)
    start = msgs[0].readings[0].time_ns
    rows = [r for m in msgs for r in m.readings if r.quantity == "flow"]
    got = summarise(rows, start, 60 * MIN)
    assert [(b.start_ns, b.count, b.min, b.max, round(b.sum, 6)) for b in got] == _expected(msgs, start, 60 * MIN)
    halves = merge(summarise(rows[::2], start, 60 * MIN), summarise(rows[1::2], start, 60 * MIN))
    assert halves == got
    assert summarise([], start, MIN) == []
    with pytest.raises(ValueError):
        summarise(rows, start, 0)


def test_sqlite(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    assert isinstance(sink, Summarising) and isinstance(sink, StationState)
    assert sink.summary("OF-12", "flow", from_ns(0), from_ns(END), MIN) == []        # no file yet
    assert sink.latest_readings(from_ns(0)) == [] and sink.device_statuses() == []
    sink.open()
    msgs = make_messages(600, 4, end_ns=END)
    sink.write(msgs)
    sink.write_status(STATUS)
    _check_summary(sink, msgs)
    _check_state(sink, msgs)
    sink.close()


@pytest.mark.influxdb
def test_influxdb1(influxd):
    sink = build_store(influxd.store_url("town"))
    sink.ensure_store(timedelta(days=1096))
    sink.open()
    msgs = make_messages(600, 4, end_ns=END)
    sink.write(msgs)
    sink.write_status(STATUS)
    _check_summary(sink, msgs)
    _check_state(sink, msgs)
    sink.close()


def test_spooling_store_summarises_its_store_or_while_the_store_is_down_its_spool(tmp_path):
    msgs = make_messages(600, 4, end_ns=END)
    up = SpoolingStore(SqliteStore(tmp_path / "store.db"), tmp_path / "spool-up.db")
    up.open()
    try:
        up.write(msgs)
        assert up.spool_depth == 0
        _check_summary(up, msgs)
        up.write_status(STATUS)
        assert [d.device for d in up.device_statuses()] == ["LOG-OF12"] and up.latest_readings(from_ns(0))
    finally:
        up.close()
    down = SpoolingStore(build_store(f"influxdb1://127.0.0.1:{free_port()}/town?timeout=1s"), tmp_path / "spool.db")
    down.open()
    try:
        down.write(msgs)                       # the store is down: into the spool, acknowledged
        assert down.spool_depth == 2400
        _check_summary(down, msgs)
        assert down.latest_readings(from_ns(0)) == [] and down.device_statuses() == []
    finally:
        down.close()
