"""The kept network out again, for other GIS and for the field: two layers (``structures``
points, ``conveyances`` lines) in WGS 84, written by pyogrio in any format GDAL writes, the
format from the file name (.geojson, .gpkg, .kml, .shp…). One file per layer for formats
that hold one layer (GeoJSON: ``<name>.structures.geojson`` and ``<name>.conveyances.geojson``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import NetworkError
from .model import Network, Structure, StructureKind

MULTI_LAYER = {".gpkg", ".kml", ".gdb"}
DRIVERS = {".kml": "LIBKML"}           # GDAL has two KML writers; libkml keeps the attributes as ExtendedData
STRUCTURE_FIELDS = ["id", "kind", "invert_ft", "rim_ft", "receiving_water"]
CONVEYANCE_FIELDS = ["id", "kind", "upstream", "downstream", "direction", "length_ft", "diameter_in", "material",
                     "upstream_invert_ft", "downstream_invert_ft"]


def export(net: Network, path: Path, outfalls_only: bool = False, extra: Sequence["Layer"] = ()) -> list[Path]:
    """Write the network; the files written. Structures without a position (a SWMM model
    imported without a CRS) are refused rather than written without one. ``extra``: more
    layers to write with them (``network.records``)."""
    import shapely
    unplaced = [s.id for s in net.structures.values() if s.lon is None or s.lat is None]
    if unplaced:
        raise NetworkError(f"{len(unplaced)} structures have no position (e.g. {unplaced[0]}): re-import the map "
                           "with its coordinate system (--crs) to export it")
    structures = [s for s in net.structures.values() if not outfalls_only or s.kind is StructureKind.OUTFALL]
    layers = [Layer("structures", "Point", [shapely.Point(*_lon_lat(s)) for s in structures],
                    STRUCTURE_FIELDS, [_column(structures, f) for f in STRUCTURE_FIELDS])]
    if not outfalls_only:
        pipes = [c for c in net.conveyances.values() if len(c.coords) > 1]
        unplaced = [c.id for c in net.conveyances.values() if len(c.coords) <= 1]
        if unplaced:
            raise NetworkError(f"{len(unplaced)} conveyances have no line (e.g. {unplaced[0]}); export --outfalls, "
                               "or re-import the map with lines")
        layers.append(Layer("conveyances", "LineString", [shapely.LineString(c.coords) for c in pipes],
                            CONVEYANCE_FIELDS, [_column(pipes, f) for f in CONVEYANCE_FIELDS]))
    return write_layers([*layers, *extra], path)


@dataclass(frozen=True)
class Layer:
    """One layer to write: its geometries (shapely, WGS 84) and a column of values per field."""
    name: str
    geometry_type: str            # Point | LineString
    geometries: list
    fields: list[str]
    columns: list[np.ndarray]


def write_layers(layers: list[Layer], path: Path) -> list[Path]:
    """Write the layers to ``path`` (one file per layer where the format holds one); the
    files written. Refuses an existing file before writing anything."""
    import shapely
    from pyogrio.errors import DataSourceError

    def target_of(layer: str) -> Path:
        return path if path.suffix.lower() in MULTI_LAYER else path.with_suffix(f".{layer}{path.suffix}")

    for layer in layers:
        if target_of(layer.name).exists():
            raise NetworkError(f"{target_of(layer.name)}: exists; name a new file")
    written: list[Path] = []
    for layer in layers:
        target = target_of(layer.name)
        names, columns = layer.fields, layer.columns
        if path.suffix.lower() == ".kml":          # a placemark's label in Google Earth and phones
            names, columns = ["name", *names], [columns[0], *columns]
        try:
            import pyogrio.raw
            pyogrio.raw.write(str(target), geometry=np.array([shapely.to_wkb(g) for g in layer.geometries],
                                                             dtype=object),
                              field_data=columns, fields=names, layer=layer.name,
                              geometry_type=layer.geometry_type, crs="EPSG:4326", append=target.exists(),
                              driver=DRIVERS.get(path.suffix.lower()))
        except (DataSourceError, ValueError) as e:
            raise NetworkError(f"{target}: cannot write: {e}") from None
        if target not in written:
            written.append(target)
    return written


def _lon_lat(s: Structure) -> tuple[float, float]:
    if s.lon is None or s.lat is None:  # export() refuses a network with such structures first
        raise NetworkError(f"structure {s.id} has no position")
    return s.lon, s.lat


def _column(items: list, name: str) -> np.ndarray:
    """Numbers (``_ft``, ``_in``) as floats, unknown as NaN (written as null); the rest as text."""
    values = [getattr(i, name) for i in items]
    if name.endswith(("_ft", "_in")):
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return np.array([v.value if hasattr(v, "value") else v for v in values], dtype=object)
