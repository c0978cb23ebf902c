"""Bisection plans on networks worked by hand (lengths in feet)."""

from __future__ import annotations

import pytest

from ms4watch.network.bisect import plan
from ms4watch.network.errors import NetworkError

from .test_trace import net

CHAIN = net([("p1", "A", "O", 100), ("p2", "B", "A", 100), ("p3", "C", "B", 100), ("p4", "D", "C", 100)])


def test_a_chain_is_halved_each_visit():
    p = plan(CHAIN, "O")
    assert (p.suspect_length_ft, p.next_structure, p.next_splits_ft) == (400, "B", 200)  # p3+p4 drain to B
    p = plan(CHAIN, "O", flow=["B"])
    assert (p.suspect_pipes, p.next_structure) == ({"p3", "p4"}, "C")
    p = plan(CHAIN, "O", no_flow=["B"])
    assert (p.suspect_pipes, p.next_structure) == ({"p1", "p2"}, "A")
    p = plan(CHAIN, "O", flow=["B", "C"])
    assert (p.suspect_pipes, p.next_structure) == ({"p4"}, None)                   # one pipe: walk it


def test_a_tree_splits_at_the_structure_nearest_half():
    #   O <-100- A <-50- B <-250- C ;  A <-200- D ;  total 600, half 300
    tree = net([("p1", "A", "O", 100), ("p2", "B", "A", 50), ("p3", "C", "B", 250), ("p4", "D", "A", 200)])
    p = plan(tree, "O")
    assert (p.next_structure, p.next_splits_ft) == ("B", 250)     # A drains 500, B 250, D 0, C 0
    p = plan(tree, "O", no_flow=["B"])                             # left: p1, p2, p4 = 350
    assert p.suspect_pipes == {"p1", "p2", "p4"} and p.next_structure == "A"   # A drains p2+p4 = 250


def test_a_loop_counts_everything_that_can_drain_to_a_structure():
    #   O <-100- A <-100- B <-100- C, and C <-100- B drawn back (a loop B<->C)
    looped = net([("p1", "A", "O", 100), ("p2", "B", "A", 100), ("p3", "C", "B", 100), ("p4", "B", "C", 100)])
    p = plan(looped, "O")
    assert p.suspect_length_ft == 400
    # draining to A: p2, p3, p4 (300); to B: p3 and p4, whose ends both reach B (200, half);
    # to C: the same two pipes (200) but C is one step further from the outfall.
    assert (p.next_structure, p.next_splits_ft) == ("B", 200)
    p = plan(looped, "O", flow=["B"])
    assert (p.suspect_pipes, p.next_structure) == ({"p3", "p4"}, None)      # the loop cannot be split


def test_unknown_structures_are_refused():
    with pytest.raises(NetworkError, match="no structure 'Q'"):
        plan(CHAIN, "O", flow=["Q"])


def test_a_structure_draining_two_ways_is_counted_by_its_ancestors():
    #   B drains to both A and C (an overflow), A and C to O. Not a forest: counted exactly.
    split = net([("p1", "A", "O", 100), ("p2", "C", "O", 100), ("p3", "B", "A", 100), ("p4", "B", "C", 100),
                 ("p5", "D", "B", 200)])
    p = plan(split, "O")
    # total 600, half 300: draining to B: p5 (200); to A: p3, p5 (300); to C: p4, p5 (300)
    assert (p.suspect_length_ft, p.next_structure, p.next_splits_ft) == (600, "A", 300)


@pytest.mark.parametrize("seed", range(20))
def test_the_one_pass_parts_agree_with_counting_ancestors(seed):
    """Random trees with a few pipes drawn back (loops): the forest pass gives each
    structure the same part as counting its ancestors."""
    import random

    import networkx as nx
    import numpy as np

    from ms4watch.network.bisect import _parts_forest, _parts_tree
    from ms4watch.network.index import index
    rnd = random.Random(seed)
    tree = [(f"p{i}", f"N{i}", f"N{rnd.randrange(i)}" if i > 1 else "N0", rnd.randint(1, 9) * 10)
            for i in range(1, 40)]
    looped = tree + [(f"b{k}", d, u, 10) for k, (_, u, d, _) in enumerate(rnd.sample(tree, 3))]
    def tree_pass(n, suspect, length):                  # _parts_tree works on the index's numbers
        ix = index(n)
        nodes = np.unique(np.concatenate((ix.tail, ix.head)))
        counted = _parts_tree(len(ix.ids), nodes, ix.tail, ix.head, ix.length)
        return None if counted is None else {ix.ids[k]: (counted[0][k], counted[1][k]) for k in nodes.tolist()}

    def forest_pass(n, suspect, length):
        return _parts_forest(suspect, length)

    for pipes, fast_ones in ((tree, (tree_pass, forest_pass)), (looped, (forest_pass,))):
        n = net(pipes, outfalls=("N0",))
        g = n.graph()
        length = {(u, v): d["length_ft"] for u, v, d in g.edges(data=True)}
        suspect = set(length)
        for one_pass in fast_ones:
            fast = one_pass(n, suspect, length)
            assert fast is not None
            for m in g:
                part = {(u, v) for v in nx.ancestors(g, m) | {m} for u in g.predecessors(v)}
                assert fast[m] == (pytest.approx(sum(length[e] for e in part)), len(part)), m
    assert tree_pass(n, suspect, length) is None        # the looped network


