"""The walk and the plan on the index's arrays give what the plain Python before them gave
(tests/network/reference.py), on random networks: trees, loops, several outfalls, pipes of
unknown length, parallel pipes, pipes with an unconnected end, disconnected parts, buried
junctions, ids that sort differently as text than as numbers, and many ties (lengths are
small multiples of a quarter foot, so sums are exact in any order and ties are ties)."""

from __future__ import annotations

import functools
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ms4watch.network.bisect import Weight, plan, weights
from ms4watch.network.build import IMPLIED
from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Network, Structure, StructureKind
from ms4watch.network.trace import Way, walk

from . import reference

IDS = st.text(alphabet="AB19-.", min_size=1, max_size=3)
LENGTH = st.one_of(st.none(), st.integers(0, 12).map(lambda q: q * 25 / 4))


KINDS = st.sampled_from(list(StructureKind))
SHAPES = st.sampled_from(["tree", "any"])
BY = st.sampled_from(["length", "inlets", "drawn"])
DRAWN_WEIGHT = st.integers(0, 8).map(float)


@functools.cache
def among(k: int) -> st.SearchStrategy[int]:
    """An index into k things: what st.sampled_from(things) draws, but one strategy object per k
    (a strategy made per example is validated anew by hypothesis, which cost more than drawing)."""
    return st.integers(0, k - 1)


@functools.cache
def _of(k: int) -> dict[str, st.SearchStrategy]:
    end, loose = among(k), st.one_of(st.none(), among(k))
    return {"kinds": st.lists(KINDS, min_size=k, max_size=k), "buried": st.lists(st.booleans(), min_size=k, max_size=k),
            "back": st.lists(st.tuples(end, end), max_size=2), "any": st.lists(st.tuples(end, end), max_size=3 * k),
            "loose": st.lists(st.tuples(loose, loose), max_size=2), "two": st.lists(end, max_size=2)}


def pick(draw: st.DrawFn, things: list):
    return things[draw(among(len(things)))]


@st.composite
def networks(draw: st.DrawFn) -> Network:
    ids = draw(st.lists(IDS, min_size=1, max_size=18, unique=True))
    of = _of(len(ids))
    kinds = draw(of["kinds"])
    buried = draw(of["buried"])
    shape = draw(SHAPES)
    n = Network()
    for s, k, b in zip(ids, kinds, buried):
        n.structures[s] = Structure(s, k, None, None, source=IMPLIED if b and k is StructureKind.JUNCTION else "map")
    pipes: list[tuple[str | None, str | None]] = []
    if shape == "tree":          # each drains to one drawn before it (or to nothing: several outfalls)
        for i, s in enumerate(ids[1:], start=1):
            if draw(st.integers(0, 5)):
                pipes.append((s, ids[draw(st.integers(0, i - 1))]))
        pipes += [(ids[u], ids[v]) for u, v in draw(of["back"])]                      # a loop or a second way out
    else:
        pipes = [(ids[u], ids[v]) for u, v in draw(of["any"])]
    pipes += [(None if u is None else ids[u], None if v is None else ids[v]) for u, v in draw(of["loose"])]
    for k, (u, v) in enumerate(pipes):
        pid = f"p{k}"
        n.conveyances[pid] = Conveyance(pid, ConveyanceKind.PIPE, u, v, DirectionSource.DRAWING, draw(LENGTH))
    return n


def visits(data, ids: list[str]) -> list[str]:
    """Up to two structures (st.lists(st.sampled_from(ids), max_size=2))."""
    return [ids[i] for i in data.draw(_of(len(ids))["two"])]


def whole(w: dict[str, float] | None) -> dict[str, float] | None:
    """Inlet weights (a third of a basin on each of three pipes leaving it...) scaled to whole
    numbers, so that they sum exactly in any order: the previous plan summed in set order,
    which changes with the hash seed, and a tie it broke one way could come out the other."""
    return None if w is None else {p: float(round(v * 12)) for p, v in w.items()}


def fresh(n: Network) -> Network:
    """The same network with nothing computed yet (no graph, no index)."""
    return Network(dict(n.structures), dict(n.conveyances))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks())
def test_walks_up_and_down_are_the_same(n):
    for s in n.structures:
        for way in Way:
            got, want = walk(n, s, way), reference.walk(fresh(n), s, way)
            assert got == want, (s, way)
            assert [tuple(map(type, step)) for step in got] == [tuple(map(type, step)) for step in want]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.data())
