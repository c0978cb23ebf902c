"""The InfluxDB 1.x sink against a real ``influxd`` 1.6 started on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from datetime import date, datetime, timedelta, timezone

import pytest

from ms4watch.contract.wire import SensorCalibration
from ms4watch.ingest.errors import StoreRejected, StoreUnavailable
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.base import DeviceStatus
from ms4watch.ingest.stores.influxdb import Influx1Store, MessagesRejected, StoreMisconfigured
from ms4watch.ingest.stores.influxdb.lineproto import LineEncoder
from tests.ingest.http_stub import StubServer
from tests.support.influx_fixtures import make_messages

pytestmark = pytest.mark.influxdb


def _ready_store(server, db="town", **opts) -> Influx1Store:
    sink = build_store(server.store_url(db, **opts))
    sink.ensure_store(timedelta(days=1096))
    sink.open()
    return sink


def _count(server, db="town", where="") -> int:
    body = server.query(f'SELECT count("seq") FROM "reading" {where}', db)
    series = body["results"][0].get("series", [])
    return sum(row[1] for s in series for row in s["values"])


def test_write_and_read_back(influxd):
    sink = _ready_store(influxd)
    msgs = make_messages(250, 4)
    result = sink.write(msgs)
    assert result.readings_written == 1000
    assert _count(influxd) == 1000
    assert sink.count_readings() == 1000
    # canonical values and fields as written, quality flags as fields
    body = influxd.query("SELECT value, flags, seq, unit FROM reading WHERE quantity='flow' ORDER BY time DESC LIMIT 1", "town")
    row = body["results"][0]["series"][0]["values"][0]
    last_flow = msgs[-1].readings[0]
    assert row[1:] == [last_flow.value, "", last_flow.seq, "gpm"]
    assert row[0] == last_flow.time_ns
    sink.close()


def test_duplicates_are_written_once(influxd):
    sink = _ready_store(influxd)
    msgs = make_messages(100, 4)
    sink.write(msgs[:60])
    sink.write(msgs[40:])          # 20 messages again, in a bigger batch
    sink.write([msgs[7], msgs[7]])  # the same message twice in one batch
    assert _count(influxd) == 400
    sink.close()


def test_batches_are_split_by_lines(influxd):
    sink = _ready_store(influxd, batch="7")
    sink.write(make_messages(30, 4))
    assert _count(influxd) == 120


def test_sensor_error_reading_keeps_its_flags(influxd):
    sink = _ready_store(influxd)
    m = make_messages(1, 1)[0]
    bad = m.readings[0]._replace(value=None, flags="sensor_error")
    sink.write([type(m)(m.device, m.seq, (bad,))])
    body = influxd.query('SELECT value, flags FROM reading', "town")
    assert body["results"][0]["series"][0]["values"][0][1:] == [None, "sensor_error"]


@pytest.mark.parametrize("batch", [{}, {"batch": "5"}], ids=["one request", "parallel requests"])
def test_bad_message_is_refused_others_written(influxd, batch):
    sink = _ready_store(influxd, **batch)
    week = 7 * 86400 * 10**9
    old = make_messages(3, 4, device="LOG-OLD", first_seq=0, end_ns=make_messages(1)[0].readings[0].time_ns - 5 * week)
    new = make_messages(3, 4, device="LOG-NEW", first_seq=0)
    # make 'seq' a string field in the old messages' shard: InfluxDB then refuses those (400)
    t = old[0].readings[0].time_ns
    sink.write_records([("reading", {"station": "X", "device": "X", "sensor": "x", "quantity": "flow", "unit": "gpm"},
                         {"seq": "not a number"}, t - 1)])
    with pytest.raises(MessagesRejected) as e:
        sink.write(old + new)
    assert isinstance(e.value, StoreRejected)
    assert sorted((m.device, m.seq) for m, _ in e.value.rejected) == [("LOG-OLD", 0), ("LOG-OLD", 1), ("LOG-OLD", 2)]
    assert e.value.written == 12
    assert _count(influxd, where="WHERE device='LOG-NEW'") == 12
    assert "HTTP 400" in e.value.rejected[0][1]


def test_a_refused_message_is_found_by_halving_the_batch(influxd):
    """One message InfluxDB refuses (a field type conflict) among 64: it alone is refused, the
    other 63 are written, in about 2·log2(64) requests rather than one per message."""
    sink = _ready_store(influxd)
    msgs = make_messages(64, 4)
    week = 7 * 86400 * 10**9     # the bad one in a shard of five weeks before, where 'value' is a string
    bad = msgs[37] = make_messages(1, 4, first_seq=37, end_ns=msgs[0].readings[0].time_ns - 5 * week)[0]
    sink.write_records([("reading", {"station": "X", "device": "X", "sensor": "x", "quantity": "flow", "unit": "gpm"},
                         {"value": "a string"}, bad.readings[0].time_ns - 1)])
    requests = []
    post = sink._post_lines
    sink._post_lines = lambda lines, *a: (requests.append(len(lines)), post(lines, *a))[1]
    with pytest.raises(MessagesRejected) as e:
        sink.write(msgs)
    assert [(m.seq, "field type conflict" in reason) for m, reason in e.value.rejected] == [(bad.seq, True)]
    assert e.value.written == 63 * 4 and len(requests) <= 13 + 1     # and one for the receipts of the 63
    assert _count(influxd, where="WHERE device='LOG-OF12'") == 63 * 4
    sink.close()


@pytest.mark.parametrize("batch", [None, "2"])   # "2": requests sent while the batch is being encoded
def test_a_message_the_encoder_cannot_write_is_refused_alone(influxd, batch):
    sink = _ready_store(influxd, **({"batch": batch} if batch else {}))
    msgs = make_messages(3, 4)
    broken = msgs[1]._replace(readings=(msgs[1].readings[0]._replace(value="12,5"),))   # not a number
    with pytest.raises(MessagesRejected) as e:
        sink.write([msgs[0], broken, msgs[2]])
    assert [m.seq for m, _ in e.value.rejected] == [broken.seq] and "line protocol" in e.value.rejected[0][1]
    assert _count(influxd) == 8
    sink.close()


def test_requests_go_out_while_the_rest_of_the_batch_is_encoded(influxd):
    """A batch of several requests: the first is sent as soon as its lines are encoded, so
    InfluxDB parses it while ingest encodes the rest (not all encoded first, then sent)."""
    sink = _ready_store(influxd, batch="8")
    msgs = make_messages(10, 4)
    first_post = threading.Event()
    post = sink._post_lines
    sink._post_lines = lambda lines, *a: (first_post.set(), post(lines, *a))[1]
    seen_before_last: list[bool] = []

    class Watched(LineEncoder):
        def messages(self, batch):
            if batch[-1] is msgs[-1]:        # the last message: the first request is already out
                seen_before_last.append(first_post.wait(10))
            return super().messages(batch)
    sink._enc = Watched()
    assert sink.write(msgs).readings_written == 40
    assert seen_before_last == [True]
    assert _count(influxd) == 40
    sink.close()


def test_a_refused_message_is_found_while_requests_stream(influxd):
    """The same narrowing when the batch was sent request by request as it was encoded."""
    sink = _ready_store(influxd, batch="16")
    msgs = make_messages(64, 4)
    week = 7 * 86400 * 10**9
    bad = msgs[37] = make_messages(1, 4, first_seq=37, end_ns=msgs[0].readings[0].time_ns - 5 * week)[0]
    sink.write_records([("reading", {"station": "X", "device": "X", "sensor": "x", "quantity": "flow", "unit": "gpm"},
                         {"value": "a string"}, bad.readings[0].time_ns - 1)])
    with pytest.raises(MessagesRejected) as e:
        sink.write(msgs)
    assert [(m.seq, "field type conflict" in reason) for m, reason in e.value.rejected] == [(bad.seq, True)]
    assert e.value.written == 63 * 4
    assert _count(influxd, where="WHERE device='LOG-OF12'") == 63 * 4
    sink.close()


def test_status_writes_a_calibration_point_per_sensor_and_the_latest_wins(influxd):
    sink = _ready_store(influxd)
    day = 86400 * 10**9
    t1 = time.time_ns() - 2 * day
    t2 = t1 + day
    due = _utc_day(t1) + timedelta(days=10)
    cal = [SensorCalibration(sensor="flow", performed=date(2026, 1, 5), due=due),
           SensorCalibration(sensor="rain", performed=date(2026, 4, 7), due=date(2026, 10, 7), station="RG-1")]
    sink.write_status(DeviceStatus("LOG-1", "OF-1", t1, "online", 12.6, calibrations=tuple(cal)))
    recal = SensorCalibration(sensor="flow", performed=due, due=due + timedelta(days=90))
    sink.write_status(DeviceStatus("LOG-1", "OF-1", t2, "online", 12.5, calibrations=(recal, cal[1])))
    sink.write_status(DeviceStatus("LOG-1", "OF-1", t2 + 1000, "offline"))   # the last will: no calibration
    sink.write_status(DeviceStatus("LOG-2", "OF-2", t2, "online"))           # an older logger: none either
    # the dashboard's "Calibration due" query
    body = influxd.query('SELECT last("days_left") AS "days_left", last("due") AS "due", '
                         'last("performed") AS "performed" FROM "calibration" WHERE time > now() - 30d '
                         'GROUP BY "device", "sensor", "station"', "town")
    rows = {(s["tags"]["device"], s["tags"]["sensor"], s["tags"]["station"]): s["values"][0][1:]
            for s in body["results"][0]["series"]}
    assert rows == {("LOG-1", "flow", "OF-1"): [99.0, str(due + timedelta(days=90)), str(due)],
                    ("LOG-1", "rain", "RG-1"): [float((date(2026, 10, 7) - _utc_day(t2)).days), "2026-10-07",
                                                "2026-04-07"]}
    history = influxd.query('SELECT "days_left" FROM "calibration" WHERE "sensor" = \'flow\'', "town")
    assert history["results"][0]["series"][0]["values"] == [[t1, 10.0], [t2, 99.0]]
    states = influxd.query('SELECT "state" FROM "device_status"', "town")["results"][0]["series"][0]["values"]
    assert len(states) == 4
    sink.close()


def _utc_day(t_ns: int) -> date:
    return datetime.fromtimestamp(t_ns // 10**9, tz=timezone.utc).date()


def test_open_refuses_missing_database_and_short_retention(influxd):
    with pytest.raises(StoreMisconfigured, match="does not exist; run `ms4watch store init"):
        build_store(influxd.store_url("nowhere")).open()
    influxd.query('CREATE DATABASE "short" WITH DURATION 30d NAME "month"')
    with pytest.raises(StoreMisconfigured, match="keeps data 30 days, less than the 1096 days"):
        build_store(influxd.store_url("short")).open()
    build_store(influxd.store_url("short", allow_short_retention="true")).open()   # told explicitly
    sink = build_store(influxd.store_url("short"))
    assert "keeps 1096 days" in sink.ensure_store(timedelta(days=1096))
    sink.open()


def test_store_down_is_unavailable(influxd):
    sink = _ready_store(influxd)
    influxd.stop()
    with pytest.raises(StoreUnavailable, match="connection refused"):
        sink.write(make_messages(1))
    influxd.start()
    sink.write(make_messages(1))
    assert _count(influxd) == 4


def test_silent_store_times_out():
    with socket.socket() as s:     # accepts connections, never answers
        s.bind(("127.0.0.1", 0))
        s.listen()
        sink = build_store(f"influxdb1://127.0.0.1:{s.getsockname()[1]}/town?timeout=300ms")
        with pytest.raises(StoreUnavailable, match="no answer within 0.3s"):
            sink.write(make_messages(1))


@pytest.mark.parametrize("status, headers, kind, after", [
    (429, {"Retry-After": "7"}, StoreUnavailable, 7.0),
    (503, {"Retry-After": "2"}, StoreUnavailable, 2.0),
    (503, {}, StoreUnavailable, None),
    (400, {}, StoreRejected, None),
])
def test_http_errors_are_translated(status, headers, kind, after):
    # Stand-in: a real InfluxDB cannot be made to throttle on demand.
    with StubServer(status, headers, b'{"error":"stub says no"}') as stub:
        sink = build_store(f"influxdb1://127.0.0.1:{stub.port}/town")
        with pytest.raises(kind) as e:
            sink.write(make_messages(1))
        assert "stub says no" in str(e.value)
        if kind is StoreUnavailable:
            assert e.value.retry_after_s == after
        assert stub.requests[0][1].startswith("/write?db=town&precision=ns")


def test_token_user_password_is_sent_not_logged(monkeypatch, caplog):
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN", "ingest:s3cret")
    seen = {}

    with StubServer(204) as stub:
        orig = stub.server.RequestHandlerClass._answer

        def spy(handler):
            seen["auth"] = handler.headers.get("Authorization")
            orig(handler)
        stub.server.RequestHandlerClass.do_POST = spy
        sink = build_store(f"influxdb1://127.0.0.1:{stub.port}/town")
        sink.write(make_messages(1))
    import base64
    assert seen["auth"] == "Basic " + base64.b64encode(b"ingest:s3cret").decode()
    assert "s3cret" not in caplog.text and "s3cret" not in repr(sink.target)
