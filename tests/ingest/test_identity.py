"""Ingest takes a message only from a device the town listed, under its own station, with
readings for stations it serves; a status only from the device its topic names. Everything
else is set aside with the reason and acknowledged, and the other devices' messages go on."""

from __future__ import annotations

import json

import pytest

from ms4watch.contract.devices import Device, DeviceDirectory
from ms4watch.contract.errors import ContractError
from ms4watch.contract.ids import Topic
from ms4watch.contract.wire import encode_readings, status_payload
from ms4watch.ingest.identity import Identity
from ms4watch.ingest.service import IngestService
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

from .test_service import T0, publish_all, publisher

DEVICES = DeviceDirectory("town", {
    "LOG-1": Device("LOG-1", "OF-1", frozenset({"OF-1", "RG-1"}), None),   # a flow meter with a rain gauge
    "LOG-2": Device("LOG-2", "OF-2", frozenset({"OF-2"}), None),
})
IDENTITY = Identity({"OF-1", "OF-2", "RG-1"}, DEVICES)


def msg(device="LOG-1", seq=1, stations=("OF-1",)):
    return encode_readings(device, seq, [(T0 + i * 60_000_000_000, "s", "flow", 1.0, "gpm", [], st)
                                         for i, st in enumerate(stations)])


def readings(topic, payload):
    from ms4watch.contract.wire import decode_canonical
    t = Topic.parse(topic)
    device, _, rs, _ = decode_canonical(topic, t.station, payload)
    return t, device, rs


@pytest.mark.parametrize("topic, payload, error", [
    ("ms4/town/OF-1/LOG-1/readings", msg(stations=("OF-1", "RG-1")), None),
    ("ms4/town/OF-1/LOG-1/readings", msg(stations=(None, "OF-2")),
     "ms4/town/OF-1/LOG-1/readings: readings[1].station: LOG-1 does not serve station 'OF-2' (it serves OF-1, RG-1)"),
    ("ms4/town/OF-1/LOG-1/readings", msg(stations=("OF-1", "OF-9")),
     "ms4/town/OF-1/LOG-1/readings: readings[1].station: unknown station 'OF-9': not in the registry"),
    ("ms4/town/OF-2/LOG-1/readings", msg(stations=("OF-1",)),
     "ms4/town/OF-2/LOG-1/readings: topic: LOG-1 publishes under its own station OF-1, not OF-2"),
    ("ms4/town/OF-1/LOG-7/readings", msg("LOG-7"),
     "ms4/town/OF-1/LOG-7/readings: device: 'LOG-7' is not one of the town's loggers (firmware_configs)"),
])
def test_the_check(topic, payload, error):
    t, d, rs = readings(topic, payload)
    if error is None:
        IDENTITY.check_readings(topic, t, d, rs)
        return
    with pytest.raises(ContractError) as e:
        IDENTITY.check_readings(topic, t, d, rs)
    assert str(e.value) == error


def test_without_the_list_of_loggers_only_the_registry_stations_are_checked():
    only = Identity({"OF-1"}, None)
    t, d, rs = readings("ms4/town/OF-1/LOG-7/readings", msg("LOG-7"))
    only.check_readings("ms4/town/OF-1/LOG-7/readings", t, d, rs)
    t, d, rs = readings("ms4/town/OF-1/LOG-7/readings", msg("LOG-7", stations=("OF-2",)))
    with pytest.raises(ContractError, match="unknown station 'OF-2'"):
        only.check_readings("ms4/town/OF-1/LOG-7/readings", t, d, rs)


@pytest.mark.mosquitto
def test_ingest_sets_aside_what_a_device_may_not_send_and_stores_the_rest(tmp_path, mosquitto_broker):
    sink = SqliteStore(tmp_path / "store.db")
    svc = IngestService(mosquitto_broker.url, "town", sink, client_id="ingest-identity", identity=IDENTITY,
                        rejected_path=tmp_path / "rejected.jsonl").start()
    assert svc.connected.wait(10)
    pub = publisher(mosquitto_broker.port)
    publish_all(pub, [msg(seq=1), msg(seq=2, stations=("OF-2",)), msg(seq=3, stations=("RG-1",))])
    publish_all(pub, [msg("LOG-7")], topic="ms4/town/OF-1/LOG-7/readings")
    publish_all(pub, [msg("LOG-2", stations=("OF-2",))], topic="ms4/town/OF-2/LOG-2/readings")
    publish_all(pub, [status_payload("LOG-2", "online")], topic="ms4/town/OF-1/LOG-1/status")
    assert wait_for(lambda: svc.stats.messages + svc.stats.rejected_messages >= 6)
    svc.stop()
    stop_client(pub)
    assert svc.stats.stored_readings == 3
    rejected = [json.loads(line)["error"] for line in (tmp_path / "rejected.jsonl").read_text().splitlines()]
    assert [r.split(": ")[1] for r in rejected] == ["readings[0].station", "device", "device"]
    assert rejected[2] == "ms4/town/OF-1/LOG-1/status: device: payload device 'LOG-2' does not match the topic's 'LOG-1'"
