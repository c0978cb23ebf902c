"""The steps of each procedure with a technician: what to ask, what to measure, in which
order. Numbers are decided by :mod:`.procedures`; readings come from the session's driver.

Each ``run_*`` takes values given as flags (None: ask) and returns the
:class:`~.procedures.Outcome`.
"""

from __future__ import annotations

from datetime import date
from typing import Sequence

from ...contract.calibration import TURBIDITY_CRITERIA, CheckPoint, Criteria, Fouling, Standard
from ...contract.timeutil import from_ns
from ...contract.units import Quantity, converter
from ..errors import EdgeError
from . import procedures
from .fits import choose_fit
from .procedures import FlowReference, Outcome
from .prompts import Prompter
from .session import CalibrationSession

__all__ = ["parse_standard", "run_turbidity", "run_rain", "run_level", "run_flow", "summary_lines", "intro"]


def parse_standard(text: str, unit: str, default_kind: str = "stablcal") -> Standard:
    """``VALUE[:KIND[:LOT[:EXPIRES]]]``, e.g. ``20:stablcal:A1234:2027-01-31``."""
    parts = text.split(":")
    try:
        value = float(parts[0])
    except ValueError:
        raise EdgeError(f"standard {text!r}: {parts[0]!r} is not a number (VALUE[:KIND[:LOT[:EXPIRES]]])") from None
    kind = parts[1] if len(parts) > 1 and parts[1] else default_kind
    lot = parts[2] if len(parts) > 2 and parts[2] else None
    expires = None
    if len(parts) > 3 and parts[3]:
        try:
            expires = date.fromisoformat(parts[3])
        except ValueError:
            raise EdgeError(f"standard {text!r}: expiry {parts[3]!r} is not YYYY-MM-DD") from None
    return Standard(value=value, unit=unit, kind=kind, lot=lot, expires=expires)


def _number(p: Prompter, key: str, question: str, default: float | None = None) -> float:
    while True:
        answer = p.ask(key, question, None if default is None else f"{default:g}")
        try:
            return float(answer)
        except ValueError:
            p.say(f"  {answer!r} is not a number")


def intro(s: CalibrationSession, technician: str) -> str:
    prev = s.previous
    was = (f"last calibrated {prev.performed}, due {prev.due}, correction "
           f"{procedures.previous_fit(prev).describe()}" if prev else "no calibration on record")  # type: ignore[union-attr]
    return (f"Sensor {s.sensor.id} ({s.sensor.quantity.value}, {s.sensor.unit}, driver {s.sensor.driver}) on "
            f"{s.config.device} at {s.sensor.station or s.config.station}; {was}. Technician: {technician}.")


def _show(p: Prompter, stage: str, points: Sequence[CheckPoint], unit: str) -> None:
    for c in points:
        pct = procedures.point_pct(c)
        p.say(f"  {stage:<9} {c.label:<34} read {c.reading:>10.6g} {unit}  {c.error:+.4g}{pct}  "
              f"limit ±{c.limit:.4g}  {'ok' if c.ok else 'OUT'}")


# -- turbidity ------------------------------------------------------------------------------
def run_turbidity(s: CalibrationSession, p: Prompter, *, standards: Sequence[Standard] | None, fit_kind: str = "auto",
                  adjust: str = "auto", fouling: bool = False, samples: int = 3,
                  expired_ok: str | None = None) -> Outcome:
    """``expired_ok``: the reason to use a standard past its expiry date anyway (kept in the
    record); without it such a standard is refused before anything is measured."""
    unit = s.sensor.unit
    if s.sensor.quantity is not Quantity.TURBIDITY:
        raise EdgeError(f"sensor {s.sensor.id} measures {s.sensor.quantity.value}, not turbidity")
    if not standards:
        values = p.ask("standards", f"Standards to use, in {unit}, comma-separated", "0,20,100,800")
        standards = []
        for v in values.split(","):
            kind = p.ask(f"kind_{v.strip()}", f"  {v.strip()} {unit}: formazin or stablcal", "stablcal")
            lot = p.ask(f"lot_{v.strip()}", f"  {v.strip()} {unit} {kind}: lot number (blank: none)", "")
            standards.append(parse_standard(f"{v.strip()}:{kind}:{lot}", unit))
    standards = sorted(standards, key=lambda x: x.value)
    day = from_ns(s.clock()).date()
    try:
        standards = procedures.check_expiry(standards, day, expired_ok)
    except ValueError as e:
        raise EdgeError(str(e)) from None
    expired = [st for st in standards if st.expires is not None and st.expires < day]
    fouled = None
    if fouling:
        before = p.measure("fouling_before", "Fouling check: leave the sensor in the stream, as found (not cleaned)",
                           s.read, unit, samples=samples).value
        after = p.measure("fouling_after", "Clean the sensor and put it back in the stream",
                          s.read, unit, samples=samples).value
        prev = s.previous_fit
        fouled = Fouling(before_cleaning=prev.correct(before) if prev else before,
                         after_cleaning=prev.correct(after) if prev else after)
        p.say(f"  fouling error {fouled.error:+.4g} {unit}")
    p.say("As found (the sensor as it was, before anything is changed):")
    found_raw = [p.measure(f"as_found_{st.value:g}", f"Rinse the sensor and put it in the {st.label()} standard",
                           s.read, unit, samples=samples).value for st in standards]
    found = procedures.as_found(standards, found_raw, s.previous_fit, TURBIDITY_CRITERIA)
    _show(p, "as found", found, unit)
    do = adjust == "always" or (adjust == "auto" and procedures.needs_adjustment(found))
    left_raw = None
    if do:
        fit = choose_fit(list(zip(found_raw, (st.value for st in standards))), TURBIDITY_CRITERIA, fit_kind)
        p.say(f"New correction: {fit.describe()}. As left (the same standards again, with it):")
        left_raw = [p.measure(f"as_left_{st.value:g}", f"Rinse the sensor and put it in the {st.label()} standard",
                              s.read, unit, samples=samples).value for st in standards]
    elif adjust == "auto":
        p.say("Every standard is within the criteria: the correction stays as it is.")
    out = procedures.turbidity(standards, found_raw, s.previous_fit, left_raw, fit_kind=fit_kind, adjust=adjust,
                               unit=unit)
    out.fouling = fouled
    if expired:
        out.details["expired_standards"] = "; ".join(f"{st.label()} (expired {st.expires})" for st in expired) + \
            f": {expired_ok}"
    if fouled is not None:
        out.details["fouling_error"] = round(fouled.error, 9)
    return out


