"""The town lock (``ms4watch/townlock.py``) against a real Mosquitto: a live lock refuses a
second server, a stale one is taken over, and a server that could only check the broker once
it came back stops when it finds another one there first."""

from __future__ import annotations

import json
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.townlock import TownLock, TownLocked, lock_topic

pytestmark = pytest.mark.mosquitto


def retained_lock(port: int, beat: float) -> None:
    """Another server's lock as the broker keeps it (its last beat at ``beat``)."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="other-server", protocol=mqtt.MQTTv311)
    c.connect("127.0.0.1", port)
    c.loop_start()
    body = {"instance": "f" * 32, "host": "ms4-b", "pid": 4242, "data_dir": "/srv/ms4", "since": beat, "beat": beat}
    c.publish(lock_topic("town"), json.dumps(body), qos=1, retain=True).wait_for_publish(5)
    c.disconnect()
    c.loop_stop()


def test_a_live_lock_refuses_and_a_stale_one_is_taken_over(tmp_path, mosquitto_broker):
    retained_lock(mosquitto_broker.port, time.time())
    with pytest.raises(TownLocked, match=r"already served by pid 4242 on ms4-b, data directory /srv/ms4"):
        TownLock("town", tmp_path / "a", mosquitto_broker.url).acquire()
    retained_lock(mosquitto_broker.port, time.time() - 3600)        # its holder died while the broker was down
    TownLock("town", tmp_path / "a", mosquitto_broker.url).acquire().release()


def test_a_server_that_finds_the_town_held_once_the_broker_answers_stops(tmp_path, mosquitto_broker):
    first = TownLock("town", tmp_path / "a", mosquitto_broker.url).acquire()
    lost = threading.Event()
    second = None
    try:
        mosquitto_broker.stop()
        second = TownLock("town", tmp_path / "b", mosquitto_broker.url, on_lost=lambda reason: lost.set())
        second.acquire()                              # the broker is down: it starts on its directory's lock
        mosquitto_broker.start()
        assert lost.wait(40), "the second server did not find the first one's lock"
    finally:
        first.release()
        if second is not None:
            second.release()
