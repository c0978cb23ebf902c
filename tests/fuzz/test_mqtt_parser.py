"""Property-based fuzzing of ingest's MQTT packet parser (``ingest/subscriber.py``): arbitrary
byte streams and mutated valid ones, cut into arbitrary chunks. The parser must never raise
anything but its own :class:`ProtocolError`, never loop for ever (each case has a deadline),
never hand over a delivery that breaks its own invariants, and parse valid streams the same
whatever the chunking."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ms4watch.ingest.subscriber import HEAD_BYTES, Delivery, PacketReader, ProtocolError, parse_packets

EXAMPLES = 3000 if os.environ.get("MS4_SLOW") else 300
SMALL_MAX = 4 * HEAD_BYTES          # a small size limit, so oversized packets are common
FUZZ = settings(max_examples=EXAMPLES, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


def remaining_length(n: int) -> bytes:
    out = bytearray()
    while True:
        n, d = divmod(n, 128)
        out.append(d | (0x80 if n else 0))
        if not n:
            return bytes(out)


def publish(topic: bytes, payload: bytes, qos: int, pid: int, dup: bool, retain: bool) -> bytes:
    body = len(topic).to_bytes(2, "big") + topic + (pid.to_bytes(2, "big") if qos else b"") + payload
    return bytes((0x30 | (0x08 if dup else 0) | (qos << 1) | int(retain),)) + remaining_length(len(body)) + body


topics = st.one_of(st.sampled_from([b"ms4/town/OF-1/LOG-1/readings", b"", b"t"]),
                   st.text(min_size=0, max_size=40).map(str.encode))
payloads = st.one_of(st.binary(max_size=300), st.integers(SMALL_MAX - 10, SMALL_MAX + 3 * HEAD_BYTES).map(
    lambda n: b"p" * n))
publishes = st.builds(publish, topics, payloads, st.integers(0, 1), st.integers(1, 65535), st.booleans(),
                      st.booleans())
controls = st.sampled_from([b"\xd0\x00", b"\x90\x03\x00\x01\x01", b"\x90\x03\x00\x01\x80", b"\xb0\x02\x00\x01",
                            b"\x40\x02\x00\x07"])
streams = st.lists(st.one_of(publishes, controls), min_size=1, max_size=8).map(b"".join)


@st.composite
def mutated(draw) -> bytes:
    """A valid stream with a few bytes flipped, cut out, inserted or the end dropped."""
    data = bytearray(draw(streams))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "truncate", "length"]))
        i = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[i] = draw(st.integers(0, 255))
        elif op == "cut" and data:
            del data[i:i + draw(st.integers(1, 8))]
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "truncate":
            del data[i:]
        elif op == "length" and len(data) > i + 1:      # a 16-bit length (of a topic, say) made huge
            data[i:i + 2] = b"\xff\xff"
    return bytes(data)


chunkings = st.lists(st.integers(1, 5000), min_size=1, max_size=20)


def feed(stream: bytes, sizes: list[int], max_packet: int = SMALL_MAX) -> tuple[list[Delivery], list, PacketReader]:
    """Feed ``stream`` in chunks of ``sizes`` (cycled); the parser's own error ends it."""
    reader, out, control = PacketReader(1, max_packet=max_packet), [], []
    # never more than one packet: a whole one up to max_packet, or an oversized one's topic
    # (up to 65,535 bytes), packet id and first HEAD_BYTES; plus the chunk just read
    # (the bound and the loop's invariants computed once: chunks of one byte are common)
    one_packet = max(max_packet, 2 + 65535 + 2 + HEAD_BYTES) + 5
    end, cycle, chunk = len(stream), len(sizes), reader.feed
    i, k = 0, 0
    while i < end:
        n = sizes[k % cycle]
        chunk(stream[i:i + n], out, control)
        i, k = i + n, k + 1
        assert reader.buffered <= one_packet + n
    return out, control, reader


def check(d: Delivery) -> None:
    assert isinstance(d.topic, str) and isinstance(d.payload, bytes)
    assert d.oversize >= 0
    if d.oversize:
        assert len(d.payload) <= HEAD_BYTES and d.oversize > SMALL_MAX - 65540
    assert d.token is None or (d.token[0] == 1 and 0 <= d.token[1] <= 65535)


@FUZZ
@given(st.binary(max_size=2000), chunkings)
def test_arbitrary_bytes_raise_only_protocol_errors(data, sizes):
    try:
        out, _, _ = feed(data, sizes)
    except ProtocolError:
        return
    for d in out:
        check(d)


OVERSIZED_TOPIC_PAST_ITS_END = (b"\x32" + remaining_length(SMALL_MAX + 100) + b"\xff\xff"
                                + b"p" * (SMALL_MAX + 98) + b"q" * 70000)
"""Found by this fuzzing: an oversized PUBLISH whose topic length runs past its own end was
handed over with the next bytes as its topic and a negative size."""


@FUZZ
@given(mutated(), chunkings)
@example(OVERSIZED_TOPIC_PAST_ITS_END, [len(OVERSIZED_TOPIC_PAST_ITS_END)])
@example(OVERSIZED_TOPIC_PAST_ITS_END, [7, 4096])
def test_mutated_valid_streams_raise_only_protocol_errors(data, sizes):
    try:
        out, _, _ = feed(data, sizes)
    except ProtocolError:
        return
    for d in out:
        check(d)


@FUZZ
@given(streams, chunkings)
def test_valid_streams_parse_alike_whatever_the_chunking(data, sizes):
    whole, whole_control, r1 = feed(data, [len(data)])
    chunked, chunked_control, r2 = feed(data, sizes)
    assert chunked == whole and chunked_control == whole_control
    assert r1.buffered == r2.buffered == 0
    for d in whole:
        check(d)


@FUZZ
@given(st.binary(max_size=600))
def test_parse_packets_alone_never_raises_anything_else(data):
    try:
        used = parse_packets(bytearray(data), 1, [], [], SMALL_MAX)
    except ProtocolError:
        return
    assert used >= 0
