"""The logger's view: ``firmware_configs/<device>.yaml``.

One device at one station: which sensors, read by which driver on which port or address,
how often, in which unit, with which calibration. Driver-specific ``options`` are checked
by the driver's own options model when the edge agent loads the file (edge.config), so a
typo in an SDI-12 address is refused before the logger starts, with file, line and field.

.. code-block:: yaml

    device: LOG-OF12
    municipality: ramapo
    station: OF-12
    config_version: "3"
    broker: {url: "mqtts://broker.town.example:8883", username: LOG-OF12, password_file: /etc/ms4watch/mqtt.pass,
             ca_file: /etc/ms4watch/ca.crt, cert_file: /etc/ms4watch/LOG-OF12.crt, key_file: /etc/ms4watch/LOG-OF12.key}
    spool: {max_readings: 5000000}     # the file: <data dir>/<device>.spool.db
    sensors:
      - {id: flow, driver: sdi12, quantity: flow, unit: gpm, interval: 5min, port: /dev/ttyUSB0,
         options: {address: "0", value_index: 1},
         calibration: {performed: 2026-05-01, due: 2026-08-01, offset: 0.0, slope: 1.0}}
"""

from __future__ import annotations

import enum
import math
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from .calibration import piecewise_linear
from .ids import check_id
from .rules_config import Duration
from .timeutil import due_not_before_performed
from .errors import UnitError
from .units import Quantity, converter
from .yamlfile import load_yaml_model


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Calibration(_Model):
    """Last calibration and when the next is due; readings after ``due`` are flagged.

    The correction from the sensor's raw value to the reported one, in the sensor's unit:
    ``slope * raw + offset``, or, when ``points`` is given (a turbidity sensor whose
    response is not one straight line over its range), the piecewise-linear function through
    the knots ``[[raw, corrected], …]`` (raw strictly increasing), extended along its end
    segments. ``record`` is the id of the calibration record ``ms4watch calibrate`` wrote.
    """
    performed: date
    due: date
    offset: float = Field(default=0.0, allow_inf_nan=False)
    slope: float = Field(default=1.0, allow_inf_nan=False)
    points: tuple[tuple[float, float], ...] | None = Field(default=None, description="piecewise [[raw, corrected], …]")
    record: str | None = Field(default=None, description="calibration record id")

    @field_validator("due")
    @classmethod
    def _due_after_performed(cls, v: date, info: Any) -> date:
        return due_not_before_performed(v, info.data.get("performed"))

    @field_validator("points")
    @classmethod
    def _points(cls, v: tuple[tuple[float, float], ...] | None, info: Any) -> tuple[tuple[float, float], ...] | None:
        if v is None:
            return v
        if len(v) < 2 or any(b[0] <= a[0] for a, b in zip(v, v[1:])):
            raise ValueError("points need at least two [raw, corrected] pairs with raw strictly increasing")
        if any(not (math.isfinite(a) and math.isfinite(b)) for a, b in v):
            raise ValueError("points must be finite numbers")
        if info.data.get("slope", 1.0) != 1.0 or info.data.get("offset", 0.0) != 0.0:
            raise ValueError("give either points or slope/offset, not both")
        return v

    def overdue(self, day: date) -> bool:
        return day > self.due

    def correct(self, raw: float) -> float:
        """The corrected value of ``raw`` [the sensor's unit]."""
        if self.points:
            return piecewise_linear(raw, self.points)
        return self.slope * raw + self.offset


class BrokerSettings(_Model):
    url: str = "mqtt://127.0.0.1:1883"
    username: str | None = None
    password_file: Path | None = None
    keepalive_s: int = Field(default=30, ge=5, le=3600)
    ca_file: Path | None = Field(default=None, description="CA certificate (PEM) the broker's certificate must chain "
                                                           "to (mqtts://); default: the system's trusted CAs")
    cert_file: Path | None = Field(default=None, description="the logger's client certificate (PEM)")
    key_file: Path | None = Field(default=None, description="its private key (PEM)")

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not (v.startswith("mqtt://") or v.startswith("mqtts://")):
            raise ValueError(f"broker url must start with mqtt:// or mqtts://, got {v!r}")
        return v

    @model_validator(mode="after")
    def _tls_files(self) -> "BrokerSettings":
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")
        if (self.ca_file or self.cert_file) and not self.url.startswith("mqtts://"):
            raise ValueError(f"{'ca_file' if self.ca_file else 'cert_file'} is set but url {self.url!r} is not TLS: "
                             "use mqtts://")
        return self


