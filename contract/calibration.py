"""Calibration records, and the acceptance limits the logger and the server both apply.

A run of ``ms4watch calibrate`` on a logger produces one :class:`CalibrationRecord`: who
calibrated which sensor when, against which standards (with their lot numbers), what the
sensor read before anything was changed (*as found*), the correction it now needs (the
:class:`Fit`), what it read afterwards (*as left*), whether that passes, and when the next
calibration is due. It travels from the logger's spool to the server as an event on the
device's ``events`` channel, ``kind: "calibration"`` (see :mod:`.wire`), and the server
keeps every one of them (calibration history, at least three years).

Acceptance (pure, exact for the decimals a technician types):

* turbidity, USGS TM 1-D3 calibration criteria: within ±0.5 turbidity units or ±5 % of the
  standard's value, whichever is greater;
* data whose combined fouling and drift error exceeds ±30 % (turbidity) is not reportable
  (TM 1-D3, maximum allowable limits for reporting), used by the drift corrections;
* other quantities: the limits the technician (or the maker's specification) states, as a
  :class:`Criteria` with an absolute and a relative part.

References
----------
Wagner, R.J., Boulger, R.W., Jr., Oblinger, C.J., and Smith, B.A., 2006, Guidelines and
standard procedures for continuous water-quality monitors — Station operation, record
computation, and data reporting: U.S. Geological Survey Techniques and Methods 1-D3
(calibration criteria; fouling and drift corrections; maximum allowable limits).
Both local laws (Ramapo ch. 218, Schenectady ch. 148): "All devices used to measure
stormwater flow and quality shall be calibrated to ensure their accuracy."
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from .ids import check_id
from .units import Quantity

CALIBRATION_SCHEMA: Final = "ms4watch.calibration/1"
CALIBRATION_EVENT = "calibration"
"""The ``kind`` of the event that carries a calibration record (``data``: the record)."""

__all__ = ["CALIBRATION_EVENT", "CALIBRATION_SCHEMA", "CalibrationRecord", "CalibrationState", "CheckPoint",
           "Criteria", "DueState", "Fit", "FitKind", "Fouling", "MAX_ALLOWABLE_TURBIDITY_PCT", "Procedure", "Result",
           "Standard", "TURBIDITY_CRITERIA", "check_point", "due_state", "piecewise_linear"]


# -- acceptance -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Criteria:
    """An error is acceptable when ``|reading - reference| <= max(abs_limit, pct_limit % of
    |reference|)``. ``abs_limit`` [the sensor's unit], ``pct_limit`` [%]; either may be 0."""

    abs_limit: float
    pct_limit: float
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("abs_limit", "pct_limit"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.abs_limit == 0 and self.pct_limit == 0:
            raise ValueError("criteria need an absolute or a relative limit")

    def limit(self, reference: float) -> float:
        """The allowed |error| at ``reference`` [the sensor's unit]."""
        return float(self._limit(_dec(reference)))

    def _limit(self, ref: Decimal) -> Decimal:
        return max(_dec(self.abs_limit), _dec(self.pct_limit) * abs(ref) / 100)

    def accepts(self, reference: float, reading: float) -> bool:
        """Whether ``reading`` is within the limit of ``reference`` (the boundary itself passes).

        Computed in decimal from the numbers' shortest decimal forms, so a reading exactly on
        the boundary as typed (105 for 100 at ±5 %; 10.5 for 10 at ±0.5) passes and one a
        hundredth past it fails, whatever binary floating point would have made of it.
        """
        ref, got = _dec(reference), _dec(reading)
        return abs(got - ref) <= self._limit(ref)

    def describe(self) -> str:
        parts = []
        if self.abs_limit:
            parts.append(f"±{self.abs_limit:g}")
        if self.pct_limit:
            parts.append(f"±{self.pct_limit:g} %")
        return " or ".join(parts) + (", whichever is greater" if len(parts) == 2 else "")


TURBIDITY_CRITERIA = Criteria(0.5, 5.0, "USGS TM 1-D3 calibration criteria: ±0.5 turbidity units or ±5 % of the "
                                        "measured value, whichever is greater")
"""Turbidity calibration acceptance (REGULATIONS.md, USGS TM 1-D3)."""

MAX_ALLOWABLE_TURBIDITY_PCT = 30.0
"""Turbidity data whose combined fouling + drift error exceeds ±30 % is not reportable
(REGULATIONS.md, USGS TM 1-D3 maximum allowable limits) [%]."""


def _dec(x: float) -> Decimal:
    if isinstance(x, Decimal):
        return x
    if not math.isfinite(x):
        raise ValueError(f"not a finite number: {x!r}")
    return Decimal(repr(float(x)))


def piecewise_linear(x: float, knots: tuple[tuple[float, float], ...] | list[tuple[float, float]]) -> float:
    """The piecewise-linear function through ``knots`` ``[(x, y), …]`` (x strictly increasing,
    at least two), extended beyond the first and last knot along the end segments."""
    if len(knots) < 2:
        raise ValueError("a piecewise-linear function needs at least two knots")
    i = 1
    while i < len(knots) - 1 and x > knots[i][0]:
        i += 1
    (x0, y0), (x1, y1) = knots[i - 1], knots[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


# -- the record -------------------------------------------------------------------------------
class _Model(BaseModel):
    # defer_build: validators are built at the first calibration record, not at import.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def _finite(v: float) -> float:
    if not math.isfinite(v):
        raise ValueError("must be a finite number")
    return v


Finite = Annotated[float, AfterValidator(_finite)]
Text = Annotated[str, Field(max_length=200)]
Day = date


class Procedure(str, enum.Enum):
    """What was done (``ms4watch calibrate <procedure>``)."""

    TURBIDITY = "turbidity"              # multi-point against formazin / StablCal standards
    RAIN_VOLUME = "rain_volume"          # a known volume through the funnel, tips counted
    LEVEL_ZERO = "level_zero"            # zero offset against a measured depth
    FLOW_PRIMARY = "flow_primary"        # against a primary device: V-notch weir, Manning pipe, area × velocity
    FLOW_VOLUMETRIC = "flow_volumetric"  # a bucket of known volume, timed


class Result(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"


class FitKind(str, enum.Enum):
    LINEAR = "linear"          # corrected = slope * raw + offset
    PIECEWISE = "piecewise"    # corrected = piecewise_linear(raw, points)


class Fit(_Model):
    """A correction from the sensor's raw value to the corrected one, in the sensor's unit."""

    kind: FitKind = FitKind.LINEAR
    slope: Finite = 1.0
    offset: Finite = 0.0
    points: tuple[tuple[Finite, Finite], ...] = Field(default=(), max_length=20)

    @field_validator("points")
    @classmethod
    def _increasing(cls, v: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
        if v and (len(v) < 2 or any(b[0] <= a[0] for a, b in zip(v, v[1:]))):
            raise ValueError("points need at least two knots with raw values strictly increasing")
        return v

    def correct(self, raw: float) -> float:
        if self.kind is FitKind.PIECEWISE:
            return piecewise_linear(raw, self.points)
        return self.slope * raw + self.offset

    def describe(self) -> str:
        if self.kind is FitKind.PIECEWISE:
            return "piecewise " + ", ".join(f"{a:g}→{b:g}" for a, b in self.points)
        return f"slope {self.slope:.6g}, offset {self.offset:+.6g}"


class Standard(_Model):
    """A reference: a turbidity standard, a volume poured, a measured depth or flow."""

    value: Finite = Field(description="its true value [unit]")
    unit: str = Field(max_length=20)
    kind: str = Field(max_length=40, description="formazin, stablcal, volume, depth, weir, pipe, bucket, …")
    lot: str | None = Field(default=None, max_length=64)
    expires: Day | None = None
    note: Text | None = None

    def label(self) -> str:
        lot = f" lot {self.lot}" if self.lot else ""
        return f"{self.value:g} {self.unit} {self.kind}{lot}"


class CheckPoint(_Model):
    """The sensor against one reference; every number in the sensor's unit."""

    label: Text
    reference: Finite
    reading: Finite = Field(description="what the sensor reported, with the correction in force then")
    raw: Finite | None = Field(default=None, description="before any correction")
    error: Finite = Field(description="reading - reference")
    error_pct: Finite | None = Field(default=None, description="100 * error / reference; none at a zero reference")
    limit: Finite = Field(description="the allowed |error|")
    ok: bool


def check_point(label: str, reference: float, reading: float, criteria: Criteria,
                raw: float | None = None) -> CheckPoint:
    """``reading`` against ``reference`` under ``criteria``, as a :class:`CheckPoint`."""
    error = float(_dec(reading) - _dec(reference))
    pct = None if reference == 0 else round(100.0 * error / reference, 6)
    return CheckPoint(label=label, reference=reference, reading=reading, raw=raw, error=round(error, 9),
                      error_pct=pct, limit=criteria.limit(reference), ok=criteria.accepts(reference, reading))


class Fouling(_Model):
    """Readings in the stream just before and just after cleaning the sensor (TM 1-D3): the
    fouling error is ``before - after`` [the sensor's unit]."""

    before_cleaning: Finite
    after_cleaning: Finite

    @property
    def error(self) -> float:
        return self.before_cleaning - self.after_cleaning


def _printable(v: str) -> str:
    if not v.strip() or not v.isprintable():
        raise ValueError("must be printable text, not empty")
    return v.strip()


class CalibrationRecord(_Model):
    """One calibration run of one sensor (``data`` of a ``calibration`` event)."""

    schema_: Literal["ms4watch.calibration/1"] = Field(default=CALIBRATION_SCHEMA, alias="schema")
    id: Annotated[str, AfterValidator(lambda v: check_id("calibration record id", v))]
    device: Annotated[str, AfterValidator(lambda v: check_id("device id", v))]
    station: Annotated[str, AfterValidator(lambda v: check_id("station id", v))]
    sensor: Annotated[str, AfterValidator(lambda v: check_id("sensor id", v))]
    quantity: Quantity
    unit: str = Field(max_length=20)
    procedure: Procedure
    technician: Annotated[str, Field(max_length=100), AfterValidator(_printable)]
    started: AwareDatetime
    performed: AwareDatetime = Field(description="when the run ended")
    standards: tuple[Standard, ...] = Field(default=(), max_length=20)
    fouling: Fouling | None = None
    as_found: tuple[CheckPoint, ...] = Field(default=(), max_length=20)
    as_left: tuple[CheckPoint, ...] = Field(default=(), max_length=20)
    fit: Fit = Field(description="the correction in force after the run")
    previous: Fit | None = Field(default=None, description="the correction before the run, None: none")
    previous_performed: Day | None = None
    criteria: Text = ""
    result: Result
    problems: tuple[Text, ...] = Field(default=(), max_length=40, description="each names the offending point")
    next_due: Day
    config_version: str | None = Field(default=None, max_length=100,
                                       description="the logger config that carries the new coefficients")
    details: dict[Annotated[str, Field(max_length=40)], Finite | int | bool | Text | None] = Field(
        default_factory=dict, max_length=40, description="procedure-specific numbers, units in the names")
    notes: Annotated[str, Field(max_length=2000)] = ""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("performed")
    @classmethod
    def _after_start(cls, v: Any, info: Any) -> Any:
        started = info.data.get("started")
        if started is not None and v < started:
            raise ValueError("performed is before started")
        return v

    @field_validator("next_due")
    @classmethod
    def _due_after(cls, v: date, info: Any) -> date:
        performed = info.data.get("performed")
        if performed is not None and v < performed.date():
            raise ValueError(f"next_due {v} is before the day it was performed")
        return v

    def to_data(self) -> dict[str, Any]:
        """The record as an event's ``data`` (JSON-able)."""
        return self.model_dump(mode="json", by_alias=True)

    @property
    def worst_as_found_pct(self) -> float | None:
        return _worst(self.as_found)

    @property
    def worst_as_left_pct(self) -> float | None:
        return _worst(self.as_left)


def _worst(points: tuple[CheckPoint, ...]) -> float | None:
    pcts = [p.error_pct for p in points if p.error_pct is not None]
    return max(pcts, key=abs) if pcts else None


# -- what the stores say about a sensor now ------------------------------------------------
class DueState(str, enum.Enum):
    OK = "ok"
    DUE_SOON = "due_soon"     # within the warning period before the due day
    OVERDUE = "overdue"       # from the day after the due day (readings carry calibration_overdue)


@dataclass(frozen=True)
class CalibrationState:
    """One calibrated sensor as the stores know it now: its logger's latest status (the
    calibration in force) and the latest calibration record of it, if any.

    ``days_left``: whole days from ``today`` (UTC) to ``due``; 0 on the due day, negative
    once overdue (the day the logger starts flagging readings ``calibration_overdue``).
    """

    device: str
    station: str
    sensor: str
    performed: date
    due: date
    days_left: int
    state: DueState
    last_record: str | None = None       # id of the latest calibration record
    last_result: str | None = None       # pass / fail
    technician: str | None = None
    reported_ns: int | None = None       # when the server last heard it from the logger


def due_state(due: date, today: date, warn_days: int) -> tuple[int, DueState]:
    """``(days_left, state)`` of a sensor due on ``due`` [UTC day], judged on ``today``."""
    left = (due - today).days
    if left < 0:
        return left, DueState.OVERDUE
    return left, DueState.DUE_SOON if left <= warn_days else DueState.OK
