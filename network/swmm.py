"""EPA SWMM 5 input files (``.inp``): the nodes and links of the drainage network.

A small reader of our own: the maintained PyPI readers (swmmio, which depends on pyswmm
and the compiled SWMM engine swmm-toolkit) bring a simulation engine to read five tables.
Format: SWMM 5 User's Manual (EPA/600/R-17/111), Appendix D "Command Line SWMM" — each
section a ``[NAME]`` line, rows of whitespace-separated fields, ``;`` starts a comment.

Read: [OPTIONS] FLOW_UNITS (US units give feet, SI units metres) and LINK_OFFSETS (DEPTH:
a link's offsets are heights above its node's invert; ELEVATION: absolute elevations; ``*``
is the node's invert); [JUNCTIONS] [OUTFALLS] [STORAGE] [DIVIDERS] (name, invert
elevation); [CONDUITS] (name, from node, to node, length, roughness, in- and out-offset);
[PUMPS] [ORIFICES] [WEIRS] [OUTLETS] (name, from, to) kept as links so the network is
whole; [XSECTIONS] (Geom1, the full height: a circular pipe's diameter, a box's height;
none for DUMMY links and for IRREGULAR and STREET sections, whose Geom1 names a transect or a
street); [COORDINATES] and [VERTICES]; [SUBCATCHMENTS] and [POLYGONS] as drainage areas;
[MAP] Units Degrees (longitude and latitude). Fields as the engine splits them (a ``"quoted
name"`` is one field) and names matched as it matches them, without regard to case. Every
other section with rows is reported as not imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .crs import crs_label, is_geographic, to_wgs84
from .errors import NetworkError
from .mapping import Mapping
from .model import ConveyanceKind, Finding, Structure, StructureKind
from .raw import RawLine, RawMap, unique_id

US_FLOW_UNITS = {"CFS", "GPM", "MGD"}
SI_FLOW_UNITS = {"CMS", "LPS", "MLD"}
NODE_SECTIONS = {"JUNCTIONS": StructureKind.JUNCTION, "OUTFALLS": StructureKind.OUTFALL,
                 "STORAGE": StructureKind.STORAGE, "DIVIDERS": StructureKind.JUNCTION}
LINK_SECTIONS = {"CONDUITS": ConveyanceKind.PIPE, "PUMPS": ConveyanceKind.PUMP, "ORIFICES": ConveyanceKind.ORIFICE,
                 "WEIRS": ConveyanceKind.WEIR, "OUTLETS": ConveyanceKind.OUTLET}
OPEN_SHAPES = {"RECT_OPEN", "TRAPEZOIDAL", "TRIANGULAR", "PARABOLIC", "POWER", "IRREGULAR", "STREET"}
NAMED_SHAPES = {"IRREGULAR", "STREET"}     # Geom1 names a [TRANSECTS] / [STREETS] entry, not a size
READ = set(NODE_SECTIONS) | set(LINK_SECTIONS) | {"OPTIONS", "XSECTIONS", "COORDINATES", "VERTICES", "TITLE",
                                                   "SUBCATCHMENTS", "POLYGONS",
                                                   "MAP", "TAGS", "REPORT", "SYMBOLS", "LABELS", "BACKDROP"}


@dataclass(frozen=True)
class Row:
    line: int
    fields: list[str]


def tokens(line: str) -> list[str]:
    """A line's fields as the SWMM engine splits them (``getTokens`` in its ``input.c``): the
    text from the first ``;`` on is a comment, fields are separated by spaces and tabs, and a
    field opened by a double quote runs to the next one (a name with spaces)."""
    out: list[str] = []
    rest = line.split(";", 1)[0]
    while True:
        rest = rest.lstrip(" \t")
        if not rest:
            return out
        if rest.startswith('"'):
            token, _, rest = rest[1:].partition('"')
        else:
            cut = min((i for i in (rest.find(" "), rest.find("\t")) if i >= 0), default=len(rest))
            token, rest = rest[:cut], rest[cut:]
        out.append(token)


def sections(text: str) -> dict[str, list[Row]]:
    """Each section's rows, comments and blank lines removed; names upper-cased. Lines end in
    LF, CRLF or CR (counted as the file's lines, for messages)."""
    out: dict[str, list[Row]] = {}
    current: list[Row] | None = None
    for n, raw in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        line = raw.split(";", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = out.setdefault(line[1:-1].strip().upper(), [])
            continue
        if current is None:
            continue                      # text before the first section: not part of the format
        fields = tokens(line)
        if fields:
            current.append(Row(n, fields))
    return out


def _named(secs: dict[str, list[Row]], where: str) -> None:
    """Refuse a row of the sections read whose name (first field) is an empty ``""``."""
    for section in (*NODE_SECTIONS, *LINK_SECTIONS, "SUBCATCHMENTS"):
        for r in secs.get(section, []):
            if not r.fields[0]:
                raise NetworkError(f"{where}:{r.line}: [{section}]: the name is empty")


def key(name: str) -> str:
    """A name as the engine compares names: its ASCII letters upper-cased (``UCHAR`` in
    ``hash.c``), so ``j1`` is node ``J1``."""
    return name.translate(_UPPER)


_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def decode(data: bytes, where: str, findings: list[Finding]) -> str:
    """UTF-8 (a byte-order mark skipped); else Windows-1252, the code page the SWMM program
    writes on Windows, said in a finding."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        findings.append(Finding("encoding", where, f"{where}: not UTF-8; read as Windows-1252 "
                                "(the SWMM program's encoding on Windows)"))
        return data.decode("cp1252", errors="replace")


def read_swmm(path: Path, mapping: Mapping | None = None) -> RawMap:
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise NetworkError(f"{where}: cannot read: {e.strerror}") from None
    out = RawMap()
    secs = sections(decode(data, where, out.findings))
    _named(secs, where)

    def num(row: Row, i: int, section: str, name: str) -> float:
        try:
            return float(row.fields[i])
        except IndexError:
            raise NetworkError(f"{where}:{row.line}: [{section}] {row.fields[0]}: {name} is missing") from None
        except ValueError:
            raise NetworkError(f"{where}:{row.line}: [{section}] {row.fields[0]}: {name} "
                               f"{row.fields[i]!r} is not a number") from None

    for r in secs.get("OPTIONS", []):
        if len(r.fields) < 2 and r.fields[0].upper() in ("FLOW_UNITS", "LINK_OFFSETS"):
            raise NetworkError(f"{where}:{r.line}: [OPTIONS] {r.fields[0]}: no value")
    options = {r.fields[0].upper(): r.fields[1].upper() for r in secs.get("OPTIONS", []) if len(r.fields) > 1}
    units = options.get("FLOW_UNITS", "CFS")
    if units not in US_FLOW_UNITS | SI_FLOW_UNITS:
        raise NetworkError(f"{where}: [OPTIONS] FLOW_UNITS {units!r}: expected one of "
                           f"{', '.join(sorted(US_FLOW_UNITS | SI_FLOW_UNITS))}")
    to_ft = 1.0 if units in US_FLOW_UNITS else 1 / 0.3048
    if options.get("LINK_OFFSETS", "DEPTH") not in ("DEPTH", "ELEVATION"):
        raise NetworkError(f"{where}: [OPTIONS] LINK_OFFSETS {options['LINK_OFFSETS']!r}: expected DEPTH or ELEVATION")
    offsets_are_elevations = options.get("LINK_OFFSETS", "DEPTH") == "ELEVATION"

    crs = mapping.crs if mapping is not None else None
    map_units = {r.fields[0].upper(): r.fields[1].upper() for r in secs.get("MAP", []) if len(r.fields) > 1}
    if crs is None and map_units.get("UNITS") == "DEGREES":
        crs = "EPSG:4326"                 # [MAP] Units Degrees: longitude and latitude
    out.georeferenced = crs is not None
    tr = to_wgs84(crs, where) if crs is not None else None
    coords = {key(r.fields[0]): (num(r, 1, "COORDINATES", "X-Coord"), num(r, 2, "COORDINATES", "Y-Coord"))
              for r in secs.get("COORDINATES", [])}
    vertices: dict[str, list[tuple[float, float]]] = {}
    for r in secs.get("VERTICES", []):
        vertices.setdefault(key(r.fields[0]), []).append((num(r, 1, "VERTICES", "X-Coord"),
                                                          num(r, 2, "VERTICES", "Y-Coord")))
    if crs is not None and is_geographic(crs):
        for section in ("COORDINATES", "VERTICES", "POLYGONS"):
            for r in secs.get(section, []):
                x, y = num(r, 1, section, "X-Coord"), num(r, 2, section, "Y-Coord")
                if abs(x) > 180 or abs(y) > 90:
                    raise NetworkError(f"{where}:{r.line}: [{section}] {r.fields[0]}: ({r.fields[1]}, {r.fields[2]}) is "
                                       f"not a longitude and latitude, as {crs_label(crs)} says; give the model's "
                                       "coordinate system with --crs (or crs: in a mapping file)")
    receiving = {key(k): v for k, v in (mapping.receiving_waters if mapping else {}).items()}

    def position(xy: tuple[float, float] | None) -> tuple[float | None, float | None]:
        if xy is None or tr is None:
            return None, None
        return tr.transform(*xy)

    seen: set[str] = set()
    inverts: dict[str, float] = {}
    nodes: dict[str, str] = {}             # a name as the engine compares it -> the node's id
    for section, kind in NODE_SECTIONS.items():
        for r in secs.get(section, []):
            sid = unique_id(r.fields[0], r.fields[0], seen, "node", out.findings)
            inv = num(r, 1, section, "Elevation") * to_ft
            inverts[sid] = inv
            nodes.setdefault(key(r.fields[0]), sid)
            xy = coords.get(key(r.fields[0]))
            if xy is None:
                out.findings.append(Finding("no_geometry", sid, f"node {sid} ({where}:{r.line}) has no [COORDINATES]"))
            lon, lat = position(xy)
            out.structures.append(Structure(
                id=sid, kind=kind, lon=lon, lat=lat, x=xy[0] if xy else None, y=xy[1] if xy else None,
                invert_ft=inv, receiving_water=receiving.get(key(r.fields[0])), source=f"{where}:{r.line}"))

    xsections = {key(r.fields[0]): r for r in secs.get("XSECTIONS", [])}
    seen_links: set[str] = set()
    for section, section_kind in LINK_SECTIONS.items():
        for r in secs.get(section, []):
            link_kind = section_kind
            if len(r.fields) < 3:
                raise NetworkError(f"{where}:{r.line}: [{section}] {r.fields[0]}: expected name, from node, to node")
            name, a, b = r.fields[:3]
            a, b = nodes.get(key(a), a), nodes.get(key(b), b)
            lid = unique_id(name, name, seen_links, "link", out.findings)
            length = diameter = None
            a_inv, b_inv = inverts.get(a), inverts.get(b)
            if section == "CONDUITS":
                length = num(r, 3, section, "Length") * to_ft
                a_inv = _offset(r, 5, a_inv, offsets_are_elevations, to_ft, where, section)
                b_inv = _offset(r, 6, b_inv, offsets_are_elevations, to_ft, where, section)
            xs = xsections.get(key(name))
            if xs is not None and len(xs.fields) > 1:
                shape = xs.fields[1].upper()
                if shape not in NAMED_SHAPES and shape != "DUMMY":
                    height = num(xs, 2, "XSECTIONS", "Geom1")
                    diameter = height * to_ft * 12 if height > 0 else None
                if shape in OPEN_SHAPES and link_kind is ConveyanceKind.PIPE:
                    link_kind = ConveyanceKind.CHANNEL
            pts = [coords[key(a)]] if key(a) in coords else []
            pts += vertices.get(key(name), [])
            pts += [coords[key(b)]] if key(b) in coords else []
            line_coords = tuple(tr.transform(*p) for p in pts) if tr is not None else ()
            for end in (a, b):
                if end not in inverts:
                    out.findings.append(Finding("unconnected_end", lid, f"link {lid} ({where}:{r.line}) names node "
                                                f"{end}, which no node section defines"))
            out.lines.append(RawLine(
                id=lid, kind=link_kind, coords=line_coords, start_node=a if a in inverts else None,
                end_node=b if b in inverts else None, start_invert_ft=a_inv, end_invert_ft=b_inv,
                length_ft=length, diameter_in=diameter, source=f"{where}:{r.line}"))

    if not out.structures and not out.lines:
        raise NetworkError(f"{where}: no [JUNCTIONS], [OUTFALLS], [STORAGE], [DIVIDERS] or [CONDUITS] rows: "
                           "not a SWMM model of a network")
    _subcatchments(secs, nodes, out, tr, where, num, units in SI_FLOW_UNITS)
    if secs.get("SUBCATCHMENTS"):
        n = len(secs["SUBCATCHMENTS"])
        out.findings.append(Finding("not_imported", "[SUBCATCHMENTS]", f"[SUBCATCHMENTS]: {n} row{'s' if n != 1 else ''} "
                                    "read as drainage areas (name, outlet, area); their rain gage, imperviousness, "
                                    "width, slope and curb length not imported (not part of the pipe network)"))
    for section, rows in secs.items():
        if section not in READ and rows:
            out.findings.append(Finding("not_imported", f"[{section}]", f"[{section}]: {len(rows)} row{'s' if len(rows) != 1 else ''} not imported "
                                        "(not part of the pipe network)"))
    return out


def _offset(row: Row, i: int, node_invert: float | None, absolute: bool, to_ft: float, where: str,
            section: str) -> float | None:
    if node_invert is None:
        return None
    if i >= len(row.fields) or row.fields[i] == "*":
        return node_invert
    try:
        value = float(row.fields[i]) * to_ft
    except ValueError:
        raise NetworkError(f"{where}:{row.line}: [{section}] {row.fields[0]}: offset {row.fields[i]!r} "
                           "is not a number") from None
    return value if absolute else node_invert + value


SQFT = {False: 43_560.0, True: 10_000 / 0.3048 ** 2}     # an acre (US units), a hectare (SI), in square feet


def _subcatchments(secs: dict[str, list[Row]], nodes: dict[str, str], out: RawMap, tr: Any, where: str,
                   num: Callable[[Row, int, str, str], float], si: bool) -> None:
    """[SUBCATCHMENTS] (name, rain gage, outlet, area) as drainage areas draining to their
    outlet node (through the subcatchments an outlet names, if so), of the model's area;
    shaped by [POLYGONS] when the model is placed."""
    import shapely
    from .areas import DrainageArea
    rows = {key(r.fields[0]): r for r in secs.get("SUBCATCHMENTS", [])}
    polygons: dict[str, list[tuple[float, float]]] = {}
    for r in secs.get("POLYGONS", []):
        polygons.setdefault(key(r.fields[0]), []).append((num(r, 1, "POLYGONS", "X-Coord"), num(r, 2, "POLYGONS", "Y-Coord")))
    for r in rows.values():
        name = r.fields[0]
        if len(r.fields) < 3:
            raise NetworkError(f"{where}:{r.line}: [SUBCATCHMENTS] {name}: expected name, rain gage, outlet, area")
        sqft = num(r, 3, "SUBCATCHMENTS", "Area") * SQFT[si]
        outlet, passed = key(r.fields[2]), {key(name)}
        while outlet in rows and outlet not in passed:       # onto another subcatchment: follow it to a node
            passed.add(outlet)
            outlet = key(rows[outlet].fields[2])
        structure = nodes.get(outlet)
        if structure is None:
            why = "a loop of subcatchments" if outlet in passed else "no node or subcatchment of the model"
            out.findings.append(Finding("drainage_area_unattached", name, f"drainage area {name} ({where}:{r.line}): "
                                        f"its outlet {r.fields[2]} is {why}"))
        ring = polygons.get(key(name), [])
        poly = shapely.Polygon([tr.transform(*xy) for xy in ring]) if tr is not None and len(ring) >= 3 else None
        out.areas.append((DrainageArea(name, structure, "attribute" if structure else None, sqft), poly))
