"""The checks of a built network, on hand-made networks."""

from __future__ import annotations

from ms4watch.network.checks import check
from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Network, Structure, StructureKind

M, O = StructureKind.MANHOLE, StructureKind.OUTFALL


def net(structures: dict[str, StructureKind], pipes: list[tuple[str, str | None, str | None]],
        water: str | None = "Saw Mill River") -> Network:
    n = Network()
    for sid, kind in structures.items():
        n.structures[sid] = Structure(sid, kind, None, None, receiving_water=water if kind is O else None)
    for pid, a, b in pipes:
        n.conveyances[pid] = Conveyance(pid, ConveyanceKind.PIPE, a, b, DirectionSource.DRAWING, 10.0)
    return n


def kinds(findings):
    return sorted((f.kind, f.feature) for f in findings)


def test_a_clean_network_has_no_findings():
    assert check(net({"O": O, "A": M}, [("p", "A", "O")])) == []


def test_an_outfall_draining_on_a_structure_reaching_no_outfall_and_an_isolated_one():
    n = net({"O": O, "A": M, "B": M, "C": M, "Z": M}, [("p1", "A", "O"), ("p2", "O", "B"), ("p3", "C", "B")])
    assert kinds(check(n)) == [("isolated", "Z"), ("no_outfall_downstream", "B"), ("no_outfall_downstream", "C"),
                               ("outfall_drains_on", "O")]


def test_two_separate_loops_are_two_findings():
    n = net({"O": O, "A": M, "B": M, "C": M, "D": M},
            [("p1", "A", "O"), ("p2", "B", "A"), ("p3", "A", "B"), ("p4", "C", "A"), ("p5", "D", "C"), ("p6", "C", "D")])
    assert [f for f in kinds(check(n)) if f[0] == "loop"] == [("loop", "A"), ("loop", "C")]


def test_an_unconnected_pipe_is_left_out_of_the_graph_not_out_of_the_network():
    n = net({"O": O, "A": M}, [("p1", "A", "O"), ("p2", None, "A")])
    assert set(n.graph().edges) == {("A", "O")} and "p2" in n.conveyances