def test_plans_are_the_same(n, data):
    ids = sorted(n.structures)
    outfall = pick(data.draw, ids)
    flow = visits(data, ids)
    no_flow = visits(data, ids)
    by = data.draw(BY)
    w = None
    if by == "inlets":
        w = whole(weights(n, Weight.INLETS))
    elif by == "drawn":
        keys = sorted(n.conveyances) or ["none"]
        w = {keys[i]: v for i, v in data.draw(st.dictionaries(among(len(keys)), DRAWN_WEIGHT,
                                                               max_size=len(n.conveyances))).items()}
    got = plan(n, outfall, flow, no_flow, weights=w)
    assert got == reference.plan(fresh(n), outfall, flow, no_flow, weights=w)
    assert all(type(v) in (float, type(None)) for v in (got.suspect_length_ft, got.next_splits_ft,
                                                        got.suspect_weight, got.next_splits_weight))


def test_a_plan_and_a_walk_on_one_network_share_its_index():
    n = Network()
    for s in "ABO":
        n.structures[s] = Structure(s, StructureKind.MANHOLE, None, None)
    n.conveyances["p1"] = Conveyance("p1", ConveyanceKind.PIPE, "A", "O", DirectionSource.DRAWING, 10.0)
    n.conveyances["p2"] = Conveyance("p2", ConveyanceKind.PIPE, "B", "A", DirectionSource.DRAWING, 10.0)
    walk(n, "O")
    built = n._index
    assert built is not None
    plan(n, "O")
    assert n._index is built
    n.structures["C"] = Structure("C", StructureKind.MANHOLE, None, None)      # changed after all: indexed again
    n.conveyances["p3"] = Conveyance("p3", ConveyanceKind.PIPE, "C", "B", DirectionSource.DRAWING, 10.0)
    assert [s.structure for s in walk(n, "O")] == ["O", "A", "B", "C"]
    assert n._index is not built


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.data())
def test_weights_are_the_same(n, data):
    from ms4watch.network.areas import DrainageArea
    ids = sorted(n.structures)
    areas = data.draw(st.lists(st.builds(DrainageArea, st.text("ab", min_size=1, max_size=2),
                                         st.one_of(st.none(), st.sampled_from(ids), st.just("elsewhere")),
                                         st.just("inside"), st.integers(0, 40).map(lambda q: q * 1089 / 4)),
                               max_size=6))
    for by in Weight:
        got, want = weights(n, by, areas), reference.weights(fresh(n), by, areas)
        assert got == want and (got is None or list(got) == list(want)), by


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.data())
def test_plans_with_pipes_of_unknown_direction_are_the_same(n, data):
    ids = sorted(n.structures)
    connected = sorted(p for p, c in n.conveyances.items() if c.upstream is not None and c.downstream is not None)
    if not connected:
        return
    two_way = [connected[i] for i in data.draw(st.lists(among(len(connected)), min_size=1,
                                                             max_size=len(connected), unique=True))]
    outfall = pick(data.draw, ids)
    flow = visits(data, ids)
    no_flow = visits(data, ids)
    w = [lambda: None, lambda: whole(weights(n, Weight.INLETS)),      # st.one_of(none, just(inlets), drawn)
         lambda: {connected[i]: v for i, v in data.draw(st.dictionaries(among(len(connected)), DRAWN_WEIGHT)).items()}
         ][data.draw(among(3))]()
    assert plan(n, outfall, flow, no_flow, two_way=two_way, weights=w) == reference.plan_both_ways(
        fresh(n), outfall, flow, no_flow, set(two_way), w)


def test_a_tree_with_a_pipe_of_unknown_direction_is_counted_in_one_pass():
    from ms4watch.network.bisect import _both_ways_one_pass
    from ms4watch.network.index import index

    from .test_trace import net
    unknown = net([("p1", "A", "O", 100), ("p2", "B", "A", 100), ("p3", "C", "B", 200), ("p4", "D", "C", 100)])
    fast = _both_ways_one_pass(index(unknown), "O", [], [], {"p3"}, None)
    assert fast is not None and fast == reference.plan_both_ways(unknown, "O", [], [], {"p3"})


