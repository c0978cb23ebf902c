"""The town's IDDE records on its map, for other GIS and for the field: four layers written
with the network's own writer (:func:`.export.write_layers`, so .geojson, .kml and .gpkg
all work; GeoJSON one file per layer).

* ``outfalls`` (points): every outfall of the map with its screening history: the number of
  dry-weather screenings recorded on cases at it, the last one's date, flow and finding, and
  the open case(s) at it;
* ``cases`` (points at the case's outfall): case number, status, opened, origin, finding;
* ``trace_visits`` (points at the structure opened): case, when, by, flow present or absent,
  odour, colour and the field tests' values, and the indicators over their thresholds;
* ``suspect_reaches`` (lines): the pipes still suspect in each open case's trace
  (:func:`.bisect.plan` from the visits), with the case number.

A case's outfall is found on the map as the workbench finds it (:func:`.monitored.attach`:
the structure the registry names, the outfall of the same id, else the nearest by
position). A case or visit that cannot be placed is named in ``unplaced``, never dropped
silently. Times are written in the town's zone, ISO 8601 with the offset."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import NetworkError
from .export import Layer, export, write_layers
from .model import Network, StructureKind

if TYPE_CHECKING:
    from ..compliance.store import Case
    from ..compliance.traces import TraceVisit

TEXT, REAL, INTEGER = "text", "real", "integer"
OUTFALL_FIELDS = [("id", TEXT), ("receiving_water", TEXT), ("screenings", INTEGER), ("last_screening", TEXT),
                  ("last_flow", TEXT), ("last_finding", TEXT), ("open_case", TEXT)]
CASE_FIELDS = [("case", TEXT), ("status", TEXT), ("opened", TEXT), ("origin", TEXT), ("outfall", TEXT),
               ("structure", TEXT), ("finding", TEXT)]
TEST_FIELDS = [("ammonia_mg_l", REAL), ("surfactants_mg_l", REAL), ("fluoride_mg_l", REAL), ("potassium_mg_l", REAL),
               ("temperature", REAL), ("temperature_unit", TEXT), ("e_coli", REAL), ("e_coli_unit", TEXT)]
VISIT_FIELDS = [("case", TEXT), ("structure", TEXT), ("at", TEXT), ("by", TEXT), ("flow", TEXT), ("odour", TEXT),
                ("colour", TEXT), *TEST_FIELDS, ("exceeds", TEXT), ("notes", TEXT)]
REACH_FIELDS = [("case", TEXT), ("pipe", TEXT), ("upstream", TEXT), ("downstream", TEXT), ("length_ft", REAL)]


@dataclass(frozen=True)
class Records:
    """What the export reads from the town's compliance records and registry."""
    cases: Sequence["Case"]
    visits: dict[int, list["TraceVisit"]]                        # case id -> its trace visits
    registry_outfalls: Sequence[tuple[str, float | None, float | None]] = ()   # (id, lat, lon)
    named: dict[str, str] = field(default_factory=dict)          # registry outfall -> the structure it names


@dataclass(frozen=True)
class Exported:
    written: list[Path]
    unplaced: list[str]          # cases and visits not on the map, one line each


def export_records(net: Network, records: Records, path: Path, *, tz: tzinfo = timezone.utc,
                   two_way: Collection[str] = (), with_network: bool = False,
                   outfalls_only: bool = False) -> Exported:
    """Write the records' layers (after the network's own, ``with_network``; its outfalls
    only, ``outfalls_only``). ``two_way``: pipes whose direction the import doubted."""
    layers, unplaced = record_layers(net, records, tz=tz, two_way=two_way)
    written = export(net, path, outfalls_only=outfalls_only, extra=layers) if with_network \
        else write_layers(layers, path)
    return Exported(written, unplaced)


