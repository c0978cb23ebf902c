"""The broker settings the pipeline needs (contract/broker.py), on a real Mosquitto: a burst
of QoS 1 readings reaches ingest whole, and Mosquitto's own limits are shown to lose some."""

from __future__ import annotations

import pytest

from ms4watch.contract.broker import MESSAGE_SIZE_LIMIT_BYTES, mosquitto_settings
from ms4watch.contract.wire import encode_readings
from ms4watch.ingest.service import IngestService
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.sqlite_store import query_one
from ms4watch.ingest.subscriber import MAX_PACKET_BYTES
from tests.support.servers import Mosquitto, have
from tests.support.waiting import wait_for

pytestmark = pytest.mark.mosquitto
T0 = 1_780_000_000_000_000_000
BURST = 5000
PIPELINE = {**mosquitto_settings(), "autosave_interval": "1"}
STOCK = {"persistence": "true", "autosave_interval": "1"}      # Mosquitto's defaults: inflight 20, queued 1000


def reading(device: str, seq: int) -> bytes:
    return encode_readings(device, seq, [(T0 + seq * 60_000_000_000, "flow", "flow", 1.0, "gpm", [], None)])


def burst(port: int, payloads: list[tuple[str, bytes]]) -> None:
    """Publish QoS 1 as fast as the broker acknowledges, up to 1,000 in flight."""
    import paho.mqtt.client as mqtt
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="burst", protocol=mqtt.MQTTv311)
    c.max_inflight_messages_set(1000)
    c.max_queued_messages_set(0)
    c.connect("127.0.0.1", port)
    c.loop_start()
    infos = [c.publish(topic, p, qos=1) for topic, p in payloads]
    for i in infos:
        i.wait_for_publish(60)
    c.disconnect()
    c.loop_stop()


def topic(device: str) -> str:
    return f"ms4/town/OF-1/{device}/readings"


@pytest.fixture
def broker(request, tmp_path):
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    m = Mosquitto(tmp_path / "mosquitto", settings=request.param).start()
    try:
        yield m
    finally:
        m.stop()


def stored_messages(store, device: str) -> int:
    return query_one(store, "SELECT count(*) FROM messages WHERE device = ?", (device,))


@pytest.mark.parametrize("broker", [PIPELINE], indirect=True, ids=["pipeline settings"])
def test_a_burst_to_a_running_ingest_loses_nothing(tmp_path, broker):
    sink = SqliteStore(tmp_path / "store.db")
    svc = IngestService(broker.url, "town", sink, client_id="ingest-burst").start()
    try:
        assert svc.connected.wait(10)
        burst(broker.port, [(topic("LOG-1"), reading("LOG-1", s)) for s in range(BURST)])
        assert wait_for(lambda: svc.stats.stored_readings >= BURST, 60), svc.stats
    finally:
        svc.stop()
    assert svc.stats.stored_readings == BURST and stored_messages(tmp_path / "store.db", "LOG-1") == BURST


@pytest.mark.parametrize("broker, loses", [(STOCK, True), (PIPELINE, False)], indirect=["broker"],
                         ids=["Mosquitto's defaults", "pipeline settings"])
def test_a_burst_while_ingest_restarts(tmp_path, broker, loses):
    """The burst comes while ingest is away (a restart, an upgrade): its persistent session
    holds the messages — all of them with the pipeline's settings, 1,000 and some with
    Mosquitto's defaults, which drop the rest without a word."""
    sink = SqliteStore(tmp_path / "store.db")
    svc = IngestService(broker.url, "town", sink, client_id="ingest-away").start()
    assert svc.connected.wait(10)
    svc.stop()
    burst(broker.port, [(topic("LOG-1"), reading("LOG-1", s)) for s in range(BURST)])
    sink = SqliteStore(tmp_path / "store.db")
    svc = IngestService(broker.url, "town", sink, client_id="ingest-away").start()
    try:
        assert svc.connected.wait(10)
        burst(broker.port, [(topic("LOG-2"), reading("LOG-2", 1))])    # comes after whatever was kept
        assert wait_for(lambda: svc.stats.stored_readings >= 1 and stored_messages(tmp_path / "store.db", "LOG-2"), 60)
        kept = stored_messages(tmp_path / "store.db", "LOG-1")
    finally:
        svc.stop()
    if loses:
        assert 0 < kept < BURST
    else:
        assert kept == BURST


@pytest.mark.parametrize("broker", [PIPELINE], indirect=True, ids=["pipeline settings"])
def test_the_broker_refuses_a_payload_over_its_limit_before_ingest_sees_it(tmp_path, broker):
    """So ingest, which takes up to twice that, never meets one from a broker set up this way."""
    assert MESSAGE_SIZE_LIMIT_BYTES < MAX_PACKET_BYTES
    sink = SqliteStore(tmp_path / "store.db")
    svc = IngestService(broker.url, "town", sink, client_id="ingest-limit", rejected_path=tmp_path / "r.jsonl").start()
    try:
        assert svc.connected.wait(10)
        big = reading("LOG-1", 1).replace(b'"readings":[', b'"readings":[' + b" " * MESSAGE_SIZE_LIMIT_BYTES, 1)
        burst(broker.port, [(topic("LOG-1"), big), (topic("LOG-1"), reading("LOG-1", 2))])
        assert wait_for(lambda: svc.stats.stored_readings >= 1)
    finally:
        svc.stop()
    assert svc._client.stats.received == 1 and svc.stats.rejected_messages == 0
    assert stored_messages(tmp_path / "store.db", "LOG-1") == 1 and svc.stats.stored_readings == 1
