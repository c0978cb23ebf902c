"""The edge agent: sample every sensor on its interval, spool, let the uplink publish.

Sampling never waits for the network: a reading goes into the durable spool the moment it
is taken, and the uplink drains the spool whenever the broker is reachable. A driver that
fails yields a reading with ``value: null`` and the ``sensor_error`` flag — the gap itself
is data — and the agent carries on.

Control arrives on two topics of the device (both only writable by the server's MQTT user;
see docs/edge-install.md for the broker ACL):

* ``…/config`` (retained): a complete firmware config, YAML or JSON. It is validated
  completely (schema and every driver's options) and the new drivers are opened before it
  replaces the running one; on any failure the previous config stays and an event says why.
  The applied ``config_version`` is reported in ``…/status`` and the file is rewritten (the
  previous one kept as ``.prev``) so a reboot comes back with it.
* ``…/cmd``: ``{"id": "42", "command": "read_now" | "sample_now" | "status" | "reboot_agent"}``
  or ``{"command": "rain_report", "args": {"rain_in": 0.02}}`` (the server's count of the rain
  in the dry-weather lookback, for a logger without a gauge of its own),
  acknowledged on ``…/events`` as ``{"kind": "cmd_ack", "data": {"id", "command", "ok", "detail"}}``.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from .. import __version__ as agent_version
from ..contract.errors import ConfigError
from ..contract.firmware import FirmwareConfig
from ..contract.ids import Channel, Topic
from ..contract.timeutil import iso_utc
from ..contract.units import converter
from ..contract.wire import EVENT_SCHEMA, QualityFlag, SensorCalibration, status_payload
from .clock import JumpDetector
from .config import parse_agent_config
from .decisions import DryWeatherFlow, FirstFlush
from .drivers import driver_class
from .drivers.base import DriverEnv, RawReading
from .errors import DriverError, EdgeError
from .spool import Spool
from .uplink import Uplink

log = logging.getLogger(__name__)

RESTART_EXIT_CODE = 75  # systemd unit restarts the agent on it (Restart=always)


class Agent:
    def __init__(self, config: FirmwareConfig, options: list[BaseModel], *, data_dir: str | Path,
                 env: DriverEnv | None = None, broker_url: str | None = None,
                 username: str | None = None, password: str | None = None,
                 clock: Callable[[], int] = time.time_ns, spool_synchronous: str = "FULL",
                 clock_synced: Callable[[], bool | None] = lambda: True,
                 config_path: str | Path | None = None, status_interval_s: float = 60.0,
                 drain_rate: float = 5000.0):
        self.config = config
        self.options = options
        self.clock = clock
        self.clock_synced = clock_synced
        self.config_path = Path(config_path) if config_path else None
        self.status_interval_s = status_interval_s
        self.env = env or DriverEnv(data_dir=Path(data_dir))
        self.drivers = self._build_drivers(config, options)
        self.decisions = _decisions_for(config)
        self._next_due: list[int | None] = [None] * len(self.drivers)
        self.spool = Spool(Path(data_dir) / f"{config.device}.spool.db", config.device,
                           max_readings=config.spool.max_readings, policy=config.spool.policy,
                           synchronous=spool_synchronous)
        self.spool_taken = 0  # readings ever taken, kept after stop()
        self._started_mono = time.monotonic()
        self._last: dict[str, float | None] = {}   # quantity -> latest value (battery, signal)
        self._unsynced = False
        self._control: queue.Queue[tuple[Channel, bytes]] = queue.Queue()
        self.restart_requested = False
        if username is None and config.broker.username:
            username = config.broker.username
        if password is None and config.broker.password_file:
            try:
                password = Path(config.broker.password_file).read_text(encoding="utf-8").strip()
            except OSError as e:
                raise EdgeError(f"{self.config_path or config.device}: broker.password_file: cannot read "
                                f"{config.broker.password_file}: {e.strerror}") from None
        url = broker_url or config.broker.url
        self.uplink = Uplink(
            self.spool, self.topic, url, tls=_tls(config, url, self.config_path),
            client_id=f"ms4watch-edge-{config.device}", username=username, password=password,
            batch_readings=config.spool.batch_readings, status_payload=self._status,
            keepalive_s=config.broker.keepalive_s, drain_rate=drain_rate,
            on_control=lambda ch, payload: self._control.put((ch, payload)))

    def _build_drivers(self, config: FirmwareConfig, options: list[BaseModel]) -> list[Any]:
        self._interval_ns = [int(s.interval.total_seconds() * 1e9) for s in config.sensors]
        return [driver_class(s.driver)(s, o, self.env) for s, o in zip(config.sensors, options)]

    def topic(self, channel: Channel) -> Topic:
        return Topic(self.config.municipality, self.config.station, self.config.device, channel)

    # -- status and events -------------------------------------------------------------------------
    def _status(self, state: str) -> bytes:
        if state == "offline":
            return status_payload(self.config.device, "offline")
        synced = self.clock_synced()
        return status_payload(
            self.config.device, "online", time=datetime.now(timezone.utc), agent_version=agent_version,
            config_version=self.config.config_version, uptime_s=round(time.monotonic() - self._started_mono, 1),
            battery_v=self._last.get("battery"), signal_dbm=self._last.get("signal"),
            spool_depth=self.spool.depth(), dropped=self.spool.dropped,
            clock=None if synced is None else ("synced" if synced else "unsynced"),
            calibrations=_calibrations(self.config), report_interval_s=_report_interval_s(self.config))

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Queue an event durably; the uplink publishes it on ``…/events``."""
        payload = json.dumps({"schema": EVENT_SCHEMA, "device": self.config.device,
                              "time": iso_utc(self.clock()), "kind": kind, "data": data},
                             separators=(",", ":")).encode()
        self.spool.add_event(payload)
        self.uplink.wake()

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> "Agent":
        for d in self.drivers:
            try:
                d.open()
            except DriverError as e:
                # An adapter missing at boot must not stop the logger: the driver reopens its
                # port on the next read, and until then the sensor reports sensor_error.
                log.error("%s/%s: %s; will retry at each reading", self.config.device, d.sensor.id, e)
        self.uplink.start()
        return self

    def stop(self) -> None:
        self.uplink.stop()
        self._close_drivers(self.drivers)
        self.spool_taken = self.spool.taken
        self.spool.close()

    def _close_drivers(self, drivers: list[Any]) -> None:
        for d in drivers:
            try:
                d.close()
            except Exception:  # noqa: BLE001 — closing one must not stop the others
                log.exception("%s: closing a driver failed", self.config.device)

    # -- sampling ----------------------------------------------------------------------------------
    def sample_due(self, now_ns: int) -> int:
        """Read every sensor whose time has come (aligned to its interval); spool the readings."""
        readings: list[RawReading] = []
        for k, driver in enumerate(self.drivers):
            step = self._interval_ns[k]
            due = self._next_due[k]
            if due is None:
                due = -(-now_ns // step) * step
            while due <= now_ns:
                readings.extend(self._read(driver, due))
                due += step
            self._next_due[k] = due
        return self._spool(readings)

    def read_now(self) -> int:
        """Read every sensor now, off schedule (command ``read_now``)."""
        now = self.clock()
        return self._spool([r for d in self.drivers for r in self._read(d, now)])

    def _spool(self, readings: list[RawReading]) -> int:
        if not readings:
            return 0
        synced = self.clock_synced()
        if synced is False:
            flag = QualityFlag.CLOCK_UNSYNCED.value
            readings = [r._replace(flags=r.flags + (flag,)) for r in readings]
            if not self._unsynced:
                log.warning("%s: clock not synchronised; readings are flagged", self.config.device)
        self._unsynced = synced is False
        for r in readings:
            if r.quantity in ("battery", "signal") and r.value is not None:
                self._last[r.quantity] = r.value
        self.spool.append(readings)
        self._decide(readings)
        self.uplink.wake()
        return len(readings)

    def _decide(self, readings: list[RawReading]) -> None:
        """Feed the logger's own sampling decisions; trigger the autosampler when one fires."""
        if not self.decisions:
            return
        for r in sorted(readings, key=lambda r: (r.time_ns, r.quantity != "rain")):
            if r.value is None or r.quantity not in ("rain", "flow"):
                continue
            value = converter(r.quantity, r.unit)(r.value)
            for d in self.decisions:
                if r.quantity == "rain":
                    d.rain(r.time_ns, value)
                elif (reason := d.flow(r.time_ns, value)) is not None:
                    self.take_sample(reason, r.time_ns)

    def take_sample(self, reason: str, t_ns: int) -> list[dict[str, Any]]:
        """Trigger every autosampler of this logger; publish each bottle record."""
        records = []
        for d in self.drivers:
            if not hasattr(d, "trigger"):
                continue
            try:
                record = d.trigger(reason, t_ns)
            except DriverError as e:
                log.error("%s/%s: sample (%s) not taken: %s", self.config.device, d.sensor.id, reason, e)
                self.emit("sample_failed", {"sensor": d.sensor.id, "trigger": reason, "error": str(e)})
                continue
            self.emit("sample_taken", record)
            records.append(record)
        return records

    def _read(self, driver: Any, t_ns: int) -> list[RawReading]:
        try:
            return driver.read(t_ns)
        except DriverError as e:
            s = driver.sensor
            log.warning("%s/%s: %s", self.config.device, s.id, e)
            return [RawReading(t_ns, s.id, s.quantity.value, None, s.unit, (QualityFlag.SENSOR_ERROR.value,))]

    def next_due_ns(self) -> int | None:
        due = [d for d in self._next_due if d is not None]
        return min(due) if due else None

    # -- control -----------------------------------------------------------------------------------
    def process_control(self) -> int:
        """Handle queued config and command messages (in the agent's own thread)."""
        n = 0
        while True:
            try:
                channel, payload = self._control.get_nowait()
            except queue.Empty:
                return n
            n += 1
            if channel is Channel.CONFIG:
                self._apply_config(payload)
            else:
                self._command(payload)

    def _apply_config(self, payload: bytes) -> None:
        if not payload:
            return  # a cleared retained message
        source = str(self.topic(Channel.CONFIG))
        try:
            config, options = parse_agent_config(payload.decode("utf-8", "replace"), source)
            for field in ("device", "station", "municipality"):
                if getattr(config, field) != getattr(self.config, field):
                    raise ConfigError(source, [(None, field, f"a remote config cannot change the {field} "
                                                             f"({getattr(self.config, field)!r})")])
        except ConfigError as e:
            log.error("%s: remote config refused: %s", self.config.device, e)
            self.emit("config_rejected", {"error": str(e), "running_version": self.config.config_version})
            return
        if config.config_version == self.config.config_version:
            return  # the retained copy of what is running, delivered again at (re)connect
        new_drivers = self._build_drivers(config, options)
        opened = []
        try:
            for d in new_drivers:
                d.open()
                opened.append(d)
        except Exception as e:  # noqa: BLE001 — any failure keeps the previous config
            self._close_drivers(opened)
            self._interval_ns = [int(s.interval.total_seconds() * 1e9) for s in self.config.sensors]
            log.error("%s: config %s could not open its instruments: %s", self.config.device,
                      config.config_version, e)
            self.emit("config_rejected", {"version": config.config_version, "error": f"opening drivers: {e}",
                                          "running_version": self.config.config_version})
            return
        old_drivers, previous = self.drivers, self.config.config_version
        self.drivers, self.config, self.options = new_drivers, config, options
        self.decisions = _decisions_for(config)
        self._next_due = [None] * len(new_drivers)
        self._close_drivers(old_drivers)
        self._persist_config(payload)
        log.info("%s: applied config %s (was %s)", config.device, config.config_version, previous)
        self.emit("config_applied", {"version": config.config_version, "previous": previous})
        self.uplink.publish_status()

    def _persist_config(self, payload: bytes) -> None:
        if self.config_path is None:
            return
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_bytes(payload)
        if self.config_path.exists():
            os.replace(self.config_path, self.config_path.with_suffix(self.config_path.suffix + ".prev"))
        os.replace(tmp, self.config_path)

    def _command(self, payload: bytes) -> None:
        try:
            cmd = json.loads(payload)
            cid, name = str(cmd.get("id", "")), cmd["command"]
        except (ValueError, KeyError, TypeError, AttributeError):
            self.emit("cmd_ack", {"id": None, "command": None, "ok": False,
                                  "detail": "not a command: expected {\"id\": …, \"command\": …}"})
            return
        ok, detail = True, ""
        if name == "read_now":
            detail = f"{self.read_now()} readings taken"
        elif name == "sample_now":
            if not any(hasattr(d, "trigger") for d in self.drivers):
                ok, detail = False, "no autosampler on this logger"
            else:
                records = self.take_sample("command", self.clock())
                ok = bool(records)
                detail = ", ".join(f"bottle {r.get('bottle')}" for r in records) or "the sampler failed"
        elif name == "rain_report":
            args = cmd.get("args") or {}
            try:
                total = float(args["rain_in"])
            except (KeyError, TypeError, ValueError):
                ok, detail = False, "rain_report needs args.rain_in (inches in the lookback ending now)"
            else:
                for d in self.decisions:
                    if isinstance(d, DryWeatherFlow):
                        d.told(self.clock(), total)
                detail = f"{total} in"
        elif name == "status":
            self.uplink.publish_status()
        elif name == "reboot_agent":
            self.restart_requested = True
            detail = f"restarting (exit code {RESTART_EXIT_CODE})"
        else:
            ok, detail = False, (f"unknown command {name!r} "
                                 "(read_now, sample_now, rain_report, status, reboot_agent)")
        self.emit("cmd_ack", {"id": cid, "command": name, "ok": ok, "detail": detail})

    # -- the real-time loop --------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Sample on schedule, handle control messages, publish status; until ``stop`` or a restart."""
        jumps = JumpDetector()
        next_status = time.monotonic() + self.status_interval_s
        while not stop.is_set() and not self.restart_requested:
            jump = jumps.check()
            if jump:
                log.warning("%s: wall clock jumped by %+.1f s; sampling schedule re-aligned",
                            self.config.device, jump / 1e9)
                self._next_due = [None] * len(self.drivers)
                self.emit("clock_jump", {"delta_s": round(jump / 1e9, 3)})
            self.sample_due(self.clock())
            self.process_control()
            if time.monotonic() >= next_status:
                self.uplink.publish_status()
                next_status = time.monotonic() + self.status_interval_s
            nxt = self.next_due_ns()
            wait = 1.0 if nxt is None else max(0.0, (nxt - self.clock()) / 1e9)
            stop.wait(min(wait, 0.25))


def _tls(config: FirmwareConfig, url: str, path: Path | None):
    """The TLS context of an ``mqtts://`` broker: the CA, client certificate and key of the
    config's ``broker`` section, read now (a wrong file is one line naming the field)."""
    from ..contract.mqtt import TlsFiles, tls_context
    if not url.startswith("mqtts://"):
        return None
    b = config.broker
    try:
        return tls_context(TlsFiles(b.ca_file, b.cert_file, b.key_file, option="broker."))
    except ValueError as e:
        raise EdgeError(f"{path or config.device}: {e}") from None


def _decisions_for(config: FirmwareConfig) -> list[FirstFlush | DryWeatherFlow]:
    t = config.triggers
    return ([FirstFlush(t.first_flush)] if t.first_flush else []) + \
        ([DryWeatherFlow(t.dry_weather_flow)] if t.dry_weather_flow else [])


def _report_interval_s(config: FirmwareConfig) -> float | None:
    """The longest interval of the sensors reporting for the logger's own station [s]: within
    it every one of them has sent a row, so the server calls the station stale only when none
    has for several of it (status ``report_interval_s``). None when all report elsewhere."""
    own = [s.interval.total_seconds() for s in config.sensors if s.station in (None, config.station)]
    return max(own) if own else None


def _calibrations(config: FirmwareConfig) -> tuple[SensorCalibration, ...]:
    """Every sensor's ``calibration:`` block as the status message reports it (the server
    turns them into "calibration due" records)."""
    return tuple(SensorCalibration(sensor=s.id, performed=s.calibration.performed, due=s.calibration.due,
                                   station=s.station)
                 for s in config.sensors if s.calibration is not None)
