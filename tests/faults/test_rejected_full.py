"""The set-aside file on a full disk (issue 21): one failed write to ``rejected.jsonl`` used to
kill ingest's writer thread — the process stayed up, stored nothing more, and stop hung.

Now a set-aside that cannot be written is not acknowledged and is retried like a store
outage; the writer never dies; stop always stops. The disk is really full: ``rejected.jsonl``
is a link to ``/dev/full`` (every write fails with ENOSPC) until space "returns" (the link
is replaced by a file). Real Mosquitto, the real ingest service and SQLite store.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.wire import encode_readings
from ms4watch.ingest.service import IngestService
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.sqlite_store import readings_stored
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults]
T0 = 1_780_000_000_000_000_000
TOPIC = "ms4/town/OF-1/LOG-1/readings"
MORE = 8          # messages of 2,000 readings sent behind the conflict: more than a queue of 2 holds


def message(seq: int, value: float = 1.0, n: int = 10) -> bytes:
    return encode_readings("LOG-1", seq, [(T0 + (seq * n + i) * 60_000_000_000, "flow", "flow", value, "gpm", [], None)
                                          for i in range(n)])


def publish(port: int, payloads: list[bytes], topic: str = TOPIC) -> None:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-pub", protocol=mqtt.MQTTv311)
    c.max_inflight_messages_set(100)
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        for info in [c.publish(topic, p, qos=1) for p in payloads]:
            info.wait_for_publish(10)
    finally:
        stop_client(c)


def full_disk(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/full")


def space_returns(path: Path) -> None:
    path.unlink()


def set_aside(path: Path) -> list[str]:
    return [json.loads(line)["error"] for line in path.read_text().splitlines()] if path.is_file() else []


def service(broker, tmp_path: Path, **kw) -> IngestService:
    svc = IngestService(broker.url, "town", SqliteStore(tmp_path / "store.db"), client_id="ingest-full",
                        rejected_path=tmp_path / "rejected.jsonl", batch_wait_s=0.01, **kw).start()
    assert svc.connected.wait(10)
    return svc


def test_a_conflict_that_cannot_be_set_aside_waits_and_ingest_goes_on_once_space_returns(tmp_path, mosquitto_broker):
    rejected = tmp_path / "rejected.jsonl"
    svc = service(mosquitto_broker, tmp_path)
    try:
        publish(mosquitto_broker.port, [message(1)])
        assert wait_for(lambda: readings_stored(tmp_path / "store.db") == 10, 10)
        full_disk(rejected)
        publish(mosquitto_broker.port, [message(1, value=2.0)])       # the same seq, other content: set aside
        assert wait_for(lambda: svc.stats.store_retries >= 2, 10)      # retried, like a store outage
        publish(mosquitto_broker.port, [message(2)])
        space_returns(rejected)
        assert wait_for(lambda: readings_stored(tmp_path / "store.db") == 20, 30), svc.stats   # the writer lives on
        assert [e.split(":")[0] for e in set_aside(rejected)] == ["conflict"]
    finally:
        svc.stop()


def test_a_contract_violation_that_cannot_be_set_aside_is_not_acknowledged(tmp_path, mosquitto_broker):
    rejected = tmp_path / "rejected.jsonl"
    full_disk(rejected)
    svc = service(mosquitto_broker, tmp_path)
    publish(mosquitto_broker.port, [b"{garbage"])
    assert wait_for(lambda: svc.stats.rejected_messages >= 1, 10)
    stopped = threading.Thread(target=svc.stop, daemon=True)
    stopped.start()
    stopped.join(20)
    assert not stopped.is_alive(), "stop did not stop"
    space_returns(rejected)
    svc = service(mosquitto_broker, tmp_path)                          # the broker delivers it again
    try:
        assert wait_for(lambda: set_aside(rejected), 30)
        assert [e.split(": ")[1] for e in set_aside(rejected)] == ["payload"]
    finally:
        svc.stop()


def test_stop_stops_while_a_set_aside_is_retried_and_the_queue_is_full(tmp_path, mosquitto_broker):
    rejected = tmp_path / "rejected.jsonl"
    # a queue of two socket reads (16 by default) is full after a few messages: it took 58 of
    # 2,000 readings to fill the default one, 116,000 readings stored after the restart
    svc = service(mosquitto_broker, tmp_path, max_queue=2)
    publish(mosquitto_broker.port, [message(1)])
    assert wait_for(lambda: readings_stored(tmp_path / "store.db") == 10, 10)
    full_disk(rejected)
    publish(mosquitto_broker.port, [message(1, value=2.0)])
    assert wait_for(lambda: svc.stats.store_retries >= 1, 10)
    publish(mosquitto_broker.port, [message(s, n=2000) for s in range(2, 2 + MORE)])   # more than the queue holds
    assert wait_for(svc._queue.full, 30), f"the queue holds {svc._queue.qsize()} of {svc._queue.maxsize}"
    t0 = time.monotonic()
    stopped = threading.Thread(target=svc.stop, daemon=True)
    stopped.start()
    stopped.join(30)
    assert not stopped.is_alive(), "stop did not stop"
    assert time.monotonic() - t0 < 30
    assert set_aside(rejected) == []                                   # /dev/full: nothing written, nothing acknowledged
    space_returns(rejected)
    svc = service(mosquitto_broker, tmp_path)                          # what was not acknowledged comes again
    try:
        assert wait_for(lambda: readings_stored(tmp_path / "store.db") == 10 + MORE * 2000, 60), svc.stats
        assert [e.split(":")[0] for e in set_aside(rejected)] == ["conflict"]
    finally:
        svc.stop()
