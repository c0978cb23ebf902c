"""The calibration history and every logger event, in both stores: one record per run kept,
read back by sensor and station, the sensors due or overdue, a redelivery stored once."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from ms4watch.contract.calibration import CalibrationRecord, DueState, Fit
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import SensorCalibration
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.base import CalibrationHistory, DeviceEvent, DeviceStatus, DeviceEventStore, DeviceEventSource
from ms4watch.ingest.stores.sqlite import SqliteStore

NOW = datetime(2026, 6, 20, 12, 0, tzinfo=timezone.utc)


def record(rid: str, sensor: str, day: int, result: str = "pass", due: date = date(2026, 9, 1),
           station: str = "DS-1", device: str = "LOG-DS1") -> CalibrationRecord:
    t = datetime(2026, 6, day, 14, 0, tzinfo=timezone.utc)
    return CalibrationRecord(id=rid, device=device, station=station, sensor=sensor, quantity="turbidity",
                             unit="FNU", procedure="turbidity", technician="Pat Doe", started=t - timedelta(minutes=40),
                             performed=t, fit=Fit(slope=0.95, offset=-0.2), result=result, next_due=due)


def event(rec: CalibrationRecord, digest: int = 7) -> DeviceEvent:
    return DeviceEvent(rec.device, rec.station, to_ns(rec.performed), "calibration", rec.to_data(), digest,
                       to_ns(NOW), rec)


def status(device: str, station: str, *cals: tuple[str, date, date]) -> DeviceStatus:
    return DeviceStatus(device, station, to_ns(NOW), "online", config_version="3+cal1",
                        calibrations=tuple(SensorCalibration(sensor=s, performed=p, due=d) for s, p, d in cals))


@pytest.fixture(params=["sqlite", "influxdb1"])
def store(request, tmp_path):
    if request.param == "sqlite":
        sink = SqliteStore(tmp_path / "store.db")
    else:
        server = request.getfixturevalue("influxd")
        server.query('CREATE DATABASE "town" WITH DURATION 1096d NAME "ms4watch"')
        sink = build_store(server.store_url("town"))
    sink.open()
    yield sink
    sink.close()


def test_every_run_is_kept_and_read_back_by_sensor_and_station(store):
    assert isinstance(store, DeviceEventStore) and isinstance(store, CalibrationHistory) and isinstance(store, DeviceEventSource)
    runs = [record("cal-a", "turb", 1, "fail"), record("cal-b", "turb", 2), record("cal-c", "level", 3),
            record("cal-d", "turb", 4, station="US-1", device="LOG-US1")]
    store.write_events([event(r, digest=i) for i, r in enumerate(runs)])
    store.write_events([event(runs[1], digest=1)])                       # a redelivery
    assert [r.id for r in store.calibration_history(device="LOG-DS1", sensor="turb")] == ["cal-a", "cal-b"]
    assert [r.id for r in store.calibration_history(station="DS-1")] == ["cal-a", "cal-b", "cal-c"]
    assert store.calibration_history(device="LOG-DS1", sensor="turb")[1] == runs[1]          # the whole record
    assert [r.id for r in store.calibration_history(start=datetime(2026, 6, 3, tzinfo=timezone.utc))] == \
        ["cal-c", "cal-d"]
    evs = store.device_events(device="LOG-DS1", kind="calibration")
    assert [e.calibration.id for e in evs] == ["cal-c", "cal-b", "cal-a"]                    # newest first
    assert evs[0].time_ns == to_ns(runs[2].performed) and evs[0].data == runs[2].to_data()


def test_other_events_are_kept_too(store):
    t = to_ns(NOW)
    acks = [DeviceEvent("LOG-DS1", "DS-1", t, "cmd_ack", {"id": "1", "ok": True}, 11, t),
            DeviceEvent("LOG-DS1", "DS-1", t, "cmd_ack", {"id": "2", "ok": False}, 12, t),   # same millisecond
            DeviceEvent("LOG-DS1", "DS-1", t + 5, "sample_taken", {"bottle": 3}, 13, t)]
    store.write_events(acks)
    got = store.device_events(station="DS-1")
    assert sorted((e.kind, e.data.get("id") or e.data.get("bottle")) for e in got) == \
        [("cmd_ack", "1"), ("cmd_ack", "2"), ("sample_taken", 3)]
    assert {e.time_ns for e in got} == {t, t + 5}


def test_sensors_due_and_overdue_with_their_latest_record(store):
    store.write_status(status("LOG-DS1", "DS-1", ("turb", date(2026, 6, 2), date(2026, 6, 30)),
                              ("level", date(2026, 3, 1), date(2026, 6, 19))))
    store.write_status(status("LOG-US1", "US-1", ("turb", date(2026, 6, 1), date(2026, 9, 1))))
    store.write_events([event(record("cal-a", "turb", 1, "fail")), event(record("cal-b", "turb", 2), digest=2)])
    due = store.calibrations_due(NOW, warn_days=14)
    got = [(c.device, c.sensor, c.due, c.days_left, c.state, c.last_record, c.last_result) for c in due]
    assert got == [
        ("LOG-DS1", "level", date(2026, 6, 19), -1, DueState.OVERDUE, None, None),
        ("LOG-DS1", "turb", date(2026, 6, 30), 10, DueState.DUE_SOON, "cal-b", "pass"),
        ("LOG-US1", "turb", date(2026, 9, 1), 73, DueState.OK, None, None),
    ]
    assert due[1].station == "DS-1" and due[1].technician == "Pat Doe"
