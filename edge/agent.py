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
  A retained config the agent has already handled (the same bytes, delivered again at each
  reconnect) is not applied again, so a calibration applied since is not rolled back; and a
  new remote config whose ``calibration:`` block of a sensor is older than the one running
  (``performed`` earlier, or none) keeps the running one (``config_applied`` lists them in
  ``kept_calibrations``): a sensor's calibration is what was measured in the field.
* The config file itself: when it changes on disk (``ms4watch calibrate`` writes the new
  coefficients there, the previous file kept as ``.prev``; or a technician edits it) and
  its ``config_version`` differs, it is applied the same way.
* ``…/cmd``: ``{"id": "42", "command": "read_now" | "sample_now" | "status" | "reboot_agent"}``
  or ``{"command": "rain_report", "args": {"rain_in": 0.02}}`` (the server's count of the rain
  in the dry-weather lookback, for a logger without a gauge of its own),
  acknowledged on ``…/events`` as ``{"kind": "cmd_ack", "data": {"id", "command", "ok", "detail"}}``.

A sensor being calibrated (``ms4watch calibrate``, another process) is paused: its driver is
closed and no reading of it is taken until the calibration lets go
(:mod:`.calibration.pause`); ``sensor_paused`` and ``sensor_resumed`` events say when.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import BaseModel