def record_layers(net: Network, records: Records, *, tz: tzinfo = timezone.utc,
                  two_way: Collection[str] = ()) -> tuple[list[Layer], list[str]]:
    """The four layers and what could not be placed on the map."""
    import shapely

    from ..compliance.traces import observations
    from .bisect import plan
    from .monitored import attach

    def point(sid: str) -> Any:
        s = net.structures[sid]
        if s.lon is None or s.lat is None:
            raise NetworkError(f"structure {sid} has no position: re-import the map with its coordinate system "
                               "(--crs) to export it")
        return shapely.Point(s.lon, s.lat)

    positions = {rid: (lat, lon) for rid, lat, lon in records.registry_outfalls}
    ids = sorted({c.outfall for c in records.cases if c.outfall} | set(positions))
    on_map = {a.registry_id: a.map_id for a in attach(net, [(i, *positions.get(i, (None, None))) for i in ids],
                                                       named=records.named)}
    unplaced: list[str] = []
    placed: list[tuple["Case", str]] = []
    cases = sorted(records.cases, key=lambda c: c.number)
    for c in cases:
        where = on_map.get(c.outfall) if c.outfall else None
        if where is None:
            unplaced.append(f"case {c.number}: " + (f"its outfall {c.outfall} is not on the town's map" if c.outfall
                                                     else "it names no outfall"))
        else:
            placed.append((c, where))

    # outfalls, with the screenings of the cases at each
    outfalls = sorted((s for s in net.structures.values() if s.kind is StructureKind.OUTFALL), key=lambda s: s.id)
    rows: list[list[Any]] = []
    for s in outfalls:
        screenings = sorted((e for c, w in placed if w == s.id for e in c.entries if e.kind == "screening"),
                            key=lambda e: (e.at, e.id))
        last = screenings[-1] if screenings else None
        open_cases = [c.number for c, w in placed if w == s.id and c.status == "open"]
        rows.append([s.id, s.receiving_water, len(screenings), _local(last.at, tz) if last else None,
                     _flow(last.flow_observed) if last else None, last.finding if last else None,
                     " ".join(open_cases) or None])
    layers = [_layer("outfalls", "Point", [point(s.id) for s in outfalls], OUTFALL_FIELDS, rows)]

    layers.append(_layer("cases", "Point", [point(w) for _, w in placed], CASE_FIELDS,
                         [[c.number, c.status, _local(c.opened_at, tz), c.origin, c.outfall, w, c.finding]
                          for c, w in placed]))

    number = {c.id: c.number for c in records.cases}
    visits = [v for c in cases for v in records.visits.get(c.id, [])]
    for v in visits:
        if v.structure not in net.structures:
            unplaced.append(f"case {number[v.case_id]}: trace visit at {v.structure} ({_local(v.at, tz)}): "
                            "no such structure on the town's map")
    visits = [v for v in visits if v.structure in net.structures]
    layers.append(_layer("trace_visits", "Point", [point(v.structure) for v in visits], VISIT_FIELDS,
                         [[number[v.case_id], v.structure, _local(v.at, tz), v.by, v.flow.value, v.odour, v.colour,
                           *_tests(v), " ".join(t.indicator.value for t in v.exceeds) or None, v.notes or None]
                          for v in visits]))

    pipes: list[Any] = []
    rows = []
    for c, w in placed:
        if c.status != "open":
            continue
        mine = [v for v in records.visits.get(c.id, []) if v.structure in net.structures]
        flow, dry = observations(mine)
        suspect = plan(net, w, flow=flow, no_flow=dry, two_way=sorted(set(two_way) & net.conveyances.keys()))
        for pid in sorted(suspect.suspect_pipes):
            p = net.conveyances[pid]
            if len(p.coords) < 2:
                raise NetworkError(f"pipe {pid} has no line: re-import the map with lines to export it")
            pipes.append(shapely.LineString(p.coords))
            rows.append([c.number, pid, p.upstream, p.downstream, p.length_ft])
    layers.append(_layer("suspect_reaches", "LineString", pipes, REACH_FIELDS, rows))
    return layers, unplaced


def feature_collection(layers: Sequence[Layer]) -> dict[str, Any]:
    """The layers as one GeoJSON FeatureCollection (WGS 84), each feature's ``layer`` naming
    its layer: what the workbench's map offers to download."""
    import shapely
    features = []
    for layer in layers:
        for i, g in enumerate(layer.geometries):
            props: dict[str, Any] = {"layer": layer.name}
            for name, col in zip(layer.fields, layer.columns):
                v = col[i]
                props[name] = None if v is None or (isinstance(v, float) and v != v) else \
                    v.item() if isinstance(v, np.generic) else v
            features.append({"type": "Feature", "properties": props, "geometry": shapely.geometry.mapping(g)})
    return {"type": "FeatureCollection", "features": features}


def _tests(v: "TraceVisit") -> list[Any]:
    from ..compliance.traces import Indicator
    by = {t.indicator: t for t in v.tests}

    def value(i: Indicator) -> float | None:
        return by[i].value if i in by else None

    def unit(i: Indicator) -> str | None:
        return by[i].unit if i in by else None
    return [value(Indicator.AMMONIA), value(Indicator.SURFACTANTS), value(Indicator.FLUORIDE),
            value(Indicator.POTASSIUM), value(Indicator.TEMPERATURE), unit(Indicator.TEMPERATURE),
            value(Indicator.E_COLI), unit(Indicator.E_COLI)]


def _flow(observed: bool | None) -> str | None:
    return None if observed is None else "present" if observed else "absent"


def _local(at: datetime, tz: tzinfo) -> datetime:
    return at.astimezone(tz)


def _layer(name: str, geometry_type: str, geometries: list[Any], fields: list[tuple[str, str]],
           rows: list[list[Any]]) -> Layer:
    """The rows' typed values as columns, turned to text here, at the file's edge."""
    columns = []
    for i, (_, kind) in enumerate(fields):
        values = [r[i] for r in rows]
        if kind == REAL:
            columns.append(np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64))
        elif kind == INTEGER:
            columns.append(np.array(values, dtype=np.int64))
        else:
            columns.append(np.array([_text(v) for v in values], dtype=object))
    return Layer(name, geometry_type, geometries, [f for f, _ in fields], columns)


def _text(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, Enum):
        return str(v.value)
    return str(v)


__all__ = ["Records", "Exported", "export_records", "record_layers", "feature_collection"]
