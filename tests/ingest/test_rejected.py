"""Hostile and broken input, through a real Mosquitto into ingest: each message is set aside
with its reason, the other devices' messages are stored, and ``ms4watch rejected`` (and
:func:`read_rejected`, which the workbench calls) finds them by device, reason and time."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ms4watch.contract.devices import Device, DeviceDirectory
from ms4watch.contract.wire import encode_readings
from ms4watch.ingest.identity import Identity
from ms4watch.ingest.rejected import Reason, find_rejected, read_rejected
from ms4watch.ingest.service import IngestService
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.cli import run_cli
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

from .test_service import T0, publish_all, publisher

MIN = 60_000_000_000
T1 = "ms4/town/OF-1/LOG-1/readings"
T2 = "ms4/town/OF-2/LOG-2/readings"
IDENTITY = Identity({"OF-1", "OF-2"}, DeviceDirectory("town", {
    "LOG-1": Device("LOG-1", "OF-1", frozenset({"OF-1"}), None),
    "LOG-2": Device("LOG-2", "OF-2", frozenset({"OF-2"}), None)}))


def good(device, seq, value=1.0):
    return encode_readings(device, seq, [(T0 + seq * MIN, "flow", "flow", value, "gpm", [], None)])


def raw(seq, time="2026-06-01T00:00:00Z", value="1.0", schema="ms4watch.readings/1", station=""):
    st = f',"station":"{station}"' if station else ""
    return (f'{{"schema":"{schema}","device":"LOG-1","seq":{seq},"readings":[{{"time":"{time}","sensor":"flow",'
            f'"quantity":"flow","value":{value},"unit":"gpm"{st}}}]}}').encode()


HOSTILE = [  # (topic, payload, the field its reason names)
    (T1, b"x" * 9000, "payload"),                                  # over the 8,000 bytes taken here
    (T1, b'{"schema": "ms4watch.readings/1", "device": ', "payload"),  # not JSON
    (T1, raw(20, schema="ms4watch.readings/9"), "schema"),
    (T1, raw(21, value="NaN"), "readings[0].value"),
    (T1, raw(22, value="1e999"), "readings[0].value"),             # infinity
    (T1, raw(23, time="2199-01-01T00:00:00Z"), "readings[0].time"),
    (T1, raw(24, time="1970-01-01T00:00:00Z"), "readings[0].time"),
    ("ms4/town/OF-1/LOG-7/readings", good("LOG-7", 1), "device"),  # a device the town never listed
    (T1, raw(25, station="OF-9"), "readings[0].station"),         # a station the registry does not know
    (T1, good("LOG-1", 1, value=2.0), None),                       # seq 1 again, other content: a conflict
]


@pytest.mark.mosquitto
def test_hostile_input_is_set_aside_with_its_reason_and_never_blocks_the_others(tmp_path, mosquitto_broker):
    svc = IngestService(mosquitto_broker.url, "town", SqliteStore(tmp_path / "store.db"), client_id="ingest-hostile",
                        identity=IDENTITY, rejected_path=tmp_path / "rejected.jsonl", max_message_bytes=8000).start()
    assert svc.connected.wait(10)
    pub = publisher(mosquitto_broker.port)
    publish_all(pub, [good("LOG-1", 1)], topic=T1)
    for k, (topic, payload, _) in enumerate(HOSTILE):
        publish_all(pub, [payload], topic=topic)
        publish_all(pub, [good("LOG-2", k + 1)], topic=T2)      # the other logger carries on throughout
    publish_all(pub, [good("LOG-1", 1)], topic=T1)               # a redelivery: a duplicate, not an error
    publish_all(pub, [good("LOG-1", 2)], topic=T1)
    assert wait_for(lambda: svc.stats.stored_readings == 2 + len(HOSTILE) and svc.stats.duplicate_messages == 1
                    and svc.stats.rejected_messages + svc.stats.conflicting_messages == len(HOSTILE), 20), svc.stats
    svc.stop()
    stop_client(pub)

    got = read_rejected(tmp_path, limit=None)
    assert got.matched == len(HOSTILE) and got.unreadable == 0
    oldest_first = list(reversed(got.records))
    for r, (topic, _, field) in zip(oldest_first, HOSTILE):
        if field is None:
            assert r.kind == Reason.CONFLICT and r.device == "LOG-1" and r.seq == 1
        else:
            assert r.error.startswith(f"{topic}: {field}: "), r.error
    assert oldest_first[0].kind == Reason.OVERSIZE and oldest_first[0].size == 9000
    assert [r.kind for r in read_rejected(tmp_path, reason="oversize").records] == ["oversize"]
    assert [r.device for r in read_rejected(tmp_path, device="LOG-7").records] == ["LOG-7"]
    assert len(read_rejected(tmp_path, reason="readings[0].time").records) == 2
    assert read_rejected(tmp_path, since=datetime.now(timezone.utc) + timedelta(minutes=1)).matched == 0
    assert len(read_rejected(tmp_path, limit=3).records) == 3

    res = run_cli("rejected", "list", "--data-dir", str(tmp_path), "--device", "LOG-7")
    assert res.returncode == 0, res.output
    [line] = [x for x in res.stdout.splitlines() if "LOG-7" in x]
    rid = line.split()[0]
    assert "contract" in line and "is not one of the town's loggers" in line
    res = run_cli("rejected", "show", rid, "--data-dir", str(tmp_path))
    assert res.returncode == 0 and '"device":"LOG-7"' in res.stdout and f"id: {rid}" in res.stdout
    res = run_cli("rejected", "list", "--data-dir", str(tmp_path), "--json", "--reason", "schema")
    [rec] = [json.loads(x) for x in res.stdout.splitlines()]
    assert rec["error"].endswith("ms4watch.readings/1") or "schema" in rec["error"]
    res = run_cli("rejected", "show", "j999", "--data-dir", str(tmp_path))
    assert res.returncode == 2 and "j999: no such record" in res.output
    res = run_cli("rejected", "list", "--data-dir", str(tmp_path), "--since", "yesterday")
    assert res.returncode == 2 and "--since" in res.output


def test_records_from_the_spool_and_broken_lines(tmp_path):
    from ms4watch.contract.wire import CanonicalReading
    from ms4watch.ingest.stores.base import StoredMessage
    from ms4watch.ingest.stores.spooling import encode_batch
    import sqlite3
    (tmp_path / "rejected.jsonl").write_text('{"received": 1780000000.0, "topic": "ms4/t/OF-1/LOG-1/readings", '
                                             '"error": "ms4/t/OF-1/LOG-1/readings: payload: not JSON"}\n{"recei\n')
    db = sqlite3.connect(tmp_path / "store-spool.db")
    db.execute("CREATE TABLE rejected (id INTEGER PRIMARY KEY, rejected_ns INTEGER, reason TEXT, batch BLOB)")
    m = StoredMessage("LOG-2", 5, (CanonicalReading(T0, "OF-2", "LOG-2", "flow", "flow", 1.0, "gpm", "", 5),), 3, 0)
    db.execute("INSERT INTO rejected VALUES (1, ?, 'field type conflict', ?)", (1_790_000_000 * 10**9, encode_batch([m])))
    db.commit()
    db.close()
    got = read_rejected(tmp_path)
    assert got.unreadable == 1 and [r.id for r in got.records] == ["s1", "j1"]
    s = find_rejected(tmp_path, "s1")
    assert (s.kind, s.device, s.station, s.epoch, s.seq, s.readings) == ("store", "LOG-2", "OF-2", 3, 5, 1)
    assert s.error == "store refused: field type conflict"
    assert find_rejected(tmp_path, "j1").device == "LOG-1"
