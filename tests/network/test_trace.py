"""Walks for a crew: breadth-first from the start, branches named, lengths along the way.
Networks worked by hand."""

from __future__ import annotations

import pytest

from ms4watch.network.errors import NetworkError
from ms4watch.network.importer import import_map
from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Network, Structure, StructureKind
from ms4watch.network.trace import Way, total_length_ft, walk


def net(pipes: list[tuple[str, str, str, float]], outfalls=("O",)) -> Network:
    """``pipes``: (id, upstream, downstream, length ft)."""
    n = Network()
    for _, a, b, _ in pipes:
        for s in (a, b):
            kind = StructureKind.OUTFALL if s in outfalls else StructureKind.MANHOLE
            n.structures[s] = Structure(s, kind, None, None)
    for pid, a, b, length in pipes:
        n.conveyances[pid] = Conveyance(pid, ConveyanceKind.PIPE, a, b, DirectionSource.DRAWING, length)
    return n


def test_a_chain():
    steps = walk(net([("p1", "A", "O", 100), ("p2", "B", "A", 50)]), "O")
    assert [(s.structure, s.via, s.pipe_length_ft, s.distance_ft, s.branch) for s in steps] == [
        ("O", None, None, 0, "1"), ("A", "p1", 100, 100, "1"), ("B", "p2", 50, 150, "1")]


def test_a_tree_is_walked_nearest_first_and_the_longer_arm_keeps_the_branch():
    #   C --20-- A --100-- O ; D --300-- A ; E --10-- D ; F --5-- C
    steps = walk(net([("p1", "A", "O", 100), ("p2", "C", "A", 20), ("p3", "D", "A", 300),
                      ("p4", "E", "D", 10), ("p5", "F", "C", 5)]), "O")
    assert [s.structure for s in steps] == ["O", "A", "C", "D", "F", "E"]
    assert {s.structure: s.branch for s in steps} == {"O": "1", "A": "1", "D": "1", "E": "1", "C": "1.1", "F": "1.1"}
    assert {s.structure: s.distance_ft for s in steps}["E"] == 410
    assert total_length_ft(steps) == 435


def test_side_branches_along_one_branch_are_numbered_in_turn():
    steps = walk(net([("p1", "A", "O", 100), ("p2", "X", "A", 10), ("p3", "B", "A", 100),
                      ("p4", "Y", "B", 10), ("p5", "C", "B", 100)]), "O")
    assert {s.structure: s.branch for s in steps} == {"O": "1", "A": "1", "B": "1", "C": "1", "X": "1.1", "Y": "1.2"}


def test_a_loop_is_walked_once():
    steps = walk(net([("p1", "A", "O", 100), ("p2", "B", "A", 10), ("p3", "A", "B", 10)]), "O")
    assert [s.structure for s in steps] == ["O", "A", "B"]


def test_downstream_to_the_outfall():
    n = net([("p1", "A", "O", 100), ("p2", "B", "A", 50), ("p3", "C", "A", 70)])
    steps = walk(n, "B", Way.DOWN)
    assert [(s.structure, s.via, s.distance_ft) for s in steps] == [("B", None, 0), ("A", "p2", 50), ("O", "p1", 150)]


def test_the_synthetic_network_upstream_of_its_outfall(synthetic):
    steps = walk(import_map(synthetic).network, "OF-1")
    assert [(s.structure, s.branch, s.via) for s in steps] == [
        ("OF-1", "1", None), ("MH-1", "1", "P-1"), ("CB-1", "1.1", "P-3"), ("MH-2", "1", "P-2"),
        ("CB-2", "1.2", "P-4"), ("MH-3", "1.3", "P-5"), ("MH-4", "1", "P-9"), ("MH-5", "1", "P-8")]
    assert steps[-1].distance_ft == pytest.approx(300 + 399.6 + 400 + 200, abs=0.1)   # P-2 drawn 0.4 ft short


def test_an_unknown_structure_is_refused():
    with pytest.raises(NetworkError, match="no structure 'Z'"):
        walk(net([("p1", "A", "O", 1)]), "Z")


def test_the_garbage_collector_is_left_as_it_was():
    """The walk holds Python's collector off while it makes its steps, and only then."""
    import gc
    tree = net([("p1", "A", "O", 100), ("p2", "B", "A", 50), ("p3", "C", "A", 70)])
    assert gc.isenabled()
    walk(tree, "O")
    assert gc.isenabled()
    gc.disable()
    try:
        walk(tree, "O")
        assert not gc.isenabled()
    finally:
        gc.enable()
