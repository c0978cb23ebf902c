"""What each calibration procedure computes, without any I/O: check points against the
references, the fit, the verdict naming each offending point, the details kept in the record.

The session (:mod:`.session`) takes the readings through the sensor's driver and asks the
technician; everything it then decides is decided here, so it is tested with numbers
computed by hand.

Readings handed in are the sensor's **raw** values (the driver run without the logger's
correction); ``as found`` is what the logger reported with the calibration then in force
(``previous.correct(raw)``), ``as left`` what it reports with the new one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from typing import Sequence

from ...contract.calibration import TURBIDITY_CRITERIA, CheckPoint, Criteria, Fit, FitKind, Fouling, Result, \
    Standard, check_point
from ...contract.firmware import Calibration
from . import ratings
from .fits import choose_fit, offset_fit, slope_fit

__all__ = ["previous_fit", "as_found", "as_left", "verdict", "needs_adjustment", "Outcome", "turbidity",
           "rain_volume", "level_zero", "flow_check", "FlowReference", "flow_reference"]


def previous_fit(cal: Calibration | None) -> Fit | None:
    """The correction a ``calibration:`` block applies, as a :class:`Fit` (None: none)."""
    if cal is None:
        return None
    if cal.points:
        return Fit(kind=FitKind.PIECEWISE, points=tuple(cal.points))
    return Fit(kind=FitKind.LINEAR, slope=cal.slope, offset=cal.offset)


def _apply(fit: Fit | None, raw: float) -> float:
    return raw if fit is None else fit.correct(raw)


def _r(x: float) -> float:
    """Readings as a logger reports them: rounded to 9 significant decimals (no binary noise)."""
    return float(f"{x:.9g}")


def as_found(standards: Sequence[Standard], raws: Sequence[float], previous: Fit | None,
             criteria: Criteria) -> tuple[CheckPoint, ...]:
    """Each standard against what the logger reported (``previous`` applied to ``raw``)."""
    _same_length(standards, raws)
    return tuple(check_point(s.label(), s.value, _r(_apply(previous, raw)), criteria, raw=raw)
                 for s, raw in zip(standards, raws))


def as_left(standards: Sequence[Standard], raws: Sequence[float], fit: Fit, criteria: Criteria) -> tuple[CheckPoint, ...]:
    """Each standard against what the logger reports with the new ``fit``."""
    _same_length(standards, raws)
    return tuple(check_point(s.label(), s.value, _r(fit.correct(raw)), criteria, raw=raw)
                 for s, raw in zip(standards, raws))


def _same_length(standards: Sequence[Standard], raws: Sequence[float]) -> None:
    if len(standards) != len(raws):
        raise ValueError(f"{len(standards)} standards but {len(raws)} readings")


def needs_adjustment(points: Sequence[CheckPoint]) -> bool:
    """TM 1-D3: recalibrate when a calibration check is outside the criteria."""
    return not all(p.ok for p in points)


def pct_text(pct: float, limit_pct: float | None) -> str:
    """``pct`` [%] signed, with as many significant digits (3 at least) as it takes to stay on
    its side of ``limit_pct`` [%]: +1.0038 % beside a ±1 % limit is "+1.004", never "+1"."""
    for digits in range(3, 16):
        text = f"{pct:+.{digits}g}"
        if limit_pct is None:
            return text
        shown, lim = abs(float(text)), abs(limit_pct)
        if (shown > lim) == (abs(pct) > lim) and (shown != lim or abs(pct) == lim):
            return text
    return f"{pct:+.15g}"


def point_pct(p: CheckPoint) -> str:
    """`` (+6.2 %)``: the point's error in percent of its reference, or nothing at a zero reference."""
    if p.error_pct is None:
        return ""
    return f" ({pct_text(p.error_pct, 100 * p.limit / abs(p.reference) if p.reference else None)} %)"


def describe_point(stage: str, p: CheckPoint, unit: str) -> str:
    """``as-left 100 NTU stablcal lot B2: read 106.2 NTU, +6.2 NTU (+6.2 %), limit ±5 NTU``."""
    pct = point_pct(p)
    return (f"{stage} {p.label}: read {p.reading:.6g} {unit}, {p.error:+.4g} {unit}{pct}, "
            f"limit ±{p.limit:.4g} {unit}")


