"""What a reader hands to :mod:`build`: structures as they will be kept, and lines not yet
connected or directed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .mapping import FlowDirection
from .model import ConveyanceKind, Finding, Structure


@dataclass(frozen=True)
class RawLine:
    id: str
    kind: ConveyanceKind
    coords: tuple[tuple[float, float], ...]       # lon, lat in drawn order; () when the source has none
    start_node: str | None = None                 # named ends (SWMM, or the map's fields)
    end_node: str | None = None
    snap_ends: bool = False                       # an end not named is found by snapping its drawn end
    start_invert_ft: float | None = None
    end_invert_ft: float | None = None
    length_ft: float | None = None
    diameter_in: float | None = None
    material: str | None = None
    flow: FlowDirection | None = None
    source: str = ""


@dataclass
class RawMap:
    structures: list[Structure] = field(default_factory=list)
    lines: list[RawLine] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    georeferenced: bool = True                    # False: SWMM coordinates with no CRS named
    areas: list[Any] = field(default_factory=list)    # SWMM subcatchments: (areas.DrainageArea, WGS 84 polygon or None)


def unique_id(wanted: str | None, fallback: str, seen: set[str], what: str, findings: list[Finding]) -> str:
    """The feature's own id; a missing one becomes ``fallback`` and a repeated one gets
    ``~2``, ``~3``…, each reported, so no feature is dropped or silently merged."""
    if wanted is None or str(wanted).strip() == "":
        findings.append(Finding("no_id", fallback, f"{what} {fallback} has no id; kept as {fallback}"))
        wanted = fallback
    wanted = str(wanted).strip()
    got, n = wanted, 1
    while got in seen:
        n += 1
        got = f"{wanted}~{n}"
    if got != wanted:
        findings.append(Finding("duplicate_id", got, f"{what} id {wanted} appears more than once; this one kept as {got}"))
    seen.add(got)
    return got
