"""The ingest service: subscribe to every logger's readings, store them, then acknowledge.

* Persistent MQTT session (clean_session=False, fixed client id) with QoS 1, so messages
  published while ingest is down wait in the broker.
* ``manual_ack``: a message is acknowledged only after the store's ``write`` returned, i.e.
  after its readings are durable. If the process dies before that, the broker redelivers;
  the store's (device, epoch, seq) filter writes it once. A message under a (device, epoch,
  seq) the store holds with other content (a logger whose sequence restarted) is not a
  duplicate: it is set aside with a warning, never dropped without a word.
* A message that breaks the contract is logged with topic and field, kept in a rejected
  file for a person to look at, and acknowledged — it can never become valid, and it must
  not block the messages behind it. Acknowledged only once that file holds it (fsync): when
  it cannot be written (a full disk) nothing set aside is acknowledged and the write is
  retried like a store outage (on the network thread: the connection is made again and
  the broker delivers the messages again). The writer thread never dies: a fault of ours
  is logged and the batch tried again; ``stop`` returns even then.
* So is a message larger than ``max_message_bytes``: the subscriber reads past it keeping
  only its first bytes, and the rejected file gets its topic, size and those bytes.
* Messages are written in batches (up to ``batch_readings`` readings or ``batch_wait_s``);
  the wait is a linger only when busy: a message that finds the writer idle is written at
  once, with whatever is queued behind it (:meth:`IngestService._write_loop`).
* Who may send what (:mod:`.identity`): a payload whose device is not its topic's, a device
  the town did not list, a reading for a station its device does not serve or the registry
  does not know — each message is set aside whole, like one breaking the contract.
* Every valid status is handed to ``on_status`` (station, device, status) on the network
  thread, after it is stored: the engine learns each logger's stated report interval.
* Events (``…/events``: calibration records, bottle records, command acknowledgements, …)
  are decoded (a calibration record against its contract), queued with the readings and
  stored in the same batch (:class:`~.stores.base.DeviceEventStore`), acknowledged only once stored.

The MQTT side is :mod:`.subscriber` (whole-buffer reads, batched acknowledgements); the
network thread decodes, a writer thread stores and acknowledges.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import queue
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..contract.bounds import DEFAULT_WINDOW, TimeWindow
from ..contract.errors import ContractError
from ..contract.ids import Channel, Topic, subscription
from ..contract.mqtt import BrokerURL
from ..contract.calibration import CALIBRATION_EVENT, CalibrationRecord
from ..contract.timeutil import to_ns
from ..contract.wire import CanonicalReading, StatusMessage, decode_canonical, decode_event, decode_status
from .errors import MessagesRejected, SetAsideFailed, StoreRejected, StoreUnavailable
from .identity import Identity
from .stores.base import (DeviceEvent, DeviceStatus, DeviceEventStore, ReadingsStore, StatusStore, StoredMessage, WriteResult,
                         payload_digest)
from .subscriber import MAX_PACKET_BYTES, Delivery, Subscriber

log = logging.getLogger(__name__)
_new_tuple = tuple.__new__

OnStored = Callable[[Sequence[CanonicalReading]], None]
OnStatus = Callable[[str, str, StatusMessage], None]
"""Told of every valid status message: (station, device, the decoded status)."""


@dataclass
class IngestStats:
    messages: int = 0
    stored_readings: int = 0
    duplicate_messages: int = 0
    rejected_messages: int = 0
    conflicting_messages: int = 0     # set aside: (device, epoch, seq) stored with other content
    store_retries: int = 0
    store_errors: int = 0             # writes of readings or events the store failed or refused (each attempt)
    events: int = 0                   # event messages stored (calibration records among them)


def tune_gc() -> None:
    """For a process whose job is ingest: collect cycles less often, and never look again at
    what was imported at start (pydantic, pint… are ~10^5 objects a full collection would
    walk every time). Ingest makes no reference cycles in its hot path, so memory does not
    grow for it; the backlog bench measured ~15 % more throughput.

    Frozen without a collection first: at this point of ingest's start a full collection
    found nothing to free (0 of ~47,000 objects) and cost ~28 ms of CPU, before the first
    message is read."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


