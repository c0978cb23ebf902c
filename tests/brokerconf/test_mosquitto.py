"""The configuration ``ms4watch broker-config`` writes, in a real Mosquitto: a logger
publishes only as itself and reads only its own commands, a client the town has not listed
(or no longer lists) cannot connect, and ingest's subscriber and the loggers' paho client
both verify the broker and present their certificates."""

from __future__ import annotations

import queue
import shutil
import threading

import paho.mqtt.client as mqtt
import pytest

from ms4watch.brokerconf import Auth, generate
from ms4watch.contract.devices import load_devices
from ms4watch.contract.mqtt import BrokerURL, TlsFiles, make_client, tls_context
from ms4watch.contract.registry import load_registry
from ms4watch.ingest.subscriber import Subscriber
from tests.support.servers import Mosquitto, free_port, have, wait_port
from tests.support.waiting import wait_for

from .support import town

pytestmark = pytest.mark.mosquitto


@pytest.fixture
def broker(tmp_path):
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    m = Mosquitto(tmp_path / "mosquitto")
    yield m
    m.stop()


def configure(tmp_path, broker, loggers=None, auth=Auth.BOTH):
    """Run broker-config for the town (again) and give the broker its mosquitto.conf."""
    reg, folder = town(tmp_path / "town", loggers)
    out = broker.workdir / "etc"
    port = broker.port if (out / "mosquitto.conf").exists() else free_port()
    generate(load_devices(load_registry(reg), folder), out, auth=auth, port=port, bind="127.0.0.1",
             hosts=["localhost", "127.0.0.1"])
    broker.configure_text((out / "mosquitto.conf").read_text(), port)
    return out


def restart(broker) -> None:
    broker.stop()
    broker.start()
    wait_port(broker.port)


def creds(out, name, *, cert=True, password=True):
    d = out / "clients" / name
    tls = tls_context(TlsFiles(d / "ca.crt", d / "client.crt" if cert else None, d / "client.key" if cert else None))
    return tls, (d / "password").read_text() if password else None


def url(broker) -> str:
    return f"mqtts://localhost:{broker.port}"


class Device:
    """A logger's own MQTT client (paho, as in edge/uplink.py), connected over TLS."""

    def __init__(self, out, broker, name, *, as_user=None, cert=True, password=True):
        tls, pw = creds(out, name, cert=cert, password=password)
        if as_user and password and (out / "clients" / as_user).is_dir():
            pw = (out / "clients" / as_user / "password").read_text()      # its password too
        self.connected = threading.Event()
        self.dropped = threading.Event()
        self.result: list[str] = []
        self.got: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.c = make_client(f"dev-{name}", BrokerURL.parse(url(broker)), clean_session=True,
                             username=as_user or name, password=pw, tls=tls)
        self.c.on_connect = lambda c, u, f, rc, p: (self.result.append(str(rc)),
                                                     not rc.is_failure and self.connected.set())
        self.c.on_message = lambda c, u, m: self.got.put(m)
        self.c.on_disconnect = lambda *a: self.dropped.set()
        self.c.connect_async("localhost", broker.port, keepalive=10)
        self.c.loop_start()

    def publish(self, topic: str, payload: bytes) -> None:
        self.c.publish(topic, payload, qos=1).wait_for_publish(10)

    def forge(self, topic: str, payload: bytes) -> None:
        """Publish where it may not: Mosquitto 2.0 drops the message and the connection."""
        self.c.reconnect_delay_set(60, 60)
        self.c.publish(topic, payload, qos=1)
        assert self.dropped.wait(10)
        self.close()

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


def ingest(out, broker, topic="ms4/town/+/+/readings"):
    tls, pw = creds(out, "ms4watch-ingest")
    got: queue.Queue = queue.Queue()
    subscribed = threading.Event()
    errors: list[str] = []
    sub = Subscriber(BrokerURL.parse(url(broker)), "ingest", [(topic, 1)],
                     lambda ds: [got.put(d) for d in ds], username="ms4watch-ingest", password=pw, tls=tls,
                     on_subscribed=lambda ok: ok and subscribed.set(), on_disconnected=errors.append,
                     reconnect_min_s=0.2).start()
    assert subscribed.wait(10), errors
    return sub, got


