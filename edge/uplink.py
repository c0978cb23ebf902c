"""The uplink: publish the spool, QoS 1, forget a message only on PUBACK.

The loop is written out plainly (no hidden reconnect magic). While connected it keeps up to
``max_inflight`` messages in flight, in this order of priority:

1. events (bottle records, command acknowledgements, config results);
2. formed messages not yet acknowledged, oldest first (re-sent after a reconnect with the
   same sequence numbers);
3. the **live lane**: readings taken since the loop last looked, so that during a long
   backlog drain the newest readings still go out at once;
4. the **backlog**: older pending readings, oldest first, in batches, at no more than
   ``drain_rate`` readings per second.

On PUBACK the message leaves the spool. On disconnect what was in flight is forgotten (it
is still in the spool); paho reconnects with backoff and the loop starts again from the
oldest unacknowledged message.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

import paho.mqtt.client as mqtt

from ..contract.ids import Channel, Topic
from ..contract.mqtt import BrokerURL, make_client
from .spool import Spool

log = logging.getLogger(__name__)

ControlHandler = Callable[[Channel, bytes], None]

IDLE_POLL_S = 2.0
"""With nothing to publish, look at the spool again after this [s]: the agent wakes the loop
for what it spools; the poll is for events another process (a calibration) adds."""


class Uplink:
    def __init__(self, spool: Spool, topic_of: Callable[[Channel], Topic], broker_url: str, *,
                 client_id: str, status_payload: Callable[[str], bytes],
                 username: str | None = None, password: str | None = None,
                 batch_readings: int = 500, max_inflight: int = 20, keepalive_s: int = 30,
                 drain_rate: float = 5000.0, on_control: ControlHandler | None = None, tls: Any = None):
        self.spool = spool
        self.topic_of = topic_of
        self.url = BrokerURL.parse(broker_url)
        self.batch_readings = batch_readings
        self.max_inflight = max_inflight
        self.keepalive_s = keepalive_s
        self.drain_rate = drain_rate
        self.status_payload = status_payload
        self.on_control = on_control
        self.published_readings = 0   # acknowledged by the broker
        self.published_messages = 0
        self._inflight: dict[int, tuple[str, int, int]] = {}  # mid -> (kind "r"|"e", seq or event id, n)
        self._early: dict[int, float] = {}  # mid -> monotonic time of a PUBACK we had no entry for
        self._last_sent_seq = 0
        self._last_event_id = 0
        self._live_mark = 0               # newest pending id seen by the previous pass
        self._tokens = float(batch_readings)
        self._tokens_at = time.monotonic()
        self._cv = threading.Condition()
        self._running = False
        self._connected = False
        self._listening = False           # the broker confirmed the config/cmd subscription (SUBACK)
        self._woken = False               # wake() since the loop last looked at the spool
        self._idle = False                # the loop's last look found nothing at all to publish
        self._thread: threading.Thread | None = None
        c = make_client(client_id, self.url, clean_session=True, username=username, password=password,
                        max_inflight=max_inflight, tls=tls)
        c.will_set(str(topic_of(Channel.STATUS)), status_payload("offline"), qos=1, retain=True)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_publish = self._on_publish
        c.on_message = self._on_message
        c.on_subscribe = self._on_subscribe
        self.client = c

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def listening(self) -> bool:
        """Connected and the broker has confirmed the ``config``/``cmd`` subscription: a
        command sent from now on reaches this logger. The session is clean: a command sent
        before this, or while it was away, does not."""
        return self._connected and self._listening

    def start(self) -> "Uplink":
        self._running = True
        self.client.connect_async(self.url.host, self.url.port, keepalive=self.keepalive_s)
        self.client.loop_start()
        self._thread = threading.Thread(target=self._run, name=f"uplink-{self.spool.device}", daemon=True)
        self._thread.start()
        return self

    def live_room(self) -> int:
        """How many readings the agent may form into a message as it spools them (0: none;
        offline or with the in-flight window full they wait and leave in full batches)."""
        if self._connected and len(self._inflight) < self.max_inflight:
            return self.batch_readings
        return 0

    def wake(self) -> None:
        """New readings or events are in the spool."""
        with self._cv:
            self._woken = True
            self._cv.notify_all()

    def publish_status(self) -> None:
        """Publish the retained status now (best effort: a status is replaced by the next)."""
        if self._connected:
            self.client.publish(str(self.topic_of(Channel.STATUS)), self.status_payload("online"), qos=1, retain=True)

    def drained(self) -> bool:
        return self.spool.depth() == 0 and not self.spool.events(0, 1)

    def wait_drained(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.drained():
                return True
            time.sleep(0.05)
        return self.drained()

    def stop(self, publish_offline: bool = True, drain_timeout_s: float = 10.0, network_timeout_s: float = 5.0) -> None:
        """Stop publishing. While connected, first give what the spool holds up to
        ``drain_timeout_s`` to leave (a logger shut down for maintenance goes quiet with its
        spool empty); what is left stays in the spool for the next start. Bounded: the
        offline status gets 2 s (at most ``network_timeout_s``) to be acknowledged, and paho's
        network thread ``network_timeout_s`` to end (a control handler stuck in it, e.g. on a
        hung serial port, is left behind: a daemon thread, logged)."""
        if self._connected and drain_timeout_s > 0:
            self.wake()
            self.wait_drained(drain_timeout_s)
        with self._cv:
            self._running = False
            self._cv.notify_all()
        if self._thread:
            self._thread.join(10)
        if publish_offline and self._connected:
            info = self.client.publish(str(self.topic_of(Channel.STATUS)), self.status_payload("offline"),
                                       qos=1, retain=True)
            try:
                info.wait_for_publish(min(2.0, network_timeout_s))
            except (RuntimeError, ValueError):
                pass

        def disconnect() -> None:
            self.client.disconnect()
            self.client.loop_stop()     # joins paho's thread, without a timeout of its own

        ender = threading.Thread(target=disconnect, name=f"uplink-stop-{self.spool.device}", daemon=True)
        ender.start()
        ender.join(network_timeout_s)
        if ender.is_alive():
            log.warning("%s: the MQTT client's thread did not end within %g s (a handler still busy); leaving it",
                        self.spool.device, network_timeout_s)

    # -- paho callbacks (network thread) -------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("%s: broker %s refused the connection: %s", self.spool.device, self.url, reason_code)
            return
        client.publish(str(self.topic_of(Channel.STATUS)), self.status_payload("online"), qos=1, retain=True)
        if self.on_control is not None:
            client.subscribe([(str(self.topic_of(Channel.CONFIG)), 1), (str(self.topic_of(Channel.CMD)), 1)])
        with self._cv:
            self._connected = True
            self._inflight.clear()
            self._early.clear()
            self._last_sent_seq = 0   # resend everything not acknowledged, oldest first
            self._last_event_id = 0
            self._cv.notify_all()
        log.info("%s: connected to %s", self.spool.device, self.url)

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        if any(rc.is_failure for rc in reason_codes):
            log.error("%s: broker %s refused the config/cmd subscription: %s", self.spool.device, self.url,
                      ", ".join(str(rc) for rc in reason_codes))
            return
        self._listening = True

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        with self._cv:
            self._connected = False
            self._listening = False
            self._inflight.clear()
            self._cv.notify_all()
        if self._running:
            log.warning("%s: lost the broker (%s); readings stay in the spool", self.spool.device, reason_code)

    def _on_message(self, client, userdata, msg: mqtt.MQTTMessage) -> None:
        if self.on_control is None:
            return
        channel = Channel.CONFIG if msg.topic.endswith("/config") else Channel.CMD
        try:
            self.on_control(channel, bytes(msg.payload))
        except Exception:  # a bad control message must never stop the uplink
            log.exception("%s: handling %s failed", self.spool.device, msg.topic)

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

    def _acked(self, kind: str, ident: int, n: int) -> None:
        if kind == "e":
            self.spool.ack_event(ident)
        else:
            self.spool.ack(ident)
            self.published_readings += n
            self.published_messages += 1
        if len(self._inflight) == self.max_inflight - 1:   # the loop may be waiting for room
            self._cv.notify_all()

    # -- the loop ------------------------------------------------------------------------------
    def _take_tokens(self, n: int) -> bool:
        now = time.monotonic()
        self._tokens = min(float(max(self.batch_readings, self.drain_rate)),
                           self._tokens + (now - self._tokens_at) * self.drain_rate)
        self._tokens_at = now
        if self._tokens >= n or self._tokens >= self.batch_readings:
            self._tokens -= n
            return True
        return False

    def _next_work(self, room: int) -> list[tuple[str, int, int, bytes]]:
        """What to publish next: [(kind, seq or event id, readings, payload)]."""
        self._idle = False
        events = self.spool.events(self._last_event_id, room)
        if events:
            return [("e", i, 0, p) for i, p in events]
        unsent = self.spool.unsent(self._last_sent_seq, room)
        if unsent:
            return [("r", m.seq, m.n, m.payload) for m in unsent]
        pending = self.spool.pending()
        if pending == 0:
            self._idle = True
            return []
        newest = self.spool.newest_pending_id()
        if pending > self.batch_readings and self._live_mark and newest > self._live_mark:
            live = self.spool.form_message(self.batch_readings, after_id=self._live_mark)  # live lane
            self._live_mark = newest
            if live is not None:
                return [("r", live.seq, live.n, live.payload)]
        self._live_mark = newest
        if pending > self.batch_readings and not self._take_tokens(self.batch_readings):
            return []  # backlog drain is rate-limited
        formed = self.spool.form_message(self.batch_readings)
        return [("r", formed.seq, formed.n, formed.payload)] if formed else []

    def _run(self) -> None:
        readings_topic = str(self.topic_of(Channel.READINGS))
        events_topic = str(self.topic_of(Channel.EVENTS))
        while True:
            with self._cv:
                if not self._running:
                    return
                if not self._connected or len(self._inflight) >= self.max_inflight:
                    self._cv.wait(0.5)
                    continue
                room = self.max_inflight - len(self._inflight)
                self._woken = False
            work = self._next_work(room)
            if not work:
                with self._cv:   # a stop or a wake-up while we looked is not slept through
                    if self._running and not self._woken:   # a backlog waiting for the drain rate: look again soon
                        self._cv.wait(IDLE_POLL_S if self._idle else 0.05)
                continue
            for kind, ident, n, payload in work:
                info = self.client.publish(events_topic if kind == "e" else readings_topic, payload, qos=1)
                if info.rc != mqtt.MQTT_ERR_SUCCESS:
                    break
                with self._cv:
                    if kind == "e":
                        self._last_event_id = ident
                    else:
                        self._last_sent_seq = ident
                    if self._early.pop(info.mid, None) is not None:
                        self._acked(kind, ident, n)
                    else:
                        self._inflight[info.mid] = (kind, ident, n)