class IngestService:
    def __init__(self, broker_url: str, municipality: str, store: ReadingsStore, *,
                 client_id: str | None = None, username: str | None = None, password: str | None = None,
                 on_stored: OnStored | None = None, rejected_path: str | Path | None = None,
                 batch_readings: int = 20_000, batch_wait_s: float = 0.05, max_queue: int = 16,
                 shared_group: str | None = None, time_window: TimeWindow = DEFAULT_WINDOW,
                 max_message_bytes: int = MAX_PACKET_BYTES, tls: ssl.SSLContext | None = None,
                 identity: Identity | None = None, on_status: OnStatus | None = None, fault_retry_s: float = 5.0):
        self.url = BrokerURL.parse(broker_url)
        self.municipality = municipality
        self.store = store
        self.client_id = client_id or f"ms4watch-ingest-{municipality}"
        self.on_stored = on_stored
        self.on_status = on_status
        self.identity = identity or Identity(None)   # who may send what (ingest/identity.py)
        self.rejected_path = Path(rejected_path) if rejected_path else None
        self.batch_readings = batch_readings
        self.batch_wait_s = batch_wait_s
        self.fault_retry_s = fault_retry_s  # a batch a fault of ours failed is tried again after this [s]
        self.time_window = time_window      # reading times taken, around each message's receive time
        # Several ingest processes (one per core) share the readings through an MQTT shared
        # subscription ($share/<group>/…, Mosquitto ≥ 1.6): each message goes to one of them.
        self.shared_group = shared_group
        self.stats = IngestStats()
        # One item per socket read (a list of messages); 256 KiB each at most, so the bound
        # holds the memory ingest may use for messages not yet stored.
        self._queue: queue.Queue[list[tuple[tuple[int, int] | None, StoredMessage | DeviceEvent]] | None] = \
            queue.Queue(max_queue)
        readings = subscription(municipality, Channel.READINGS)
        if shared_group:
            readings = f"$share/{shared_group}/{readings}"
        self._status_suffix = "/" + Channel.STATUS.value
        self._events_suffix = "/" + Channel.EVENTS.value
        events = subscription(municipality, Channel.EVENTS)
        if shared_group:
            events = f"$share/{shared_group}/{events}"
        self._client = Subscriber(self.url, self.client_id,
                                  [(readings, 1), (subscription(municipality, Channel.STATUS), 1), (events, 1)],
                                  self._on_deliveries, clean_session=False, keepalive_s=30,
                                  username=username, password=password,
                                  on_subscribed=self._on_subscribed, on_disconnected=self._on_disconnected,
                                  max_packet_bytes=max_message_bytes, tls=tls)
        self._writer: threading.Thread | None = None
        self._rejected: list[dict] = []        # the network thread's set-asides of the socket read in hand
        self._unfed_since: int | None = None   # when the batch being stored, not yet handed on, began [epoch ns]
        self._stop = threading.Event()
        self.connected = threading.Event()  # connected and subscribed

    @property
    def stored_readings(self) -> int:
        return self.stats.stored_readings

    def stored_mark(self) -> int:
        """A time of this clock [epoch ns] before which every batch the store took has been
        handed to ``on_stored``: the alert pipeline checkpoints it with the engine and, after a
        crash, re-feeds what the store received from then on (:class:`~.stores.base.ReceiptLog`)."""
        now = time.time_ns()
        unfed = self._unfed_since       # read after the clock: a batch begun since is after ``now``
        return now if unfed is None else min(now, unfed)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self, timeout_s: float = 15.0) -> "IngestService":
        self.store.open()
        self._writer = threading.Thread(target=self._write_loop, name="ingest-writer", daemon=True)
        self._writer.start()
        self._client.start()
        if not self.connected.wait(timeout_s):
            log.warning("ingest: not yet connected to %s; retrying in the background", self.url)
        return self

    def stop(self) -> None:
        """Write and acknowledge what is queued, then disconnect."""
        self._client.pause()  # take nothing new
        self._stop.set()
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass                # the writer sees the stop once it has emptied the queue
        if self._writer:
            self._writer.join(60)
            if self._writer.is_alive():
                log.error("ingest: the writer did not finish within 60 s; stopping without it "
                          "(what it did not acknowledge, the broker delivers again)")
        self._client.stop()
        self.store.close()

    # -- the subscriber's callbacks (its network thread) ----------------------------------------
    def _on_subscribed(self, ok: bool) -> None:
        if ok:
            self.connected.set()
        else:
            log.error("ingest: subscription refused by %s", self.url)

    def _on_disconnected(self, reason: str) -> None:
        self.connected.clear()
        if not self._stop.is_set():
            log.warning("ingest: disconnected from %s (%s); reconnecting", self.url, reason)

    def _on_deliveries(self, deliveries: list[Delivery]) -> None:
        """Decode what one socket read brought and queue it for the writer as one item."""
        items: list[tuple[tuple[int, int] | None, StoredMessage | DeviceEvent]] = []
        ack_now: list[tuple[int, int] | None] = []
        received_ns = time.time_ns()          # reading times may be at most a day after this
        self._rejected = []                   # a read that failed half-way comes again whole
        for msg in deliveries:
            if msg.oversize:
                self._reject(msg, str(ContractError(
                    msg.topic, "payload", f"{msg.oversize:,} bytes, over the {self._client.max_packet_bytes:,} bytes "
                                          f"ingest takes; read past, its first {len(msg.payload):,} bytes kept")))
                ack_now.append(msg.token)
                continue
            if msg.topic.endswith(self._status_suffix):
                try:
                    self._on_status(msg)
                except Exception:   # a status is a snapshot: the next one replaces a lost one
                    log.exception("ingest: status on %s not stored", msg.topic)
                ack_now.append(msg.token)
                continue
            if msg.topic.endswith(self._events_suffix):
                event = self._decode_event(msg, received_ns)
                if event is None:
                    ack_now.append(msg.token)
                else:
                    items.append((msg.token, event))
                continue
            try:
                topic = Topic.parse(msg.topic)
                device, seq, readings, epoch = decode_canonical(msg.topic, topic.station, msg.payload,
                                                                received_ns, self.time_window)
                self.identity.check_readings(msg.topic, topic, device, readings)
            except (ContractError, ValueError) as e:
                self._reject(msg, str(e))
                ack_now.append(msg.token)
                continue
            except Exception as e:   # a fault of ours: keep the message for a person, go on
                log.exception("ingest: decoding a message on %s failed unexpectedly", msg.topic)
                self._reject(msg, f"could not be decoded ({type(e).__name__}: {e}); kept for a person to look at")
                ack_now.append(msg.token)
                continue
            # the digest tells a redelivery (the same bytes again) from another message under
            # the same (device, epoch, seq)
            digest = payload_digest(msg.payload)
            # tuple.__new__: the NamedTuple's constructor is a Python function (~0.1 µs a message)
            items.append((msg.token, _new_tuple(StoredMessage, (device, seq, tuple(readings), epoch, digest))))
        rejected, self._rejected = self._rejected, []
        self._keep_aside(*rejected)           # one write for the read; SetAsideFailed: nothing acknowledged
        if ack_now:
            self._client.ack(ack_now)
        if items and not self._stop.is_set():   # once stopping, not acknowledged: delivered again
            self._queue.put(items)              # blocks when the writer is behind: back-pressure

    def _on_status(self, msg: Delivery) -> None:
        """Status is a retained snapshot: the latest wins, a lost one is replaced by the next."""
        if not msg.payload:
            return
        try:
            topic = Topic.parse(msg.topic)
            st = decode_status(msg.topic, msg.payload)
            self.identity.check_device(msg.topic, topic, st.device)
        except (ContractError, ValueError) as e:
            self._reject(msg, str(e))
            return
        if isinstance(self.store, StatusStore):
            try:
                self.store.write_status(DeviceStatus(
                    st.device, topic.station, time.time_ns(), st.state, st.battery_v, st.signal_dbm,
                    st.spool_depth, st.dropped, st.config_version, st.agent_version, st.clock, st.calibrations))
            except StoreUnavailable as e:
                log.warning("ingest: status of %s not stored: %s", st.device, e)
        if self.on_status is not None:
            self.on_status(topic.station, st.device, st)

    def _decode_event(self, msg: Delivery, received_ns: int) -> DeviceEvent | None:
        """An event message as the store keeps it; None (set aside) when it breaks the contract."""
        try:
            topic = Topic.parse(msg.topic)
            ev = decode_event(msg.topic, msg.payload, received_ns, self.time_window)
            self.identity.check_device(msg.topic, topic, ev.device)
        except (ContractError, ValueError) as e:
            self._reject(msg, str(e))
            return None
        record = CalibrationRecord.model_validate(ev.data) if ev.kind == CALIBRATION_EVENT else None
        if record is not None and record.device != ev.device:
            self._reject(msg, str(ContractError(msg.topic, "data.device", f"record of device {record.device!r} "
                                                                          f"sent by {ev.device!r}")))
            return None
        return DeviceEvent(ev.device, topic.station, to_ns(ev.time), ev.kind, ev.data, payload_digest(msg.payload),
                           received_ns, record)

    def _aside(self, m: StoredMessage, error: str) -> dict:
        """A readings message as the rejected file keeps it."""
        return {"device": m.device, "epoch": m.epoch, "seq": m.seq, "error": error,
                "readings": [list(r) for r in m.readings]}

    def _store_events(self, events: list[DeviceEvent]) -> list[dict]:
        """Write events; one the store refuses as bad data is returned to be set aside (rejected
        file), the others are written. StoreUnavailable propagates (the batch is retried)."""
        if not isinstance(self.store, DeviceEventStore):
            return [{"device": ev.device, "kind": ev.kind, "time_ns": ev.time_ns,
                     "error": "the store keeps no events", "data": dict(ev.data)} for ev in events]
        aside = []
        try:
            self.store.write_events(events)
            self.stats.events += len(events)
        except StoreRejected:
            for ev in events:       # find the one it refuses
                try:
                    self.store.write_events([ev])
                    self.stats.events += 1
                except StoreRejected as e:
                    self.stats.rejected_messages += 1
                    log.error("ingest: the store refused an event of %s: %s", ev.device, e)
                    aside.append({"device": ev.device, "kind": ev.kind, "time_ns": ev.time_ns,
                                  "error": f"store refused: {e}", "data": dict(ev.data)})
        return aside

    def _reject(self, msg: Delivery, reason: str) -> None:
        """Set a message of this socket read aside (written, then acknowledged, at the read's end)."""
        self.stats.rejected_messages += 1
        log.error("ingest: rejected message: %s", reason)
        self._rejected.append({"topic": msg.topic, "error": reason, "size": msg.oversize or len(msg.payload),
                               "payload": msg.payload.decode("utf-8", "replace")[:10000]})

    def _keep_aside(self, *records: dict) -> None:
        """Append to the rejected file, for a person to look at (one JSON object per line):
        all of them, durably (fsync: what is set aside is then acknowledged), or none — a write
        that failed half-way is cut back. :class:`SetAsideFailed` when the file cannot take
        them (a full disk): then nothing set aside may be acknowledged."""
        if not self.rejected_path or not records:
            return
        data = "".join(json.dumps({"received": time.time(), **r}) + "\n" for r in records).encode()
        try:
            fd = os.open(self.rejected_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as e:
            raise SetAsideFailed(f"cannot write {self.rejected_path}: {e.strerror}") from None
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as e:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass                   # not a regular file (/dev/full), or the disk refuses that too
            raise SetAsideFailed(f"cannot write {self.rejected_path}: {e.strerror}") from None
        finally:
            os.close(fd)

    def _keep_aside_until_written(self, records: list[dict], batch: int) -> bool:
        """:meth:`_keep_aside`, retried like a store outage until the file takes them; False
        when stopped first (then the batch is not acknowledged: the broker delivers it again)."""
        delay = 0.2
        while True:
            try:
                self._keep_aside(*records)
                return True
            except SetAsideFailed as e:
                self.stats.store_retries += 1
                if self._stop.is_set():
                    log.error("ingest: stopping with %d messages not acknowledged: %s; the broker will deliver "
                              "them again", batch, e)
                    return False
                log.warning("ingest: %s; %d messages not acknowledged, retrying in %.1fs", e, batch, delay)
                self._stop.wait(delay)
                delay = min(delay * 2, 30.0)

    # -- writer thread --------------------------------------------------------------------------
    def _write_loop(self) -> None:
        """Gather a batch, store it, repeat. The batch wait is a linger only when busy: a
        message that finds the writer idle (it waited for it on an empty queue) is written
        with what is queued behind it at once — alert latency, a lone reading does not wait
        ``batch_wait_s``; when messages were already waiting (they arrived while the last
        batch was being written) the writer gathers for up to ``batch_wait_s`` more, so a
        backlog is written in few large commits."""
        stopping = False
        while not stopping:
            try:
                item = self._queue.get_nowait()
                busy = True                # it queued up while the last batch was being written
            except queue.Empty:
                busy = False
                try:
                    item = self._queue.get(timeout=0.5)
                except queue.Empty:
                    if self._stop.is_set():    # stop could not queue its marker (the queue was full): it is empty now
                        return
                    continue
            if item is None or self._stop.is_set():
                stopping = True
            batch: list[tuple[tuple[int, int] | None, StoredMessage | DeviceEvent]] = [] if item is None else list(item)
            n = sum(len(m.readings) for _, m in batch)
            deadline = time.monotonic() + (self.batch_wait_s if busy else 0.0)
            while not stopping and n < self.batch_readings:
                try:      # idle: only what is queued now (a zero timeout never blocks)
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                batch += item
                n += sum(len(m.readings) for _, m in item)
            if stopping:  # drain whatever is left so it is stored and acknowledged
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        batch += item
            while batch:
                try:
                    self._store(batch)
                    break
                except Exception:  # a fault of ours: never die silently (ingest would stall without a word)
                    log.exception("ingest: storing a batch of %d messages failed unexpectedly; not acknowledged, "
                                  "trying again in %g s", len(batch), self.fault_retry_s)
                    if self._stop.wait(self.fault_retry_s):
                        log.error("ingest: stopping with %d messages not acknowledged; the broker will deliver "
                                  "them again", len(batch))
                        break

    def _store(self, batch: list[tuple[tuple[int, int] | None, StoredMessage | DeviceEvent]]) -> None:
        messages = [m for _, m in batch if type(m) is StoredMessage]
        events = [m for _, m in batch if type(m) is DeviceEvent] if len(messages) < len(batch) else []
        self._unfed_since = time.time_ns()    # before the store stamps its receipts
        try:
            self._store_and_hand_on(batch, messages, events)
        finally:
            self._unfed_since = None

    def _store_and_hand_on(self, batch: list[tuple[tuple[int, int] | None, StoredMessage | DeviceEvent]],
                           messages: list[StoredMessage], events: list[DeviceEvent]) -> None:
        """Write until the store takes it, hand the readings to ``on_stored``, set aside what
        the store refused or found conflicting, then acknowledge. Returns without acknowledging
        when stopped before the store or the rejected file took it."""
        refused: list[tuple[StoredMessage, str]] = []
        aside: list[dict] = []
        result: WriteResult | None = None       # the readings' write, kept while events are retried
        delay = 0.2
        while True:
            try:
                if result is None:
                    result = self.store.write(messages) if messages else WriteResult(0)
                if events:
                    aside += self._store_events(events)
                    events = []
                break
            except StoreRejected as e:
                self.stats.store_errors += 1
                # The store refused the data itself: retrying cannot help. What it refused is
                # kept aside for a person, the rest was written, and everything is acknowledged
                # so one bad message never blocks the ones behind it.
                if isinstance(e, MessagesRejected):
                    refused, result = e.rejected, e.result
                else:
                    refused, result = [(m, str(e)) for m in messages], WriteResult(0)
                break
            except Exception as e:
                # StoreUnavailable, or a fault of ours or of a library: not acknowledged, so
                # nothing is lost; keep trying (the broker keeps the rest) and never let the
                # writer thread die, which would stall ingest without a word.
                if not isinstance(e, StoreUnavailable):
                    log.exception("ingest: writing a batch of %d messages failed unexpectedly", len(batch))
                    e = StoreUnavailable(f"{type(e).__name__}: {e}")
                self.stats.store_errors += 1
                self.stats.store_retries += 1
                if self._stop.is_set() and delay >= 5:
                    log.error("ingest: stopping with %d messages unstored and unacknowledged; "
                              "the broker will deliver them again", len(batch))
                    return
                wait = e.retry_after_s if e.retry_after_s is not None else delay
                log.warning("ingest: store unavailable (%s); retrying in %.1fs", e, wait)
                time.sleep(wait)
                delay = min(delay * 2, 30.0)
        if events:      # the store refused the readings of this batch before its events were tried
            try:
                aside += self._store_events(events)
            except Exception as e:   # noqa: BLE001 — keep them for a person rather than hold the batch
                aside += [{"device": ev.device, "kind": ev.kind, "time_ns": ev.time_ns,
                           "error": f"event not stored: {e}", "data": dict(ev.data)} for ev in events]
        self.stats.messages += len(batch)
        self.stats.stored_readings += result.readings_written
        self.stats.duplicate_messages += result.duplicate_messages
        if self.on_stored is not None and result.readings_written:
            # not in the store: what it refused, and messages conflicting with a stored one
            left_out = {(m.key, m.digest) for m, _ in (*refused, *result.conflicts)}
            readings = [r for m in messages if not left_out or (m.key, m.digest) not in left_out for r in m.readings]
            try:
                self.on_stored(readings)   # stored: the alerts need not wait for the rejected file
            except Exception:  # a failing consumer must not stop ingest
                log.exception("ingest: on_stored consumer failed")
        for m, reason in refused:
            self.stats.rejected_messages += 1
            log.error("ingest: the store refused %s epoch %d seq %d: %s", m.device, m.epoch, m.seq, reason)
            aside.append(self._aside(m, f"store refused: {reason}"))
        for m, reason in result.conflicts:
            self.stats.conflicting_messages += 1
            log.warning("ingest: %s", reason)
            aside.append(self._aside(m, f"conflict: {reason}"))
        if aside and not self._keep_aside_until_written(aside, len(batch)):
            return
        self._client.ack([token for token, _ in batch])
