"""Store URLs, tokens, HTTP error translation and line protocol (no server needed)."""

from __future__ import annotations

import email.utils
import time

import pytest

from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.errors import StoreRejected, StoreUnavailable
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.influxdb import Influx1Store, Influx2Store, parse_url
from ms4watch.ingest.stores.influxdb.errors import from_status, retry_after_s
from ms4watch.ingest.stores.influxdb.lineproto import LineEncoder, record_line, tag_escape


def test_v1_url():
    t = parse_url("influxdb1://db.town.test:8087/ms4?rp=keep&timeout=3s&batch=200")
    assert (t.version, t.tls, t.host, t.port, t.database, t.rp, t.timeout_s, t.batch_lines) == \
        (1, False, "db.town.test", 8087, "ms4", "keep", 3.0, 200)
    assert t.base_url == "http://db.town.test:8087"


def test_v2_tls_url_and_open_sink_dispatch():
    t = parse_url("influxdb2s://cloud.test/bucket1?org=town")
    assert (t.version, t.tls, t.port, t.org, t.base_url) == (2, True, 8086, "town", "https://cloud.test:8086")
    assert isinstance(build_store("influxdb2s://cloud.test/b?org=o"), Influx2Store)
    assert isinstance(build_store("influxdb1://127.0.0.1:1/x"), Influx1Store)


@pytest.mark.parametrize("url, match", [
    ("influxdb1://user:secret@h:8086/db", "credentials in the store URL are refused"),
    ("influxdb2://h:8086/b?org=o&token=abc", "credentials in the store URL are refused"),
    ("influxdb2://h:8086/b", r"need \?org=ORG"),
    ("influxdb1://h:8086/", "the path must be the DATABASE name"),
    ("influxdb1://h:8086/db?precision=s", "nanosecond"),
    ("influxdb1://h:8086/db?colour=red", "unknown option"),
    ("influxdb1://h:8086/db?batch=0", "batch must be"),
    ("influxdb1://h:8086/db?verify=maybe", "not true/false"),
    ("influxdb2://h:8086/b?org=o&rp=x", "for InfluxDB 1.x"),
])
def test_bad_urls_are_refused(url, match):
    with pytest.raises(ValueError, match=match):
        parse_url(url)


def test_refusal_never_echoes_the_secret():
    with pytest.raises(ValueError) as e:
        parse_url("influxdb1://admin:hunter2@h:8086/db")
    assert "hunter2" not in str(e.value)


