"""One server per town: the lock ``serve`` takes before it ingests or alerts (issue 21).

Two servers for one town — a second ``serve`` started by mistake, a stand-by machine brought
up while the first still runs — would both store the readings and both alert: two
incidents, two mails. So a town's server holds two locks, and a second one refuses to start
with one line naming who holds them:

* **the data directory**: an exclusive ``flock`` on ``<data dir>/server.lock`` (the file
  says which process holds it). The kernel releases it when the process dies, kill -9
  included. It catches two servers on one machine sharing a directory.
* **the broker**: a retained message on ``ms4/<town>/_server/lock`` naming the holder
  (host, pid, data directory, instance id), with a *will* that clears it when the holder's
  connection dies (kill -9, power cut: at once or after 1.5 keep-alives), re-published
  every ``BEAT_S`` seconds while it runs. It catches two machines with their own data
  directories on one broker.

The broker lock, read plainly: a starter subscribes to the lock topic, then publishes its own
lock; the broker forwards every message of a topic to every subscriber in one order, so a
live lock that reaches the starter *before its own* belongs to a server that was there first
(or won a simultaneous start): the starter refuses. The holder re-publishes its lock whenever
something else appears on the topic (a refused starter's message, a will), so the retained
lock stays the holder's. A retained lock whose last beat is older than ``STALE_S`` (its
holder died while the broker was down, so no will ran) or that names this host's data
directory, whose ``flock`` we now hold, is stale and taken over.

A broker that cannot be reached within ``CONNECT_S`` does not stop the server (ingest waits
for it too): the lock is taken when the broker answers, and a server that then finds another
one holding the town logs why and stops. A broker whose ACL does not let the server publish
on the lock topic (an ACL made before it: re-run ``ms4watch broker-config``) is reported and
the data-directory lock alone holds.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import paho.mqtt.client as mqtt

from .contract.errors import Ms4Error
from .contract.ids import PREFIX
from .contract.mqtt import BrokerURL

log = logging.getLogger(__name__)

LOCK_FILE = "server.lock"
BEAT_S = 15.0
"""How often the holder re-publishes its lock [s]."""
STALE_S = 120.0
"""A retained lock whose last beat is older than this [s] (by this host's clock) is stale."""
CONNECT_S = 5.0
"""How long the start waits for the broker before going on with the data-directory lock [s]."""
ECHO_S = 5.0
"""How long the start waits for its own lock to come back from the broker [s]."""


class TownLocked(Ms4Error):
    """Another server holds the town (the message is the one line ``serve`` prints)."""


def lock_topic(municipality: str) -> str:
    return f"{PREFIX}/{municipality}/_server/lock"


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its message says."""
    instance: str
    host: str
    pid: int
    data_dir: str
    since: float          # epoch s
    beat: float           # epoch s, the last re-publication

    def describe(self) -> str:
        return (f"pid {self.pid} on {self.host}, data directory {self.data_dir}, since "
                f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.since))}")

    @classmethod
    def parse(cls, payload: bytes | bytearray) -> "Holder | None":
        try:
            d = json.loads(payload)
            return cls(str(d["instance"]), str(d["host"]), int(d["pid"]), str(d["data_dir"]), float(d["since"]),
                       float(d["beat"]))
        except (ValueError, KeyError, TypeError):
            return None


class TownLock:
    """The two locks of one town's server; :meth:`acquire` takes them or raises TownLocked."""

    def __init__(self, municipality: str, data_dir: Path, broker_url: str | None, *, username: str | None = None,
                 password: str | None = None, tls: Any = None, on_lost: Callable[[str], None] | None = None):
        self.municipality = municipality
        self.data_dir = Path(data_dir)
        self.broker_url = broker_url
        self.topic = lock_topic(municipality)
        self.on_lost = on_lost
        self._username, self._password, self._tls = username, password, tls
        self._fd: int | None = None
        self._client: mqtt.Client | None = None
        since = time.time()
        self.me = Holder(instance=uuid.uuid4().hex, host=socket.gethostname(), pid=os.getpid(),
                         data_dir=str(self.data_dir.resolve()), since=since, beat=since)
        self._lock = threading.Lock()
        self._checked = threading.Event()      # the broker lock was checked (won, or found unusable)
        self._echoed = threading.Event()
        self._lost_to: Holder | None = None
        self._stop = threading.Event()
        self._beater: threading.Thread | None = None

    # -- the data directory ----------------------------------------------------------------------
    def _lock_dir(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held = Holder.parse(path.read_bytes())
            os.close(fd)
            who = held.describe() if held else "another process"
            raise TownLocked(f"town {self.municipality!r} is already served from {self.data_dir} by {who} "
                             f"({path} is locked)") from None
        os.ftruncate(fd, 0)
        os.write(fd, self._payload())
        self._fd = fd

    # -- the broker --------------------------------------------------------------------------------
    def _payload(self) -> bytes:
        return json.dumps({**self.me.__dict__, "beat": time.time()}).encode()

    def _live_foreign(self, held: Holder | None) -> bool:
        """Whether ``held`` is another server's lock that still counts."""
        if held is None or held.instance == self.me.instance:
            return False
        if time.time() - held.beat > STALE_S:
            log.warning("%s: taking over a stale lock (%s; no beat for %.0f s)", self.topic, held.describe(),
                        time.time() - held.beat)
            return False
        if held.host == self.me.host and held.data_dir == self.me.data_dir:
            return False          # our own directory, whose flock we hold: a lock of an earlier life
        return True

    def _on_connect(self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any = None) -> None:
        if reason.is_failure:
            log.error("%s: the broker refused the lock's connection: %s", self.topic, reason)
            self._checked.set()
            return
        client.subscribe(self.topic, qos=1)

    def _on_subscribe(self, client: mqtt.Client, *_: Any) -> None:
        client.publish(self.topic, self._payload(), qos=1, retain=True)

    def _on_message(self, client: mqtt.Client, _userdata: Any, msg: mqtt.MQTTMessage) -> None:
        if self._stop.is_set():
            return                            # released (our own clear comes back too)
        held = Holder.parse(msg.payload) if msg.payload else None
        if held is not None and held.instance == self.me.instance:
            if not self._echoed.is_set():
                self._echoed.set()
                self._checked.set()
            return
        if not self._echoed.is_set():
            if self._live_foreign(held):      # there before us
                with self._lock:
                    self._lost_to = held
                self._checked.set()
                if self._beater is not None:   # taken late (the broker was down at start): stop this server
                    assert held is not None
                    self._lose(held)
            return
        # we hold it: a starter that will refuse, a will or a clear — the retained lock stays ours
        client.publish(self.topic, self._payload(), qos=1, retain=True)

    def _lose(self, held: Holder) -> None:
        reason = f"town {self.municipality!r} is already served by {held.describe()} (broker lock {self.topic})"
        log.critical("%s; stopping", reason)
        self._stop.set()
        if self.on_lost is not None:
            self.on_lost(reason)

    def _connect_broker(self) -> None:
        url = BrokerURL.parse(self.broker_url or "")
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"ms4watch-lock-{self.me.instance[:12]}",
                        protocol=mqtt.MQTTv311, clean_session=True)
        user = self._username if self._username is not None else url.username
        if user is not None:
            c.username_pw_set(user, self._password if self._password is not None else url.password)
        if url.tls:
            c.tls_set_context(self._tls)
        c.will_set(self.topic, b"", qos=1, retain=True)      # the holder's connection dies: the lock goes
        c.on_connect = self._on_connect
        c.on_subscribe = self._on_subscribe
        c.on_message = self._on_message
        c.on_connect_fail = lambda *_: self._checked.set()   # not reachable: go on (see the module docstring)
        c.reconnect_delay_set(1, 30)
        self._client = c
        c.connect_async(url.host, url.port, keepalive=10)
        c.loop_start()

    def _beat(self) -> None:
        while not self._stop.wait(BEAT_S):
            if self._echoed.is_set() and self._client is not None:
                self._client.publish(self.topic, self._payload(), qos=1, retain=True)

    # -- both --------------------------------------------------------------------------------------
    def acquire(self) -> "TownLock":
        self._lock_dir()
        if self.broker_url is None:
            return self
        try:
            self._connect_broker()
            if not self._checked.wait(CONNECT_S + ECHO_S) or not (self._echoed.is_set() or self._lost_to):
                log.warning("%s: no answer from the broker %s on the lock topic (not reachable yet, or its ACL "
                            "predates the lock: re-run `ms4watch broker-config`); going on with the data "
                            "directory's lock, the broker's is taken when it answers", self.topic, self.broker_url)
            with self._lock:
                lost = self._lost_to
            if lost is not None:
                raise TownLocked(f"town {self.municipality!r} is already served by {lost.describe()} "
                                 f"(broker lock {self.topic} on {self.broker_url})")
        except BaseException:
            self.release(clear=False)
            raise
        self._beater = threading.Thread(target=self._beat, name=f"town-lock-{self.municipality}", daemon=True)
        self._beater.start()
        return self

    def release(self, clear: bool = True) -> None:
        """Let both locks go (``clear``: remove our retained lock from the broker)."""
        self._stop.set()
        c, self._client = self._client, None
        if c is not None:
            if clear and self._echoed.is_set():
                try:
                    c.publish(self.topic, b"", qos=1, retain=True).wait_for_publish(5)
                except (RuntimeError, ValueError):
                    pass          # not connected: the will clears it
            c.disconnect()
            c.loop_stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


__all__ = ["TownLock", "TownLocked", "Holder", "lock_topic", "LOCK_FILE"]
