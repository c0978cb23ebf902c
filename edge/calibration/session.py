"""One calibration run's resources on the logger: the sensor taken from the running agent,
its driver opened afresh (raw: no correction applied), and at the end the record into the
logger's spool and the new coefficients into its config file.

``with CalibrationSession(config_path, data_dir, sensor_id) as s: …`` — inside, the agent
does not read the sensor (:mod:`.pause`); ``s.read()`` reads it through the same driver
class and options the agent uses, with the correction turned off, sharing a serial bus with
the agent a transaction at a time. ``s.finish(…)`` writes what the run decided.

The record goes into the spool the agent publishes from (``<data_dir>/<device>.spool.db``),
as a ``calibration`` event: it reaches the server like every other message, after any
outage, and nothing is lost when the logger is offline or the agent is stopped.
"""

from __future__ import annotations

import logging
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from ...contract.calibration import CALIBRATION_EVENT, CalibrationRecord, Fit, FitKind, Procedure, Result
from ...contract.firmware import Calibration, FirmwareConfig, Sensor
from ...contract.timeutil import from_ns
from ...contract.wire import encode_event
from ..config import load_agent_config
from ..drivers import driver_class
from ..drivers.base import DriverEnv
from ..errors import DriverError, EdgeError
from ..spool import Spool
from .configfile import next_version, with_calibration, write_config
from .pause import CalibrationHold
from .procedures import Outcome, previous_fit

log = logging.getLogger(__name__)

__all__ = ["CalibrationSession", "Finished", "DEFAULT_INTERVAL", "record_id", "write_run"]

DEFAULT_INTERVAL = timedelta(days=90)
"""Until the next calibration when neither a flag nor the previous calibration says [d]."""


def record_id(t_ns: int) -> str:
    """``cal-20260601T140312Z-3fa2c1``: when, and six random hex digits."""
    return "cal-" + from_ns(t_ns).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass
class Finished:
    """What a run left behind."""

    record: CalibrationRecord
    config_version: str | None        # the config file's new version (None: not changed)
    config_kept_layout: bool = True
    spooled: bool = False
    messages: tuple[str, ...] = ()


class CalibrationSession:
    def __init__(self, config_path: str | Path, data_dir: str | Path, sensor_id: str, *,
                 clock: Callable[[], int] = time.time_ns, pause_timeout_s: float = 60.0,
                 shared: dict[str, Any] | None = None):
        """``shared``: what the driver environment shares (tests inject pulse sources and
        GPIO pin factories here, as for the agent)."""
        self.config_path = Path(config_path)
        self.data_dir = Path(data_dir)
        self.clock = clock
        self.pause_timeout_s = pause_timeout_s
        self.config, options = load_agent_config(self.config_path)
        try:
            k = next(i for i, s in enumerate(self.config.sensors) if s.id == sensor_id)
        except StopIteration:
            known = ", ".join(s.id for s in self.config.sensors)
            raise EdgeError(f"{self.config_path}: no sensor {sensor_id!r} (sensors: {known})") from None
        self.sensor: Sensor = self.config.sensors[k]
        self._options = options[k]
        self._shared = shared if shared is not None else {}
        self._hold: CalibrationHold | None = None
        self._tmp: Path | None = None
        self.driver: Any = None
        self.started_ns = clock()

    @property
    def previous(self) -> Calibration | None:
        return self.sensor.calibration

    @property
    def previous_fit(self) -> Fit | None:
        return previous_fit(self.sensor.calibration)

    # -- the sensor --------------------------------------------------------------------------
    def __enter__(self) -> "CalibrationSession":
        self._hold = CalibrationHold(self.data_dir, self.sensor.id, self.pause_timeout_s)
        self._hold.__enter__()
        try:
            # The driver's own state (a tip counter) in a directory of its own, so nothing this
            # run counts is ever reported as rain by the agent; port locks in the agent's.
            self._tmp = Path(tempfile.mkdtemp(prefix=f"ms4-calibrate-{self.sensor.id}-"))
            raw = self.sensor.model_copy(update={"calibration": None})
            env = DriverEnv(data_dir=self._tmp, shared=self._shared, lock_dir=self.data_dir)
            self.driver = driver_class(self.sensor.driver)(raw, self._options, env)
            self.driver.open()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.started_ns = self.clock()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.driver is not None:
            try:
                self.driver.close()
            except Exception:  # noqa: BLE001 — giving the sensor back matters more
                log.exception("closing the calibration's driver failed")
            self.driver = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._hold is not None:
            self._hold.__exit__(None, None, None)
            self._hold = None

    def read(self) -> float:
        """One raw reading of the sensor, in its unit; DriverError when it does not answer."""
        if self.driver is None:
            raise EdgeError("read() outside the session")
        readings = [r for r in self.driver.read(self.clock()) if r.sensor == self.sensor.id]
        if not readings or readings[0].value is None:
            raise DriverError(f"sensor {self.sensor.id}: no value")
        return float(readings[0].value)

    # -- the end -----------------------------------------------------------------------------
    def next_due(self, performed: date, next_due: date | None, interval: timedelta | None) -> date:
        """The flag's date; else ``interval`` after ``performed``; else the previous interval;
        else :data:`DEFAULT_INTERVAL`."""
        if next_due is not None:
            return next_due
        if interval is None and self.previous is not None and self.previous.due > self.previous.performed:
            interval = self.previous.due - self.previous.performed
        return performed + (interval or DEFAULT_INTERVAL)

    def finish(self, outcome: Outcome, procedure: Procedure, technician: str, *, next_due: date | None = None,
               interval: timedelta | None = None, notes: str = "", dry_run: bool = False) -> Finished:
        """The record of the run; on a pass the new calibration into the config file (versioned,
        the previous file kept); the record into the spool. ``dry_run``: neither."""
        t = self.clock()
        due = self.next_due(from_ns(t).date(), next_due, interval)
        return write_run(self.config_path, self.data_dir, self.config, self.sensor, outcome, procedure, technician,
                         started_ns=self.started_ns, performed_ns=t, next_due=due, notes=notes, dry_run=dry_run)


