"""GIS layers (GeoJSON, Esri shapefile, GeoPackage, file geodatabase: whatever GDAL reads)
through pyogrio, geometries through shapely, coordinates to WGS 84 through pyproj."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

from .crs import crs_label, is_geographic, same_crs, to_wgs84
from .errors import NetworkError
from .mapping import TO_FT, TO_IN, ConveyanceLayer, Mapping, StructureLayer
from .model import Finding, Structure
from .raw import RawLine, RawMap, unique_id
from .units import unit_hints
from .values import as_text, code, feature, number, text


def read_layer(file: Path, layer: str | None, where: str) -> tuple[str | None, list[dict[str, Any]], list[Any]]:
    """The layer's CRS (as GDAL states it), its attribute rows and shapely geometries (None
    where a feature has none)."""
    import pyogrio.raw
    import shapely
    from pyogrio.errors import DataLayerError, DataSourceError
    try:
        with warnings.catch_warnings():      # a measured line's M values are not used: nothing to warn of
            warnings.filterwarnings("ignore", message="Measured .M. geometry types are not supported")
            layers = [str(n) for n, _ in pyogrio.list_layers(str(file))]
            if layer is None and len(layers) > 1:
                raise NetworkError(f"{where}: {len(layers)} layers ({', '.join(layers)}): name one with layer: "
                                   "in the mapping file")
            if layer is not None and layer not in layers:
                alike = [n for n in layers if n.casefold() == layer.casefold()]
                if len(alike) != 1:
                    raise NetworkError(f"{file}: no layer {layer!r} (it has {', '.join(layers)})")
                layer = alike[0]                # GDAL matches a GeoPackage's layer names so
            meta, fids, geoms, columns = pyogrio.raw.read(str(file), layer=layer, return_fids=True)
            key = pyogrio.read_info(str(file), layer=layer).get("fid_column") or None
    except (DataSourceError, DataLayerError) as e:
        raise NetworkError(f"{where}: cannot read: {e}") from None
    names = list(meta["fields"])
    rows = []
    for i in range(len(fids)):
        row = {n: _plain(columns[j][i]) for j, n in enumerate(names)}
        if key is not None and key not in row:      # a geodatabase's OBJECTID, a GeoPackage's fid: a field too
            row[key] = int(fids[i])
        row["__fid__"] = int(fids[i])
        rows.append(row)
    shapes: list[Any] = [None] * len(rows)
    for i, g in enumerate(geoms if geoms is not None else ()):
        if g is None:
            continue
        try:
            shapes[i] = shapely.from_wkb(g)
        except shapely.errors.GEOSException as e:     # e.g. a line of one point: kept, said by the reader
            rows[i][UNREADABLE] = str(e).split(": ", 1)[-1].strip()
    return meta.get("crs"), rows, shapes


UNREADABLE = "__unreadable__"     # in a row whose geometry GEOS could not build: why


def _no_shape(row: dict[str, Any]) -> str:
    """How a feature without a usable geometry is described."""
    why = row.get(UNREADABLE)
    return f"has a shape that cannot be read ({why})" if why else "has no line"


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def read_gis(mapping: Mapping) -> RawMap:
    assert mapping.point_layers and mapping.pipes is not None
    out = RawMap()
    seen: set[str] = set()                      # ids are the town's across its structure layers
    for layer in mapping.point_layers:
        _read_structures(mapping, layer, out, seen)
    _read_pipes(mapping, mapping.pipes, out)
    return out


def _transformer(crs: str | None, mapping: Mapping, where: str, findings: list[Finding] | None = None):
    """To WGS 84 from the layer's own CRS, else the mapping's; a mapping's CRS that differs
    from the layer's own is said (it is not used for that layer)."""
    if crs is not None and mapping.crs is not None and findings is not None and not same_crs(crs, mapping.crs):
        findings.append(Finding("crs_differs", where, f"{where}: the layer states {crs_label(crs)}; crs: "
                                f"{mapping.crs} in the mapping is not used for it"))
    crs = crs or mapping.crs
    if crs is None:
        raise NetworkError(f"{where}: the file names no coordinate system; give one with crs: in the mapping "
                           "file (e.g. EPSG:2263, NY State Plane Long Island, US feet)")
    return to_wgs84(crs, where)


def _where(file: Path, layer: str | None) -> str:
    return f"{file}" + (f" (layer {layer})" if layer else "")


POINTS = ("Point", "MultiPoint", "Polygon", "MultiPolygon")
LINES = ("LineString", "MultiLineString")