def test_a_logger_publishes_only_as_itself_and_reads_only_its_own_commands(tmp_path, broker):
    out = configure(tmp_path, broker)
    broker.start()
    sub, got = ingest(out, broker)
    for topic in ("ms4/town/OF-2/LOG-2/readings", "ms4/town/OF-1/LOG-2/readings", "ms4/town/OF-2/LOG-1/readings"):
        forger = Device(out, broker, "LOG-1")                 # as another logger, or at another station
        assert forger.connected.wait(10), forger.result
        forger.forge(topic, b"forged")
    log1 = Device(out, broker, "LOG-1")
    assert log1.connected.wait(10), log1.result
    log1.c.subscribe("ms4/town/+/+/cmd", qos=1)        # asks for every logger's commands
    log1.publish("ms4/town/OF-1/LOG-1/readings", b"genuine")
    first = got.get(timeout=10)
    assert (first.topic, first.payload) == ("ms4/town/OF-1/LOG-1/readings", b"genuine")   # the forged never came
    assert got.empty()
    wb_tls, wb_pw = creds(out, "ms4watch-workbench")
    wb = make_client("wb", BrokerURL.parse(url(broker)), clean_session=True, username="ms4watch-workbench",
                     password=wb_pw, tls=wb_tls)
    wb.connect("localhost", broker.port)
    wb.loop_start()
    for t in ("ms4/town/OF-2/LOG-2/cmd", "ms4/town/OF-1/LOG-1/cmd"):
        wb.publish(t, b'{"command":"status"}', qos=1).wait_for_publish(10)
    m = log1.got.get(timeout=10)
    assert m.topic == "ms4/town/OF-1/LOG-1/cmd" and log1.got.empty()   # LOG-2's command was not sent to it
    wb.disconnect()
    wb.loop_stop()
    log1.close()
    sub.stop()


@pytest.mark.parametrize("auth", [Auth.BOTH, Auth.CERTIFICATE])
def test_a_loggers_certificate_acts_only_as_that_logger(tmp_path, broker, auth):
    """LOG-1's certificate with LOG-2's user name and password (say the password leaked): the
    broker takes the certificate's name, so the connection is LOG-1's and a publish on LOG-2's
    topics is refused; LOG-2's own files still work."""
    out = configure(tmp_path, broker, auth=auth)
    broker.start()
    sub, got = ingest(out, broker)
    forger = Device(out, broker, "LOG-1", as_user="LOG-2")
    assert forger.connected.wait(10) or forger.result, forger.result
    if forger.connected.is_set():
        forger.forge("ms4/town/OF-2/LOG-2/readings", b"forged")
    else:
        forger.close()
    log2 = Device(out, broker, "LOG-2")
    assert log2.connected.wait(10), log2.result
    log2.publish("ms4/town/OF-2/LOG-2/readings", b"genuine")
    first = got.get(timeout=10)
    assert (first.topic, first.payload) == ("ms4/town/OF-2/LOG-2/readings", b"genuine")
    assert got.empty()
    log2.close()
    sub.stop()


def test_clients_that_are_not_listed_cannot_connect(tmp_path, broker):
    out = configure(tmp_path, broker)
    keep = out.parent / "LOG-2-before"
    shutil.copytree(out / "clients" / "LOG-2", keep)
    broker.start()
    nocert = Device(out, broker, "LOG-1", cert=False)                  # the password without the certificate
    assert not wait_for(nocert.connected.is_set, 1.5)
    nocert.close()
    configure(tmp_path, broker, loggers={"LOG-1": "OF-1"})            # LOG-2's config removed: revoked
    restart(broker)
    shutil.copytree(keep, out / "clients" / "LOG-2")                   # the old files, still on the logger
    revoked = Device(out, broker, "LOG-2")
    still = Device(out, broker, "LOG-1")
    assert still.connected.wait(10)
    assert not wait_for(revoked.connected.is_set, 1.5)
    revoked.close()
    still.close()