def test_larger_trees_with_pipes_of_unknown_direction_are_planned_the_same():
    """Seeded trees of 40 structures, some pipes drawn back (loops), a few of unknown
    direction, random visits: bigger than hypothesis draws, so the worst cases of flow and
    no flow part often."""
    import random

    from .test_trace import net
    for seed in range(40):
        rnd = random.Random(seed)
        pipes = [(f"p{i}", f"N{i}", f"N{rnd.randrange(i)}" if i > 1 else "N0", rnd.randint(1, 9) * 10)
                 for i in range(1, 40)]
        pipes += [(f"b{k}", d, u, 10) for k, (_, u, d, _) in enumerate(rnd.sample(pipes, rnd.randrange(3)))]
        for k in range(rnd.randrange(2)):             # down to up a branch: a longer loop
            i = rnd.randrange(2, 40)
            j = i
            for _ in range(rnd.randint(2, 4)):
                j = next((int(d[1:]) for _, u, d, _ in pipes if u == f"N{j}" and d != "N0"), j)
            pipes.append((f"r{k}", f"N{j}", f"N{i}", 20))
        n = net(pipes, outfalls=("N0",))
        nodes = sorted(n.structures)
        two_way = set(rnd.sample([p for p, *_ in pipes], rnd.randint(1, 4)))
        for _ in range(3):
            flow, dry = rnd.sample(nodes, rnd.randrange(2)), rnd.sample(nodes, rnd.randrange(2))
            assert plan(n, "N0", flow, dry, two_way=two_way) == reference.plan_both_ways(
                fresh(n), "N0", flow, dry, two_way), (seed, flow, dry, two_way)


def test_a_structure_draining_two_ways_downstream_of_the_suspect_pipes_is_counted_by_its_ancestors():
    """B drains to both A and C (an overflow): the one-pass sum would count D's pipe twice at O,
    so the plan counts each structure's ancestors, as before."""
    from ms4watch.network.bisect import _both_ways_one_pass
    from ms4watch.network.index import index

    from .test_trace import net
    split = net([("p1", "A", "O", 100), ("p2", "C", "O", 100), ("p3", "B", "A", 100), ("p4", "B", "C", 100),
                 ("p5", "D", "B", 200), ("p6", "E", "D", 50)])
    assert _both_ways_one_pass(index(split), "O", [], [], {"p6"}, None) is None
    for two_way in ({"p6"}, {"p5"}, {"p1"}):
        assert plan(split, "O", two_way=two_way) == reference.plan_both_ways(fresh(split), "O", [], [], two_way)


def test_the_real_calgary_clip_is_walked_and_planned_the_same():
    """The city's own storm sewer (tests/network/test_real_calgary.py): implied junctions,
    isolated catch basins, cut pipes. Every structure walked both ways, every outfall planned
    by length and by inlets, after a visit with flow and one without, and with a pipe taken
    both ways. Real lengths summed in another order may differ in the last bits (the previous
    plan summed in set order, which changed with the hash seed): lengths to 1e-9 ft."""
    from ms4watch.network.importer import import_map
    from ms4watch.network.model import StructureKind

    from .test_real_calgary import CALGARY

    def same(a, b) -> bool:
        close = [x == y if x is None or y is None else math.isclose(x, y, rel_tol=0, abs_tol=1e-9)
                 for x, y in ((a.suspect_length_ft, b.suspect_length_ft), (a.next_splits_ft, b.next_splits_ft),
                              (a.suspect_weight, b.suspect_weight), (a.next_splits_weight, b.next_splits_weight))]
        return (a.suspect_pipes, a.next_structure) == (b.suspect_pipes, b.next_structure) and all(close)
    n = import_map(CALGARY / "mapping.yaml").network
    old = fresh(n)
    for s in n.structures:
        for way in Way:
            assert walk(n, s, way) == reference.walk(old, s, way), (s, way)
    outfalls = sorted(s.id for s in n.structures.values() if s.kind is StructureKind.OUTFALL)
    planned = 0
    for o in outfalls:
        for w in (None, weights(n, Weight.INLETS)):
            first = plan(n, o, weights=w)
            assert same(first, reference.plan(old, o, weights=w)), o
            if first.next_structure is None:
                continue
            planned += 1
            for seen in ({"flow": [first.next_structure]}, {"no_flow": [first.next_structure]}):
                assert same(plan(n, o, weights=w, **seen), reference.plan(old, o, weights=w, **seen)), (o, seen)
            pipe = sorted(first.suspect_pipes)[0]
            assert same(plan(n, o, two_way=[pipe], weights=w), reference.plan_both_ways(old, o, [], [], {pipe}, w)), o
    assert planned >= 2


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1),
                                                                                    st.integers(0, n - 1))))))
def test_loops_are_networkx_strongly_connected_components_numbered_downstream_first(graph):
    import networkx as nx
    import numpy as np

    from ms4watch.network.bisect import _loops
    from ms4watch.network.index import csr_rows
    n, edges = graph
    tail = np.array([x for x, _ in edges], dtype=np.int64)
    head = np.array([y for _, y in edges], dtype=np.int64)
    comp, count = _loops(n, csr_rows(n, tail, head))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    assert sorted(sorted(k for k in range(n) if comp[k] == c) for c in range(count)) == sorted(
        sorted(s) for s in nx.strongly_connected_components(g))
    assert all(comp[x] > comp[y] for x, y in edges if comp[x] != comp[y])      # one draining to another is above it