# -- rain gauge -----------------------------------------------------------------------------
def run_rain(s: CalibrationSession, p: Prompter, *, volume_ml: float | None, orifice_in: float | None,
             tolerance_pct: float | None, apply_factor: bool = True) -> Outcome:
    if s.sensor.quantity is not Quantity.RAIN:
        raise EdgeError(f"sensor {s.sensor.id} measures {s.sensor.quantity.value}, not rain")
    tip_size = getattr(s.driver.options, "tip_size", None) or getattr(getattr(s.driver, "o", None), "tip_in", None)
    if tip_size is None:
        raise EdgeError(f"sensor {s.sensor.id}: its driver {s.sensor.driver} has no tip size")
    tip_in = converter(Quantity.RAIN, s.sensor.unit)(tip_size)
    orifice = orifice_in if orifice_in is not None else _number(p, "orifice_in", "Funnel (orifice) diameter [in]", 8.0)
    volume = volume_ml if volume_ml is not None else _number(p, "volume_ml", "Volume to pour [mL]", 473.0)
    tol = tolerance_pct if tolerance_pct is not None else _number(p, "tolerance_pct", "Maker's tolerance [%]", 2.0)
    s.read()   # zero the count: tips before the pour are not part of it
    expected = procedures.ratings.expected_tips(volume, orifice, tip_in)
    total = p.measure("pour", f"Pour {volume:g} mL slowly through the funnel (a constant drip: at the rate of light "
                              f"rain, not a gush); {expected:.1f} tips expected", s.read, s.sensor.unit,
                      count=True).value
    counted = round(total / tip_size)
    p.say(f"  {counted} tips counted, {expected:.2f} expected")
    return procedures.rain_volume(volume, orifice, tip_size, tip_in, counted, s.previous_fit, tol,
                                  unit=s.sensor.unit, apply_factor=apply_factor)


# -- level -----------------------------------------------------------------------------------
def run_level(s: CalibrationSession, p: Prompter, *, measured: float | None, tolerance: float | None,
              adjust: str = "auto", samples: int = 3) -> Outcome:
    if s.sensor.quantity is not Quantity.LEVEL:
        raise EdgeError(f"sensor {s.sensor.id} measures {s.sensor.quantity.value}, not level")
    unit = s.sensor.unit
    tol = tolerance if tolerance is not None else _number(p, "tolerance", f"Allowed error [{unit}]", 0.01)
    depth = measured if measured is not None else _number(p, "measured", f"Depth you measured (staff gauge, "
                                                                         f"ruler) [{unit}]")
    raw = p.measure("as_found", "Leave the sensor in place; hold the measured depth steady", s.read, unit,
                    samples=samples).value
    found = procedures.as_found([_depth(depth, unit)], [raw], s.previous_fit,
                                Criteria(tol, 0.0))
    _show(p, "as found", found, unit)
    do = adjust == "always" or (adjust == "auto" and procedures.needs_adjustment(found))
    left = None
    if do:
        p.say("Moving the zero offset. As left:")
        left = p.measure("as_left", "Same depth again, with the new offset", s.read, unit, samples=samples).value
    return procedures.level_zero(depth, raw, s.previous_fit, left, tol, unit=unit, adjust=adjust)


