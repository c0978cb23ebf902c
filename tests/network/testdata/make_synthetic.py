"""Writes the synthetic network (NY State Plane Long Island, EPSG:2263, US survey feet) in
structures.geojson and pipes.geojson. Kept so the files can be regenerated; the tests read
the files. Drawn defects: P-5 flows uphill by its inverts, P-6 starts at no structure,
P-7/P-8 form a loop, OF-2 has no receiving water; P-2's end is drawn 0.9 ft off MH-1.

Drainage areas (areas.geojson) and parcels (parcels.geojson), boxes in the same feet:
DA-1 names CB-1; DA-2 holds CB-2 alone; DA-3 holds MH-4 and MH-5, which drain to each
other (no one structure is the most downstream: reported); DA-4 holds no structure; DA-5
names CB-9, which the map lacks; DA-6 holds MH-1 and OF-1 (MH-1 drains to OF-1: OF-1).
PA-1 lies in DA-1, PA-2 in DA-2; PA-3 in no area, its centre 60 ft from CB-3; PA-4 far
from everything; PA-5 in DA-3 (no structure) and 200+ ft from any inlet."""

import json
from pathlib import Path

HERE = Path(__file__).parent
CRS = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::2263"}}
S = [  # id, type, x, y [ftUS], invert [ft], receiving water
    ("OF-1", "OF", 1000000, 200000, 10.0, "Hutchinson River"),
    ("MH-1", "MH", 1000000, 200300, 12.0, None),
    ("MH-2", "MH", 1000000, 200700, 15.0, None),
    ("CB-1", "CB", 1000200, 200300, 14.0, None),
    ("CB-2", "CB", 1000000, 201000, 17.0, None),
    ("MH-3", "MH", 999800, 200700, 14.0, None),
    ("MH-4", "MH", 1000400, 200700, 17.0, None),
    ("MH-5", "MH", 1000400, 200900, 18.0, None),
    ("OF-2", "OF", 1001000, 200000, 9.0, None),
    ("CB-3", "CB", 1001000, 200150, 11.0, None),
]
P = [  # id, start (x, y), end (x, y), start invert, end invert, diameter [in], material
    ("P-1", (1000000, 200300), (1000000, 200000), 12.0, 10.0, 18, "RCP"),
    ("P-2", (1000000, 200700), (1000000.8, 200300.4), 15.0, 12.5, 15, "RCP"),
    ("P-3", (1000200, 200300), (1000000, 200300), 14.0, 12.6, 12, "PVC"),
    ("P-4", (1000000, 201000), (1000000, 200700), 17.0, 15.2, 12, "PVC"),
    ("P-5", (999800, 200700), (1000000, 200700), 14.0, 15.5, 12, "CMP"),
    ("P-6", (1000500, 200500), (1000200, 200300), 16.0, 14.2, 8, "PVC"),
    ("P-7", (1000400, 200700), (1000400, 200900), 17.0, 18.0, 12, "RCP"),
    ("P-8", (1000400, 200900), (1000400, 200700), 18.0, 17.1, 12, "RCP"),
    ("P-9", (1000400, 200700), (1000000, 200700), 17.0, 15.3, 12, "RCP"),
    ("P-10", (1001000, 200150), (1001000, 200000), 11.0, 9.0, 12, "HDPE"),
]

A = [  # id, named structure, x0, y0, x1, y1
    ("DA-1", "CB-1", 1000100, 200200, 1000300, 200400),
    ("DA-2", None, 999900, 200900, 1000100, 201100),
    ("DA-3", None, 1000300, 200600, 1000500, 201000),
    ("DA-4", None, 1002000, 202000, 1002100, 202100),
    ("DA-5", "CB-9", 998000, 198000, 998100, 198100),
    ("DA-6", None, 999900, 199900, 1000100, 200400),
]
PARCELS = [  # id, x0, y0, x1, y1
    ("PA-1", 1000150, 200250, 1000250, 200350),
    ("PA-2", 999950, 200950, 1000050, 201050),
    ("PA-3", 1001040, 200130, 1001080, 200170),
    ("PA-4", 1003000, 203000, 1003100, 203100),
    ("PA-5", 1000350, 200650, 1000450, 200750),
]


def _box(x0: float, y0: float, x1: float, y1: float) -> dict:
    return {"type": "Polygon", "coordinates": [[[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]]}


def main() -> None:
    structures = {"type": "FeatureCollection", "crs": CRS, "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]},
         "properties": {"FACILITYID": i, "TYPE": t, "INV": inv, "RECV": recv}} for i, t, x, y, inv, recv in S]}
    pipes = {"type": "FeatureCollection", "crs": CRS, "features": [
        {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [list(a), list(b)]},
         "properties": {"FACILITYID": i, "INV_START": si, "INV_END": ei, "DIAM": d, "MATERIAL": m}}
        for i, a, b, si, ei, d, m in P]}
    (HERE / "structures.geojson").write_text(json.dumps(structures, indent=1) + "\n")
    (HERE / "pipes.geojson").write_text(json.dumps(pipes, indent=1) + "\n")
    areas = {"type": "FeatureCollection", "crs": CRS, "features": [
        {"type": "Feature", "geometry": _box(*box), "properties": {"DA_ID": i, "OUTLET": named}}
        for i, named, *box in A]}
    parcels = {"type": "FeatureCollection", "crs": CRS, "features": [
        {"type": "Feature", "geometry": _box(*box), "properties": {"SBL": i}} for i, *box in PARCELS]}
    (HERE / "areas.geojson").write_text(json.dumps(areas, indent=1) + "\n")
    (HERE / "parcels.geojson").write_text(json.dumps(parcels, indent=1) + "\n")


if __name__ == "__main__":
    main()
