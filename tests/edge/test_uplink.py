"""The uplink's readiness for commands: ``listening`` only once the broker confirmed the
config/cmd subscription (the session is clean, so a command sent before that is lost)."""

from __future__ import annotations

import paho.mqtt.client as mqtt

from ms4watch.contract.ids import Channel, Topic
from ms4watch.edge.spool import Spool
from ms4watch.edge.uplink import Uplink
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client


def _uplink(tmp_path, url: str, device: str, on_control=None) -> Uplink:
    spool = Spool(tmp_path / f"{device}.spool.db", device)
    return Uplink(spool, lambda ch: Topic("town", "OF-1", device, ch), url, client_id=f"test-{device}",
                  status_payload=lambda state: b'{"state": "%s"}' % state.encode(), on_control=on_control)


def test_listening_once_subscribed_and_a_command_sent_then_arrives(tmp_path, mosquitto_broker):
    got: list[tuple[Channel, bytes]] = []
    with_control = _uplink(tmp_path, mosquitto_broker.url, "LOG-C", on_control=lambda ch, b: got.append((ch, b)))
    without = _uplink(tmp_path, mosquitto_broker.url, "LOG-N")
    assert not with_control.listening       # not even connected yet
    with_control.start()
    without.start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-cmd-pub")
    pub.connect("127.0.0.1", mosquitto_broker.port)
    pub.loop_start()
    try:
        assert wait_for(lambda: with_control.listening, 10), "no SUBACK for config/cmd in 10 s"
        # a command sent as soon as it listens is not lost
        pub.publish(str(Topic("town", "OF-1", "LOG-C", Channel.CMD)), b'{"id": "1", "command": "status"}',
                    qos=1).wait_for_publish(5)
        assert wait_for(lambda: got, 10), "the command sent once listening never arrived"
        assert got[0][0] is Channel.CMD
        # connected, but with nothing to hear it subscribes to nothing: never listening
        assert wait_for(lambda: without.connected, 10)
        assert not without.listening
    finally:
        stop_client(pub)
        with_control.stop(drain_timeout_s=0)
        without.stop(drain_timeout_s=0)
    assert not with_control.listening       # stopped: disconnected


def test_a_clean_stop_first_drains_the_spool(tmp_path, mosquitto_broker):
    """What a logger took before a maintenance shutdown leaves before it goes quiet: a backlog
    that needs about a second at the drain rate is gone from the spool when ``stop`` returns."""
    from ms4watch.edge.drivers.base import RawReading
    up = _uplink(tmp_path, mosquitto_broker.url, "LOG-D")
    up.drain_rate = 5000.0
    up.start()
    try:
        assert wait_for(lambda: up.connected, 10)
        t0 = 1_780_000_000_000_000_000
        up.spool.append([RawReading(t0 + i * 60_000_000_000, "rain", "rain", 0.01, "in", ()) for i in range(6000)])
        up.wake()
    finally:
        up.stop(drain_timeout_s=30)
    assert up.spool.depth() == 0, f"{up.spool.depth()} readings left in the spool by a clean stop"
    assert up.published_readings == 6000


def test_stop_is_bounded_when_pahos_thread_is_stuck_in_a_callback(tmp_path, mosquitto_broker):
    """``stop`` joined paho's network thread without a timeout (``loop_stop``): a control
    handler that never returns (a driver hung on its serial port) made the logger's stop,
    and the demo's, wait for ever."""
    import threading
    release = threading.Event()
    entered = threading.Event()

    def stuck(ch, body):
        entered.set()
        release.wait(60)

    up = _uplink(tmp_path, mosquitto_broker.url, "LOG-S", on_control=stuck)
    up.start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-cmd-pub-s")
    pub.connect("127.0.0.1", mosquitto_broker.port)
    pub.loop_start()
    stopper = None
    try:
        assert wait_for(lambda: up.listening, 10)
        pub.publish(str(Topic("town", "OF-1", "LOG-S", Channel.CMD)), b'{"id": "1", "command": "status"}',
                    qos=1).wait_for_publish(5)
        assert entered.wait(10), "the command never reached the handler"
        # bounds of a second (5 s and 2 s by default): what is checked is that stop has one
        stopper = threading.Thread(target=up.stop, kwargs={"drain_timeout_s": 0, "network_timeout_s": 0.5},
                                   daemon=True)
        stopper.start()
        stopper.join(20)
        assert not stopper.is_alive(), "stop waited for paho's stuck thread"
    finally:
        release.set()
        stop_client(pub)
        if stopper is not None:
            stopper.join(10)


def test_a_stop_asked_while_the_sender_looks_for_work_is_not_missed(tmp_path, mosquitto_broker):
    """The sender looks for work outside its lock, then waits up to ``IDLE_POLL_S`` for more. A
    stop asked in between (what ``stop`` does right after its drain) notified no one: the
    sender slept the full poll, and each logger of the demo took 2 s to stop."""
    import threading
    import time

    from ms4watch.edge import uplink as uplink_module

    up = _uplink(tmp_path, mosquitto_broker.url, "LOG-W")
    up.start()
    looking, proceed = threading.Event(), threading.Event()
    try:
        assert wait_for(lambda: up.connected, 10)
        assert wait_for(lambda: up.drained(), 10)
        original = up._next_work

        def slow_look(room: int):
            looking.set()
            proceed.wait(10)        # the stop below is asked while the sender looks
            return original(room)

        up._next_work = slow_look   # type: ignore[method-assign]
        up.wake()
        assert looking.wait(10), "the sender never looked for work"
        stopper = threading.Thread(target=up.stop, kwargs={"drain_timeout_s": 0, "publish_offline": False},
                                   daemon=True)
        started = time.monotonic()
        stopper.start()
        assert wait_for(lambda: not up._running, 10)
        proceed.set()
        stopper.join(10)
        took = time.monotonic() - started
    finally:
        proceed.set()
    assert not stopper.is_alive()
    assert took < uplink_module.IDLE_POLL_S / 2, f"stop took {took:.2f} s: the sender slept through it"
