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
