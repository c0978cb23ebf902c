"""Rule parameters: the defaults of ../shared/reference/REGULATIONS.md, each overridable
per municipality under ``rules:`` in the registry, each refused outside its allowed range.

Every number of REGULATIONS.md's "Range to allow" column is enforced here, and the error
names the range. Where the law itself sets the number as a limit (inspect "within 24
hours" of a storm's end, "at least every seven calendar days"; the 250 NTU backstop) an
override may only tighten it: a registry may shorten the 24 h and the 7 days, or lower the
backstop, never the other way.

Durations are written like ``72h`` or ``30min``; depths in inches, turbidity in NTU.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, field_validator

from .timeutil import format_duration, parse_duration


def _duration(v: Any) -> timedelta:
    try:
        return parse_duration(v)
    except ValueError as e:
        raise ValueError(str(e)) from None


Duration = Annotated[timedelta, BeforeValidator(_duration), PlainSerializer(format_duration, return_type=str)]


def _between(name: str, v: timedelta, lo: str, hi: str) -> timedelta:
    if not parse_duration(lo) <= v <= parse_duration(hi):
        raise ValueError(f"{name} must be between {lo} and {hi} (REGULATIONS.md), got {format_duration(v)}")
    return v


_N = TypeVar("_N", Decimal, float)


def _number_between(name: str, v: _N, lo: str, hi: str, unit: str = "") -> _N:
    """``lo <= v <= hi`` (bounds written as in REGULATIONS.md, e.g. ``"0.10"``)."""
    if not Decimal(lo) <= Decimal(str(v)) <= Decimal(hi):
        raise ValueError(f"{name} must be between {lo} and {hi}{' ' + unit if unit else ''} (REGULATIONS.md), "
                         f"got {format(v, 'g') if isinstance(v, float) else v}")
    return v


def check_report_interval(name: str, v: timedelta) -> timedelta:
    """A station's expected report interval: the longest it may stay silent when healthy."""
    if not timedelta(seconds=1) <= v <= timedelta(days=7):
        raise ValueError(f"{name} must be between 1s and 7d, got {format_duration(v)}")
    return v


SHORTEN_ONLY = "REGULATIONS.md: the law's maximum; a registry may shorten it, never lengthen it"


