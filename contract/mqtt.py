"""How every part connects to the broker: URL parsing and a configured paho client.

MQTT 3.1.1 is used throughout (the embedded amqtt broker speaks only 3.1.1; Mosquitto
speaks both). ``mqtt://user:password@host:port`` — credentials may also come from a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    import paho.mqtt.client as mqtt


@dataclass(frozen=True)
class BrokerURL:
    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> "BrokerURL":
        p = urlparse(url)
        if p.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"broker URL must be mqtt://HOST:PORT or mqtts://HOST:PORT, got {url!r}")
        if not p.hostname:
            raise ValueError(f"broker URL has no host: {url!r}")
        tls = p.scheme == "mqtts"
        return cls(p.hostname, p.port or (8883 if tls else 1883), tls,
                   unquote(p.username) if p.username else None, unquote(p.password) if p.password else None)

    def __str__(self) -> str:  # never print the password
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def make_client(client_id: str, url: BrokerURL, *, clean_session: bool, manual_ack: bool = False,
                username: str | None = None, password: str | None = None,
                max_inflight: int = 20) -> mqtt.Client:
    """A paho 2.x client (callback API v2, MQTT 3.1.1) with in-flight QoS 1 publishes capped."""
    import paho.mqtt.client as mqtt   # here: ingest uses BrokerURL only, and starts ~0.1 s sooner without paho
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean_session,
                         protocol=mqtt.MQTTv311, manual_ack=manual_ack)
    user = username or url.username
    if user:
        client.username_pw_set(user, password or url.password)
    if url.tls:
        client.tls_set()
    client.max_inflight_messages_set(max_inflight)
    client.max_queued_messages_set(0)
    client.reconnect_delay_set(min_delay=1, max_delay=30)
    return client
