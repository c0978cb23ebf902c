"""The ingest's MQTT subscriber: its packet parser on crafted bytes, and its behaviour against
a real Mosquitto (persistent session, manual acknowledgement, keep-alive, refusals, restarts,
shared subscriptions)."""

from __future__ import annotations

import queue
import subprocess
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from ms4watch.contract.mqtt import BrokerURL
from ms4watch.ingest.subscriber import (HEAD_BYTES, Delivery, PacketReader, ProtocolError, Subscriber, connect_packet,
                                        parse_packets, puback_packets, subscribe_packet)
from tests.support.proxy import CuttableLink
from tests.support.waiting import wait_for
from tests.support.servers import free_port, wait_port

TOPIC = "ms4/town/OF-1/LOG-1/readings"


def publish_packet(topic: str, payload: bytes, qos: int = 1, pid: int = 7, dup: bool = False) -> bytes:
    t = topic.encode()
    body = len(t).to_bytes(2, "big") + t + (pid.to_bytes(2, "big") if qos else b"") + payload
    n, rl = len(body), bytearray()
    while True:
        n, d = divmod(n, 128)
        rl.append(d | (0x80 if n else 0))
        if not n:
            break
    return bytes((0x30 | (qos << 1) | (0x08 if dup else 0),)) + bytes(rl) + body


# -- the parser ---------------------------------------------------------------------------------
def test_parser_reads_every_packet_whatever_the_chunking():
    big = b"x" * 20000                      # a 3-byte remaining length
    stream = (publish_packet(TOPIC, b'{"a":1}', pid=1) + b"\xd0\x00"            # PINGRESP
              + publish_packet(TOPIC, big, pid=65535, dup=True) + publish_packet("t/q0", b"", qos=0)
              + b"\x90\x03\x00\x01\x01")                                      # SUBACK
    want = [Delivery(TOPIC, b'{"a":1}', (3, 1), False), Delivery(TOPIC, big, (3, 65535), True),
            Delivery("t/q0", b"", None, False)]
    for step in (1, 2, 7, 1000, len(stream)):
        buf, out, control = bytearray(), [], []
        for i in range(0, len(stream), step):
            buf += stream[i:i + step]
            del buf[:parse_packets(buf, 3, out, control)]
        assert out == want and control == [(13, b""), (9, b"\x00\x01\x01")] and not buf, step


def test_an_oversized_publish_is_handed_over_with_its_first_bytes_and_read_past():
    """Whatever the chunking: the packets around it come whole, it comes once with its topic,
    packet id, first HEAD_BYTES bytes and full size, and the reader never holds much more."""
    big = bytes(range(256)) * 100                   # 25,600 bytes, over the 10,000 taken here
    stream = (publish_packet(TOPIC, b"before", pid=1) + publish_packet(TOPIC, big, pid=2, dup=True)
              + publish_packet("t/q0", big, qos=0) + publish_packet(TOPIC, b"after", pid=3))
    want = [Delivery(TOPIC, b"before", (5, 1), False), Delivery(TOPIC, big[:HEAD_BYTES], (5, 2), True, len(big)),
            Delivery("t/q0", big[:HEAD_BYTES], None, False, len(big)), Delivery(TOPIC, b"after", (5, 3), False)]
    for step in (1, 7, 1000, 4096, 9999, len(stream)):
        reader, out, control, held = PacketReader(5, max_packet=10_000), [], [], 0
        for i in range(0, len(stream), step):
            reader.feed(stream[i:i + step], out, control)
            held = max(held, reader.buffered)
        assert out == want and not control and reader.buffered == 0, step
        assert held <= HEAD_BYTES + 100 + step, step


@pytest.mark.parametrize("stream, why", [
    (b"\x32\xff\xff\xff\xff\x01", "remaining length"),
    (b"\x34\x05\x00\x01t\x00\x01", "QoS 2"),
    (b"\x32\x03\x00\x09t", "shorter than its topic"),
    (b"\x32\x06\x00\x02\xff\xfe\x00\x01", "malformed"),
])
def test_parser_refuses_broken_streams(stream, why):
    with pytest.raises(ProtocolError, match=why):
        parse_packets(bytearray(stream), 1, [], [])


