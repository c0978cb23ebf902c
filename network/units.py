"""Whether a pipe layer's numbers fit the units its mapping gives them."""

from __future__ import annotations

import statistics

from .mapping import TO_IN, ConveyanceLayer
from .model import Finding
from .raw import RawLine

SMALLEST_IN, LARGEST_IN = 4.0, 120.0      # storm pipes: a 4 in lead to a 10 ft culvert, most of them
UNIT_NAMES = {"in": 1.0, "ft": 12.0, "mm": 1 / 25.4, "m": 1 / 0.0254}     # inches per unit


def unit_hints(spec: ConveyanceLayer, lines: list[RawLine], where: str, findings: list[Finding]) -> None:
    """Say when the pipes' numbers do not fit the mapping's units: a median diameter no
    storm pipe has, recorded lengths a foot-to-metre factor off the drawn ones."""
    from pyproj import Geod
    sizes = [x.diameter_in for x in lines if x.diameter_in is not None]
    if spec.diameter and sizes:
        median = statistics.median(sizes)
        if not SMALLEST_IN <= median <= LARGEST_IN:
            raw = median / TO_IN[spec.diameter_unit]         # the number as the layer keeps it
            fits = [u for u, per in UNIT_NAMES.items() if u != spec.diameter_unit
                    and SMALLEST_IN <= raw * per <= LARGEST_IN]
            size = "smaller than any storm pipe" if median < SMALLEST_IN else "larger than most storm pipes"
            guess = f"; is it in {fits[0]}? (diameter_unit: {fits[0]})" if fits else ""
            findings.append(Finding("units", where, f"{where}: {spec.diameter}: median {median:.1f} in, {size}{guess}"))
    if spec.length:
        geod = Geod(ellps="WGS84")
        ratios: list[float] = []
        for x in lines:
            if x.length_ft and len(x.coords) > 1 and len(ratios) < 200:
                lons, lats = zip(*x.coords)
                drawn = geod.line_length(lons, lats) / 0.3048
                if drawn > 0:
                    ratios.append(x.length_ft / drawn)
        if ratios:
            ratio = statistics.median(ratios)
            other = "m" if abs(ratio - 0.3048) < 0.03 else "ft" if abs(ratio - 1 / 0.3048) < 0.3 else None
            if other is not None and other != spec.length_unit:
                findings.append(Finding("units", where, f"{where}: {spec.length}: the recorded lengths are "
                                        f"{ratio:.2f} times the drawn ones; are they in {other}? (length_unit: {other})"))
