"""The embedded broker (amqtt) keeps serving when clients connect while others subscribe.

amqtt 0.12.1 walks its subscription table across an await, both when a client connects (to
send it retained messages) and when it broadcasts; a SUBSCRIBE from another client in that
window ended the connecting client's session with "dictionary changed size during iteration"
(seen in the demo: a simulated logger lost the broker at start-up, and a traceback printed).
"""

from __future__ import annotations

import logging
import threading

import paho.mqtt.client as mqtt

from ms4watch.broker import EmbeddedBroker
from tests.support.servers import free_port


def _client(port: int, cid: str) -> mqtt.Client:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=cid, clean_session=False)
    c.username_pw_set("u")
    c.connect("127.0.0.1", port)
    c.loop_start()
    return c


def test_clients_connect_while_others_subscribe_without_a_session_failing(caplog):
    caplog.set_level(logging.ERROR)
    port = free_port()
    broker = EmbeddedBroker(port=port).start()
    clients: list[mqtt.Client] = []
    stop = threading.Event()
    try:
        pub = _client(port, "pub")
        clients.append(pub)
        for i in range(10):      # retained messages make a connecting client's walk wait on PUBACKs
            pub.publish(f"ret/{i}", b"x", qos=1, retain=True).wait_for_publish(10)

        def subscriber(i: int) -> None:
            c = _client(port, f"s{i}")
            clients.append(c)
            c.subscribe(f"ret/{i}", qos=1)
            j = 0
            while not stop.is_set() and j < 2000:      # a new filter each time: the table grows
                c.subscribe(f"z/{i}/{j}", qos=1)
                j += 1
                stop.wait(0.001)

        def connecter(i: int) -> None:
            for k in range(8):
                c = _client(port, f"c{i}-{k}")
                stop.wait(0.05)
                c.disconnect()
                c.loop_stop()

        subs = [threading.Thread(target=subscriber, args=(i,)) for i in range(10)]
        cons = [threading.Thread(target=connecter, args=(i,)) for i in range(6)]
        for t in subs + cons:
            t.start()
        for t in cons:
            t.join(120)
        stop.set()
        for t in subs:
            t.join(60)
    finally:
        stop.set()
        for c in clients:
            c.disconnect()
            c.loop_stop()
        broker.stop()
    failures = [r for r in caplog.records if "changed size during iteration" in (r.getMessage() + str(r.exc_info))]
    assert not failures, failures[0].getMessage() + str(failures[0].exc_info)
    assert broker.client_errors == []
