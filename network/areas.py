"""Drainage areas and parcels on the town's network.

A drainage area (a catchment, a subwatershed) drains to one structure: the one its
``structure`` attribute names, else the one structure inside it, else, of several inside,
the one the others drain to. A parcel drains to the structure of the drainage area its
representative point lies in (shapely's ``representative_point``: always inside the
polygon), else to the nearest catch basin or inlet within the mapping's ``tolerance_ft``
of that point. Whatever cannot be placed is kept and reported, never dropped."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from .build import FT_PER_M, _Snapper
from .errors import NetworkError
from .gis import _not_degrees, _transformer, _where, read_layer
from .mapping import DrainageAreaLayer, Mapping, ParcelLayer
from .model import Finding, Network, StructureKind
from .raw import unique_id
from .values import text as _text

INLETS = (StructureKind.CATCH_BASIN, StructureKind.INLET)


@dataclass(frozen=True)
class DrainageArea:
    id: str
    structure: str | None          # the structure it drains to (None: not known; reported)
    how: str | None                # "attribute" (named) or "inside" (the structure in it)
    area_sqft: float               # on the WGS 84 ellipsoid


@dataclass(frozen=True)
class Parcel:
    id: str
    structure: str | None          # the inlet or structure it drains to (None: not placed; reported)
    drainage_area: str | None      # the area its representative point lies in
    how: str | None                # "drainage_area" or "nearest_inlet"
    distance_ft: float | None = None   # to the nearest inlet, when placed that way


def _polygons(mapping: Mapping, spec: DrainageAreaLayer | ParcelLayer, what: str,
              findings: list[Finding]) -> tuple[str, list[tuple[str, Any, dict[str, Any]]]]:
    """Each feature's id and its polygon in WGS 84 (None without a geometry), and the row."""
    import shapely
    where = _where(spec.file, spec.layer)
    crs, rows, shapes = read_layer(spec.file, spec.layer, where)
    tr = _transformer(_not_degrees(crs, rows, shapes, mapping, where, findings), mapping, where, findings)
    seen: set[str] = set()
    out = []
    for row, shape in zip(rows, shapes):
        fallback = f"{spec.layer or spec.file.stem}#{row['__fid__']}"
        fid = unique_id(_text(row, spec.id, where), fallback, seen, what, findings)
        if shape is None or shape.is_empty:
            findings.append(Finding("no_geometry", fid, f"{what} {fid} has no shape; kept, not placed"))
            out.append((fid, None, row))
            continue
        if shape.geom_type not in ("Polygon", "MultiPolygon"):
            raise NetworkError(f"{where}: {what} {fid}: a {shape.geom_type}, expected a polygon")
        out.append((fid, shapely.transform(shape, lambda xy: _to_lonlat(tr, xy)), row))
    return where, out


def _to_lonlat(tr: Any, xy: Any) -> Any:
    import numpy as np
    lon, lat = tr.transform(xy[:, 0], xy[:, 1])
    return np.column_stack([lon, lat])