def test_the_password_alone_is_enough_in_password_mode_and_the_broker_is_verified(tmp_path, broker):
    out = configure(tmp_path, broker, auth=Auth.PASSWORD)
    broker.start()
    dev = Device(out, broker, "LOG-1", cert=False)
    assert dev.connected.wait(10), dev.result
    dev.close()
    errors: list[str] = []
    untrusted = Subscriber(BrokerURL.parse(url(broker)), "x", [("ms4/town/+/+/readings", 1)], lambda d: None,
                           username="ms4watch-ingest", password=creds(out, "ms4watch-ingest")[1],
                           on_disconnected=errors.append, reconnect_min_s=5).start()   # the system's CAs only
    wait_for(lambda: errors, 10)
    untrusted.stop()
    assert errors and "CERTIFICATE_VERIFY_FAILED" in errors[0]


def test_a_logger_and_ingest_over_tls_with_their_own_files(tmp_path, broker):
    """The edge agent takes the CA, certificate, key and password file from its firmware
    config, ingest from the server's [broker] settings; readings go from one to the other."""
    from ms4watch.edge.agent import Agent
    from ms4watch.edge.config import parse_agent_config
    from ms4watch.edge.drivers.base import DriverEnv
    from ms4watch.edge.drivers.sim.world import World
    from ms4watch.ingest.service import IngestService
    from ms4watch.ingest.stores.sqlite import SqliteStore
    from ms4watch.settings import load_settings

    out = configure(tmp_path, broker)
    broker.start()
    mine = out / "clients" / "LOG-1"
    text = (f"device: LOG-1\nmunicipality: town\nstation: OF-1\n"
            f"broker: {{url: '{url(broker)}', username: LOG-1, password_file: '{mine / 'password'}', "
            f"ca_file: '{mine / 'ca.crt'}', cert_file: '{mine / 'client.crt'}', key_file: '{mine / 'client.key'}'}}\n"
            "sensors:\n  - {id: flow, driver: sim, quantity: flow, unit: gpm, interval: 1min, options: {model: runoff}}\n")
    config, options = parse_agent_config(text, "LOG-1.yaml")
    t0 = 1_780_000_000_000_000_000
    agent = Agent(config, options, data_dir=tmp_path / "edge",
                  env=DriverEnv(data_dir=tmp_path / "edge", shared={"world": World(start_ns=t0, hours=2)}))
    ing = out / "clients" / "ms4watch-ingest"
    settings = load_settings(None, broker={"url": url(broker), "username": "ms4watch-ingest",
                                           "password_file": ing / "password", "ca_file": ing / "ca.crt",
                                           "cert_file": ing / "client.crt", "key_file": ing / "client.key"})
    svc = IngestService(settings.broker.url, "town", SqliteStore(tmp_path / "store.db"), client_id="ingest-tls",
                        username=settings.broker.username, password=settings.broker.secret(),
                        tls=settings.broker.tls()).start()
    assert svc.connected.wait(10)
    agent.start()
    for k in range(5):
        agent.sample_due(t0 + k * 60_000_000_000)
    agent.uplink.wake()
    taken = agent.spool.taken
    assert taken >= 4 and wait_for(lambda: svc.stats.stored_readings == taken, 20), svc.stats
    agent.stop()
    svc.stop()


def test_in_certificate_mode_the_crl_keeps_a_revoked_logger_out(tmp_path, broker):
    """No passwords: the certificate is the credential, its common name the user name; a
    logger no longer listed is kept out by the CRL alone."""
    out = configure(tmp_path, broker, auth=Auth.CERTIFICATE)
    keep = out.parent / "LOG-2-before"
    shutil.copytree(out / "clients" / "LOG-2", keep)
    broker.start()
    sub, got = ingest(out, broker)
    dev = Device(out, broker, "LOG-2", password=False)
    assert dev.connected.wait(10), dev.result
    dev.publish("ms4/town/OF-2/LOG-2/readings", b"by certificate")
    assert got.get(timeout=10).payload == b"by certificate"
    dev.close()
    sub.stop()
    configure(tmp_path, broker, loggers={"LOG-1": "OF-1"}, auth=Auth.CERTIFICATE)
    restart(broker)
    shutil.copytree(keep, out / "clients" / "LOG-2")
    revoked = Device(out, broker, "LOG-2", password=False)
    still = Device(out, broker, "LOG-1", password=False)
    assert still.connected.wait(10), still.result
    assert not wait_for(revoked.connected.is_set, 1.5)
    revoked.close()
    still.close()


