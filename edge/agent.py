"""The edge agent: sample every sensor on its interval, spool, let the uplink publish.

Sampling never waits for the network: a reading goes into the durable spool the moment it
is taken, and the uplink drains the spool whenever the broker is reachable. A driver that
fails yields a reading with ``value: null`` and the ``sensor_error`` flag — the gap itself
is data — and the agent carries on.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from pydantic import BaseModel

from .. import __version__ as agent_version
from ..contract.firmware import FirmwareConfig
from ..contract.ids import Channel, Topic
from ..contract.wire import QualityFlag, status_payload
from .drivers import driver_class
from .drivers.base import DriverEnv, RawReading
from .errors import DriverError
from .spool import Spool
from .uplink import Uplink

log = logging.getLogger(__name__)


class Agent:
    def __init__(self, config: FirmwareConfig, options: list[BaseModel], *, data_dir: str | Path,
                 env: DriverEnv | None = None, broker_url: str | None = None,
                 username: str | None = None, password: str | None = None,
                 clock: Callable[[], int] = time.time_ns, spool_synchronous: str = "FULL"):
        self.config = config
        self.clock = clock
        self.env = env or DriverEnv(data_dir=Path(data_dir))
        self.drivers = [driver_class(s.driver)(s, o, self.env) for s, o in zip(config.sensors, options)]
        self._interval_ns = [int(s.interval.total_seconds() * 1e9) for s in config.sensors]
        self._next_due: list[int | None] = [None] * len(self.drivers)
        self.spool = Spool(Path(data_dir) / f"{config.device}.spool.db", config.device,
                           max_readings=config.spool.max_readings, policy=config.spool.policy,
                           synchronous=spool_synchronous)
        self.spool_taken = 0  # readings ever taken, kept after stop()
        self._started_mono = time.monotonic()
        if username is None and config.broker.username:
            username = config.broker.username
        if password is None and config.broker.password_file:
            password = Path(config.broker.password_file).read_text(encoding="utf-8").strip()
        self.uplink = Uplink(
            self.spool, self.topic, broker_url or config.broker.url,
            client_id=f"ms4watch-edge-{config.device}", username=username, password=password,
            batch_readings=config.spool.batch_readings, status_payload=self._status,
            keepalive_s=config.broker.keepalive_s)

    def topic(self, channel: Channel) -> Topic:
        return Topic(self.config.municipality, self.config.station, self.config.device, channel)

    def _status(self, state: str) -> bytes:
        if state == "offline":
            return status_payload(self.config.device, "offline")
        return status_payload(
            self.config.device, "online", time=datetime.now(timezone.utc), agent_version=agent_version,
            config_version=self.config.config_version, uptime_s=round(time.monotonic() - self._started_mono, 1),
            spool_depth=self.spool.depth(), dropped=self.spool.dropped, clock="synced")

    def start(self) -> "Agent":
        for d in self.drivers:
            d.open()
        self.uplink.start()
        return self

    def stop(self) -> None:
        self.uplink.stop()
        for d in self.drivers:
            try:
                d.close()
            except Exception:  # noqa: BLE001 — closing must not stop the others
                log.exception("%s: closing a driver failed", self.config.device)
        self.spool_taken = self.spool.taken
        self.spool.close()

    def sample_due(self, now_ns: int) -> int:
        """Read every sensor whose time has come (aligned to its interval); spool the readings."""
        readings: list[RawReading] = []
        for k, driver in enumerate(self.drivers):
            step = self._interval_ns[k]
            due = self._next_due[k]
            if due is None:
                due = -(-now_ns // step) * step if now_ns % step else now_ns
                self._next_due[k] = due
            while due <= now_ns:
                readings.extend(self._read(driver, due))
                due += step
            self._next_due[k] = due
        if readings:
            self.spool.append(readings)
            self.uplink.wake()
        return len(readings)

    def _read(self, driver, t_ns: int) -> list[RawReading]:
        try:
            return driver.read(t_ns)
        except DriverError as e:
            s = driver.sensor
            log.warning("%s/%s: %s", self.config.device, s.id, e)
            return [RawReading(t_ns, s.id, s.quantity.value, None, s.unit, (QualityFlag.SENSOR_ERROR.value,))]

    def next_due_ns(self) -> int | None:
        due = [d for d in self._next_due if d is not None]
        return min(due) if due else None

    def run(self, stop: threading.Event) -> None:
        """Real-time loop for a field logger."""
        while not stop.is_set():
            self.sample_due(self.clock())
            nxt = self.next_due_ns()
            wait = 1.0 if nxt is None else max(0.0, (nxt - self.clock()) / 1e9)
            stop.wait(min(wait, 5.0))
