"""SpoolingStore: nothing acknowledged is lost while the store is down; the spool drains on recovery."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from datetime import timedelta

import pytest

from ms4watch.ingest.errors import StoreRejected, StoreUnavailable
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.base import WriteResult
from ms4watch.ingest.stores.spooling import SpoolingStore, decode_batch, encode_batch
from tests.support.influx_fixtures import make_messages
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

SLOW = bool(os.environ.get("MS4_SLOW"))
DOWN_S = 60.0 if SLOW else 4.0   # the 60 s with MS4_SLOW=1


class FlakyStore:
    """An inner sink whose answers the test scripts (the spool's logic, not a store, is under test)."""

    def __init__(self, failures: list[Exception] | None = None):
        self.failures = list(failures or [])
        self.calls: list[float] = []
        self.stored: list = []
        self.down = False

    def open(self): pass
    def close(self): pass

    def write(self, batch):
        self.calls.append(time.monotonic())
        if self.down:
            raise StoreUnavailable("down")
        if self.failures:
            raise self.failures.pop(0)
        self.stored.extend(batch)
        return WriteResult(sum(len(m.readings) for m in batch))


def test_batch_round_trip():
    msgs = make_messages(3, 4)
    msgs[1] = type(msgs[1])(msgs[1].device, msgs[1].seq,
                            (msgs[1].readings[0]._replace(value=None, flags="sensor_error"),))
    assert decode_batch(encode_batch(msgs)) == msgs
    with_epochs = [m._replace(epoch=917, digest=2**40 + 12345) for m in msgs]
    assert decode_batch(encode_batch(with_epochs)) == with_epochs
    spooled_before_epochs = json.dumps([[m.device, m.seq, [list(r) for r in m.readings]] for m in msgs]).encode()
    assert decode_batch(spooled_before_epochs) == msgs


@pytest.mark.slow  # runs by default at reduced size; MS4_SLOW=1 (make soak) at full size
@pytest.mark.influxdb
def test_store_down_during_writes_nothing_lost_nothing_duplicated(influxd, tmp_path):
    inner = build_store(influxd.store_url("town"))
    inner.ensure_store(timedelta(days=1096))
    sink = SpoolingStore(inner, tmp_path / "spool.db", max_bytes=50_000_000, backoff_initial_s=0.2, backoff_max_s=2)
    sink.open()
    msgs = make_messages(3000, 4)
    acked = []
    done = threading.Event()

    def writer():
        for i in range(0, len(msgs), 20):
            batch = msgs[i:i + 20]
            if i % 400 == 0:
                batch = batch + msgs[max(0, i - 30):i]      # redeliveries now and then
            sink.write(batch)                                # returns = durable: "acknowledged"
            acked.extend(batch)
            time.sleep(DOWN_S / 100 if SLOW else 0.01)
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    # the store goes down once the writes are under way: ten batches acknowledged
    assert wait_for(lambda: len(acked) >= 10 * 20, 30), f"only {len(acked)} messages acknowledged in 30 s"
    influxd.stop()
    # down while twenty more batches are acknowledged (MS4_SLOW=1: and DOWN_S at least), not a
    # fixed 4 s: the writer and the outage ended on the clock, 10 s of the test's 12
    before, down_until = len(acked), time.monotonic() + (DOWN_S if SLOW else 0)
    assert wait_for(lambda: len(acked) >= before + 20 * 20 and time.monotonic() >= down_until, DOWN_S + 60), \
        f"only {len(acked) - before} messages acknowledged while the store was down"
    assert sink.spool_depth > 0, "writes went on while the store was down: they must be in the spool"
    influxd.start()
    t.join(120)
    assert done.is_set()
    assert sink.wait_drained(60)
    assert {(m.device, m.seq) for m in acked} == {(m.device, m.seq) for m in msgs}
    body = influxd.query('SELECT count("seq") FROM "reading"', "town")
    assert body["results"][0]["series"][0]["values"][0][1] == 12000
    assert sink.spooled_readings_total > 0 and sink.drained_readings_total == sink.spooled_readings_total
    sink.close()


def test_retry_after_is_honoured(tmp_path):
    inner = FlakyStore()
    sink = SpoolingStore(inner, tmp_path / "spool.db", backoff_initial_s=0.01, backoff_max_s=0.05)
    inner.failures = [StoreUnavailable("429", retry_after_s=0.6), StoreUnavailable("429", retry_after_s=0.6)]
    sink.open()
    sink.write(make_messages(2))          # first failure → spooled, drain retries
    assert sink.wait_drained(10)
    gaps = [b - a for a, b in zip(inner.calls, inner.calls[1:])]
    assert len(inner.calls) == 3
    assert min(gaps) >= 0.55, f"retries came after {gaps} s despite Retry-After 0.6 s"
    assert len(inner.stored) == 2
    sink.close()


def test_backoff_grows_without_retry_after(tmp_path):
    inner = FlakyStore([StoreUnavailable("down")] * 6)
    sink = SpoolingStore(inner, tmp_path / "spool.db", backoff_initial_s=0.05, backoff_max_s=0.4)
    sink.open()
    sink.write(make_messages(1))
    assert sink.wait_drained(10)
    assert len(inner.calls) == 7 and len(inner.stored) == 1
    sink.close()


def test_full_spool_refuses_so_nothing_is_acknowledged(tmp_path):
    inner = FlakyStore()
    inner.down = True
    sink = SpoolingStore(inner, tmp_path / "spool.db", max_bytes=4000, backoff_initial_s=5)
    sink.open()
    msgs = make_messages(40, 4)
    accepted = 0
    with pytest.raises(StoreUnavailable, match="spool .* full"):
        for m in msgs:
            sink.write([m])
            accepted += 1
    assert 0 < accepted < 40
    assert sink.spool_depth == accepted * 4 and sink.spool_bytes <= 4000
    sink.close()


def test_spool_survives_restart_and_drains(tmp_path):
    inner = FlakyStore()
    inner.down = True
    path = tmp_path / "spool.db"
    sink = SpoolingStore(inner, path, backoff_initial_s=5)
    sink.open()
    msgs = make_messages(10, 4)
    for m in msgs:
        sink.write([m])
    sink.close()
    assert sqlite3.connect(path).execute("SELECT sum(readings) FROM spool").fetchone()[0] == 40
    inner.down = False
    sink = SpoolingStore(inner, path)
    sink.open()
    assert sink.wait_drained(10)
    assert [m.seq for m in inner.stored] == [m.seq for m in msgs]     # oldest first
    sink.close()


def test_refused_spooled_batch_is_kept_aside_and_draining_goes_on(tmp_path):
    inner = FlakyStore()
    inner.down = True
    path = tmp_path / "spool.db"
    sink = SpoolingStore(inner, path, drain_batch_readings=4, backoff_initial_s=0.05, backoff_max_s=0.1)
    sink.open()
    msgs = make_messages(5, 4)
    for m in msgs:
        sink.write([m])
    inner.failures = [StoreRejected("HTTP 400: field type conflict")]
    inner.down = False
    sink._wake.set()
    assert sink.wait_drained(10)
    assert [m.seq for m in inner.stored] == [m.seq for m in msgs[1:]]
    reason, blob = sqlite3.connect(path).execute("SELECT reason, batch FROM rejected").fetchone()
    assert "field type conflict" in reason and decode_batch(blob) == msgs[:1]
    sink.close()


@pytest.mark.slow  # runs by default at reduced size; MS4_SLOW=1 (make soak) at full size
@pytest.mark.influxdb
@pytest.mark.mosquitto
def test_ingest_service_with_store_down(influxd, mosquitto_broker, tmp_path):
    """The whole path: Mosquitto → IngestService (manual ack) → SpoolingStore → influxd, store down a while."""
    import paho.mqtt.client as mqtt

    from ms4watch.contract.wire import encode_readings
    from ms4watch.ingest.service import IngestService

    inner = build_store(influxd.store_url("town"))
    inner.ensure_store(timedelta(days=1096))
    sink = SpoolingStore(inner, tmp_path / "spool.db", backoff_initial_s=0.2, backoff_max_s=2)
    svc = IngestService(mosquitto_broker.url, "ramapo", sink, client_id="ingest-test").start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="pub", protocol=mqtt.MQTTv311)
    pub.max_inflight_messages_set(100)
    pub.connect("127.0.0.1", mosquitto_broker.port)
    pub.loop_start()
    msgs = make_messages(1500, 4)

    def publish(part):
        for m in part:
            payload = encode_readings(m.device, m.seq, [(r.time_ns, r.sensor, r.quantity, r.value, r.unit,
                                                         [f for f in r.flags.split(",") if f], None)
                                                        for r in m.readings])
            pub.publish(f"ms4/ramapo/{m.readings[0].station}/{m.device}/readings", payload, qos=1).wait_for_publish(10)
            time.sleep(DOWN_S / 1500 if SLOW else 0.001)   # a stream (the store down for the ~950 in the middle)

    publish(msgs[:300])
    influxd.stop()
    publish(msgs[300:1200])
    publish(msgs[250:300])                       # a logger re-sending after a lost ack
    influxd.start()
    publish(msgs[1200:])
    deadline = time.monotonic() + 60
    while svc.stats.messages < 1550 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sink.wait_drained(60)
    assert svc.stats.messages == 1550
    assert sink.spooled_readings_total > 0
    body = influxd.query('SELECT count("seq") FROM "reading"', "town")
    assert body["results"][0]["series"][0]["values"][0][1] == 6000
    svc.stop()
    stop_client(pub)


