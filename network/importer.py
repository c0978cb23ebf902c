"""One call from a file to a checked network: a mapping file (GIS layers or a SWMM model)
or a SWMM ``.inp`` given directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .areas import DrainageArea, Parcel
from .build import build
from .checks import check
from .errors import NetworkError
from .mapping import Mapping, load_mapping
from .model import Finding, Network


@dataclass
class Imported:
    network: Network
    findings: list[Finding]
    georeferenced: bool
    lines_read: int            # conveyances the source holds (all kept; see findings)
    structures_read: int
    areas: list[DrainageArea] = field(default_factory=list)      # the mapping's drainage areas, if any
    parcels: list[Parcel] = field(default_factory=list)


def import_map(source: Path, crs: str | None = None) -> Imported:
    """``source``: a mapping file (``.yaml``/``.yml``) or an EPA SWMM ``.inp``; ``crs`` for
    an ``.inp`` given directly (SWMM files do not say theirs)."""
    from .gis import read_gis
    from .swmm import read_swmm
    suffix = source.suffix.lower()
    if suffix in (".yaml", ".yml"):
        mapping = load_mapping(source)
        if crs is not None:
            mapping = mapping.model_copy(update={"crs": crs})
    elif suffix == ".inp":
        mapping = Mapping(swmm=source, crs=crs)
    else:
        raise NetworkError(f"{source}: give a mapping file (.yaml) naming the town's layers, or a SWMM .inp")
    raw = read_swmm(mapping.swmm, mapping) if mapping.swmm is not None else read_gis(mapping)
    net, findings = build(raw, mapping.snap_tolerance_ft, mapping.direction)
    if not {s.id for s in raw.structures} <= net.structures.keys() or len(net.conveyances) != len(raw.lines):
        raise NetworkError(f"{source}: {len(raw.structures)} structures and {len(raw.lines)} conveyances read, "
                           f"{len(net.structures)} and {len(net.conveyances)} built: a feature was lost")
    got = Imported(net, findings + check(net), raw.georeferenced, len(raw.lines), len(raw.structures))
    shaped: list = list(raw.areas)              # a SWMM model's subcatchments
    got.areas = [a for a, _ in shaped]
    if mapping.drainage_areas is not None:
        from .areas import read_areas
        shaped, area_findings = read_areas(mapping, net)
        got.areas = [a for a, _ in shaped]
        got.findings += area_findings
    if mapping.parcels is not None:
        from .areas import read_parcels
        got.parcels, parcel_findings = read_parcels(mapping, net, shaped)
        got.findings += parcel_findings
    return got