def test_packets_are_encoded_by_the_specification():
    assert connect_packet("ing", clean_session=False, keepalive_s=30) == (
        b"\x10\x0f\x00\x04MQTT\x04\x00\x00\x1e\x00\x03ing")
    assert connect_packet("i", clean_session=True, keepalive_s=60, username="u", password="p") == (
        b"\x10\x13\x00\x04MQTT\x04\xc2\x00\x3c\x00\x01i\x00\x01u\x00\x01p")
    assert subscribe_packet(1, [("a/#", 1)]) == b"\x82\x08\x00\x01\x00\x03a/#\x01"
    assert puback_packets([1, 258]) == b"\x40\x02\x00\x01\x40\x02\x01\x02"


# -- against a real Mosquitto -------------------------------------------------------------------
class Collector:
    def __init__(self):
        self.q: queue.Queue[Delivery] = queue.Queue()
        self.subscribed = threading.Event()

    def __call__(self, deliveries):
        for d in deliveries:
            self.q.put(d)

    def take(self, n: int, timeout: float = 10) -> list[Delivery]:
        return [self.q.get(timeout=timeout) for _ in range(n)]


def subscriber(broker, client_id="sub-1", coll=None, topic=TOPIC, url=None, **kw) -> tuple[Subscriber, Collector]:
    coll = coll or Collector()
    sub = Subscriber(BrokerURL.parse(url or broker.url), client_id, [(topic, 1)], coll,
                     on_subscribed=lambda ok: ok and coll.subscribed.set(), reconnect_min_s=0.2, **kw).start()
    assert coll.subscribed.wait(10)
    return sub, coll


def publish(port: int, payloads, topic=TOPIC, qos=1) -> None:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-pub", protocol=mqtt.MQTTv311)
    c.connect("127.0.0.1", port)
    c.loop_start()
    infos = [c.publish(topic, p, qos=qos) for p in payloads]
    for i in infos:
        i.wait_for_publish(10)
    c.disconnect()
    c.loop_stop()


@pytest.mark.mosquitto
def test_unacknowledged_messages_come_again_and_acknowledged_ones_do_not(mosquitto_broker):
    sub, coll = subscriber(mosquitto_broker)
    publish(mosquitto_broker.port, [b"m%d" % i for i in range(10)])
    got = coll.take(10)
    assert [d.payload for d in got] == [b"m%d" % i for i in range(10)]
    sub.ack([d.token for d in got[:6]])             # only the first six were "stored"
    assert wait_for(lambda: sub.stats.acked == 6, 10)
    sub.stop()
    sub, coll = subscriber(mosquitto_broker)         # same client id: the persistent session
    again = coll.take(4)
    assert [d.payload for d in again] == [b"m6", b"m7", b"m8", b"m9"] and all(d.dup for d in again)
    sub.ack([d.token for d in again])
    assert wait_for(lambda: sub.stats.acked == 4, 10)
    sub.stop()
    sub, coll = subscriber(mosquitto_broker)
    publish(mosquitto_broker.port, [b"marker"])
    # the broker sends a session's queued messages before new ones: the marker first means
    # nothing acknowledged came back
    assert [d.payload for d in coll.take(1)] == [b"marker"] and coll.q.empty()
    sub.stop()


@pytest.mark.mosquitto
def test_messages_published_while_away_wait_in_the_session(mosquitto_broker):
    sub, coll = subscriber(mosquitto_broker, "sub-away")
    sub.stop()
    publish(mosquitto_broker.port, [b"while-away-%d" % i for i in range(500)])
    sub, coll = subscriber(mosquitto_broker, "sub-away")
    got: list[Delivery] = []
    while len(got) < 500:                            # the broker sends max_inflight_messages at a time
        more = coll.take(1) + [coll.q.get_nowait() for _ in range(coll.q.qsize())]
        sub.ack([d.token for d in more])
        got += more
    assert sorted(d.payload for d in got) == sorted(b"while-away-%d" % i for i in range(500))
    sub.stop()