def verdict(points: Sequence[CheckPoint], stage: str, unit: str) -> tuple[Result, tuple[str, ...]]:
    """PASS when every point is within its limit; else FAIL naming each offending point."""
    problems = tuple(describe_point(stage, p, unit) for p in points if not p.ok)
    return (Result.FAIL if problems or not points else Result.PASS), problems


@dataclass
class Outcome:
    """What a procedure decided: the record's numbers, before the session adds who/when."""

    standards: tuple[Standard, ...]
    as_found: tuple[CheckPoint, ...]
    as_left: tuple[CheckPoint, ...]
    fit: Fit
    previous: Fit | None
    result: Result
    problems: tuple[str, ...]
    criteria: str
    adjusted: bool
    details: dict[str, float | int | bool | str | None] = field(default_factory=dict)
    fouling: Fouling | None = None

    @property
    def fit_in_force(self) -> Fit:
        """The correction the sensor has after the run: the new fit on a pass, else the
        previous one (a failed run changes nothing)."""
        return self.fit if self.result is Result.PASS else (self.previous or Fit())


def check_expiry(standards: Sequence[Standard], on: date, reason: str | None) -> list[Standard]:
    """The standards of a run on ``on``: one past its expiry date (good through that day)
    refused (ValueError naming it) unless ``reason`` is given, which is written into that
    standard's note, so the record carries it."""
    out: list[Standard] = []
    for st in standards:
        if st.expires is None or st.expires >= on:
            out.append(st)
            continue
        if not reason:
            raise ValueError(f"standard {st.label()} expired on {st.expires} (the run is on {on}): use one in date, "
                             "or give --expired-ok REASON to use it anyway (the record says so)")
        out.append(st.model_copy(update={"note": f"EXPIRED on {st.expires}, used on {on}: {reason}"}))
    return out


# -- turbidity: multi-point against standards --------------------------------------------
def turbidity(standards: Sequence[Standard], found_raw: Sequence[float], previous: Fit | None,
              left_raw: Sequence[float] | None, *, fit_kind: str = "auto", adjust: str = "auto",
              unit: str = "NTU", criteria: Criteria = TURBIDITY_CRITERIA) -> Outcome:
    """A multi-point turbidity calibration (USGS TM 1-D3).

    ``found_raw``: the raw reading in each standard before anything changed. ``adjust``:
    ``auto`` fits a new correction only when an as-found point is outside the criteria,
    ``always`` / ``never`` as they say. ``left_raw``: the raw readings in the standards
    afterwards (None when nothing was adjusted: the as-found check stands as the as-left).
    The result is judged on the as-left points.
    """
    found = as_found(standards, found_raw, previous, criteria)
    do = adjust == "always" or (adjust == "auto" and needs_adjustment(found))
    if adjust not in ("auto", "always", "never"):
        raise ValueError(f"adjust must be auto, always or never, got {adjust!r}")
    fit = choose_fit(list(zip(found_raw, (s.value for s in standards))), criteria, fit_kind) if do else \
        (previous or Fit())
    if do and left_raw is None:
        raise ValueError("an adjusted sensor needs its as-left readings")
    left = as_left(standards, left_raw, fit, criteria) if left_raw is not None else found
    result, problems = verdict(left, "as-left" if left_raw is not None else "as-found", unit)
    return Outcome(tuple(standards), found, left if left_raw is not None else (), fit, previous, result, problems,
                   criteria.source or criteria.describe(), do,
                   {"standards_n": len(standards), "fit_kind": fit.kind.value,
                    "worst_as_found_pct": _worst(found)})


def _worst(points: Sequence[CheckPoint]) -> float | None:
    pcts = [p.error_pct for p in points if p.error_pct is not None]
    return max(pcts, key=abs) if pcts else None