from .. import __version__ as agent_version
from ..contract.errors import ConfigError
from ..contract.firmware import FirmwareConfig
from ..contract.ids import Channel, Topic
from ..contract.units import converter
from ..contract.wire import QualityFlag, SensorCalibration, encode_event, status_payload
from .calibration.pause import SensorLocks
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
HOUSEKEEPING_S = 1.0
"""Longest sleep of the agent's loop [s]: how soon it sees a calibration's request for a
sensor, a config file changed on disk, a clock jump."""


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
        self._lock_dir = Path(self.env.locks if self.env.locks is not None else data_dir)
        self._locks: dict[str, SensorLocks] = {}   # sensor id -> its pause locks
        self._paused: set[str] = set()            # sensors a calibration has taken
        self._config_stat = _stat_key(self.config_path)
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
        self._wake = threading.Event()   # a control message came, or the loop must stop
        self.control_handled = 0   # config and command messages handled (diagnostics, tests)
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
            on_control=self._queue_control)

    def _build_drivers(self, config: FirmwareConfig, options: list[BaseModel],
                       reuse: Sequence[Any] = ()) -> list[Any]:
        """One driver per sensor. A driver in ``reuse`` whose sensor is defined the same but
        for its calibration and interval is kept (its port, GPIO line and counters stay
        open) and given the new sensor definition."""
        self._interval_ns = [int(s.interval.total_seconds() * 1e9) for s in config.sensors]
        same = {_definition(d.sensor, d.options if hasattr(d, "options") else getattr(d, "o", None)): d
                for d in reuse}
        out = []
        for s, o in zip(config.sensors, options):
            d = same.pop(_definition(s, o), None)
            if d is not None:
                d.sensor = s
            else:
                d = driver_class(s.driver)(s, o, self.env)
            out.append(d)
        return out

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
        self.spool.add_event(encode_event(self.config.device, self.clock(), kind, data))
        self.uplink.wake()

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> "Agent":
        for d in self.drivers:
            self._open_driver(d)
        self.uplink.start()
        return self

    def stop(self) -> None:
        self.uplink.stop()
        self._close_drivers([d for d in self.drivers if d.sensor.id not in self._paused])
        for lk in self._locks.values():
            lk.close()
        self._locks.clear()
        self.spool_taken = self.spool.taken
        self.spool.close()

    # -- sensors taken away for a calibration ------------------------------------------------------
    def _sensor_locks(self, sensor_id: str) -> SensorLocks:
        lk = self._locks.get(sensor_id)
        if lk is None:
            lk = self._locks[sensor_id] = SensorLocks(self._lock_dir, sensor_id)
        return lk

    def _open_driver(self, d: Any, strict: bool = False) -> bool:
        """Open ``d`` unless a calibration has its sensor (then it starts paused). A driver that
        fails to open is logged and retried at each reading (an adapter missing at boot must not
        stop the logger; until it is back the sensor reports sensor_error); ``strict``: raise."""
        sid = d.sensor.id
        if not self._sensor_locks(sid).take():
            if sid not in self._paused:
                self._paused.add(sid)
                log.warning("%s/%s: being calibrated; not read until the calibration ends", self.config.device, sid)
                self.emit("sensor_paused", {"sensor": sid, "reason": "calibration"})
            return False
        self._paused.discard(sid)
        try:
            d.open()
        except DriverError as e:
            if strict:
                raise
            log.error("%s/%s: %s; will retry at each reading", self.config.device, sid, e)
        return True

    def check_pauses(self) -> None:
        """Let go of every sensor a calibration asks for; take back every one it gave back."""
        for d in self.drivers:
            sid = d.sensor.id
            lk = self._sensor_locks(sid)
            if sid in self._paused:
                if lk.take():
                    self._paused.discard(sid)
                    self._open_driver(d)
                    log.info("%s/%s: calibration over; reading it again", self.config.device, sid)
                    self.emit("sensor_resumed", {"sensor": sid})
            elif lk.requested():
                self._close_drivers([d])
                lk.let_go()
                self._paused.add(sid)
                log.warning("%s/%s: paused for a calibration", self.config.device, sid)
                self.emit("sensor_paused", {"sensor": sid, "reason": "calibration"})

    @property
    def paused(self) -> frozenset[str]:
        """Sensors a calibration has taken now."""
        return frozenset(self._paused)

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
            paused = driver.sensor.id in self._paused
            while due <= now_ns:
                if not paused:     # a sensor being calibrated: no reading (the gap is explained)
                    readings.extend(self._read(driver, due))
                due += step
            self._next_due[k] = due
        return self._spool(readings)

    def read_now(self) -> int:
        """Read every sensor now, off schedule (command ``read_now``)."""
        now = self.clock()
        return self._spool([r for d in self.drivers if d.sensor.id not in self._paused for r in self._read(d, now)])

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
        self.spool.append_formed(readings, self.uplink.live_room())
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
    def _queue_control(self, channel: Channel, payload: bytes) -> None:
        """(paho's thread) A config or command message: handled by the loop, woken for it."""
        self._control.put((channel, payload))
        self._wake.set()

    def wake(self) -> None:
        """Wake the loop now (it then looks at its ``stop`` event)."""
        self._wake.set()

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
            self.control_handled += 1

    def watch_config_file(self) -> bool:
        """Apply the config file if it changed on disk since it was last read (``ms4watch
        calibrate`` wrote new coefficients, or a technician edited it). True when applied."""
        key = _stat_key(self.config_path)
        if key is None or key == self._config_stat:
            return False
        self._config_stat = key
        assert self.config_path is not None
        try:
            payload = self.config_path.read_bytes()
        except OSError as e:
            log.error("%s: cannot read %s: %s", self.config.device, self.config_path, e.strerror)
            return False
        return self._apply_config(payload, remote=False)

    def _apply_config(self, payload: bytes, remote: bool = True) -> bool:
        """Validate and apply a config (a retained ``…/config`` message, or the config file when
        ``remote`` is False); on any failure the running one stays and an event says why."""
        if not payload:
            return False  # a cleared retained message
        digest = len(payload) << 32 | zlib.crc32(payload)
        if remote and self.spool.recall("remote_config") == digest:
            return False  # the retained config already handled, delivered again at (re)connect
        source = str(self.topic(Channel.CONFIG)) if remote else str(self.config_path)
        try:
            config, options = parse_agent_config(payload.decode("utf-8", "replace"), source)
            for field in ("device", "station", "municipality"):
                if getattr(config, field) != getattr(self.config, field):
                    raise ConfigError(source, [(None, field, f"a {'remote ' if remote else ''}config cannot change "
                                                             f"the {field} ({getattr(self.config, field)!r})")])
        except ConfigError as e:
            log.error("%s: %s config refused: %s", self.config.device, "remote" if remote else "the", e)
            self.emit("config_rejected", {"error": str(e), "running_version": self.config.config_version,
                                          **({} if remote else {"source": "file"})})
            return False
        if config.config_version == self.config.config_version:
            if remote:
                self.spool.remember("remote_config", digest)
            elif config != self.config:
                log.warning("%s: %s changed but still says config_version %s: not applied (give it a new "
                            "config_version)", self.config.device, self.config_path, config.config_version)
            return False  # the retained copy of what is running, or the agent's own rewrite
        kept: list[str] = []
        if remote:
            config, kept = _keep_newer_calibrations(config, self.config)
        reuse = list(self.drivers)
        new_drivers = self._build_drivers(config, options, reuse)
        fresh = [d for d in new_drivers if d not in reuse]
        opened = []
        try:
            for d in fresh:
                if self._sensor_locks(d.sensor.id).held or d.sensor.id not in self._paused:
                    if self._open_driver(d, strict=True):
                        opened.append(d)
        except Exception as e:  # noqa: BLE001 — any failure keeps the previous config
            self._close_drivers(opened)
            for d in reuse:      # the drivers kept were given the new definitions: give the old ones back
                d.sensor = next(s for s in self.config.sensors if s.id == d.sensor.id)
            self._interval_ns = [int(s.interval.total_seconds() * 1e9) for s in self.config.sensors]
            log.error("%s: config %s could not open its instruments: %s", self.config.device,
                      config.config_version, e)
            self.emit("config_rejected", {"version": config.config_version, "error": f"opening drivers: {e}",
                                          "running_version": self.config.config_version})
            return False
        old_drivers, previous = self.drivers, self.config.config_version
        self.drivers, self.config, self.options = new_drivers, config, options
        self.decisions = _decisions_for(config)
        self._next_due = [None] * len(new_drivers)
        self._close_drivers([d for d in old_drivers if d not in new_drivers and d.sensor.id not in self._paused])
        for sid in [sid for sid in self._locks if sid not in {s.id for s in config.sensors}]:
            self._locks.pop(sid).close()
            self._paused.discard(sid)
        if remote:
            self._persist_config(payload if not kept else _dump_config(config))
            self.spool.remember("remote_config", digest)
        log.info("%s: applied config %s (was %s)%s", config.device, config.config_version, previous,
                 f"; kept the newer calibration of {', '.join(kept)}" if kept else "")
        data: dict[str, Any] = {"version": config.config_version, "previous": previous,
                                **({} if remote else {"source": "file"})}
        if kept:
            data["kept_calibrations"] = kept
        self.emit("config_applied", data)
        self.uplink.publish_status()
        return True

    def _persist_config(self, payload: bytes) -> None:
        """The config file becomes ``payload``; the previous one is kept as ``<file>.prev``. The
        file is never missing in between (the watcher reads it)."""
        if self.config_path is None:
            return
        prev = self.config_path.with_suffix(self.config_path.suffix + ".prev")
        if self.config_path.exists():
            tmp_prev = prev.with_suffix(prev.suffix + ".tmp")
            tmp_prev.write_bytes(self.config_path.read_bytes())
            os.replace(tmp_prev, prev)
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_bytes(payload)
        os.replace(tmp, self.config_path)
        self._config_stat = _stat_key(self.config_path)

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
        """Sample on schedule, handle control messages, publish status; until ``stop`` or a restart.

        The loop sleeps until the next reading is due, a control message comes (:meth:`wake`),
        or ``HOUSEKEEPING_S`` passed (a calibration's request, a changed config file); whoever
        sets ``stop`` calls :meth:`wake` for it to end at once, else it ends within that.
        One pass a second at most on a logger reading every second: each pass costs the
        flock and stat calls of the housekeeping (bench/bench_edge.py)."""
        jumps = JumpDetector()
        next_status = time.monotonic() + self.status_interval_s
        while not stop.is_set() and not self.restart_requested:
            self._wake.clear()
            jump = jumps.check()
            if jump:
                log.warning("%s: wall clock jumped by %+.1f s; sampling schedule re-aligned",
                            self.config.device, jump / 1e9)
                self._next_due = [None] * len(self.drivers)
                self.emit("clock_jump", {"delta_s": round(jump / 1e9, 3)})
            self.check_pauses()
            self.watch_config_file()
            self.sample_due(self.clock())
            self.process_control()
            if time.monotonic() >= next_status:
                self.uplink.publish_status()
                next_status = time.monotonic() + self.status_interval_s
            nxt = self.next_due_ns()
            wait = HOUSEKEEPING_S if nxt is None else max(0.0, (nxt - self.clock()) / 1e9)
            self._wake.wait(min(wait, HOUSEKEEPING_S))


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


