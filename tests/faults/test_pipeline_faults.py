"""The pipeline under faults (issue 14), each case with real Mosquitto, ``ms4watch serve`` as
its own process, its store and a real SMTP server (``tests/support/faults.py``), and each
ending with the same counts: every reading a logger took is stored once, the alert is
raised once, its notification delivered once.

The cases whose fault leaves the server running (the broker restarted, the edge agent killed,
the link cut, the flood) share one ``serve``, a coalition's, each case a town of its own with
its own loggers, store, incidents and SMO (``SharedServer``): a start is ~2 s of CPU. The cases
that kill the server or need another store start their own.

Sizes are small by default; ``MS4_SLOW=1`` (``make soak``) runs them at full size.
"""

from __future__ import annotations

import pytest

from tests.support.faults import SLOW, FaultRig, SharedServer, Stream, rig
from tests.support.servers import have
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults, pytest.mark.slow]   # slow: make soak runs them full size
BACKGROUND_H = 30 if SLOW else 4          # hours of 1-min flow readings behind the alert


TOWNS = {   # the cases that leave the server running: each a town of the shared server
    "test_broker_restarted_mid_stream": "brokertown",
    "test_edge_agent_killed_9_in_a_loop": "edgetown",
    "test_edge_broker_link_cut_longer_than_the_keepalive": "linktown",
    "test_one_device_flooding_at_100_times_its_rate_leaves_the_others_unaffected": "floodtown",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed")
    s = SharedServer(tmp_path_factory.mktemp("shared-serve"), tuple(TOWNS.values()))
    yield s
    s.close()


@pytest.fixture
def town(request, server, tmp_path):
    """This case's town on the module's server."""
    r = server.town(TOWNS[request.node.originalname], tmp_path)
    yield r
    r.close()


@pytest.fixture
def own_town(tmp_path):
    """A rig and server of this case's own (a case that kills the server)."""
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed")
    r = rig(tmp_path)
    yield r
    r.close()


STREAM_N = 500 if SLOW else 60         # readings the stream takes on either side of a fault (100 a second)


def stream(town: FaultRig) -> Stream:
    """OF-2's logger sends a reading every 10 ms throughout, so every fault strikes mid-stream."""
    return Stream(town.logger("LOG-OF2", "OF-2")).start()


def test_broker_restarted_mid_stream(town: FaultRig):
    s = stream(town)
    rg, of = town.logger("LOG-RG1", "RG-1"), town.logger("LOG-OF1", "OF-1")
    town.illicit_discharge(rg, of, background_h=BACKGROUND_H)
    assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > 0, 30)
    s.more(STREAM_N)
    town.broker.stop()                                   # messages queued, in flight, unacknowledged
    town.broker.start()
    s.more(STREAM_N)
    s.stop()
    town.assert_all_accounted_for()


def test_ingest_killed_9_mid_batch(own_town: FaultRig):
    town = own_town
    town.serve()
    s = stream(town)
    rg, of = town.logger("LOG-RG1", "RG-1"), town.logger("LOG-OF1", "OF-1")
    town.illicit_discharge(rg, of, background_h=BACKGROUND_H)
    assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > 0, 30)
    s.more(STREAM_N)
    town.kill_serve()                                    # ingest, the engine and delivery die together
    s.more(STREAM_N)                                     # the loggers go on; the broker keeps it for ingest
    town.serve()
    s.more(STREAM_N)
    s.stop()
    town.assert_all_accounted_for()


STORE_DOWN = 60 if SLOW else 3           # seconds InfluxDB is down (issue 14: 60 s; shorter by default)