# -- rain gauge: a known volume through the funnel --------------------------------------------
def rain_volume(volume_ml: float, orifice_diameter_in: float, tip_size: float, tip_in: float, counted_tips: int,
                previous: Fit | None, tolerance_pct: float, unit: str = "in", apply_factor: bool = True) -> Outcome:
    """A tipping bucket checked with ``volume_ml`` [mL] poured slowly through a funnel of
    ``orifice_diameter_in`` [in]: expected against counted tips.

    ``tip_size`` is one tip in the sensor's ``unit``; ``tip_in`` the same in inches. The
    correction factor is ``expected / counted`` (the gauge's ``slope``); the gauge passes
    when the counted tips are within the maker's ``tolerance_pct`` [%] of the expected
    ones; a failing gauge needs its bucket adjusted (its screws) and a new run, so its
    coefficients are not changed.
    """
    expected = ratings.expected_tips(volume_ml, orifice_diameter_in, tip_in)
    crit = Criteria(0.0, tolerance_pct, f"maker's tolerance ±{tolerance_pct:g} %")
    depth = expected * tip_size                       # the rain the volume stands for [unit]
    std = Standard(value=_r(depth), unit=unit, kind="volume",
                   note=f"{volume_ml:g} mL through a {orifice_diameter_in:g} in orifice")
    counted = _r(counted_tips * tip_size)             # the gauge itself, before any factor
    found = (check_point(std.label(), std.value, counted, crit, raw=counted),)
    tips_ok = found[0].ok
    factor = expected / counted_tips if counted_tips else math.inf
    problems: tuple[str, ...] = ()
    if not tips_ok:
        off = pct_text(100 * (counted_tips - expected) / expected, tolerance_pct)
        problems = (f"counted {counted_tips} tips for {expected:.4g} expected ({off} %), "
                    f"outside the maker's tolerance ±{tolerance_pct:g} %: adjust the bucket and run again",)
    result = Result.PASS if tips_ok else Result.FAIL
    adjusted = result is Result.PASS and apply_factor
    fit = Fit(kind=FitKind.LINEAR, slope=_r(factor), offset=0.0) if adjusted else (previous or Fit())
    return Outcome((std,), found, (), fit, previous, result, problems, crit.source, adjusted,
                   {"volume_ml": volume_ml, "orifice_diameter_in": orifice_diameter_in, "tip_in": tip_in,
                    "tip_volume_ml": round(ratings.funnel_tip_volume_ml(orifice_diameter_in, tip_in), 4),
                    "expected_tips": round(expected, 4), "counted_tips": counted_tips,
                    "correction_factor": round(factor, 6) if counted_tips else None,
                    "reported_with_previous": _r(_apply(previous, counted)), "tolerance_pct": tolerance_pct})


# -- level: zero offset against a measured depth ---------------------------------------------
def level_zero(measured: float, found_raw: float, previous: Fit | None, left_raw: float | None, tolerance: float,
               unit: str = "ft", adjust: str = "auto") -> Outcome:
    """A level (depth) sensor against the depth the technician measured (``measured``, in the
    sensor's ``unit``): the offset moves so the raw reading reads the measured depth; the
    slope stays. ``tolerance`` [unit] is the allowed |error|."""
    crit = Criteria(tolerance, 0.0, f"±{tolerance:g} {unit}")
    std = Standard(value=measured, unit=unit, kind="depth", note="measured depth")
    found = as_found((std,), (found_raw,), previous, crit)
    do = adjust == "always" or (adjust == "auto" and needs_adjustment(found))
    slope = previous.slope if previous is not None and previous.kind is FitKind.LINEAR else 1.0
    fit = offset_fit(found_raw, measured, slope) if do else (previous or Fit())
    if do and left_raw is None:
        raise ValueError("an adjusted sensor needs its as-left reading")
    left = as_left((std,), (left_raw,), fit, crit) if left_raw is not None else found
    result, problems = verdict(left, "as-left" if left_raw is not None else "as-found", unit)
    return Outcome((std,), found, left if left_raw is not None else (), fit, previous, result, problems,
                   crit.source, do, {"measured": measured, "offset_change": round(fit.offset - (previous.offset if previous else 0.0), 9)})


# -- flow: against a primary device or a bucket ------------------------------------------------
@dataclass(frozen=True)
class FlowReference:
    """One reference flow [the sensor's unit] and how it was obtained."""

    value: float
    standard: Standard
    details: dict[str, float | str]