def _stat_key(path: Path | None) -> tuple[int, int, int] | None:
    """What tells a file changed: (inode, size, mtime ns); None when it is not there."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _definition(sensor: Any, options: Any) -> str:
    """A sensor's definition but for its calibration and interval (drivers whose definitions
    agree can be kept across a config change)."""
    d = sensor.model_dump(mode="json", exclude={"calibration", "interval"})
    o = options.model_dump(mode="json") if isinstance(options, BaseModel) else options
    return json.dumps([d, o], sort_keys=True, default=str)


def _keep_newer_calibrations(config: FirmwareConfig, running: FirmwareConfig) -> tuple[FirmwareConfig, list[str]]:
    """``config`` with the running ``calibration:`` block of every sensor whose block in
    ``config`` is older (performed earlier) or missing; and the ids of those sensors."""
    now = {s.id: s.calibration for s in running.sensors}
    kept: list[str] = []
    sensors = []
    for s in config.sensors:
        mine = now.get(s.id)
        if mine is not None and (s.calibration is None or s.calibration.performed < mine.performed):
            s = s.model_copy(update={"calibration": mine})
            kept.append(s.id)
        sensors.append(s)
    return (config.model_copy(update={"sensors": sensors}) if kept else config), kept


def _dump_config(config: FirmwareConfig) -> bytes:
    """A config as YAML (when the agent had to merge a remote one with its own calibrations)."""
    import yaml
    text = yaml.safe_dump(config.model_dump(mode="json", exclude_defaults=True), sort_keys=False)
    return ("# written by the edge agent: a remote config with the calibrations measured here kept\n"
            + text).encode()


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
