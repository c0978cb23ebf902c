"""The embedded MQTT broker (amqtt) for trying ms4watch out without Mosquitto.

amqtt speaks MQTT 3.1.1 only, and with anonymous auth it drops queued QoS 1 messages of
persistent sessions, so it runs with username authentication (any username is accepted:
the listener binds to loopback only).
"""

from __future__ import annotations

import asyncio
import logging
import threading

from .errors import DemoError

log = logging.getLogger(__name__)


class _SnapshotTable(dict):
    """amqtt's subscription table, walked over a copy of its keys.

    amqtt 0.12.1 iterates ``Broker._subscriptions`` across awaits (sending retained messages to
    a connecting client; broadcasting); a SUBSCRIBE from another client in between ended the
    connecting session with "dictionary changed size during iteration". Walking a snapshot
    sends to the filters that existed when the walk began, which is what the broker means.
    """

    def __iter__(self):
        return iter(list(super().keys()))

    def items(self):
        return list(super().items())


class EmbeddedBroker:
    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broker = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.client_errors: list[str] = []

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def start(self, timeout_s: float = 15.0) -> "EmbeddedBroker":
        self._thread = threading.Thread(target=self._run, name="amqtt-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise DemoError(f"embedded broker did not start on {self.host}:{self.port} within {timeout_s}s")
        if self._error is not None:
            raise DemoError(f"embedded broker failed to start on {self.host}:{self.port}: {self._error}")
        return self

    def _run(self) -> None:
        from amqtt.broker import Broker

        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.ERROR)
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(self._client_failed)
        self._loop = loop
        asyncio.set_event_loop(loop)
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}", "max_connections": 1000}},
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": False}},
        }

        async def boot() -> None:
            broker = Broker(config, loop=loop)
            broker._subscriptions = _SnapshotTable()
            self._broker = broker
            await broker.start()

        try:
            loop.run_until_complete(boot())
        except BaseException as e:  # noqa: BLE001 — reported to the starting thread
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.close()

    def _client_failed(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """A client's session ended on an error inside amqtt: one line, not a traceback."""
        exc = context.get("exception")
        line = f"embedded broker: a client session ended: {exc!r}" if exc else f"embedded broker: {context.get('message')}"
        self.client_errors.append(line)
        log.warning(line)

    def stop(self) -> None:
        loop, broker = self._loop, self._broker
        if loop is None or broker is None or not loop.is_running():
            return
        fut = asyncio.run_coroutine_threadsafe(broker.shutdown(), loop)
        try:
            fut.result(10)
        except Exception as e:  # noqa: BLE001
            log.warning("embedded broker shutdown: %s", e)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread:
            self._thread.join(5)
