"""An MQTT 3.1.1 subscriber built for one job: draining QoS 1 readings as fast as they come.

Why not paho here (paho stays in the loggers and everywhere else): paho reads each packet
with several small ``recv`` calls and sends each acknowledgement as its own ``send``; at the
4-readings-per-message rate of a town's loggers a bare paho subscriber that only counts
tops out at ~12,000 messages/s on the reference machine (bench/bench_backlog.py), below
what ingest needs to drain a backlog in time. This client reads whole socket buffers
(256 KiB), parses every packet in them, hands them to ingest in one list, and sends the
acknowledgements of a stored batch in one write.

It implements just what ingest uses, by the MQTT 3.1.1 specification (OASIS, 2014):

* CONNECT with a fixed client id, ``clean_session`` (persistent session by default),
  username/password, keep-alive; CONNACK return codes are reported by name;
* SUBSCRIBE (QoS 0/1 topic filters, shared ``$share/…`` filters included) and its SUBACK;
* incoming PUBLISH at QoS 0 and 1 (QoS 2 is never subscribed), PUBACK sent only when ingest
  calls :meth:`Subscriber.ack` — i.e. after the readings are durable (manual acknowledgement);
* PINGREQ when nothing was sent for half the keep-alive; the connection is dropped when the
  broker is silent for 1.5 keep-alives;
* a PUBLISH larger than ``max_packet_bytes`` (16 MiB by default) is read past as it arrives:
  it is handed over with only its first 4 KiB as payload and its full size in ``oversize``,
  so ingest can acknowledge it and set it aside. Dropping the connection instead would make
  the broker deliver it again on the next one, for ever, with everything behind it waiting;
* reconnection with exponential backoff (1 s … 30 s); TLS for ``mqtts://``, the server
  verified (chain and host name) against the CA file given, a client certificate presented
  when given (:func:`~ms4watch.contract.mqtt.tls_context`).

An acknowledgement is tied to the connection it came on: one for a message received on an
earlier connection is dropped, because packet ids are per connection; the broker redelivers
that message and the store's (device, epoch, seq) filter writes it once.

All socket I/O happens on one thread (acknowledgements are queued and the thread woken
through a socket pair), so TLS sockets are never used from two threads.
"""

from __future__ import annotations

import logging
import select
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from ..contract.broker import MESSAGE_SIZE_LIMIT_BYTES
from ..contract.mqtt import BrokerURL, tls_context

log = logging.getLogger(__name__)

CONNACK_REASONS = {
    1: "unacceptable protocol version", 2: "client identifier rejected", 3: "server unavailable",
    4: "bad user name or password", 5: "not authorized",
}
_RECV_BYTES = 256 * 1024
MAX_PACKET_BYTES = 2 * MESSAGE_SIZE_LIMIT_BYTES
"""The largest packet ingest takes whole [bytes], 16 MiB. A readings message is a few KiB
to ~3.5 MiB (10,000 readings); the broker is set to refuse payloads over half this
(``contract/broker.py``), so only a broker not set up that way sends a larger one."""
HEAD_BYTES = 4096
"""What is kept of an oversized message's payload [bytes], for a person to look at."""


class Delivery(NamedTuple):
    """One received PUBLISH. ``token`` is what :meth:`Subscriber.ack` takes (None for QoS 0).

    ``oversize`` is the payload's full size [bytes] when the packet was larger than the
    subscriber takes: then ``payload`` holds only its first HEAD_BYTES bytes. 0 otherwise.
    """
    topic: str
    payload: bytes
    token: tuple[int, int] | None     # (connection number, packet id)
    dup: bool
    oversize: int = 0


class ProtocolError(Exception):
    """The byte stream broke the MQTT specification (the connection is dropped and re-made)."""


class Refused(Exception):
    """The broker refused the connection or a subscription."""


@dataclass
class SubscriberStats:
    connections: int = 0
    received: int = 0
    oversized: int = 0        # received over max_packet_bytes: read past, first bytes kept
    acked: int = 0
    stale_acks: int = 0       # acknowledgements of an earlier connection's messages, not sent


OnDeliveries = Callable[[list[Delivery]], None]


def _utf8(s: str) -> bytes:
    b = s.encode()
    return struct.pack("!H", len(b)) + b