class SpoolPolicy(str, enum.Enum):
    DROP_OLDEST = "drop_oldest"
    REFUSE_NEW = "refuse_new"


class SpoolSettings(_Model):
    """The logger's spool. Its file is not set here: it is ``<data dir>/<device>.spool.db``
    (``ms4watch edge --data-dir``), so a ``path`` that would be silently ignored is refused."""

    path: Path | None = Field(default=None, description="refused: see the class docstring")
    max_readings: int = Field(default=5_000_000, ge=1000, description="bound on disk; then the policy applies")
    policy: SpoolPolicy = SpoolPolicy.DROP_OLDEST
    batch_readings: int = Field(default=500, ge=1, le=10_000, description="readings per backlog message")

    @field_validator("path")
    @classmethod
    def _no_path(cls, v: Path | None) -> None:
        if v is not None:
            raise ValueError("not a setting: the spool is <data dir>/<device>.spool.db (`ms4watch edge --data-dir`, "
                             "default /var/lib/ms4watch); remove path")
        return None


class Sensor(_Model):
    id: Annotated[str, AfterValidator(lambda v: check_id("sensor id", v))]
    driver: str
    quantity: Quantity
    unit: str
    interval: Duration = Field(default=timedelta(minutes=5))
    port: str | None = None
    station: str | None = Field(default=None, description="if not the device's station")
    calibration: Calibration | None = None
    valid_range: tuple[float, float] | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str, info: Any) -> str:
        q = info.data.get("quantity")
        if q is not None:
            try:
                converter(q, v)
            except UnitError as e:
                raise ValueError(str(e)) from None
        return v

    @field_validator("interval")
    @classmethod
    def _interval(cls, v: timedelta) -> timedelta:
        if v < timedelta(seconds=1):
            raise ValueError("interval must be at least 1s")
        return v


class FirstFlushTrigger(_Model):
    """Sample the first flush of a storm: once per storm, when the storm's rain and the flow
    both pass their thresholds."""
    rain_in: Decimal = Field(default=Decimal("0.10"), gt=0, description="rain since the storm began [in]")
    flow_gpm: float = Field(default=1.0, ge=0, description="flow above this [gpm]")
    inter_event: Duration = Field(default=timedelta(hours=6), description="dry time that ends a storm")


class DryWeatherFlowTrigger(_Model):
    """Sample a dry-weather flow: the server's rule (REGULATIONS.md), decided on the logger."""
    lookback: Duration = Field(default=timedelta(hours=72))
    max_rain_in: Decimal = Field(default=Decimal("0.10"), gt=0, description="dry below this in the lookback [in]")
    flow_floor_gpm: float = Field(default=0.5, ge=0, description="[gpm]")
    min_duration: Duration = Field(default=timedelta(minutes=30))
    after_rain: Duration = Field(default=timedelta(hours=6), description="rain this recent: a storm, not dry weather")


class SamplingTriggers(_Model):
    first_flush: FirstFlushTrigger | None = None
    dry_weather_flow: DryWeatherFlowTrigger | None = None


class FirmwareConfig(_Model):
    device: Annotated[str, AfterValidator(lambda v: check_id("device id", v))]
    municipality: Annotated[str, AfterValidator(lambda v: check_id("municipality", v))]
    station: Annotated[str, AfterValidator(lambda v: check_id("station id", v))]
    config_version: str = "1"
    broker: BrokerSettings = Field(default_factory=BrokerSettings)
    spool: SpoolSettings = Field(default_factory=SpoolSettings)
    tip_in: Decimal | None = Field(default=None, gt=0)
    sensors: list[Sensor] = Field(min_length=1)
    triggers: SamplingTriggers = Field(default_factory=SamplingTriggers,
                                       description="sampling decisions taken on the logger")

    def problems(self) -> list[tuple[tuple[Any, ...], str]]:
        out = []
        seen: set[str] = set()
        for i, s in enumerate(self.sensors):
            if s.id in seen:
                out.append((("sensors", i, "id"), f"sensor id {s.id!r} is used twice"))
            seen.add(s.id)
        return out


def load_firmware_config(path: str | Path) -> FirmwareConfig:
    return load_yaml_model(path, FirmwareConfig)
