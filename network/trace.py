"""Walks of the network for a crew: upstream from an outfall (or any structure), and
downstream from a structure to its outfall.

Order: breadth-first from the start, so the crew opens the structures nearest the start
first and each one before anything beyond it. Branches: the start's branch is ``1``; where
several pipes join, the one draining the most pipe length carries the branch on and the
others are named ``<branch>.1``, ``<branch>.2``… along the branch, in the order the walk
meets them (at one junction, in order of the length they drain)."""

from __future__ import annotations

from typing import NamedTuple
from enum import Enum

from .errors import NetworkError
from .model import Network, StructureKind


class Way(str, Enum):
    UP = "up"
    DOWN = "down"


class Step(NamedTuple):
    order: int
    structure: str
    kind: StructureKind
    branch: str
    via: str | None              # the pipe walked to reach it (None for the start)
    from_structure: str | None
    pipe_length_ft: float | None
    distance_ft: float           # along the pipes from the start (unknown lengths count 0)


def walk(net: Network, start: str, way: Way = Way.UP) -> list[Step]:
    if start not in net.structures:
        raise NetworkError(f"no structure {start!r} in the town's network")
    g = net.graph()
    # networkx's own dict of dicts (neighbour -> the edge's attributes), not its views: a view
    # made per structure was a quarter of a 10,000-structure trace
    adjacency: dict[str, dict[str, dict]] = g._pred if way is Way.UP else g._succ

    parent: dict[str, str] = {}                          # the structure each was reached from
    via: dict[str, dict] = {}                            # the edge walked to reach it
    order = [start]
    seen = {start}
    i = 0
    while i < len(order):                                # breadth-first: order is the queue
        node = order[i]
        i += 1
        nbrs = adjacency[node]
        for n in (sorted(nbrs) if len(nbrs) > 1 else nbrs):
            if n not in seen:
                seen.add(n)
                parent[n] = node
                via[n] = nbrs[n]
                order.append(n)
    length = {n: (e["length_ft"] or 0.0) for n, e in via.items()}
    children: dict[str, list[str]] = {n: [] for n in order}
    for n in order[1:]:
        children[parent[n]].append(n)
    reach = dict.fromkeys(order, 0.0)                    # pipe length drained through a structure's pipe
    for n in reversed(order[1:]):
        reach[n] += length[n]
        reach[parent[n]] += reach[n]
    branch = {start: "1"}
    forks: dict[str, int] = {}           # side branches named so far off each branch
    distance = {start: 0.0}
    for n in order:
        kids = children[n]
        if not kids:
            continue
        ranked = sorted(kids, key=lambda c: (-reach[c], c)) if len(kids) > 1 else kids
        b, d = branch[n], distance[n]
        for k, c in enumerate(ranked):
            if k == 0:
                branch[c] = b
            else:
                forks[b] = forks.get(b, 0) + 1
                branch[c] = f"{b}.{forks[b]}"
            distance[c] = d + length[c]
    structures = net.structures
    make = Step._make                                    # positional, no keyword parsing: 10,000 steps a trace
    steps = [make((1, start, structures[start].kind, "1", None, None, None, 0.0))]
    for k, n in enumerate(order[1:], start=2):
        e = via[n]
        steps.append(make((k, n, structures[n].kind, branch[n], e["id"], parent[n], e["length_ft"], distance[n])))
    return steps


def total_length_ft(steps: list[Step]) -> float:
    return sum(s.pipe_length_ft or 0.0 for s in steps)
