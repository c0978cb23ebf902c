"""Import and trace of a town-sized storm-sewer map, with networkx's own traversal as the
peer measured in the same run.

    python bench/bench_network.py [--structures 10000] [--repeat 3]     # from the repository's root

Prints figures; asserts nothing. The trace and the plan read an index of arrays built on
the network's first use (network/index.py): the first call after an import (which builds it)
is printed apart from repeat calls, and the previous plain-Python versions
(tests/network/reference.py, when run from the repository) beside them. Targets (issue 24): import of 20,000 structures and pipes
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
import sys
import tempfile
import time
from pathlib import Path

from ms4watch.network.bisect import Weight, plan, weights
from ms4watch.network.importer import import_map
from ms4watch.network.index import index
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
    fresh = lambda: type(net)(net.structures, net.conveyances)     # as imported: nothing built yet  # noqa: E731
    t_index, _ = best(lambda: index(fresh()), a.repeat)
    t_graph, g = best(lambda: fresh().graph(), a.repeat)
    print(f"built once per network (on first use): the index of arrays {t_index * 1000:.1f} ms; "
          f"networkx's graph {t_graph * 1000:.1f} ms (no longer needed by the trace or the plan)")
    import networkx as nx
    t_peer, order = best(lambda: list(nx.bfs_tree(g.reverse(copy=False), "OF-1")), a.repeat)

    def cold(fn, indexed: bool) -> tuple[float, object]:
        """The first call on a network just imported: the index built inside it, or before it
        (as if built by the import)."""
        times, out = [], None
        for _ in range(a.repeat):
            n = fresh()
            if indexed:
                index(n)
            t = time.perf_counter()
            out = fn(n)
            times.append(time.perf_counter() - t)
        return min(times), out

    index(net)
    t_cold, steps = cold(lambda n: walk(n, "OF-1", Way.UP), False)
    t_first, _ = cold(lambda n: walk(n, "OF-1", Way.UP), True)
    t_trace, steps = best(lambda: walk(net, "OF-1", Way.UP), a.repeat)
    print(f"upstream trace of the outfall: {len(steps)} structures; first call after import {t_cold * 1000:.1f} ms "
          f"with the index built in it, {t_first * 1000:.1f} ms without; repeat {t_trace * 1000:.1f} ms; "
          f"networkx bfs_tree alone (graph built) {t_peer * 1000:.1f} ms  [target: < 50 ms]")
    print(f"  structures reached: ours {len(steps)}, networkx {len(order)}")
    t_cold_plan, p = cold(lambda n: plan(n, "OF-1"), False)
    t_first_plan, _ = cold(lambda n: plan(n, "OF-1"), True)
    t_plan, p = best(lambda: plan(net, "OF-1"), a.repeat)
    print(f"next bisection point: {p.next_structure} ({p.next_splits_ft:,.0f} of {p.suspect_length_ft:,.0f} ft); "
          f"first call after import {t_cold_plan * 1000:.1f} ms with the index built in it, {t_first_plan * 1000:.1f} ms "
          f"without; repeat {t_plan * 1000:.1f} ms  [target: < 50 ms]")
    t_flow, q = best(lambda: plan(net, "OF-1", flow=[p.next_structure]), a.repeat)
    t_w, _ = best(lambda: plan(net, "OF-1", weights=weights(net, Weight.INLETS)), a.repeat)
    doubted = sorted(net.conveyances)[len(net.conveyances) // 2]
    t_two, r = best(lambda: plan(net, "OF-1", two_way=[doubted]), a.repeat)
    print(f"  after flow at {p.next_structure}: next {q.next_structure} in {t_flow * 1000:.1f} ms; "
          f"by inlets (weights computed in it) {t_w * 1000:.1f} ms; with {doubted} of unknown direction "
          f"(as the workbench plans a case when the import doubted it) {r.next_structure} in {t_two * 1000:.1f} ms")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        from tests.network import reference         # the plain-Python walk and plan before the index
    except ImportError:                               # not run from the repository
        return
    g_net = fresh()
    g_net.graph()
    t_old_trace, old = best(lambda: reference.walk(g_net, "OF-1", Way.UP), a.repeat)
    t_old_plan, old_p = best(lambda: reference.plan(g_net, "OF-1"), a.repeat)
    # lengths summed in another order may differ in the last bits (the previous plan summed in
    # set order, which changes with Python's hash seed from one process to the next)
    same_plan = (old_p.suspect_pipes, old_p.next_structure) == (p.suspect_pipes, p.next_structure) and all(
        math.isclose(x, y, rel_tol=1e-12) for x, y in ((old_p.suspect_length_ft, p.suspect_length_ft),
                                                        (old_p.next_splits_ft, p.next_splits_ft)))
    print(f"before (tests/network/reference.py, networkx's graph built): trace {t_old_trace * 1000:.1f} ms, "
          f"plan {t_old_plan * 1000:.1f} ms; same steps: {old == steps}, same plan: {same_plan}")

if __name__ == "__main__":
    main()
