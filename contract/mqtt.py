"""How every part connects to the broker: URL parsing and a configured paho client.

MQTT 3.1.1 is used throughout (the embedded amqtt broker speaks only 3.1.1; Mosquitto
speaks both). ``mqtt://user:password@host:port`` — credentials may also come from a file.

``mqtts://`` is TLS. The server is always verified — its certificate must chain to the CA
file given (``ca_file``; else the system's trusted CAs) and name the URL's host — and a
client certificate and key (``cert_file``, ``key_file``) are presented when given.
:func:`tls_context` reads the files once, at start, so a missing or wrong file is one line
naming the option, not a failure at every reconnection.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from .errors import ConfigValueError

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
            raise ConfigValueError(f"broker URL must be mqtt://HOST:PORT or mqtts://HOST:PORT, got {url!r}")
        if not p.hostname:
            raise ConfigValueError(f"broker URL has no host: {url!r}")
        tls = p.scheme == "mqtts"
        return cls(p.hostname, p.port or (8883 if tls else 1883), tls,
                   unquote(p.username) if p.username else None, unquote(p.password) if p.password else None)

    def __str__(self) -> str:  # never print the password
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


@dataclass(frozen=True)
class TlsFiles:
    """The files of a TLS connection to the broker; ``option`` prefixes errors (the setting's
    name, e.g. ``broker.`` in the server's settings)."""

    ca_file: Path | None = None      # None: the system's trusted CAs
    cert_file: Path | None = None    # the client's certificate (PEM), with key_file
    key_file: Path | None = None
    option: str = "broker."

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            missing = "key_file" if self.key_file is None else "cert_file"
            raise ConfigValueError(f"{self.option}{missing}: needed with "
                             f"{'cert_file' if missing == 'key_file' else 'key_file'}")

    @property
    def any(self) -> bool:
        return self.ca_file is not None or self.cert_file is not None


def tls_context(files: TlsFiles | None = None) -> ssl.SSLContext:
    """A client TLS context that verifies the server (chain and host name) and presents the
    client certificate, if any. Raises ConfigValueError naming the option whose file is wrong."""
    files = files or TlsFiles()
    opt = files.option
    try:
        ctx = ssl.create_default_context(cafile=str(files.ca_file) if files.ca_file else None)
    except FileNotFoundError:
        raise ConfigValueError(f"{opt}ca_file: no such file: {files.ca_file}") from None
    except (ssl.SSLError, OSError) as e:
        raise ConfigValueError(f"{opt}ca_file: {files.ca_file}: not a PEM CA certificate ({_reason(e)})") from None
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if files.cert_file is not None and files.key_file is not None:    # both or neither: TLSFiles checks
        for name, path in (("cert_file", files.cert_file), ("key_file", files.key_file)):
            if not Path(path).is_file():
                raise ConfigValueError(f"{opt}{name}: no such file: {path}")
        try:
            ctx.load_cert_chain(str(files.cert_file), str(files.key_file))
        except PermissionError:
            raise ConfigValueError(f"{opt}key_file: cannot read {files.key_file}: permission denied") from None
        except (ssl.SSLError, OSError) as e:
            raise ConfigValueError(f"{opt}cert_file: {files.cert_file} and {opt}key_file: {files.key_file} "
                             f"are not a PEM certificate and its key ({_reason(e)})") from None
    return ctx


def _reason(e: Exception) -> str:
    return getattr(e, "reason", None) or getattr(e, "strerror", None) or str(e)


def make_client(client_id: str, url: BrokerURL, *, clean_session: bool, manual_ack: bool = False,
                username: str | None = None, password: str | None = None,
                max_inflight: int = 20, tls: ssl.SSLContext | None = None) -> mqtt.Client:
    """A paho 2.x client (callback API v2, MQTT 3.1.1) with in-flight QoS 1 publishes capped.
    ``tls``: the context for ``mqtts://`` (default: :func:`tls_context` with the system's CAs)."""
    import paho.mqtt.client as mqtt   # here: ingest uses BrokerURL only, and starts ~0.1 s sooner without paho
    from paho.mqtt.enums import CallbackAPIVersion
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean_session,
                         protocol=mqtt.MQTTv311, manual_ack=manual_ack)
    user = username or url.username
    if user:
        client.username_pw_set(user, password or url.password)
    if url.tls:
        client.tls_set_context(tls or tls_context())
    client.max_inflight_messages_set(max_inflight)
    client.max_queued_messages_set(0)
    client.reconnect_delay_set(min_delay=1, max_delay=30)
    return client
