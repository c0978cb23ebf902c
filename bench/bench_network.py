"""Import and trace of a town-sized storm-sewer map, with networkx's own traversal as the
peer measured in the same run.

    python bench/bench_network.py [--structures 10000] [--repeat 3]

Prints figures; asserts nothing. Targets (issue 24): import of 20,000 structures and pipes
under 10 s; the upstream trace and the next bisection point on that network under 50 ms.

The network: ``--structures`` manholes on a grid in NY State Plane Long Island (EPSG:2263,
US feet), 200 ft apart, each draining west along its row and the first column draining
south to one outfall, so every structure is upstream of it: the longest trace there is.
Written as GeoJSON (one structure layer, one pipe layer) and read through a mapping file.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from ms4watch.network.importer import import_map
from ms4watch.network.bisect import plan
from ms4watch.network.trace import Way, walk


def write_town(folder: Path, n: int) -> Path:
    side = math.ceil(math.sqrt(n))
    crs = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::2263"}}
    x0, y0 = 1_000_000, 200_000
    cells = [(i % side, i // side) for i in range(n)]
    structures = [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [x0 + c * 200, y0 + r * 200]},
                   "properties": {"ID": "OF-1" if (c, r) == (0, 0) else f"MH-{c}-{r}",
                                  "T": "OF" if (c, r) == (0, 0) else "MH", "INV": 10 + c * 0.5 + r * 0.5,
                                  "RW": "Bronx River"}} for c, r in cells]
    pipes = []
    for c, r in cells:
        if (c, r) == (0, 0):
            continue
        to = (c - 1, r) if c > 0 else (0, r - 1)
        pipes.append({"type": "Feature", "properties": {"ID": f"P-{c}-{r}", "D": 12},
                      "geometry": {"type": "LineString", "coordinates": [[x0 + c * 200, y0 + r * 200],
                                                                         [x0 + to[0] * 200, y0 + to[1] * 200]]}})
    (folder / "s.geojson").write_text(json.dumps({"type": "FeatureCollection", "crs": crs, "features": structures}))
    (folder / "p.geojson").write_text(json.dumps({"type": "FeatureCollection", "crs": crs, "features": pipes}))
    mapping = folder / "m.yaml"
    mapping.write_text("structures: {file: s.geojson, id: ID, type: T, types: {OF: outfall, MH: manhole}, "
                       "invert: INV, receiving_water: RW}\npipes: {file: p.geojson, id: ID, diameter: D}\n")
    return mapping


def best(fn, repeat: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--structures", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mapping = write_town(Path(tmp), a.structures)
        t_import, got = best(lambda: import_map(mapping), a.repeat)
    net = got.network
    features = len(net.structures) + len(net.conveyances)
    print(f"import: {len(net.structures)} structures + {len(net.conveyances)} pipes = {features} features "
          f"in {t_import:.2f} s ({len(got.findings)} findings)  [target: 20,000 features < 10 s]")
    g = net.graph()
    t_trace, steps = best(lambda: walk(net, "OF-1", Way.UP), a.repeat)
    t_graph, _ = best(lambda: type(net)(net.structures, net.conveyances).graph(), a.repeat)
    import networkx as nx
    t_peer, order = best(lambda: list(nx.bfs_tree(g.reverse(copy=False), "OF-1")), a.repeat)
    print(f"upstream trace (graph built) of the outfall: {len(steps)} structures in {t_trace * 1000:.1f} ms "
          f"(the graph, built once per network: {t_graph * 1000:.1f} ms); networkx bfs_tree alone "
          f"{t_peer * 1000:.1f} ms, ratio {t_trace / t_peer:.1f}x  [target: < 50 ms]")
    print(f"  structures reached: ours {len(steps)}, networkx {len(order)}")
    t_plan, p = best(lambda: plan(net, "OF-1"), a.repeat)
    print(f"next bisection point: {p.next_structure} ({p.next_splits_ft:,.0f} of {p.suspect_length_ft:,.0f} ft) "
          f"in {t_plan * 1000:.1f} ms  [target: < 50 ms]")


if __name__ == "__main__":
    main()