def _open(mapping: Mapping, spec: StructureLayer | ConveyanceLayer, findings: list[Finding]) -> tuple[str, Any, float, Any]:
    """A layer's name for messages, its transformer to WGS 84, the elevation factor to feet and
    its (attributes, geometry) pairs. A layer none of whose features has the geometry its
    role needs (the pipes' layer named for the structures) is refused."""
    where = _where(spec.file, spec.layer)
    crs, rows, shapes = read_layer(spec.file, spec.layer, where)
    if not rows:
        findings.append(Finding("empty_layer", where, f"{where}: the layer has no features"))
    lines = isinstance(spec, ConveyanceLayer)
    drawn = sorted({g.geom_type for g in shapes if g is not None and not g.is_empty})
    if drawn and not set(drawn) & set(LINES if lines else POINTS):
        raise NetworkError(f"{where}: its features are {', '.join(drawn)}, not "
                           f"{'lines' if lines else 'points or polygons'}: check the "
                           f"{'pipes' if lines else 'structures'}' file and layer in the mapping")
    crs = _not_degrees(crs, rows, shapes, mapping, where, findings)
    return where, _transformer(crs, mapping, where, findings), TO_FT[mapping.elevation_unit], zip(rows, shapes)


def _not_degrees(crs: str | None, rows: list[dict[str, Any]], shapes: list[Any], mapping: Mapping, where: str,
                 findings: list[Finding]) -> str | None:
    """The layer's CRS, unless its coordinates cannot be in it: a CRS in degrees (GeoJSON
    without a "crs" member is WGS 84 by RFC 7946, and many exports drop the member) with a
    feature beyond ±180, ±90, or a projected one (a .prj copied from another layer) with every
    feature within them. Then the mapping's ``crs`` of the other sort, said; refused without
    one (a mapping naming the layer's own CRS confirms it)."""
    located = [(row, g) for row, g in zip(rows, shapes) if g is not None and not g.is_empty]
    if crs is None or not located:
        return crs

    def in_degrees(g: Any) -> bool:
        x0, y0, x1, y1 = g.bounds
        return max(abs(x0), abs(x1)) <= 180 and max(abs(y0), abs(y1)) <= 90

    import shapely
    if is_geographic(crs):
        beyond = next(((row, g) for row, g in located if not in_degrees(g)), None)
        if beyond is None:
            return crs
        if mapping.crs is not None and not is_geographic(mapping.crs):
            findings.append(Finding("crs_differs", where, f"{where}: the layer states {crs_label(crs)} but its "
                                    f"coordinates are not degrees; read in crs: {mapping.crs} from the mapping"))
            return mapping.crs
        row, g = beyond
        x, y = shapely.get_coordinates(g)[0]
        raise NetworkError(f"{where}: feature {row['__fid__']} lies at ({as_text(float(x))}, {as_text(float(y))}), "
                           f"not a longitude and latitude as the layer's {crs_label(crs)} says; give the layers' "
                           "coordinate system with crs: in the mapping (e.g. EPSG:2263, NY State Plane Long Island, "
                           "US feet)")
    if not all(in_degrees(g) for _, g in located) or (mapping.crs is not None and same_crs(mapping.crs, crs)):
        return crs
    if mapping.crs is not None and is_geographic(mapping.crs):
        findings.append(Finding("crs_differs", where, f"{where}: the layer states {crs_label(crs)} but its "
                                f"coordinates are degrees; read in crs: {mapping.crs} from the mapping"))
        return mapping.crs
    row, g = located[0]
    x, y = shapely.get_coordinates(g)[0]
    raise NetworkError(f"{where}: every feature lies within ±180, ±90 (feature {row['__fid__']} at "
                       f"({float(x):g}, {float(y):g})): degrees, not the layer's {crs_label(crs)}? give crs: EPSG:4326 "
                       f"in the mapping if so (or crs: {crs_label(crs)} if the numbers are right)")


def _fallback(spec: StructureLayer | ConveyanceLayer, row: dict[str, Any]) -> str:
    """The id of a feature whose id attribute is empty: ``<layer>#<fid>``."""
    return f"{spec.layer or spec.file.stem}#{row['__fid__']}"


def _kind(spec: Any, row: dict[str, Any], fid: str, what: str, where: str, findings: list[Finding]) -> Any:
    """The feature's type by the mapping's ``types``; the layer's default, reported, when unknown."""
    kind = spec.default_type
    if spec.type:
        value = text(row, spec.type, where)
        found = code(value, spec.types)
        if found is not None:
            return found
        findings.append(Finding("unknown_type", fid, f"{feature(where, row)}: {what} {fid}: {spec.type} = "
                                f"{value!r} is not in the mapping's types; read as {kind.value}"))
    return kind


