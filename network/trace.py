"""Walks of the network for a crew: upstream from an outfall (or any structure), and
downstream from a structure to its outfall.

Order: breadth-first from the start, so the crew opens the structures nearest the start
first and each one before anything beyond it. Branches: the start's branch is ``1``; where
several pipes join, the one draining the most pipe length carries the branch on and the
others are named ``<branch>.1``, ``<branch>.2``… along the branch, in the order the walk
meets them (at one junction, in order of the length they drain)."""

from __future__ import annotations

from collections import deque
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
    adjacency = g.pred if way is Way.UP else g.succ      # neighbour -> the edge's attributes

    parent: dict[str, str | None] = {start: None}
    via: dict[str, dict] = {}                            # the edge walked to reach a structure
    order = [start]
    queue = deque([start])
    while queue:
        node = queue.popleft()
        nbrs = adjacency[node]
        for n, e in (sorted(nbrs.items()) if len(nbrs) > 1 else nbrs.items()):
            if n not in parent:
                parent[n] = node
                via[n] = e
                order.append(n)
                queue.append(n)
    children: dict[str, list[str]] = {n: [] for n in order}
    for n in order[1:]:
        up = parent[n]                                   # None only for start, order[0]
        if up is not None:
            children[up].append(n)
    reach: dict[str, float] = {}                         # pipe length drained through a structure's pipe
    for n in reversed(order):
        own = (via[n]["length_ft"] or 0.0) if n in via else 0.0
        reach[n] = own + sum(reach[c] for c in children[n])
    branch = {start: "1"}
    forks: dict[str, int] = {}           # side branches named so far off each branch
    distance = {start: 0.0}
    for n in order:
        kids = children[n]
        ranked = sorted(kids, key=lambda c: (-reach[c], c)) if len(kids) > 1 else kids
        for k, c in enumerate(ranked):
            if k == 0:
                branch[c] = branch[n]
            else:
                forks[branch[n]] = forks.get(branch[n], 0) + 1
                branch[c] = f"{branch[n]}.{forks[branch[n]]}"
            distance[c] = distance[n] + (via[c]["length_ft"] or 0.0)
    return [Step(order=i, structure=n, kind=net.structures[n].kind, branch=branch[n],
                 via=via[n]["id"] if n in via else None, from_structure=parent[n],
                 pipe_length_ft=via[n]["length_ft"] if n in via else None, distance_ft=distance[n])
            for i, n in enumerate(order, start=1)]


def total_length_ft(steps: list[Step]) -> float:
    return sum(s.pipe_length_ft or 0.0 for s in steps)