class RuleSettings(BaseModel):
    """Every default number of REGULATIONS.md, with its allowed range."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Dry weather (IDDE screening): < 0.10 in in the previous 72 h.
    dry_lookback: Duration = Field(default=timedelta(hours=72), description="trailing window [h], 48-72 h")
    dry_max_rain_in: Decimal = Field(default=Decimal("0.10"), description="rain below this in the window is dry "
                                                                        "[in], 0.05-0.10 in")
    # Dry-weather flow: above the outfall's floor, sustained.
    dwf_min_duration: Duration = Field(default=timedelta(minutes=30), description="sustained flow [min]")
    # Turbidity contrast (Schenectady ch. 148 Art. I; 6 NYCRR 703.2).
    turbidity_delta_ntu: float = Field(default=5.0, description="[NTU], 5-25 NTU")
    turbidity_fraction: float = Field(default=0.10, description="of upstream [-], 0.10-0.20")
    turbidity_min_duration: Duration = Field(default=timedelta(minutes=15), description="[min]")
    turbidity_backstop_ntu: float = Field(default=250.0, description="absolute backstop on the downstream probe "
                                                                     "[NTU]; may only be lowered (0-250 NTU)")
    turbidity_align_tolerance: Duration = Field(default=timedelta(minutes=5),
                                                description="max time between paired readings [min]")
    # Storms (Schenectady ch. 148: inspection within 24 h of a storm >= 0.5 in).
    storm_min_depth_in: Decimal = Field(default=Decimal("0.50"), description="qualifying storm depth [in], inclusive, "
                                                                           "0.25-0.50 in")
    storm_inter_event: Duration = Field(default=timedelta(hours=6), description="minimum inter-event time, 2-24 h")
    inspection_after_storm: Duration = Field(default=timedelta(hours=24),
                                             description="[h], the law's 24 h at most (may only be shortened)")
    routine_inspection_interval: Duration = Field(default=timedelta(days=7),
                                                  description="[d], whole calendar days, the law's 7 at most")
    double_tip: Duration = Field(default=timedelta(seconds=1), description="second tip within this is discarded, 0.1-1 s")
    dry_after_rain: Duration = Field(default=timedelta(hours=6),
                                     description="rain this recently means a storm is still running off: not dry "
                                                 "weather (the minimum inter-event time), 0-24 h; 0 turns it off")
    dry_rain_max_gap: Duration = Field(default=timedelta(hours=1),
                                       description="rain rows further apart leave a data gap: dry weather unknown")
    # Data quality (QARTOD) for turbidity probes.
    qc_turbidity_max_ntu: float = Field(default=4000.0, gt=0, description="gross range fail above [NTU]")
    qc_turbidity_spike_ntu: float = Field(default=200.0, gt=0, description="spike test fail threshold [NTU]")
    qc_flat_line: Duration = Field(default=timedelta(hours=12), description="unchanged this long fails QC")
    # Health.
    stale_intervals: int = Field(default=3, ge=1, le=100, description="missed reporting intervals before stale")
    report_interval: Duration = Field(default=timedelta(minutes=15),
                                      description="expected report interval of a station that states none (registry "
                                                  "report_interval or its logger's status), 1s-7d")
    low_battery_v: float = Field(default=11.8, gt=0, le=30, description="[V]")
    low_battery_hysteresis_v: float = Field(default=0.2, ge=0, le=5, description="recovered at low_battery_v + this [V]")
    # Streaming.
    lateness: Duration = Field(default=timedelta(hours=2), description="out-of-order window of the streaming engine")
    # Calibration (both laws: monitoring devices "shall be calibrated").
    calibration_warn: Duration = Field(default=timedelta(days=14),
                                       description="warn the SMO and the technicians this long before a sensor's "
                                                   "calibration falls due, 1-60 days")

    @field_validator("calibration_warn")
    @classmethod
    def _calibration_warn(cls, v: timedelta) -> timedelta:
        if not timedelta(days=1) <= v <= timedelta(days=60):
            raise ValueError(f"calibration_warn must be between 1d and 60d, got {format_duration(v)}")
        return v

    @field_validator("dry_lookback")
    @classmethod
    def _dry(cls, v: timedelta) -> timedelta:
        return _between("dry_lookback", v, "48h", "72h")

    @field_validator("storm_inter_event")
    @classmethod
    def _mit(cls, v: timedelta) -> timedelta:
        return _between("storm_inter_event", v, "2h", "24h")

    @field_validator("dry_after_rain")
    @classmethod
    def _after_rain(cls, v: timedelta) -> timedelta:
        return _between("dry_after_rain", v, "0s", "24h")

    @field_validator("report_interval")
    @classmethod
    def _report(cls, v: timedelta) -> timedelta:
        return check_report_interval("report_interval", v)

    @field_validator("double_tip")
    @classmethod
    def _tip(cls, v: timedelta) -> timedelta:
        return _between("double_tip", v, "0.1s", "1s")

    @field_validator("dry_max_rain_in")
    @classmethod
    def _dry_depth(cls, v: Decimal) -> Decimal:
        return _number_between("dry_max_rain_in", v, "0.05", "0.10", "in")

    @field_validator("storm_min_depth_in")
    @classmethod
    def _storm_depth(cls, v: Decimal) -> Decimal:
        return _number_between("storm_min_depth_in", v, "0.25", "0.50", "in")

    @field_validator("turbidity_delta_ntu")
    @classmethod
    def _delta(cls, v: float) -> float:
        return _number_between("turbidity_delta_ntu", v, "5", "25", "NTU")

    @field_validator("turbidity_fraction")
    @classmethod
    def _fraction(cls, v: float) -> float:
        return _number_between("turbidity_fraction", v, "0.1", "0.2")

    @field_validator("turbidity_backstop_ntu")
    @classmethod
    def _backstop(cls, v: float) -> float:
        # REGULATIONS.md "absolute backstop 250 NTU": a lower backstop alarms sooner (tighter)
        if not 0 < v <= 250:
            raise ValueError("turbidity_backstop_ntu must be more than 0 and at most 250 NTU (REGULATIONS.md: "
                             f"absolute backstop 250 NTU; a registry may lower it, never raise it), got {v:g}")
        return v

    @field_validator("inspection_after_storm")
    @classmethod
    def _after_storm(cls, v: timedelta) -> timedelta:
        # Schenectady ch. 148 Art. I: "within 24 hours of the end of a storm event"
        if not timedelta(0) < v <= timedelta(hours=24):
            raise ValueError(f"inspection_after_storm must be more than 0 and at most 24h ({SHORTEN_ONLY}), "
                             f"got {format_duration(v)}")
        return v

    @field_validator("routine_inspection_interval")
    @classmethod
    def _routine(cls, v: timedelta) -> timedelta:
        # Schenectady ch. 148 Art. I: "at least every seven calendar days" (counted in days)
        if not timedelta(days=1) <= v <= timedelta(days=7) or v % timedelta(days=1):
            raise ValueError(f"routine_inspection_interval must be whole days from 1d to 7d ({SHORTEN_ONLY}), "
                             f"got {format_duration(v)}")
        return v

    @field_validator("dwf_min_duration", "turbidity_min_duration", "turbidity_align_tolerance", "lateness",
                     "dry_rain_max_gap", "qc_flat_line")
    @classmethod
    def _positive(cls, v: timedelta) -> timedelta:
        if v <= timedelta(0):
            raise ValueError("must be a positive duration")
        return v