def _depth(v: float, unit: str) -> Standard:
    return Standard(value=v, unit=unit, kind="depth", note="measured depth")


# -- flow ------------------------------------------------------------------------------------
FLOW_METHODS = ("vnotch", "manning", "area_velocity", "bucket")


def run_flow(s: CalibrationSession, p: Prompter, *, method: str | None, tolerance_pct: float | None,
             adjust: str = "auto", samples: int = 3, **measured: float | str | None) -> Outcome:
    if s.sensor.quantity is not Quantity.FLOW:
        raise EdgeError(f"sensor {s.sensor.id} measures {s.sensor.quantity.value}, not flow")
    unit = s.sensor.unit
    tol = tolerance_pct if tolerance_pct is not None else _number(p, "tolerance_pct", "Allowed error [%]", 10.0)
    method = method or p.ask("method", f"Reference ({', '.join(FLOW_METHODS)})", "vnotch")
    if method not in FLOW_METHODS:
        raise EdgeError(f"unknown flow method {method!r} ({', '.join(FLOW_METHODS)})")
    refs: list[FlowReference] = []
    raws: list[float] = []
    while True:
        ref = _flow_reference(p, method, unit, measured)
        p.say(f"  reference: {ref.value:.6g} {unit} ({ref.standard.note})")
        raws.append(p.measure(f"as_found_{len(refs) + 1}", "Keep the flow steady; the meter's readings are "
                              "averaged", s.read, unit, samples=samples).value)
        refs.append(ref)
        if any(v is not None for v in measured.values()) or not p.confirm("another", "Another reference point?",
                                                                          False):
            break
        measured = {}
    found = procedures.as_found([r.standard for r in refs], raws, s.previous_fit,
                                Criteria(0.0, tol))
    _show(p, "as found", found, unit)
    do = adjust == "always" or (adjust == "auto" and procedures.needs_adjustment(found))
    left = None
    if do:
        p.say("Correcting the meter's slope. As left (the flow must be as it was; the references stand):")
        left = [p.measure(f"as_left_{i + 1}", "Keep the flow steady", s.read, unit, samples=samples).value
                for i in range(len(refs))]
    return procedures.flow_check(refs, raws, s.previous_fit, left, tol, unit, adjust=adjust)


def _flow_reference(p: Prompter, method: str, unit: str, given: dict) -> FlowReference:
    def num(key: str, question: str, default: float | None = None) -> float:
        v = given.get(key)
        return float(v) if v is not None else _number(p, key, question, default)

    if method == "vnotch":
        return procedures.flow_reference(method, unit, head_ft=num("head_ft", "Head over the notch [ft]"))
    if method == "bucket":
        return procedures.flow_reference(method, unit, volume_gal=num("volume_gal", "Container volume [gal]", 5.0),
                                         seconds=num("seconds", "Seconds to fill it"))
    depth_ft = num("depth_ft", "Flow depth in the pipe [ft]")
    diameter_in = num("diameter_in", "Pipe diameter [in]")
    if method == "manning":
        material = given.get("material")
        n = given.get("n")
        if material is None and n is None:
            material = p.ask("material", "Pipe material (concrete, pvc, corrugated_metal, …) or n", "concrete")
            try:
                n, material = float(material), None
            except ValueError:
                pass
        return procedures.flow_reference(method, unit, slope=num("slope", "Pipe slope [ft/ft]"),
                                         n=None if n is None else float(n), material=material,
                                         depth_ft=depth_ft, diameter_in=diameter_in)
    return procedures.flow_reference(method, unit, velocity_ft_s=num("velocity_ft_s", "Mean velocity [ft/s]"),
                                     depth_ft=depth_ft, diameter_in=diameter_in)


# -- the summary -----------------------------------------------------------------------------
def summary_lines(finished, unit: str) -> list[str]:
    r = finished.record
    out = [f"{'PASS' if r.result.value == 'pass' else 'FAIL'}: {r.procedure.value} of {r.sensor} on {r.device} "
           f"({r.station}) by {r.technician}"]
    for stage, points in (("as found", r.as_found), ("as left", r.as_left)):
        for c in points:
            pct = procedures.point_pct(c)
            out.append(f"  {stage:<9} {c.label:<34} read {c.reading:>10.6g} {unit}  {c.error:+.4g}{pct}  "
                       f"limit ±{c.limit:.4g}  {'ok' if c.ok else 'OUT'}")
    out.append(f"  correction now: {r.fit.describe()}" + (f" (was {r.previous.describe()})" if r.previous else ""))
    for problem in r.problems:
        out.append(f"  FAILED — {problem}")
    out.append(f"  next calibration due {r.next_due}; criteria: {r.criteria}")
    out += [f"  {m}" for m in finished.messages]
    if finished.spooled:
        out.append(f"  record {r.id} is in the logger's spool; it reaches the server with the next messages")
    return out