def test_pipes_of_unknown_direction_are_walked_both_ways():
    #   O <-100- A <-100- B ; B ?-200-? C (direction unknown: drawn C -> B) ; C <-100- D
    unknown = net([("p1", "A", "O", 100), ("p2", "B", "A", 100), ("p3", "C", "B", 200), ("p4", "D", "C", 100)])
    p = plan(unknown, "O", two_way=["p3"])
    # total 500 (p3 once). Flow at m keeps what may drain to m; a dry m clears only what surely does
    # (not through p3). Worst case left: A: may 400 (p2 p3 p4), surely 100 (p2): max(400, 400) = 400;
    # B: may 300 (p3 p4), surely 0: 500; C: may 300 (p3 p4), surely 100 (p4): max(300, 400) = 400.
    # A and C tie: A is nearer the outfall.
    assert (p.suspect_length_ft, p.next_structure, p.next_splits_ft) == (500, "A", 400)
    p = plan(unknown, "O", two_way=["p3"], flow=["A"])
    assert (p.suspect_pipes, p.suspect_length_ft) == ({"p2", "p3", "p4"}, 400)
    # B: may 300, surely 0 -> 400; C: may 300, surely 100 -> max(300, 300) = 300
    assert (p.next_structure, p.next_splits_ft) == ("C", 300)
    p = plan(unknown, "O", two_way=["p3"], flow=["A"], no_flow=["C"])
    assert p.suspect_pipes == {"p2", "p3"}           # a dry C clears p4; p3 may flow from B's side to C
    assert (p.next_structure, p.next_splits_ft) == ("B", 200)
    # as drawn (C -> B), the same dry C would clear p4 only too, but flow at C is taken to reach B:
    p = plan(unknown, "O", two_way=["p3"], flow=["A", "C"])
    assert (p.suspect_pipes, p.next_structure) == ({"p3", "p4"}, None)   # B and C drain each other: walk it
    drawn = plan(unknown, "O", flow=["A", "C"])
    assert (drawn.suspect_pipes, drawn.next_structure) == ({"p4"}, None)


@pytest.mark.parametrize("seed", range(10))
def test_the_both_ways_count_agrees_with_the_one_pass_plan_when_every_direction_is_known(seed):
    """Random trees with a few pipes drawn back and random visits: with no pipe of unknown
    direction, the both-ways count (worst case left) names the same structure as halving."""
    import random

    from ms4watch.network.bisect import _plan_both_ways
    rnd = random.Random(seed)
    pipes = [(f"p{i}", f"N{i}", f"N{rnd.randrange(i)}" if i > 1 else "N0", rnd.randint(1, 9) * 10)
             for i in range(1, 30)]
    pipes += [(f"b{k}", d, u, 10) for k, (_, u, d, _) in enumerate(rnd.sample(pipes, 2))]
    n = net(pipes, outfalls=("N0",))
    nodes = sorted(n.structures)
    for _ in range(4):
        flow, dry = rnd.sample(nodes, 1), rnd.sample(nodes, 1)
        assert plan(n, "N0", flow=flow, no_flow=dry) == _plan_both_ways(n, "N0", flow, dry, set()), (flow, dry)


def test_an_unknown_pipe_id_is_refused():
    with pytest.raises(NetworkError, match="no pipe 'nope'"):
        plan(CHAIN, "O", two_way=["nope"])


# -- weights: the contributing catch basins, or drainage area, instead of pipe length ----------------

ACRE = 43_560.0