def read_areas(mapping: Mapping, net: Network) -> tuple[list[tuple[DrainageArea, Any]], list[Finding]]:
    """Each drainage area with its polygon (WGS 84), and what could not be placed."""
    import networkx as nx
    import shapely
    from pyproj import Geod
    spec = mapping.drainage_areas
    assert spec is not None
    findings: list[Finding] = []
    where, polys = _polygons(mapping, spec, "drainage area", findings)
    geod = Geod(ellps="WGS84")
    located = [s for s in net.structures.values() if s.lon is not None and s.lat is not None]
    tree = shapely.STRtree([shapely.Point(s.lon, s.lat) for s in located if s.lon is not None and s.lat is not None])
    g = net.graph()
    out = []
    for aid, poly, row in polys:
        sqft = abs(geod.geometry_area_perimeter(poly)[0]) * FT_PER_M ** 2 if poly is not None else 0.0
        named = _text(row, spec.structure, where)
        structure = how = None
        if named is not None:
            if named in net.structures:
                structure, how = named, "attribute"
            else:
                findings.append(Finding("drainage_area_unattached", aid, f"drainage area {aid} names structure "
                                        f"{named}, which the map does not have"))
        elif poly is not None:
            inside = sorted(located[i].id for i in tree.query(poly, predicate="covers"))
            lowest = [s for s in inside if not any(o != s and o in nx.descendants(g, s) for o in inside)]
            if len(lowest) == 1:
                structure, how = lowest[0], "inside"
            elif not inside:
                findings.append(Finding("drainage_area_unattached", aid,
                                        f"drainage area {aid} holds no structure and names none"))
            else:
                field = f" in {spec.structure}" if spec.structure else " (structure: in the mapping)"
                findings.append(Finding("drainage_area_unattached", aid, (
                    f"drainage area {aid} holds {', '.join(inside)}, none of them downstream of the others; "
                    f"name the structure it drains to{field}")))
        out.append((DrainageArea(aid, structure, how, sqft), poly))
    return out, findings


def read_parcels(mapping: Mapping, net: Network, areas: list[tuple[DrainageArea, Any]]
                 ) -> tuple[list[Parcel], list[Finding]]:
    import shapely
    from pyproj import Geod
    geod = Geod(ellps="WGS84")
    spec = mapping.parcels
    assert spec is not None
    findings: list[Finding] = []
    _, polys = _polygons(mapping, spec, "parcel", findings)
    shaped = [(a, p) for a, p in areas if p is not None]
    tree = shapely.STRtree([p for _, p in shaped])
    snapper = _Snapper([s for s in net.structures.values() if s.kind in INLETS], spec.tolerance_ft)
    out = []
    for pid, poly, _ in polys:
        if poly is None:
            out.append(Parcel(pid, None, None, None))
            continue
        point = poly.representative_point()
        hits = sorted(tree.query(point, predicate="within"))
        area = shaped[hits[0]][0] if hits else None
        if area is not None and area.structure is not None:
            out.append(Parcel(pid, area.structure, area.id, "drainage_area"))
            continue
        inlet, _ = snapper.nearest(point.x, point.y)
        if inlet is not None:                     # the distance on the ellipsoid (the snapper's frame is a sphere)
            s = net.structures[inlet]
            dist = geod.inv(point.x, point.y, s.lon, s.lat)[2] * FT_PER_M
            out.append(Parcel(pid, inlet, area.id if area else None, "nearest_inlet", dist))
            continue
        lies = (f"lies in drainage area {area.id}, which drains to no known structure, and" if area
                else "lies in no drainage area and")
        findings.append(Finding("parcel_unplaced", pid, f"parcel {pid} {lies} no catch basin or inlet is within "
                                f"{spec.tolerance_ft:g} ft"))
        out.append(Parcel(pid, None, area.id if area else None, None))
    return out, findings


def parcels_draining_to(parcels: Iterable[Parcel], structures: Collection[str]) -> list[Parcel]:
    """The parcels whose runoff enters the network at one of ``structures``, by id."""
    return sorted((p for p in parcels if p.structure is not None and p.structure in structures), key=lambda p: p.id)


def reach_entries(net: Network, suspect_pipes: Collection[str], outfall: str, flow: Collection[str] = (),
                  no_flow: Collection[str] = ()) -> set[str]:
    """The structures where water may enter a suspect reach: the upstream end of each of its
    pipes, and the structure at its foot where flow was seen (the outfall until a visit
    finds flow higher up); a structure found dry is not one."""
    ups = {net.conveyances[p].upstream for p in suspect_pipes if p in net.conveyances}
    downs = {net.conveyances[p].downstream for p in suspect_pipes if p in net.conveyances}
    return {s for s in ups | (downs & {outfall, *flow}) if s is not None} - set(no_flow)