@pytest.mark.influxdb
def test_store_down_at_start_is_opened_and_checked_when_back(influxd, tmp_path):
    from ms4watch.ingest.stores.influxdb import StoreMisconfigured
    with pytest.raises(StoreMisconfigured, match="does not exist"):     # unfit at start: refuse to start
        SpoolingStore(build_store(influxd.store_url("town")), tmp_path / "s0.db").open()
    inner = build_store(influxd.store_url("town"))
    inner.ensure_store(timedelta(days=1096))
    influxd.stop()
    sink = SpoolingStore(inner, tmp_path / "spool.db", backoff_initial_s=0.1, backoff_max_s=0.5)
    sink.open()                                   # store down: starts anyway, spooling
    sink.write(make_messages(50, 4))
    assert sink.spool_depth == 200
    influxd.start()
    assert sink.wait_drained(30)
    body = influxd.query('SELECT count("seq") FROM "reading"', "town")
    assert body["results"][0]["series"][0]["values"][0][1] == 200
    sink.close()


def test_messages_refused_while_draining_are_kept_aside_one_by_one(tmp_path):
    """The store names the messages it refused (MessagesRejected) and wrote the rest: only
    those are kept in the spool's rejected table, each with its reason."""
    from ms4watch.ingest.errors import MessagesRejected
    inner = FlakyStore()
    inner.down = True
    path = tmp_path / "spool.db"
    sink = SpoolingStore(inner, path, backoff_initial_s=0.05, backoff_max_s=0.1)
    sink.open()
    msgs = make_messages(5, 4)
    sink.write(msgs)
    inner.failures = [MessagesRejected("2 of 5 refused", [(msgs[1], "HTTP 400: bad 1"), (msgs[3], "HTTP 400: bad 3")],
                                       WriteResult(12))]
    inner.down = False
    sink._wake.set()
    assert sink.wait_drained(10)
    kept = sqlite3.connect(path).execute("SELECT reason, batch FROM rejected ORDER BY id").fetchall()
    assert [(reason, decode_batch(blob)) for reason, blob in kept] == [("HTTP 400: bad 1", [msgs[1]]),
                                                                       ("HTTP 400: bad 3", [msgs[3]])]
    sink.close()