def _remaining_length(n: int) -> bytes:
    out = bytearray()
    while True:
        n, digit = divmod(n, 128)
        out.append(digit | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _packet(first_byte: int, body: bytes) -> bytes:
    return bytes((first_byte,)) + _remaining_length(len(body)) + body


def connect_packet(client_id: str, *, clean_session: bool, keepalive_s: int,
                   username: str | None = None, password: str | None = None) -> bytes:
    flags = 0x02 if clean_session else 0
    payload = _utf8(client_id)
    if username is not None:
        flags |= 0x80
        payload += _utf8(username)
        if password is not None:
            flags |= 0x40
            payload += _utf8(password)
    return _packet(0x10, _utf8("MQTT") + bytes((4, flags)) + struct.pack("!H", keepalive_s) + payload)


def subscribe_packet(packet_id: int, filters: Sequence[tuple[str, int]]) -> bytes:
    body = struct.pack("!H", packet_id) + b"".join(_utf8(t) + bytes((qos,)) for t, qos in filters)
    return _packet(0x82, body)


def puback_packets(packet_ids: Sequence[int]) -> bytes:
    return b"".join(b"\x40\x02" + pid.to_bytes(2, "big") for pid in packet_ids)


PINGREQ = b"\xc0\x00"
DISCONNECT = b"\xe0\x00"


def parse_packets(buf: bytearray, connection: int, out: list[Delivery], control: list[tuple[int, bytes]],
                  max_packet: int = MAX_PACKET_BYTES) -> int:
    """Parse every complete packet at the start of ``buf``; returns the bytes consumed.

    PUBLISH packets are appended to ``out``; any other packet as (type, body) to ``control``.
    A PUBLISH longer than ``max_packet`` is appended as soon as its topic, packet id and
    first HEAD_BYTES bytes are in ``buf`` (``oversize`` set); then the bytes consumed run
    past the end of ``buf``, and the caller discards that many more as they arrive.
    """
    n = len(buf)
    mv = memoryview(buf)
    i = 0
    try:
        while n - i >= 2:
            first = buf[i]
            j = i + 1
            length = 0
            shift = 0
            while True:
                if j >= n:
                    return i
                b = buf[j]
                j += 1
                length |= (b & 0x7F) << shift
                if b < 0x80:
                    break
                shift += 7
                if shift > 21:
                    raise ProtocolError("remaining length longer than 4 bytes")
            end = j + length
            kind = first >> 4
            if length > max_packet:
                if kind != 3:
                    raise ProtocolError(f"packet of {length} bytes")
                qos = (first >> 1) & 3
                if qos > 1:
                    raise ProtocolError("QoS 2 PUBLISH on a QoS 1 subscription")
                if n < j + 2:
                    return i
                k = j + 2 + ((buf[j] << 8) | buf[j + 1])
                if k + 2 * qos > end:
                    raise ProtocolError("PUBLISH shorter than its topic")
                head_end = min(end, k + 2 * qos + HEAD_BYTES)
                if n < head_end:
                    return i                                 # wait for the head (a few KiB)
                topic = str(mv[j + 2:k], "utf-8")
                token = (connection, (buf[k] << 8) | buf[k + 1]) if qos else None
                k += 2 * qos
                out.append(Delivery(topic, bytes(mv[k:head_end]), token, bool(first & 0x08), end - k))
                i = end
                continue
            if end > n:
                return i
            if kind == 3:                                    # PUBLISH
                qos = (first >> 1) & 3
                if qos > 1:
                    raise ProtocolError("QoS 2 PUBLISH on a QoS 1 subscription")
                k = j + 2 + ((buf[j] << 8) | buf[j + 1])
                if k + 2 * qos > end:
                    raise ProtocolError("PUBLISH shorter than its topic")
                topic = str(mv[j + 2:k], "utf-8")
                if qos:
                    token = (connection, (buf[k] << 8) | buf[k + 1])
                    k += 2
                else:
                    token = None
                out.append(Delivery(topic, bytes(mv[k:end]), token, bool(first & 0x08)))
            else:
                control.append((kind, bytes(mv[j:end])))
            i = end
        return i
    except (IndexError, UnicodeDecodeError) as e:
        raise ProtocolError(f"malformed packet: {e}") from None
    finally:
        mv.release()


class PacketReader:
    """One connection's bytes → packets: keeps a partial packet between reads, and discards
    the rest of an oversized PUBLISH as it arrives (never holding more than its first bytes)."""

    def __init__(self, connection: int, max_packet: int = MAX_PACKET_BYTES):
        self.connection = connection
        self.max_packet = max_packet
        self._buf = bytearray()
        self._skip = 0                # bytes still to discard of an oversized packet

    @property
    def buffered(self) -> int:
        """Bytes held for a packet not complete yet."""
        return len(self._buf)

    def feed(self, chunk: bytes, out: list[Delivery], control: list[tuple[int, bytes]]) -> None:
        """Parse what ``chunk`` completes: PUBLISH packets into ``out``, others into ``control``."""
        if self._skip:
            if len(chunk) <= self._skip:
                self._skip -= len(chunk)
                return
            chunk = chunk[self._skip:]
            self._skip = 0
        buf = self._buf
        buf += chunk
        used = parse_packets(buf, self.connection, out, control, self.max_packet)
        if used > len(buf):
            self._skip = used - len(buf)
            buf.clear()
        else:
            del buf[:used]


class Subscriber:
    """See the module docstring. ``on_deliveries`` runs on the network thread and may block
    (that is the back-pressure: while it blocks, nothing more is read from the broker)."""

    def __init__(self, url: BrokerURL, client_id: str, filters: Sequence[tuple[str, int]],
                 on_deliveries: OnDeliveries, *, clean_session: bool = False, keepalive_s: int = 30,
                 username: str | None = None, password: str | None = None,
                 on_subscribed: Callable[[bool], None] | None = None,
                 on_disconnected: Callable[[str], None] | None = None,
                 reconnect_min_s: float = 1.0, reconnect_max_s: float = 30.0,
                 max_packet_bytes: int = MAX_PACKET_BYTES, tls: ssl.SSLContext | None = None):
        self.url = url
        self.tls = (tls or tls_context()) if url.tls else None
        self.client_id = client_id
        self.filters = list(filters)
        self.on_deliveries = on_deliveries
        self.clean_session = clean_session
        self.keepalive_s = keepalive_s
        self.username = username if username is not None else url.username
        self.password = password if password is not None else url.password
        self.on_subscribed = on_subscribed
        self.on_disconnected = on_disconnected
        self.reconnect_min_s = reconnect_min_s
        self.reconnect_max_s = reconnect_max_s
        self.max_packet_bytes = max_packet_bytes
        self.stats = SubscriberStats()
        self._connection = 0
        self._acks: list[tuple[int, int]] = []
        self._acks_lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._paused = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the API ingest uses ---------------------------------------------------------------------
    def start(self) -> "Subscriber":
        self._thread = threading.Thread(target=self._run, name="mqtt-subscriber", daemon=True)
        self._thread.start()
        return self

    def ack(self, tokens: Sequence[tuple[int, int] | None]) -> None:
        """Acknowledge delivered messages (any thread). QoS 0 tokens (None) are ignored."""
        with self._acks_lock:
            self._acks.extend(t for t in tokens if t is not None)
        self._wake()

    def pause(self) -> None:
        """Take no new messages (what is in flight stays unacknowledged unless acked)."""
        self._paused.set()
        self._wake()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Send the pending acknowledgements, DISCONNECT, close."""
        self._paused.set()
        self._stopping.set()
        self._wake()
        if self._thread:
            self._thread.join(timeout_s)
        self._wake_r.close()
        self._wake_w.close()

    # -- the network thread ---------------------------------------------------------------------
    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass                      # already woken (buffer full) or closed

    def _run(self) -> None:
        delay = self.reconnect_min_s
        while not self._stopping.is_set():
            sock = None
            reason = "closed"
            try:
                sock = self._connect()
                delay = self.reconnect_min_s
                self._serve(sock)
                reason = "stopped"
            except Refused as e:
                reason = str(e)
                log.error("mqtt %s: %s", self.url, e)
            except (OSError, ProtocolError) as e:
                reason = f"{type(e).__name__}: {e}"
                if not self._stopping.is_set():
                    log.warning("mqtt %s: connection lost (%s); reconnecting in %.0f s", self.url, reason, delay)
            except Exception as e:    # a fault in a callback: what it did not ack comes again
                reason = f"{type(e).__name__}: {e}"
                log.exception("mqtt %s: handling received messages failed; reconnecting in %.0f s", self.url, delay)
            finally:
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass
            if self._stopping.is_set():
                break
            if self.on_disconnected:
                self.on_disconnected(reason)
            self._stopping.wait(delay)
            delay = min(delay * 2, self.reconnect_max_s)

    def _connect(self) -> socket.socket:
        raw = socket.create_connection((self.url.host, self.url.port), timeout=10)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock: socket.socket = raw
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(raw, server_hostname=self.url.host)
            except BaseException:
                raw.close()
                raise
        try:
            sock.sendall(connect_packet(self.client_id, clean_session=self.clean_session,
                                        keepalive_s=self.keepalive_s, username=self.username,
                                        password=self.password))
            buf = bytearray()
            while len(buf) < 4:
                chunk = sock.recv(4 - len(buf))
                if not chunk:
                    raise OSError("the broker closed the connection before CONNACK")
                buf += chunk
            if buf[0] != 0x20 or buf[1] != 2:
                raise ProtocolError(f"expected CONNACK, got packet type {buf[0] >> 4}")
            if buf[3]:
                raise Refused(f"broker refused the connection: "
                              f"{CONNACK_REASONS.get(buf[3], f'return code {buf[3]}')}")
            session_present = bool(buf[2] & 1)
            sock.sendall(subscribe_packet(1, self.filters))
        except BaseException:
            sock.close()
            raise
        self._connection += 1
        self.stats.connections += 1
        with self._acks_lock:          # acknowledgements for the last connection cannot be sent now
            self.stats.stale_acks += len(self._acks)
            self._acks.clear()
        log.info("mqtt %s: connected as %s (session present: %s)", self.url, self.client_id, session_present)
        return sock

    def _serve(self, sock: socket.socket) -> None:
        connection = self._connection
        sock.settimeout(self.keepalive_s)
        reader = PacketReader(connection, self.max_packet_bytes)
        last_sent = last_heard = time.monotonic()
        ping_every = self.keepalive_s / 2
        tls = sock if isinstance(sock, ssl.SSLSocket) else None  # its buffered bytes select() cannot see
        while True:
            if self._flush_acks(sock, connection):
                last_sent = time.monotonic()
            if self._stopping.is_set():
                try:
                    sock.sendall(DISCONNECT)
                except OSError:
                    pass
                return
            now = time.monotonic()
            if now - last_heard > 1.5 * self.keepalive_s:
                raise OSError(f"no packet from the broker for {now - last_heard:.0f} s")
            if now - last_sent >= ping_every:
                sock.sendall(PINGREQ)
                last_sent = now
            watch = [self._wake_r] if self._paused.is_set() else [sock, self._wake_r]
            if tls is not None and not self._paused.is_set() and tls.pending():
                readable = [sock]
            else:
                readable, _, _ = select.select(watch, [], [], max(0.05, ping_every - (now - last_sent)))
            if self._wake_r in readable:
                try:
                    while self._wake_r.recv(4096):
                        pass
                except (BlockingIOError, OSError):
                    pass
            if sock not in readable:
                continue
            chunk = sock.recv(_RECV_BYTES)
            if not chunk:
                raise OSError("the broker closed the connection")
            last_heard = time.monotonic()
            deliveries: list[Delivery] = []
            control: list[tuple[int, bytes]] = []
            reader.feed(chunk, deliveries, control)
            for kind, body in control:
                self._control(kind, body)
            if deliveries:
                self.stats.received += len(deliveries)
                self.stats.oversized += sum(1 for d in deliveries if d.oversize)
                self.on_deliveries(deliveries)

    def _control(self, kind: int, body: bytes) -> None:
        if kind == 9:                                       # SUBACK
            codes = body[2:]
            failed = [self.filters[i][0] for i, c in enumerate(codes) if c == 0x80 and i < len(self.filters)]
            if failed:
                if self.on_subscribed:
                    self.on_subscribed(False)
                raise Refused(f"broker refused the subscription to {', '.join(failed)}")
            if self.on_subscribed:
                self.on_subscribed(True)
        elif kind in (13, 11):                              # PINGRESP, UNSUBACK
            return
        elif kind == 4:                                     # PUBACK for a publish we never made
            log.debug("mqtt %s: unexpected PUBACK", self.url)
        else:
            raise ProtocolError(f"unexpected packet type {kind} from the broker")

    def _flush_acks(self, sock: socket.socket, connection: int) -> bool:
        with self._acks_lock:
            if not self._acks:
                return False
            acks, self._acks = self._acks, []
        ids = [pid for conn, pid in acks if conn == connection]
        self.stats.stale_acks += len(acks) - len(ids)
        if not ids:
            return False
        sock.sendall(puback_packets(ids))
        self.stats.acked += len(ids)
        return True
