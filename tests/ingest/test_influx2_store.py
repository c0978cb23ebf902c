"""The influxdb-client (v2 write API) sink against a real VictoriaMetrics, read back via its export API."""

from __future__ import annotations

import time

import pytest

from ms4watch.ingest.errors import StoreRejected, StoreUnavailable
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.influxdb import StoreMisconfigured
from tests.ingest.http_stub import StubServer
from tests.support.influx_fixtures import make_messages

pytestmark = pytest.mark.influxdb


def _samples(vm, metric: str) -> int:
    vm.flush()
    return sum(len(s["values"]) for s in vm.export('{__name__="%s"}' % metric))


def test_write_read_back_and_duplicates(victoria):
    sink = build_store(f"influxdb2://127.0.0.1:{victoria.port}/town?org=ramapo&allow_short_retention=true&batch=1000")
    sink.open()
    msgs = make_messages(600, 4)
    assert sink.write(msgs).readings_written == 2400
    sink.write(msgs[100:200])              # redelivered: written once
    assert _samples(victoria, "reading_seq") == 2400
    assert _samples(victoria, "reading_value") == 2400
    series = victoria.export('{__name__="reading_value",quantity="flow"}')
    assert len(series) == 1 and series[0]["metric"]["station"] == "OF-12" and series[0]["metric"]["unit"] == "gpm"
    assert sorted(series[0]["values"]) == sorted(m.readings[0].value for m in msgs)
    sink.close()


def test_status_writes_calibration_days_left(victoria):
    """VictoriaMetrics keeps numeric fields only: days_left arrives, tagged with ids."""
    from datetime import date, datetime, timedelta, timezone

    from ms4watch.contract.wire import SensorCalibration
    from ms4watch.ingest.stores.base import DeviceStatus
    sink = build_store(f"influxdb2://127.0.0.1:{victoria.port}/town?org=ramapo&allow_short_retention=true")
    sink.open()
    now = time.time_ns()
    today = datetime.fromtimestamp(now // 10**9, tz=timezone.utc).date()
    sink.write_status(DeviceStatus("LOG-1", "DS-1", now, "online", calibrations=(
        SensorCalibration(sensor="turbidity", performed=date(2026, 1, 1), due=today - timedelta(days=3)),)))
    deadline = time.monotonic() + 15
    while True:          # a few samples may take VictoriaMetrics a moment to make searchable
        victoria.flush()
        found = victoria.export('{__name__="calibration_days_left"}')
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert found, "calibration_days_left not searchable in VictoriaMetrics after 15 s"
    (series,) = found
    assert {k: series["metric"][k] for k in ("station", "device", "sensor")} == \
        {"station": "DS-1", "device": "LOG-1", "sensor": "turbidity"}
    assert series["values"] == [-3.0]
    sink.close()


def test_open_refuses_when_retention_cannot_be_checked(victoria):
    with pytest.raises(StoreMisconfigured, match="cannot read its retention"):
        build_store(f"influxdb2://127.0.0.1:{victoria.port}/town?org=ramapo").open()


def test_store_down_is_unavailable(victoria):
    sink = build_store(f"influxdb2://127.0.0.1:{victoria.port}/town?org=ramapo&allow_short_retention=1")
    victoria.stop()
    with pytest.raises(StoreUnavailable):
        sink.write(make_messages(1))
    victoria.start()
    sink.write(make_messages(1))
    assert _samples(victoria, "reading_seq") == 4


@pytest.mark.parametrize("status, headers, kind, after", [
    (429, {"Retry-After": "9"}, StoreUnavailable, 9.0),
    (503, {}, StoreUnavailable, None),
    (400, {}, StoreRejected, None),
])
def test_http_errors_are_translated(status, headers, kind, after, monkeypatch):
    # Stand-in: a real server cannot be made to throttle on demand.
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN", "tok-123")
    with StubServer(status, headers, b'{"code":"x","message":"stub says no"}') as stub:
        sink = build_store(f"influxdb2://127.0.0.1:{stub.port}/town?org=ramapo")
        with pytest.raises(kind) as e:
            sink.write(make_messages(1))
        assert "stub says no" in str(e.value) and "tok-123" not in str(e.value)
        if kind is StoreUnavailable:
            assert e.value.retry_after_s == after
        assert len(stub.requests) == 1                 # the sink does not retry on its own
        assert stub.requests[0][1].startswith("/api/v2/write?org=ramapo&bucket=town&precision=ns")


def test_store_init_creates_bucket_with_retention_and_dbrp(monkeypatch):
    """Stand-in for InfluxDB 2.x (not packaged in Debian): checks the requests `store init` sends."""
    import json
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN", "tok-123")
    bucket = {"id": "b1", "orgID": "o1", "name": "town", "retentionRules": [{"type": "expire", "everySeconds": 94694400}]}
    routes = {("GET", "/api/v2/buckets"): (200, json.dumps({"buckets": []}).encode()),
              ("GET", "/api/v2/orgs"): (200, json.dumps({"orgs": [{"id": "o1", "name": "ramapo"}]}).encode()),
              ("POST", "/api/v2/buckets"): (201, json.dumps(bucket).encode()),
              ("GET", "/api/v2/dbrps"): (200, json.dumps({"content": []}).encode()),
              ("POST", "/api/v2/dbrps"): (201, json.dumps({"id": "d1", "orgID": "o1", "bucketID": "b1", "database": "town",
                                                           "retention_policy": "autogen", "default": True}).encode())}
    from datetime import timedelta
    with StubServer(404, routes=routes) as stub:
        sink = build_store(f"influxdb2://127.0.0.1:{stub.port}/town?org=ramapo")
        said = sink.ensure_store(timedelta(days=1096))
        assert "bucket 'town' created: keeps 1096 days" in said
        posted = {path.split("?")[0]: json.loads(body) for (m, path), body in zip(stub.requests, stub.bodies) if m == "POST"}
        assert posted["/api/v2/buckets"]["retentionRules"][0]["everySeconds"] == 1096 * 86400
        assert posted["/api/v2/buckets"]["name"] == "town"
        assert posted["/api/v2/dbrps"] == {"orgID": "o1", "bucketID": "b1", "database": "town",
                                           "retention_policy": "autogen", "default": True}


def test_store_init_without_buckets_api_says_what_to_do(victoria):
    from datetime import timedelta
    sink = build_store(f"influxdb2://127.0.0.1:{victoria.port}/town?org=ramapo")
    with pytest.raises(StoreMisconfigured, match="no buckets API"):
        sink.ensure_store(timedelta(days=1096))