def _inlets(n, ids):
    from dataclasses import replace

    from ms4watch.network.model import StructureKind
    for s in ids:
        n.structures[s] = replace(n.structures[s], kind=StructureKind.CATCH_BASIN)
    return n


def test_a_chain_split_by_its_catch_basins_instead_of_its_length():
    from ms4watch.network.bisect import Weight, weights
    #   O <-100- A <-100- B <-100- C <-700- D, all four catch basins. By length (1000, half 500):
    #   A drains 900, B 800, C 700: C. By catch basins, each pipe carries its upstream basin:
    #   A drains B C D (3), B drains C D (2), C drains D (1); 4 in all, half 2: B.
    chain = _inlets(net([("p1", "A", "O", 100), ("p2", "B", "A", 100), ("p3", "C", "B", 100), ("p4", "D", "C", 700)]),
                    "ABCD")
    assert plan(chain, "O").next_structure == "C"
    p = plan(chain, "O", weights=weights(chain, Weight.INLETS))
    assert (p.next_structure, p.next_splits_ft, p.suspect_weight, p.next_splits_weight) == ("B", 800, 4, 2)
    p = plan(chain, "O", flow=["B"], weights=weights(chain, Weight.INLETS))   # left: p3 p4 (C, D): no split
    assert (p.suspect_pipes, p.suspect_weight, p.next_structure) == ({"p3", "p4"}, 2, "C")


def test_a_tree_split_by_its_drainage_areas():
    from ms4watch.network.areas import DrainageArea
    from ms4watch.network.bisect import Weight, weights
    #   O <-p1- A <-p2- B <-p3- D ;  A <-p4- C <-p5- E ; every pipe 100 ft.
    #   Areas: 8 acres drain to D, 1 to E, 1 to B. By length (500, half 250) A, B and C tie (150
    #   off): A, nearest the outfall. By area (10 acres, half 5): A drains 10, B 8 (D's), C 1 (E's): B.
    tree = net([("p1", "A", "O", 100), ("p2", "B", "A", 100), ("p3", "D", "B", 100), ("p4", "C", "A", 100),
                ("p5", "E", "C", 100)])
    areas = [DrainageArea("DA-D", "D", "inside", 8 * ACRE), DrainageArea("DA-E", "E", "inside", ACRE),
             DrainageArea("DA-B", "B", "attribute", ACRE), DrainageArea("DA-X", None, None, 5 * ACRE)]
    assert plan(tree, "O").next_structure == "A"
    p = plan(tree, "O", weights=weights(tree, Weight.AREA, areas))
    assert (p.next_structure, p.next_splits_ft) == ("B", 100)
    assert (p.suspect_weight, p.next_splits_weight) == (pytest.approx(10 * ACRE), pytest.approx(8 * ACRE))
    # a dry B leaves p1 p2 p4 p5: 2 acres (B's own on p2, E's on p5), half 1: A drains p2 p4 p5 (2), C p5 (1): C
    p = plan(tree, "O", no_flow=["B"], weights=weights(tree, Weight.AREA, areas))
    assert (p.suspect_weight, p.next_structure, p.next_splits_weight) == (pytest.approx(2 * ACRE), "C",
                                                                          pytest.approx(ACRE))


def test_a_reach_without_inlets_or_areas_is_split_by_length():
    from ms4watch.network.bisect import Weight, weights
    p = plan(CHAIN, "O", weights=weights(CHAIN, Weight.INLETS))
    assert (p.suspect_weight, p.next_structure, p.next_splits_ft, p.next_splits_weight) == (0, "B", 200, 0)


@pytest.mark.parametrize("seed", range(6))
def test_the_both_ways_count_agrees_with_the_one_pass_plan_by_weight(seed):
    import random

    from ms4watch.network.bisect import Weight, _plan_both_ways, weights
    rnd = random.Random(seed)
    pipes = [(f"p{i}", f"N{i}", f"N{rnd.randrange(i)}" if i > 1 else "N0", rnd.randint(1, 9) * 10)
             for i in range(1, 30)]
    n = _inlets(net(pipes, outfalls=("N0",)), rnd.sample([f"N{i}" for i in range(1, 30)], 12))
    w = weights(n, Weight.INLETS)
    nodes = sorted(n.structures)
    for _ in range(4):
        flow, dry = rnd.sample(nodes, 1), rnd.sample(nodes, 1)
        assert plan(n, "N0", flow=flow, no_flow=dry, weights=w) == _plan_both_ways(n, "N0", flow, dry, set(), w)
