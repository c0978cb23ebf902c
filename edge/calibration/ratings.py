"""Flow and volume from primary devices and references: pure functions, units in every name.

What a technician measures at an outfall to check a flow meter, a level sensor or a rain
gauge, turned into the reference value. US customary units as the field manuals give them
(ft, ft², ft/s, cfs); :func:`cfs_to_gpm` converts to the store's canonical gpm.

References
----------
[USBR] U.S. Bureau of Reclamation, 2001, Water Measurement Manual, 3rd ed. (revised
    reprint), chapter 7 (weirs): the Kindsvater–Shen relation for fully contracted
    V-notch weirs (eq. 7-3) with Ce and kh for the notch angle, and for the 90° notch
    ``Q = 2.49 h1^2.48`` (eq. 7-6), Q [ft³/s], h1 [ft]; head measured ≥ 0.2 ft, the nappe
    springing clear; the fully contracted 90° notch to a head of about 1.25 ft.
[Chow] Chow, V.T., 1959, Open-Channel Hydraulics, McGraw-Hill: Manning's equation
    ``Q = (1.486 / n) A R^(2/3) S^(1/2)`` (US units) and values of n (table 5-6).
[ASCE] ASCE/WEF, 2007, Gravity Sanitary Sewer Design and Construction (MOP 60 / FD-5):
    hydraulic elements of a circular pipe flowing partly full — half full carries half the
    full-pipe flow, the most at a depth of about 0.94 D (about 1.08 times full).
"""

from __future__ import annotations

import math

from ...contract.units import Quantity, converter

__all__ = ["vnotch_90_cfs", "kindsvater_shen_cfs", "MANNING_N", "manning_n", "circular_segment",
           "manning_pipe_cfs", "area_velocity_cfs", "volumetric_cfs", "cfs_to_gpm", "funnel_tip_volume_ml",
           "expected_tips", "IN3_ML"]

IN3_ML = 16.387064
"""One cubic inch in millilitres (exact: 2.54³ cm³)."""
K_MANNING_US = 1.486
"""Manning's unit factor for feet and seconds (1.486 ≈ 3.2808^(1/3))."""


def _positive(name: str, v: float, allow_zero: bool = False) -> float:
    v = float(v)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} number, got {v!r}")
    return v


# -- weirs --------------------------------------------------------------------------------
def vnotch_90_cfs(head_ft: float) -> float:
    """Discharge over a fully contracted 90° V-notch weir [ft³/s] at head ``head_ft`` [ft]:
    ``Q = 2.49 h^2.48`` [USBR eq. 7-6].

    Notes: valid for heads of 0.2 ft up to about 1.25 ft on a fully contracted notch with the
    nappe springing clear [USBR]; outside that the function still answers (a technician may
    check a low flow) and :func:`kindsvater_shen_cfs` agrees within 1 % over the valid range.
    """
    h = _positive("head_ft", head_ft, allow_zero=True)
    return 2.49 * h ** 2.48


# Kindsvater–Shen coefficients for a fully contracted notch [USBR figure 7-6]: 90° only here.
_KS = {90.0: (0.578, 0.0029)}   # angle [deg] -> (Ce [-], kh [ft])


def kindsvater_shen_cfs(head_ft: float, angle_deg: float = 90.0) -> float:
    """``Q = 4.28 Ce tan(θ/2) (h + kh)^(5/2)`` [ft³/s] [USBR eq. 7-3], head [ft], θ [deg].

    Ce and kh are read from USBR figure 7-6; only θ = 90° (Ce 0.578, kh 0.0029 ft) is
    tabulated here. 4.28 is (8/15)·√(2g) with g = 32.2 ft/s².
    """
    h = _positive("head_ft", head_ft, allow_zero=True)
    try:
        ce, kh = _KS[float(angle_deg)]
    except KeyError:
        raise ValueError(f"no Kindsvater–Shen coefficients for a {angle_deg:g}° notch here (90° only)") from None
    return 4.28 * ce * math.tan(math.radians(angle_deg) / 2) * (h + kh) ** 2.5