def flow_reference(method: str, unit: str, *, head_ft: float | None = None, depth_ft: float | None = None,
                   diameter_in: float | None = None, slope: float | None = None, n: float | None = None,
                   material: str | None = None, velocity_ft_s: float | None = None,
                   volume_gal: float | None = None, seconds: float | None = None) -> FlowReference:
    """The reference flow of a field measurement, converted into the sensor's ``unit``:

    * ``vnotch``: a 90° V-notch weir, head ``head_ft`` (:func:`~.ratings.vnotch_90_cfs`);
    * ``manning``: a circular pipe ``diameter_in`` [in] flowing ``depth_ft`` deep at slope
      ``slope`` [ft/ft], roughness ``n`` or a pipe ``material``;
    * ``area_velocity``: the wetted area of that pipe at ``depth_ft`` times a mean velocity
      ``velocity_ft_s`` measured with a handheld meter;
    * ``bucket``: ``volume_gal`` [gal] filled in ``seconds`` [s].
    """
    from ...contract.units import Quantity, converter

    def need(name: str, v: float | None) -> float:
        if v is None:
            raise ValueError(f"the {method} method needs {name}")
        return v

    if method == "vnotch":
        h = need("the head (--head-ft)", head_ft)
        q = ratings.vnotch_90_cfs(h)
        std = Standard(value=0.0, unit="cfs", kind="vnotch_90", note=f"head {h:g} ft, Q = 2.49 h^2.48 (USBR WMM eq. 7-6)")
        details: dict[str, float | str] = {"head_ft": h}
    elif method in ("manning", "area_velocity"):
        y, d = need("the depth (--depth-ft)", depth_ft), need("the pipe diameter (--diameter-in)", diameter_in) / 12
        if method == "manning":
            rough = n if n is not None else ratings.manning_n(need("n or the pipe material", material))  # type: ignore[arg-type]
            s = need("the slope (--slope)", slope)
            q = ratings.manning_pipe_cfs(y, d, s, rough)
            std = Standard(value=0.0, unit="cfs", kind="manning_pipe",
                           note=f"{d * 12:g} in pipe, depth {y:g} ft, S {s:g}, n {rough:g}")
            details = {"depth_ft": y, "diameter_in": d * 12, "slope_ft_per_ft": s, "manning_n": rough,
                       "material": material or ""}
        else:
            v = need("the mean velocity (--velocity-ft-s)", velocity_ft_s)
            area, _ = ratings.circular_segment(y, d)
            q = ratings.area_velocity_cfs(area, v)
            std = Standard(value=0.0, unit="cfs", kind="area_velocity",
                           note=f"{d * 12:g} in pipe, depth {y:g} ft, area {area:.4g} ft², {v:g} ft/s")
            details = {"depth_ft": y, "diameter_in": d * 12, "area_ft2": round(area, 6), "velocity_ft_s": v}
    elif method == "bucket":
        vol, t = need("the volume (--volume-gal)", volume_gal), need("the fill time (--seconds)", seconds)
        q = ratings.volumetric_cfs(vol, t)
        std = Standard(value=0.0, unit="cfs", kind="bucket", note=f"{vol:g} gal in {t:g} s")
        details = {"volume_gal": vol, "seconds": t}
    else:
        raise ValueError(f"unknown flow method {method!r} (vnotch, manning, area_velocity, bucket)")
    in_unit = converter(Quantity.FLOW, "cfs")(q) / converter(Quantity.FLOW, unit)(1.0)
    details["reference_cfs"] = round(q, 6)
    return FlowReference(_r(in_unit), std.model_copy(update={"value": _r(in_unit), "unit": unit}), details)


def flow_check(references: Sequence[FlowReference], found_raw: Sequence[float], previous: Fit | None,
               left_raw: Sequence[float] | None, tolerance_pct: float, unit: str, adjust: str = "auto") -> Outcome:
    """A flow meter against reference flows: a slope through the origin (no flow reads no
    flow) when a point is outside ``tolerance_pct`` [%] (or ``adjust='always'``)."""
    crit = Criteria(0.0, tolerance_pct, f"±{tolerance_pct:g} % of the reference flow")
    stds = tuple(r.standard for r in references)
    found = as_found(stds, found_raw, previous, crit)
    do = adjust == "always" or (adjust == "auto" and needs_adjustment(found))
    fit = slope_fit(list(zip(found_raw, (r.value for r in references)))) if do else (previous or Fit())
    if do and left_raw is None:
        raise ValueError("an adjusted meter needs its as-left readings")
    left = as_left(stds, left_raw, fit, crit) if left_raw is not None else found
    result, problems = verdict(left, "as-left" if left_raw is not None else "as-found", unit)
    details: dict[str, float | int | bool | str | None] = {}
    for i, r in enumerate(references):
        details.update({f"{k}_{i + 1}" if len(references) > 1 else k: v for k, v in r.details.items()})
    return Outcome(stds, found, left if left_raw is not None else (), fit, previous, result, problems,
                   crit.source, do, details)
