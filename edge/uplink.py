"""The uplink: publish the spool oldest first, QoS 1, forget a message only on PUBACK.

The loop is written out plainly (no hidden reconnect magic): while connected, keep up to
``max_inflight`` messages in flight; form a new message from pending readings when the
outbox has nothing unsent; on PUBACK drop that message from the spool; on disconnect,
forget what was in flight (it is still in the spool) and start again from the oldest
unacknowledged message once paho has reconnected.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

import paho.mqtt.client as mqtt

from ..contract.ids import Channel, Topic
from ..contract.mqtt import BrokerURL, make_client
from .spool import Spool

log = logging.getLogger(__name__)


class Uplink:
    def __init__(self, spool: Spool, topic_of: Callable[[Channel], Topic], broker_url: str, *,
                 client_id: str, username: str | None = None, password: str | None = None,
                 batch_readings: int = 500, max_inflight: int = 20, status_payload: Callable[[str], bytes],
                 keepalive_s: int = 30):
        self.spool = spool
        self.topic_of = topic_of
        self.url = BrokerURL.parse(broker_url)
        self.batch_readings = batch_readings
        self.max_inflight = max_inflight
        self.keepalive_s = keepalive_s
        self.status_payload = status_payload
        self.published_readings = 0   # acknowledged by the broker
        self.published_messages = 0
        self._inflight: dict[int, tuple[int, int]] = {}  # mid -> (seq, n)
        self._early: dict[int, float] = {}  # mid -> monotonic time of a PUBACK we had no entry for
        self._last_sent_seq = 0
        self._cv = threading.Condition()
        self._running = False
        self._connected = False
        self._thread: threading.Thread | None = None
        c = make_client(client_id, self.url, clean_session=True, username=username, password=password,
                        max_inflight=max_inflight)
        c.will_set(str(topic_of(Channel.STATUS)), status_payload("offline"), qos=1, retain=True)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_publish = self._on_publish
        self.client = c

    def start(self) -> "Uplink":
        self._running = True
        self.client.connect_async(self.url.host, self.url.port, keepalive=self.keepalive_s)
        self.client.loop_start()
        self._thread = threading.Thread(target=self._run, name=f"uplink-{self.spool.device}", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        """New readings are in the spool."""
        with self._cv:
            self._cv.notify_all()

    def drained(self) -> bool:
        return self.spool.depth() == 0

    def wait_drained(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.drained():
                return True
            time.sleep(0.05)
        return self.drained()

    def stop(self, publish_offline: bool = True) -> None:
        with self._cv:
            self._running = False
            self._cv.notify_all()
        if self._thread:
            self._thread.join(10)
        if publish_offline and self._connected:
            info = self.client.publish(str(self.topic_of(Channel.STATUS)), self.status_payload("offline"),
                                       qos=1, retain=True)
            try:
                info.wait_for_publish(2)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()

    # -- paho callbacks -----------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("%s: broker %s refused the connection: %s", self.spool.device, self.url, reason_code)
            return
        client.publish(str(self.topic_of(Channel.STATUS)), self.status_payload("online"), qos=1, retain=True)
        with self._cv:
            self._connected = True
            self._inflight.clear()
            self._early.clear()
            self._last_sent_seq = 0  # resend everything not acknowledged, oldest first
            self._cv.notify_all()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        with self._cv:
            self._connected = False
            self._inflight.clear()
            self._cv.notify_all()
        if self._running:
            log.warning("%s: lost the broker (%s); readings stay in the spool", self.spool.device, reason_code)

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        # paho calls this holding its own message lock; never call paho while holding _cv.
        with self._cv:
            entry = self._inflight.pop(mid, None)
            if entry is None:
                # The PUBACK overtook the bookkeeping in _run (a window of microseconds).
                # Entries older than a few seconds are stale (a paho re-send) and dropped, so a
                # reused message id can never acknowledge a message the broker does not have.
                now = time.monotonic()
                self._early = {m: t for m, t in self._early.items() if now - t < 5.0}
                self._early[mid] = now
                return
            self._acked(*entry)

    def _acked(self, seq: int, n: int) -> None:
        self.spool.ack(seq)
        self.published_readings += n
        self.published_messages += 1
        self._cv.notify_all()

    # -- the loop ----------------------------------------------------------------------------
    def _run(self) -> None:
        topic = str(self.topic_of(Channel.READINGS))
        while True:
            with self._cv:
                if not self._running:
                    return
                if not self._connected or len(self._inflight) >= self.max_inflight:
                    self._cv.wait(0.5)
                    continue
                room = self.max_inflight - len(self._inflight)
                after = self._last_sent_seq
            batch = self.spool.unsent(after, room)
            if not batch:
                formed = self.spool.form_message(self.batch_readings)
                if formed is None:
                    with self._cv:
                        self._cv.wait(0.2)
                    continue
                batch = [formed]
            for m in batch:
                info = self.client.publish(topic, m.payload, qos=1)
                if info.rc != mqtt.MQTT_ERR_SUCCESS:
                    break
                with self._cv:
                    self._last_sent_seq = m.seq
                    if self._early.pop(info.mid, None) is not None:
                        self._acked(m.seq, m.n)
                    else:
                        self._inflight[info.mid] = (m.seq, m.n)