def _read_structures(mapping: Mapping, spec: StructureLayer, out: RawMap, seen: set[str]) -> None:
    where, tr, elev, features = _open(mapping, spec, out.findings)
    for row, shape in features:
        sid = unique_id(text(row, spec.id, where), _fallback(spec, row), seen, "structure", out.findings)
        kind = _kind(spec, row, sid, "structure", where, out.findings)
        lon = lat = None
        if shape is None or shape.is_empty:
            what = "has no location" if UNREADABLE not in row else _no_shape(row)
            out.findings.append(Finding("no_geometry", sid, f"{feature(where, row)}: structure {sid} {what}; kept, "
                                        "but no pipe can be connected to it"))
        else:
            if shape.geom_type not in POINTS:
                out.findings.append(Finding("no_geometry", sid, f"{feature(where, row)}: structure {sid} is a "
                                            f"{shape.geom_type}, not a point; placed at its centroid"))
            p = shape.centroid if shape.geom_type != "Point" else shape
            lon, lat = tr.transform(p.x, p.y)
        inv = number(row, spec.invert, sid, "structure", where, out.findings, mapping.no_data)
        rim = number(row, spec.rim, sid, "structure", where, out.findings, mapping.no_data)
        out.structures.append(Structure(
            id=sid, kind=kind, lon=lon, lat=lat,
            invert_ft=None if inv is None else inv * elev, rim_ft=None if rim is None else rim * elev,
            receiving_water=text(row, spec.receiving_water, where), source=where))


def _read_pipes(mapping: Mapping, spec: ConveyanceLayer, out: RawMap) -> None:
    from shapely.ops import linemerge
    where, tr, elev, features = _open(mapping, spec, out.findings)
    seen: set[str] = set()
    first = len(out.lines)
    for row, shape in features:
        cid = unique_id(text(row, spec.id, where), _fallback(spec, row), seen, "pipe", out.findings)
        kind = _kind(spec, row, cid, "pipe", where, out.findings)
        coords: tuple[tuple[float, float], ...] = ()
        if shape is None or shape.is_empty:
            out.findings.append(Finding("no_geometry", cid, f"{feature(where, row)}: pipe {cid} {_no_shape(row)}; "
                                        "kept, unconnected"))
        elif shape.geom_type not in LINES:
            out.findings.append(Finding("no_geometry", cid, f"{feature(where, row)}: pipe {cid} is a "
                                        f"{shape.geom_type}, not a line; kept, unconnected"))
        else:
            if shape.geom_type == "MultiLineString":
                merged = linemerge(shape)
                if merged.geom_type != "LineString":
                    out.findings.append(Finding("multipart", cid, f"{feature(where, row)}: pipe {cid} is drawn in "
                                                f"{len(shape.geoms)} parts that do not join; its first part's start "
                                                "and last part's end are taken as its ends"))
                    pts = [c for part in shape.geoms for c in part.coords]
                else:
                    pts = list(merged.coords)
            else:
                pts = list(shape.coords)
            xs, ys = zip(*[(c[0], c[1]) for c in pts])
            lons, lats = tr.transform(xs, ys)
            coords = tuple(zip(lons, lats))
        flow = None
        if spec.flow_direction:
            value = text(row, spec.flow_direction, where)
            flow = code(value, spec.flow_directions)
            if value is not None and flow is None:
                out.findings.append(Finding("unknown_direction", cid, f"{feature(where, row)}: pipe {cid}: "
                                            f"{spec.flow_direction} = {value!r} is not in the mapping's "
                                            "flow_directions; read as unknown"))
        s_inv = number(row, spec.start_invert, cid, "pipe", where, out.findings, mapping.no_data)
        e_inv = number(row, spec.end_invert, cid, "pipe", where, out.findings, mapping.no_data)
        dia = number(row, spec.diameter, cid, "pipe", where, out.findings, mapping.no_data, size=True)
        length = number(row, spec.length, cid, "pipe", where, out.findings, mapping.no_data, size=True)
        out.lines.append(RawLine(
            id=cid, kind=kind, coords=coords,
            start_invert_ft=None if s_inv is None else s_inv * elev,
            end_invert_ft=None if e_inv is None else e_inv * elev,
            length_ft=None if length is None else length * TO_FT[spec.length_unit],
            diameter_in=None if dia is None else dia * TO_IN[spec.diameter_unit],
            material=text(row, spec.material, where), flow=flow, source=where,
            start_node=text(row, spec.start_structure, where), end_node=text(row, spec.end_structure, where),
            snap_ends=True))
    unit_hints(spec, out.lines[first:], where, out.findings)
