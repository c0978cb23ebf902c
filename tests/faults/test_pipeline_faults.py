"""The pipeline under faults (issue 14), each case with real Mosquitto, ``ms4watch serve`` as
its own process, its store and a real SMTP server (``tests/support/faults.py``), and each
ending with the same counts: every reading a logger took is stored once, the alert is
raised once, its notification delivered once.

Sizes are small by default; ``MS4_SLOW=1`` (``make soak``) runs them at full size.
"""

from __future__ import annotations

import pytest

from tests.support.faults import SLOW, FaultRig, Stream, rig
from tests.support.servers import have
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.mosquitto, pytest.mark.faults]
BACKGROUND_H = 30 if SLOW else 6          # hours of 1-min flow readings behind the alert


@pytest.fixture
def town(tmp_path):
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed")
    r = rig(tmp_path)
    yield r
    r.close()


STREAM_N = 500 if SLOW else 100         # readings the stream takes on either side of a fault (50 a second)


def stream(town: FaultRig) -> Stream:
    """OF-2's logger sends a reading every 20 ms throughout, so every fault strikes mid-stream."""
    return Stream(town.logger("LOG-OF2", "OF-2")).start()


def test_broker_restarted_mid_stream(town: FaultRig):
    town.serve()
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


def test_ingest_killed_9_mid_batch(town: FaultRig):
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
