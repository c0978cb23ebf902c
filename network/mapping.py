"""The town's mapping file: which layer and attribute hold the id, the type, the inverts,
the diameter, the material and the flow direction. See docs/network.md and
``sample-mapping.yaml``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..contract.yamlfile import load_yaml_model
from .model import ConveyanceKind, StructureKind

LengthUnit = Literal["ft", "m", "in", "mm"]
TO_FT = {"ft": 1.0, "m": 1 / 0.3048, "in": 1 / 12, "mm": 1 / 304.8}
TO_IN = {unit: factor * 12 for unit, factor in TO_FT.items()}


class FlowDirection(str, Enum):
    """What a value of the map's flow-direction field means for the drawn line."""
    WITH = "with"            # flows from the first vertex to the last
    AGAINST = "against"      # flows from the last vertex to the first
    UNKNOWN = "unknown"      # the field says it is not known: fall back to inverts, then drawing


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _codes_as_text(v: object) -> object:
    """A town's codes may be numbers (``{1: manhole}``); the layer's values are compared as text."""
    def text(k: object) -> str:
        return str(int(k)) if isinstance(k, float) and k.is_integer() else str(k)
    return {text(k): val for k, val in v.items()} if isinstance(v, dict) else v


class StructureLayer(_Strict):
    file: Path
    layer: str | None = None                     # GeoPackage / geodatabase layer; default the first
    id: str                                      # attribute holding the town's own id
    type: str | None = None                      # attribute holding the kind
    types: dict[str, StructureKind] = Field(default_factory=dict)   # the map's values -> kinds
    default_type: StructureKind = StructureKind.JUNCTION
    invert: str | None = None
    rim: str | None = None
    receiving_water: str | None = None

    _codes = field_validator("types", mode="before")(_codes_as_text)


class ConveyanceLayer(_Strict):
    file: Path
    layer: str | None = None
    id: str
    type: str | None = None
    types: dict[str, ConveyanceKind] = Field(default_factory=dict)
    default_type: ConveyanceKind = ConveyanceKind.PIPE
    start_structure: str | None = None           # the structure id at the line's first vertex; default: snapped
    end_structure: str | None = None             # the structure id at its last vertex
    start_invert: str | None = None              # invert at the line's first vertex
    end_invert: str | None = None                # invert at its last vertex
    diameter: str | None = None
    diameter_unit: LengthUnit = "in"
    material: str | None = None
    length: str | None = None                    # the town's recorded length; default measured on the ellipsoid
    length_unit: LengthUnit = "ft"
    flow_direction: str | None = None
    flow_directions: dict[str, FlowDirection] = Field(default_factory=dict)

    _codes = field_validator("types", "flow_directions", mode="before")(_codes_as_text)

    @model_validator(mode="after")
    def _directions(self) -> "ConveyanceLayer":
        if self.flow_direction and not self.flow_directions:
            raise ValueError("flow_directions: say what each value of the flow_direction field means "
                             "(with, against, unknown)")
        return self


class DrainageAreaLayer(_Strict):
    """Polygons of the land draining to one structure (a catchment, a subwatershed)."""
    file: Path
    layer: str | None = None
    id: str
    structure: str | None = None                 # the structure it drains to; empty or absent: the one inside it


class ParcelLayer(_Strict):
    """Tax parcels (or any polygons of land) to place on the network."""
    file: Path
    layer: str | None = None
    id: str
    tolerance_ft: float = Field(default=100.0, gt=0)   # a parcel in no area: the nearest inlet this close


class Mapping(_Strict):
    crs: str | None = None                       # for sources that do not state one (SWMM, a .shp without .prj)
    elevation_unit: LengthUnit = "ft"
    snap_tolerance_ft: float = Field(default=3.0, gt=0)
    direction: Literal["drawing", "inverts"] = "drawing"
    no_data: list[float] = Field(default_factory=list)   # numbers the town records for "not known" (0, -9999)
    swmm: Path | None = None
    structures: StructureLayer | None = None
    structure_layers: list[StructureLayer] | None = None    # instead of structures: one layer per kind
    pipes: ConveyanceLayer | None = None
    receiving_waters: dict[str, str] = Field(default_factory=dict)  # outfall id -> water (for SWMM models)

    _outfall_names = field_validator("receiving_waters", mode="before")(_codes_as_text)
    drainage_areas: DrainageAreaLayer | None = None
    parcels: ParcelLayer | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "Mapping":
        if self.structures is not None and self.structure_layers is not None:
            raise ValueError("give structures: (one layer) or structure_layers: (a list), not both")
        if self.swmm is None and (not self.point_layers or self.pipes is None):
            raise ValueError("give swmm: (an EPA SWMM .inp) or both structures: (or structure_layers:) and pipes: "
                             "layers")
        if self.swmm is not None and (self.point_layers or self.pipes):
            raise ValueError("swmm: and GIS layers: import one source at a time")
        return self

    @property
    def point_layers(self) -> list[StructureLayer]:
        """The structure layers: ``structures:`` or each of ``structure_layers:``."""
        return self.structure_layers or ([self.structures] if self.structures is not None else [])

    def relative_to(self, folder: Path) -> "Mapping":
        """File names resolved against the mapping file's folder."""
        def fix(p: Path) -> Path:
            return p if p.is_absolute() else folder / p
        upd: dict = {}
        if self.swmm is not None:
            upd["swmm"] = fix(self.swmm)
        if self.structures is not None:
            upd["structures"] = self.structures.model_copy(update={"file": fix(self.structures.file)})
        if self.structure_layers is not None:
            upd["structure_layers"] = [x.model_copy(update={"file": fix(x.file)}) for x in self.structure_layers]
        if self.pipes is not None:
            upd["pipes"] = self.pipes.model_copy(update={"file": fix(self.pipes.file)})
        for key in ("drainage_areas", "parcels"):
            spec = getattr(self, key)
            if spec is not None:
                upd[key] = spec.model_copy(update={"file": fix(spec.file)})
        return self.model_copy(update=upd)


def load_mapping(path: Path) -> Mapping:
    """The mapping file, its file names resolved against its folder; ConfigError names line and field."""
    return load_yaml_model(path, Mapping).relative_to(path.parent)
