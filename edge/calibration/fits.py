"""Fits from a sensor's raw readings in standards to the standards' values.

Pure functions over ``(raw, reference)`` pairs in the sensor's own unit. The result is a
:class:`~ms4watch.contract.calibration.Fit` — ``slope * raw + offset`` or piecewise linear
through the points — which the logger applies to every reading
(:meth:`~ms4watch.contract.firmware.Calibration.correct`).

Which fit a sensor needs (USGS TM 1-D3 asks for the calibration to meet the criteria at
every standard): a straight line by least squares when it brings every standard within the
criteria; otherwise a piecewise-linear fit through the standards (exact at each, linear
between), which is what a sensor with a non-linear response over 0–1000 NTU needs. One
standard gives an offset only (a zero check) or a slope through the origin.

References
----------
Wagner and others (2006), USGS TM 1-D3: calibration of turbidity sensors with a
zero standard and one or more standards bracketing the expected range.
"""

from __future__ import annotations

import math
from typing import Sequence

from ...contract.calibration import Criteria, Fit, FitKind

__all__ = ["linear_fit", "piecewise_fit", "offset_fit", "slope_fit", "choose_fit", "FitError"]


class FitError(ValueError):
    """The points cannot give the fit asked for (too few, not increasing, degenerate)."""


def _check(points: Sequence[tuple[float, float]], least: int) -> list[tuple[float, float]]:
    pts = [(float(r), float(t)) for r, t in points]
    if len(pts) < least:
        raise FitError(f"needs at least {least} point{'s' if least > 1 else ''}, got {len(pts)}")
    if not all(math.isfinite(r) and math.isfinite(t) for r, t in pts):
        raise FitError("every raw reading and reference must be a finite number")
    return pts


def linear_fit(points: Sequence[tuple[float, float]]) -> Fit:
    """Ordinary least squares ``reference = slope * raw + offset`` over ``(raw, reference)``.

    Two points give the line through both. Raises :class:`FitError` when every raw reading
    is the same (the sensor did not respond to the standards)."""
    pts = _check(points, 2)
    n = len(pts)
    mx = sum(r for r, _ in pts) / n
    my = sum(t for _, t in pts) / n
    sxx = sum((r - mx) ** 2 for r, _ in pts)
    if sxx == 0:
        raise FitError("the sensor read the same value in every standard: it does not respond")
    sxy = sum((r - mx) * (t - my) for r, t in pts)
    slope = sxy / sxx
    return Fit(kind=FitKind.LINEAR, slope=_sig(slope), offset=_sig(my - slope * mx))


def _sig(x: float) -> float:
    """Ten significant digits: far finer than any sensor, free of binary noise in the config."""
    return float(f"{x:.10g}")


def piecewise_fit(points: Sequence[tuple[float, float]]) -> Fit:
    """The piecewise-linear fit through every ``(raw, reference)``: exact at each standard.

    Raw readings must increase with the references (a sensor whose reading falls as the
    standard rises is broken, not to be fitted)."""
    pts = sorted(_check(points, 2), key=lambda p: p[1])
    for (r0, t0), (r1, t1) in zip(pts, pts[1:]):
        if t1 == t0:
            raise FitError(f"two standards of the same value {t0:g}")
        if r1 <= r0:
            raise FitError(f"the reading in the {t1:g} standard ({r1:g}) is not above the reading in the "
                           f"{t0:g} standard ({r0:g}): the sensor's response is not monotonic")
    return Fit(kind=FitKind.PIECEWISE, points=tuple(pts))


def offset_fit(raw: float, reference: float, slope: float = 1.0) -> Fit:
    """Keep ``slope``, move the offset so ``raw`` reads ``reference`` (a zero check)."""
    _check([(raw, reference)], 1)
    return Fit(kind=FitKind.LINEAR, slope=slope, offset=_sig(reference - slope * raw))


def slope_fit(points: Sequence[tuple[float, float]]) -> Fit:
    """A slope through the origin, least squares: ``slope = Σ raw·ref / Σ raw²`` (a flow meter
    or rain gauge checked against one or more references: no flow reads no flow)."""
    pts = _check(points, 1)
    sxx = sum(r * r for r, _ in pts)
    if sxx == 0:
        raise FitError("the sensor read zero against every reference")
    return Fit(kind=FitKind.LINEAR, slope=_sig(sum(r * t for r, t in pts) / sxx), offset=0.0)


def choose_fit(points: Sequence[tuple[float, float]], criteria: Criteria, kind: str = "auto") -> Fit:
    """The fit a sensor needs: ``"linear"``, ``"piecewise"``, or ``"auto"`` — linear when the
    line brings every standard within ``criteria``, else piecewise."""
    if kind == "linear":
        return linear_fit(points)
    if kind == "piecewise":
        return piecewise_fit(points)
    if kind != "auto":
        raise FitError(f"unknown fit {kind!r} (auto, linear, piecewise)")
    line = linear_fit(points)
    if len(points) <= 2 or all(criteria.accepts(t, line.correct(r)) for r, t in points):
        return line
    return piecewise_fit(points)