def test_the_server_takes_its_town_lock_on_the_broker_and_a_second_one_is_refused(tmp_path, broker):
    """The ACL lets ``ms4watch-ingest`` (serve's connection) hold ``ms4/<town>/_server/lock``."""
    from ms4watch.townlock import TownLock, TownLocked

    out = configure(tmp_path, broker)
    broker.start()
    tls, password = creds(out, "ms4watch-ingest")

    def lock(data: str) -> TownLock:
        return TownLock("town", tmp_path / data, url(broker), username="ms4watch-ingest", password=password, tls=tls)

    first = lock("a").acquire()
    try:
        with pytest.raises(TownLocked, match=r"already served by pid \d+ .*broker lock ms4/town/_server/lock"):
            lock("b").acquire()
    finally:
        first.release()
    lock("b").acquire().release()                  # released: the next one takes it


def test_the_broker_takes_the_session_expiry_and_a_clean_connect_clears_an_abandoned_session(tmp_path, broker):
    """The generated config (with ``persistent_client_expiration``) starts a real Mosquitto;
    what docs/operations.md says to do with an abandoned persistent session works: the
    same client id connecting once with a clean session (mosquitto_sub without -c) removes
    it and what was queued for it."""
    if not have("mosquitto_sub"):
        pytest.skip("mosquitto_sub is not installed (apt-get install mosquitto-clients)")
    import subprocess
    out = configure(tmp_path, broker)
    assert "persistent_client_expiration 14d" in (out / "mosquitto.conf").read_text()
    broker.start()
    tls, pw = creds(out, "ms4watch-ingest")

    def persistent() -> tuple[mqtt.Client, bool, queue.Queue]:
        got: queue.Queue = queue.Queue()
        present: list[bool] = []
        c = make_client("ms4watch-ingest-test", BrokerURL.parse(url(broker)), clean_session=False,
                        username="ms4watch-ingest", password=pw, tls=tls)
        c.on_connect = lambda cl, u, flags, rc, p: present.append(flags.session_present)
        c.on_message = lambda cl, u, m: got.put(m)
        c.connect("localhost", broker.port)
        c.loop_start()
        assert wait_for(lambda: present, 10)
        return c, present[0], got

    c, present, _ = persistent()                  # a test's session, subscribed, then abandoned
    assert not present
    subscribed = threading.Event()
    c.on_subscribe = lambda *a: subscribed.set()
    c.subscribe("ms4/town/+/+/readings", qos=1)
    assert subscribed.wait(10)
    c.disconnect()
    c.loop_stop()
    log1 = Device(out, broker, "LOG-1")
    assert log1.connected.wait(10), log1.result
    for k in range(3):
        log1.publish("ms4/town/OF-1/LOG-1/readings", f"queued {k}".encode())
    log1.close()
    c, present, got = persistent()                # the session kept them
    assert present and got.get(timeout=10).payload == b"queued 0"
    c.disconnect()
    c.loop_stop()

    d = out / "clients" / "ms4watch-ingest"       # the command docs/operations.md gives
    done = subprocess.run(["mosquitto_sub", "-h", "localhost", "-p", str(broker.port), "--cafile", str(d / "ca.crt"),
                           "--cert", str(d / "client.crt"), "--key", str(d / "client.key"),
                           "-u", "ms4watch-ingest", "-P", pw, "-i", "ms4watch-ingest-test",
                           "-t", "ms4/town/none/none/readings", "-E"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    c, present, got = persistent()
    assert not present, "the abandoned session is still there"
    c.disconnect()
    c.loop_stop()