def test_store_down(tmp_path):
    if not (have("mosquitto") and have("influxd")):
        pytest.skip("mosquitto and influxd are needed")
    town = rig(tmp_path, influx=True)
    try:
        town.influx.query("CREATE DATABASE ms4")
        town.serve()
        s = stream(town)
        rg, of = town.logger("LOG-RG1", "RG-1"), town.logger("LOG-OF1", "OF-1")
        assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > 0, 30), town.tail()
        town.influx.stop()
        town.illicit_discharge(rg, of, background_h=BACKGROUND_H)   # all of it while the store is down
        s.lasting(STORE_DOWN)
        town.influx.start()
        s.more(STREAM_N)
        s.stop()
        town.assert_all_accounted_for(timeout_s=120)
        assert "store unavailable" in town.tail(200_000) or (town.data / "store-spool.db").exists()
    finally:
        town.close()


def test_edge_agent_killed_9_in_a_loop(town: FaultRig):
    """The real agent (``ms4watch edge``, a reading a second) killed -9 again and again as
    soon as it has published something; what its spool took is stored once."""
    edge = town.edge_process("LOG-OF2", "OF-2", interval="1s").start()
    try:
        # its station reports before the others' three-day backlog arrives (else, judged from the
        # backlog's first reading, OF-2 would rightly be a station that never reported)
        assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > 0, 30), edge.log.read_text()[-2000:]
        rg, of = town.logger("LOG-RG1", "RG-1"), town.logger("LOG-OF1", "OF-1")
        town.illicit_discharge(rg, of, background_h=BACKGROUND_H)
        for _ in range(12 if SLOW else 4):
            before = town.stored()[0].get("LOG-OF2", 0)
            assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > before, 30), edge.log.read_text()[-2000:]
            edge.kill()
            edge.start()
        assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > before, 30)
    finally:
        edge.stop()
    town.assert_all_accounted_for()


KEEPALIVE_S = 1     # the loggers' MQTT keep-alive behind the cuttable link [s] (it was 2: each second is waited out twice)


def test_edge_broker_link_cut_longer_than_the_keepalive(town: FaultRig):
    """The loggers reach the broker through a link that goes dark (no FIN, no RST) for longer
    than their keep-alive (1 s here), then comes back. The loggers stop before the link closes
    (else each waits out its offline status and paho's reconnect: ~3 s of teardown)."""
    from tests.support.proxy import CuttableLink

    link = CuttableLink(town.broker.port)
    try:
        s = Stream(town.logger("LOG-OF2", "OF-2", url=link.url, keepalive_s=KEEPALIVE_S)).start()
        rg = town.logger("LOG-RG1", "RG-1", url=link.url, keepalive_s=KEEPALIVE_S)
        of = town.logger("LOG-OF1", "OF-1", url=link.url, keepalive_s=KEEPALIVE_S)
        assert wait_for(lambda: town.stored()[0].get("LOG-OF2", 0) > 0, 30)
        link.cut()
        town.illicit_discharge(rg, of, background_h=BACKGROUND_H)   # taken while the link is dark
        # dark until every logger's keep-alive has run out (paho: 1 to 2 keep-alives) and longer
        assert wait_for(lambda: not any(lg.uplink.connected for lg in town.loggers), 60)
        s.lasting(60 if SLOW else KEEPALIVE_S)
        link.restore()
        s.more(STREAM_N)
        s.stop()
        town.assert_all_accounted_for()
    finally:
        town.close()         # its loggers stop before the link closes
        link.close()


def test_one_device_flooding_at_100_times_its_rate_leaves_the_others_unaffected(town: FaultRig):
    steady = Stream(town.logger("LOG-OF1", "OF-1"), every_s=0.05).start()           # 20 readings a second
    flood = Stream(town.logger("LOG-OF2", "OF-2"), every_s=0.05, burst=100).start()  # 2,000 a second
    rg = town.logger("LOG-RG1", "RG-1")
    of = town.loggers[0]
    town.illicit_discharge(rg, of, background_h=BACKGROUND_H)
    steady.more(STREAM_N)
    steady.stop()
    # the steady logger's readings are all in the store while the flood still goes on
    assert wait_for(lambda: town.stored()[0].get("LOG-OF1", 0) == of.taken, 60), town.counts()
    assert flood.running
    flood.more(10_000 if SLOW else 2_000)
    flood.stop()
    town.assert_all_accounted_for(timeout_s=120)