# -- pipes (Manning) ------------------------------------------------------------------------
MANNING_N: dict[str, float] = {
    "concrete": 0.013,          # concrete pipe: the usual design value [Chow table 5-6: 0.010-0.017 by condition]
    "vitrified_clay": 0.014,    # vitrified sewer pipe [Chow: normal value]
    "pvc": 0.010,               # smooth plastic [Chow, lucite/glass-smooth: 0.008-0.010]; makers quote 0.009-0.011
    "cast_iron": 0.013,         # cast iron, coated [Chow: normal value]
    "corrugated_metal": 0.024,  # corrugated metal storm drain [Chow: normal value]
    "brick": 0.015,             # brickwork lined with cement mortar [Chow: normal value]
}
"""Manning's roughness n [-] by pipe material (normal values; pass ``n`` to override)."""


def manning_n(material: str) -> float:
    try:
        return MANNING_N[material]
    except KeyError:
        raise ValueError(f"unknown pipe material {material!r} (known: {', '.join(sorted(MANNING_N))}; "
                         "or give n)") from None


def circular_segment(depth_ft: float, diameter_ft: float) -> tuple[float, float]:
    """Wetted area [ft²] and wetted perimeter [ft] of a circular pipe of diameter
    ``diameter_ft`` flowing ``depth_ft`` deep: with θ = 2 arccos(1 − 2y/D),
    ``A = D²(θ − sin θ)/8``, ``P = Dθ/2``."""
    d = _positive("diameter_ft", diameter_ft)
    y = _positive("depth_ft", depth_ft, allow_zero=True)
    if y > d:
        raise ValueError(f"depth {y:g} ft is more than the pipe's diameter {d:g} ft")
    theta = 2 * math.acos(1 - 2 * y / d)
    return d * d * (theta - math.sin(theta)) / 8, d * theta / 2


def manning_pipe_cfs(depth_ft: float, diameter_ft: float, slope_ft_per_ft: float, n: float) -> float:
    """Discharge [ft³/s] of a circular pipe flowing partly full by Manning's equation,
    ``Q = (1.486/n) A R^(2/3) S^(1/2)`` with R = A/P [Chow; ASCE].

    depth_ft : flow depth [ft]; diameter_ft : inside diameter [ft]; slope_ft_per_ft : the
    pipe's (energy) slope [ft/ft]; n : Manning's roughness [-] (:data:`MANNING_N`).

    Notes: uniform flow — a pipe surcharged, backed up by a tide gate or a downstream
    constriction does not follow it; check that the depth is not controlled downstream.
    """
    s = _positive("slope_ft_per_ft", slope_ft_per_ft)
    nn = _positive("n", n)
    area, perimeter = circular_segment(depth_ft, diameter_ft)
    if area == 0:
        return 0.0
    return K_MANNING_US / nn * area * (area / perimeter) ** (2 / 3) * math.sqrt(s)


# -- area × velocity, volumetric ---------------------------------------------------------
def area_velocity_cfs(area_ft2: float, mean_velocity_ft_s: float) -> float:
    """Continuity: ``Q = A V`` [ft³/s], wetted area [ft²] times mean velocity [ft/s]."""
    return _positive("area_ft2", area_ft2, allow_zero=True) * float(mean_velocity_ft_s)


def volumetric_cfs(volume_gal: float, seconds: float) -> float:
    """A container of ``volume_gal`` [US gal] filled in ``seconds`` [s] → [ft³/s] (bucket and
    stopwatch; 1 ft³ = 7.48052 gal)."""
    return _positive("volume_gal", volume_gal) / 7.480519480519481 / _positive("seconds", seconds)


def cfs_to_gpm(q_cfs: float) -> float:
    """[ft³/s] → [US gal/min]."""
    return converter(Quantity.FLOW, "cfs")(q_cfs)


# -- rain gauges ---------------------------------------------------------------------------
def funnel_tip_volume_ml(orifice_diameter_in: float, tip_in: float) -> float:
    """Water [mL] one tip of a gauge with a round orifice of ``orifice_diameter_in`` [in]
    holds when one tip is ``tip_in`` [in] of rain: ``π (d/2)² · tip``.

    An 8 in gauge at 0.01 in per tip: 8.237 mL (the 8.24 mL makers' calibration tables give).
    """
    d = _positive("orifice_diameter_in", orifice_diameter_in)
    return math.pi * (d / 2) ** 2 * _positive("tip_in", tip_in) * IN3_ML


def expected_tips(volume_ml: float, orifice_diameter_in: float, tip_in: float) -> float:
    """Tips a volume poured slowly through the funnel should give [-] (not rounded)."""
    return _positive("volume_ml", volume_ml) / funnel_tip_volume_ml(orifice_diameter_in, tip_in)