@pytest.mark.mosquitto
def test_an_acknowledgement_from_a_broken_connection_is_not_sent_on_the_next(mosquitto_broker):
    """The connection breaks while a message is unacknowledged (the link closed under it, so the
    broker keeps the session in memory and must resend it: MQTT 3.1.1 § 4.4; a broker restart
    also depends on Mosquitto's persistence, which test_service covers)."""
    link = CuttableLink(mosquitto_broker.port)
    try:
        sub, coll = subscriber(mosquitto_broker, "sub-restart", url=link.url)
        assert coll.subscribed.wait(10)
        publish(mosquitto_broker.port, [b"before"])
        first = coll.take(1)[0]
        link.cut()
        link.restore()                                   # both ends closed: the subscriber reconnects by itself
        redelivered = coll.take(1, timeout=20)[0]
        assert redelivered.payload == b"before" and redelivered.token[0] == first.token[0] + 1
        sub.ack([first.token])                           # stale: must not acknowledge anything now
        assert wait_for(lambda: sub.stats.stale_acks == 1, 10) and sub.stats.acked == 0
        sub.ack([redelivered.token])
        assert wait_for(lambda: sub.stats.acked == 1, 10) and sub.stats.connections == 2
        sub.stop()
    finally:
        link.close()


@pytest.mark.mosquitto
def test_keepalive_holds_an_idle_connection(mosquitto_broker):
    sub, coll = subscriber(mosquitto_broker, "sub-idle", keepalive_s=1)
    time.sleep(3.5)                                  # Mosquitto drops a client silent for 1.5 keep-alives
    publish(mosquitto_broker.port, [b"late"])
    assert coll.take(1)[0].payload == b"late"
    assert sub.stats.connections == 1
    sub.stop()


@pytest.mark.mosquitto
def test_a_blocked_consumer_holds_back_the_broker_without_losing_anything(mosquitto_broker):
    gate = threading.Event()
    blocked = threading.Event()
    seen: list[Delivery] = []

    def slow(deliveries):
        blocked.set()
        gate.wait(10)
        seen.extend(deliveries)
    subscribed = threading.Event()
    sub = Subscriber(BrokerURL.parse(mosquitto_broker.url), "sub-slow", [(TOPIC, 1)], slow,
                     on_subscribed=lambda ok: ok and subscribed.set()).start()
    assert subscribed.wait(10)
    publish(mosquitto_broker.port, [b"%d" % i for i in range(300)])
    # all 300 are at the broker (acknowledged to the publisher) and the consumer is blocked
    # with the first of them: the rest must wait, none be lost
    assert blocked.wait(10), "no delivery reached the consumer"
    gate.set()
    deadline, acked = time.monotonic() + 10, 0
    while len(seen) < 300 and time.monotonic() < deadline:
        now = len(seen)
        sub.ack([d.token for d in seen[acked:now]])
        acked = now
        time.sleep(0.1)
    assert sorted(int(d.payload) for d in seen) == list(range(300))
    sub.stop()


@pytest.mark.mosquitto
def test_a_shared_subscription_splits_the_messages_between_members(mosquitto_broker):
    a, ca = subscriber(mosquitto_broker, "member-a", topic=f"$share/g/{TOPIC}")
    b, cb = subscriber(mosquitto_broker, "member-b", coll=None, topic=f"$share/g/{TOPIC}")
    publish(mosquitto_broker.port, [b"%d" % i for i in range(200)])
    # Markers after the 200 until each member has one: the broker sends each member its
    # messages in the order they were published, so a member's marker comes after all of the
    # 200 it was given, once each. Then nothing more of them can be on the way.
    got: dict[Collector, list[Delivery]] = {ca: [], cb: []}

    def take_all() -> None:
        for c, into in got.items():
            while not c.q.empty():
                into.append(c.q.get_nowait())

    def markers(c: Collector) -> int:
        return sum(d.payload.startswith(b"marker") for d in got[c])

    for k in range(20):
        publish(mosquitto_broker.port, [b"marker-%d" % k])
        assert wait_for(lambda: (take_all(), markers(ca) + markers(cb) > k)[1], 10), f"marker {k} did not arrive"
        if markers(ca) and markers(cb):
            break
    assert markers(ca) and markers(cb), "20 markers did not reach both members"
    got_a, got_b = ([d for d in got[c] if not d.payload.startswith(b"marker")] for c in (ca, cb))
    assert got_a and got_b
    assert sorted(int(d.payload) for d in got_a + got_b) == list(range(200))
    for s, c in ((a, ca), (b, cb)):
        s.ack([d.token for d in got[c]])
        s.stop()


