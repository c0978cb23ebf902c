"""Ingest stores every logger event (calibration records into the history), against a real
Mosquitto; what breaks the contract is set aside naming the field; events acknowledged by
ingest survive the store being down (the spool)."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.wire import encode_event
from ms4watch.ingest.service import IngestService
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.spooling import SpoolingStore
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.ingest.test_calibration_history import event, record
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

TOPIC = "ms4/town/DS-1/LOG-DS1/events"


def publish(port: int, payloads: list[bytes], topic: str = TOPIC) -> None:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-events", protocol=mqtt.MQTTv311)
    c.connect("127.0.0.1", port)
    c.loop_start()
    for info in [c.publish(topic, p, qos=1) for p in payloads]:
        info.wait_for_publish(10)
    stop_client(c)


@pytest.mark.mosquitto
def test_events_are_stored_and_bad_ones_set_aside_naming_the_field(tmp_path, mosquitto_broker):
    sink = SqliteStore(tmp_path / "store.db")
    svc = IngestService(mosquitto_broker.url, "town", sink, client_id="ingest-ev",
                        rejected_path=tmp_path / "rejected.jsonl").start()
    assert svc.connected.wait(10)
    now = time.time_ns()
    rec = record("cal-20260601T140000Z-abc123", "turb", 1).model_dump(mode="json", by_alias=True)
    good = encode_event("LOG-DS1", now, "calibration", rec)
    broken = dict(rec, as_found=[{"label": "20 FNU", "reference": 20, "reading": "high", "error": 1, "limit": 1,
                                  "ok": False}])
    publish(mosquitto_broker.port, [
        good, good,                                                        # a redelivery
        encode_event("LOG-DS1", now + 1_000_000, "cmd_ack", {"id": "7", "ok": True}),
        encode_event("LOG-DS1", now + 2_000_000, "calibration", broken),
        encode_event("LOG-DS1", now + 3_000_000, "calibration", dict(rec, device="LOG-XX")),
        encode_event("LOG-DS1", now, "cmd ack", {}),
    ])
    publish(mosquitto_broker.port, [encode_event("LOG-US1", now, "cmd_ack", {})])   # device ≠ topic
    assert wait_for(lambda: svc.stats.events + svc.stats.rejected_messages >= 7)
    svc.stop()
    rejected = [json.loads(line)["error"] for line in (tmp_path / "rejected.jsonl").read_text().splitlines()]
    assert rejected == [
        f"{TOPIC}: data.as_found[0].reading: Input should be a valid number, unable to parse string as a number",
        f"{TOPIC}: data.device: record of device 'LOG-XX' sent by 'LOG-DS1'",
        f"{TOPIC}: kind: invalid event kind: 'cmd ack' (1-64 letters, digits, '-', '_', '.'; starts with a letter "
        "or digit)",
        f"{TOPIC}: device: payload device 'LOG-US1' does not match the topic's 'LOG-DS1'",
    ]
    sink.open()
    assert [(e.kind, e.station) for e in sink.device_events()] == [("cmd_ack", "DS-1"), ("calibration", "DS-1")]
    assert [r.id for r in sink.calibration_history(sensor="turb")] == ["cal-20260601T140000Z-abc123"]
    sink.close()


@pytest.mark.influxdb
def test_events_wait_in_the_spool_while_the_store_is_down(influxd, tmp_path):
    inner = build_store(influxd.store_url("town"))
    inner.ensure_store(timedelta(days=1096))
    sink = SpoolingStore(inner, tmp_path / "spool.db", backoff_initial_s=0.1, backoff_max_s=0.5)
    sink.open()
    influxd.stop()
    recs = [record(f"cal-{i}", "turb", i + 1) for i in range(3)]
    assert sink.write_events([event(r, digest=i) for i, r in enumerate(recs)]) == 3     # durable: acknowledged
    influxd.start()
    assert sink.wait_drained(60)
    assert [r.id for r in sink.calibration_history(device="LOG-DS1")] == ["cal-0", "cal-1", "cal-2"]
    sink.close()