def write_run(config_path: Path, data_dir: Path, config: FirmwareConfig, sensor: Sensor, outcome: Outcome,
              procedure: Procedure, technician: str, *, started_ns: int, performed_ns: int, next_due: date,
              notes: str = "", dry_run: bool = False) -> Finished:
    """What a run leaves behind (:meth:`CalibrationSession.finish`, and the demo's simulated
    technician): the record; on a pass the new ``calibration:`` block in the config file with
    a new ``config_version`` (the previous file kept as ``.prev``); the record into the spool
    as a ``calibration`` event. A config that cannot be written is said in the record."""
    performed = from_ns(performed_ns)
    rid = record_id(performed_ns)
    messages: list[str] = []
    version: str | None = None
    kept_layout = True
    new_text: str | None = None
    previous = sensor.calibration
    if outcome.result is Result.PASS:
        version = next_version(config.config_version)
        cal = _calibration(outcome.fit, performed.date(), next_due, rid)
        text = config_path.read_text(encoding="utf-8")
        new_text, _cfg, kept_layout = with_calibration(text, str(config_path), sensor.id, cal, version)
        if not kept_layout:
            messages.append(f"{config_path}: written out again without its comments (its layout could "
                            "not be edited in place)")
    else:
        messages.append("the calibration failed: the config is not changed, the sensor keeps its previous "
                        "correction and due date")
        if outcome.adjusted:
            outcome.details["attempted_fit"] = outcome.fit.describe()
    record = CalibrationRecord(
        id=rid, device=config.device, station=sensor.station or config.station,
        sensor=sensor.id, quantity=sensor.quantity, unit=sensor.unit, procedure=procedure,
        technician=technician, started=from_ns(started_ns), performed=performed,
        standards=outcome.standards, fouling=outcome.fouling,
        as_found=outcome.as_found, as_left=outcome.as_left, fit=outcome.fit_in_force, previous=outcome.previous,
        previous_performed=previous.performed if previous else None, criteria=outcome.criteria,
        result=outcome.result, problems=outcome.problems, next_due=next_due, config_version=version,
        details=outcome.details, notes=notes)
    if dry_run:
        return Finished(record, None, kept_layout, False, (*messages, "dry run: nothing written"))
    if new_text is not None:
        try:
            prev = write_config(config_path, new_text)
            messages.append(f"{config_path}: config_version {version} (the previous file is {prev.name})")
        except OSError as e:
            messages.append(f"{config_path}: NOT written ({e.strerror}); the record says so and the "
                            "sensor keeps its previous correction")
            record = record.model_copy(update={"config_version": None,
                                               "notes": (notes + "\n" if notes else "") +
                                               f"config not written: {e.strerror}"})
            version = None
    spool = Spool(data_dir / f"{config.device}.spool.db", config.device,
                  max_readings=config.spool.max_readings, policy=config.spool.policy)
    try:
        spool.add_event(encode_event(config.device, performed_ns, CALIBRATION_EVENT, record.to_data()))
    finally:
        spool.close()
    return Finished(record, version, kept_layout, True, tuple(messages))


def _calibration(fit: Fit, performed: date, due: date, record: str) -> Calibration:
    if fit.kind is FitKind.PIECEWISE:
        return Calibration(performed=performed, due=due, points=tuple(fit.points), record=record)
    return Calibration(performed=performed, due=due, slope=fit.slope, offset=fit.offset, record=record)


def utc_today(t_ns: int) -> date:
    return datetime.fromtimestamp(t_ns / 1e9, tz=timezone.utc).date()