@pytest.mark.mosquitto
def test_refusals_are_named(tmp_path, mosquitto_broker):
    passwd = tmp_path / "passwd"
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(passwd), "ingest", "s3cret"], check=True)
    passwd.chmod(0o644)
    mosquitto_broker.stop()
    conf = mosquitto_broker.conf.read_text().replace("allow_anonymous true", f"allow_anonymous false\npassword_file {passwd}")
    mosquitto_broker.conf.write_text(conf)
    mosquitto_broker.start()
    errors: list[str] = []
    wrong = Subscriber(BrokerURL.parse(f"mqtt://ingest:nope@127.0.0.1:{mosquitto_broker.port}"), "sub-auth",
                       [(TOPIC, 1)], lambda d: None, on_disconnected=errors.append, reconnect_min_s=5).start()
    wait_for(lambda: errors, 10)
    wrong.stop()
    assert errors and "refused the connection" in errors[0] and "not authorized" in errors[0]
    coll = Collector()
    right = Subscriber(BrokerURL.parse(f"mqtt://ingest:s3cret@127.0.0.1:{mosquitto_broker.port}"), "sub-auth",
                       [(TOPIC, 1)], coll, on_subscribed=lambda ok: coll.subscribed.set()).start()
    assert coll.subscribed.wait(10)
    right.stop()


def _test_ca(d):
    """A CA and a certificate for localhost it signed (openssl, like a town's own CA)."""
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ms4watch test CA",
        "-keyout", "ca.key", "-out", "ca.crt")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    (d / "san.ext").write_text("subjectAltName=DNS:localhost\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "san.ext", "-out", "server.crt")
    for f in ("ca.crt", "server.crt", "server.key"):
        (d / f).chmod(0o644)                         # mosquitto reads them as its own user
    return d / "ca.crt"


@pytest.mark.mosquitto
def test_tls_connection_verifies_the_broker(tmp_path, mosquitto_broker, monkeypatch):
    certs = tmp_path / "certs"
    certs.mkdir()
    certs.chmod(0o755)
    ca = _test_ca(certs)
    tls_port = free_port()
    mosquitto_broker.stop()
    mosquitto_broker.conf.write_text(mosquitto_broker.conf.read_text() + (
        f"listener {tls_port} 127.0.0.1\ncafile {ca}\ncertfile {certs / 'server.crt'}\nkeyfile {certs / 'server.key'}\n"))
    mosquitto_broker.start()
    wait_port(tls_port)
    errors: list[str] = []
    untrusted = Subscriber(BrokerURL.parse(f"mqtts://localhost:{tls_port}"), "sub-tls", [(TOPIC, 1)],
                           lambda d: None, on_disconnected=errors.append, reconnect_min_s=5).start()
    wait_for(lambda: errors, 10)
    untrusted.stop()
    assert errors and "CERTIFICATE_VERIFY_FAILED" in errors[0]      # our CA is not trusted yet
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))                    # how a town trusts its own CA
    sub, coll = subscriber(mosquitto_broker, "sub-tls", url=f"mqtts://localhost:{tls_port}")
    publish(mosquitto_broker.port, [b"over tls"])
    got = coll.take(1)
    assert got[0].payload == b"over tls"
    sub.ack([got[0].token])
    sub.stop()


@pytest.mark.mosquitto
def test_a_failing_consumer_does_not_stop_the_subscriber(mosquitto_broker):
    calls: list[bytes] = []
    got = Collector()

    def consumer(deliveries):
        calls.extend(d.payload for d in deliveries)
        if len(calls) == 1:
            raise RuntimeError("a bug downstream")
        got(deliveries)
    subscribed = threading.Event()
    sub = Subscriber(BrokerURL.parse(mosquitto_broker.url), "sub-fail", [(TOPIC, 1)], consumer,
                     reconnect_min_s=0.2, on_subscribed=lambda ok: ok and subscribed.set()).start()
    assert subscribed.wait(10)
    publish(mosquitto_broker.port, [b"once"])
    again = got.take(1)[0]                     # not acknowledged, so delivered again after reconnecting
    assert again.payload == b"once" and calls == [b"once", b"once"] and sub.stats.connections == 2
    sub.ack([again.token])
    sub.stop()