def test_token_from_env_then_file(tmp_path, monkeypatch):
    monkeypatch.delenv("MS4WATCH_INFLUX_TOKEN", raising=False)
    monkeypatch.delenv("MS4WATCH_INFLUX_TOKEN_FILE", raising=False)
    f = tmp_path / "token"
    f.write_text("from-file\n")
    t = parse_url(f"influxdb2://h/b?org=o&token_file={f}")
    assert t.token() == "from-file"
    assert "from-file" not in repr(t)
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN", "from-env")
    assert t.token() == "from-env"
    monkeypatch.delenv("MS4WATCH_INFLUX_TOKEN")
    assert parse_url("influxdb2://h/b?org=o").token() is None
    monkeypatch.setenv("MS4WATCH_INFLUX_TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="cannot read the InfluxDB token file"):
        parse_url("influxdb2://h/b?org=o").token()


def test_retry_after_seconds_and_http_date():
    assert retry_after_s({"Retry-After": "7"}) == 7.0
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= retry_after_s({"retry-after": date}, now=now) <= 31
    assert retry_after_s({}) is None
    assert retry_after_s({"Retry-After": "soon"}) is None


@pytest.mark.parametrize("status, kind", [(429, StoreUnavailable), (503, StoreUnavailable), (500, StoreUnavailable),
                                          (404, StoreUnavailable), (401, StoreUnavailable),
                                          (400, StoreRejected), (413, StoreRejected)])
def test_status_translation(status, kind):
    err = from_status("x /write", status, '{"error":"boom"}', {"Retry-After": "3"})
    assert type(err) is kind
    assert "HTTP %d" % status in str(err) and "boom" in str(err)
    if kind is StoreUnavailable:
        assert err.retry_after_s == 3.0


def test_reading_lines():
    enc = LineEncoder()
    r = CanonicalReading(1_780_000_000_123_456_789, "OF-12", "LOG-1", "flow", "flow", 3.25, "gpm", "spike,estimated", 42)
    assert enc.reading(r) == ('reading,device=LOG-1,quantity=flow,sensor=flow,station=OF-12,unit=gpm '
                              'value=3.25,flags="spike,estimated",seq=42i 1780000000123456789')
    broken = r._replace(value=None, flags="sensor_error")
    line = enc.reading(broken)
    assert "value=" not in line and 'flags="sensor_error"' in line
    assert enc.reading(r._replace(value=2)).split(" ")[1].startswith("value=2.0,")   # always a float
    assert enc.reading(r, epoch=917).endswith(',seq=42i,epoch=917i 1780000000123456789')   # the logger's spool epoch


def test_message_lines_are_the_reading_lines():
    """``messages`` (the batch path, which builds the part after the value once per run of
    readings sharing it) writes exactly the lines ``reading`` writes, reading by reading."""
    from ms4watch.ingest.stores.base import StoredMessage
    t = 1_780_000_000_000_000_000
    r = CanonicalReading(t, "OF-12", "LOG-1", "flow", "flow", 3.25, "gpm", "", 7)
    rs = (r, r._replace(sensor="level", quantity="level", unit="ft", value=2),
          r._replace(value=None, flags="sensor_error"), r._replace(flags='odd "q" \\ flag'),
          r._replace(flags='odd "q" \\ flag', value=1e-7), r._replace(time_ns=t + 1), r._replace(time_ns=t + 1, seq=8),
          r._replace(station="OF-13", value=-0.0), r._replace(value=1234567890.123456789))
    msgs = [StoredMessage("LOG-1", 7, rs, 0, 1), StoredMessage("LOG-1", 7, rs[::-1], 917, 2),
            StoredMessage("LOG-1", 9, rs[:1], 3, 3)]
    enc = LineEncoder()
    assert LineEncoder().messages(msgs) == [[enc.reading(x, m.epoch) for x in m.readings] for m in msgs]
    with pytest.raises(ValueError):
        LineEncoder().messages([StoredMessage("LOG-1", 7, (r._replace(value="12,5"),), 0, 1)])


def test_record_lines_and_escaping():
    line = record_line("device_status", {"station": "OF 1", "device": "L,1"},
                       {"online": 1, "battery_v": 12.5, "state": 'say "hi"', "clock_synced": True, "x": None}, 5)
    assert line == ('device_status,device=L\\,1,station=OF\\ 1 online=1i,battery_v=12.5,'
                    'state="say \\"hi\\"",clock_synced=true 5')
    assert tag_escape("a=b") == "a\\=b"
    with pytest.raises(ValueError, match="at least one field"):
        record_line("m", {}, {"a": None}, 1)
    with pytest.raises(ValueError, match="not finite"):
        record_line("m", {}, {"a": float("nan")}, 1)


def test_status_and_event_records():
    from datetime import datetime, timezone

    from ms4watch.contract.wire import StatusMessage
    from ms4watch.ingest.stores.influxdb.lineproto import record_line
    from ms4watch.ingest.stores.influxdb.records import event_records, status_record

    st = StatusMessage(device="LOG-1", state="online", time=datetime(2026, 6, 1, 12, tzinfo=timezone.utc),
                       battery_v=12.6, signal_dbm=-71, spool_depth=3, clock="synced")
    line = record_line(*status_record("OF-12", st, 0))
    assert line == ('device_status,device=LOG-1,station=OF-12 online=1i,state="online",battery_v=12.6,'
                    'signal_dbm=-71.0,spool_depth=3i,clock_synced=1i 1780315200000000000')
    recs = event_records({"kind": "storm", "gauge": "RG-1", "start": "2026-06-01T08:00:00-04:00",
                          "end": "2026-06-01T14:00:00-04:00", "depth_in": 0.62, "qualifying": True})
    assert [r[0] for r in recs] == ["alert", "storm"]
    assert recs[1][2]["duration_h"] == 6.0 and recs[1][2]["qualifying"] is True and recs[0][2]["open"] == 0
    (insp,) = event_records({"kind": "inspection_due", "site": "CS-7", "gauge": "RG-1",
                             "storm_end": "2026-06-01T14:00:00-04:00", "due": "2026-06-02T14:00:00-04:00"})
    assert insp[1] == {"site": "CS-7", "gauge": "RG-1"} and insp[2]["state"] == "due"
    (dwf,) = event_records({"kind": "dry_weather_flow", "outfall": "OF-12", "start": "2026-06-01T08:00:00Z",
                            "end": None, "peak_gpm": 4.2, "suppressed": None})
    assert dwf[1] == {"kind": "dry_weather_flow", "station": "OF-12"} and dwf[2]["open"] == 1


def test_calibration_records_count_days_from_the_received_day():
    from datetime import date

    from ms4watch.contract.timeutil import parse_time, to_ns
    from ms4watch.contract.wire import SensorCalibration
    from ms4watch.ingest.stores.influxdb.records import calibration_records, days_left

    received = to_ns(parse_time("2026-06-05T23:59:00Z"))
    cals = [SensorCalibration(sensor="flow", performed=date(2026, 5, 1), due=date(2026, 8, 1)),
            SensorCalibration(sensor="turb", performed=date(2026, 5, 6), due=date(2026, 6, 4), station="DS-1")]
    flow, turb = calibration_records("OF-12", "LOG-1", cals, received)
    assert record_line(*flow) == ('calibration,device=LOG-1,sensor=flow,station=OF-12 due="2026-08-01",'
                                  f'performed="2026-05-01",days_left=57.0 {received}')
    assert turb[1] == {"station": "DS-1", "device": "LOG-1", "sensor": "turb"}   # the sensor's own station
    assert turb[2]["days_left"] == -1.0                                          # the day after due: overdue
    # days by UTC calendar day, as the logger flags readings: 0 all through the due day
    assert days_left(date(2026, 6, 5), to_ns(parse_time("2026-06-05T00:00:00Z"))) == 0.0
    assert days_left(date(2026, 6, 5), to_ns(parse_time("2026-06-05T23:59:59Z"))) == 0.0
    assert days_left(date(2026, 6, 5), to_ns(parse_time("2026-06-06T00:00:00Z"))) == -1.0
    assert calibration_records("OF-12", "LOG-1", (), received) == []


def test_token_from_a_systemd_credential(tmp_path, monkeypatch):
    """``LoadCredential=influx-token:/etc/ms4watch/influx-token``: read from
    ``$CREDENTIALS_DIRECTORY`` when neither the environment nor the URL names a token."""
    for k in ("MS4WATCH_INFLUX_TOKEN", "MS4WATCH_INFLUX_TOKEN_FILE"):
        monkeypatch.delenv(k, raising=False)
    creds = tmp_path / "credentials"
    creds.mkdir()
    (creds / "influx-token").write_text("ms4watch:from-systemd\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(creds))
    assert parse_url("influxdb1://h:8086/ms4").token() == "ms4watch:from-systemd"
    own = tmp_path / "own-token"
    own.write_text("own\n")
    assert parse_url(f"influxdb1://h:8086/ms4?token_file={own}").token() == "own"
