"""Walks of the network for a crew: upstream from an outfall (or any structure), and
downstream from a structure to its outfall.

Order: breadth-first from the start, so the crew opens the structures nearest the start
first and each one before anything beyond it. Branches: the start's branch is ``1``; where
several pipes join, the one draining the most pipe length carries the branch on and the
others are named ``<branch>.1``, ``<branch>.2``… along the branch, in the order the walk
meets them (at one junction, in order of the length they drain)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from functools import partial
from typing import NamedTuple

import numpy as np

from .errors import NetworkError
from .index import index
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
    ix = index(net)
    rows = ix.up if way is Way.UP else ix.down
    ptr, nbr, edges = rows.ptr, rows.nbr, rows.edge
    s = ix.number[start]
    # breadth-first over the index's numbers (neighbours in the order of their ids): a walk
    # must go structure by structure, and this loop is the one unavoidable Python per structure
    seen = bytearray(len(ix.ids))
    seen[s] = 1
    order = [s]
    via = [-1]                                           # the edge walked to reach each
    add, add_via = order.append, via.append
    for node in order:                                   # the list grows as it is read: the queue
        a, b = ptr[node], ptr[node + 1]
        if b == a + 1:                                   # one pipe in (most structures): no inner loop
            n = nbr[a]
            if not seen[n]:
                seen[n] = 1
                add(n)
                add_via(edges[a])
            continue
        for k in range(a, b):
            n = nbr[k]
            if not seen[n]:
                seen[n] = 1
                add(n)
                add_via(edges[k])
    first = (1, start, ix.kind[s], "1", None, None, None, 0.0)
    m = len(order)
    if m == 1:
        return [Step._make(first)]
    e = np.array(via[1:], dtype=np.int64)
    o = np.array(order, dtype=np.int64)
    at = np.empty(len(ix.ids), dtype=np.int64)
    at[o] = np.arange(m)
    parent = np.empty(m, dtype=np.int64)                 # position in the walk of the one each was reached from
    parent[0] = -1
    parent[1:] = at[(ix.head if way is Way.UP else ix.tail)[e]]
    length = np.zeros(m)
    length[1:] = ix.length[e]
    pp, ln = parent.tolist(), length.tolist()
    reach = [0.0] * m                                    # pipe length drained through each one's pipe
    for i in range(m - 1, 0, -1):                        # the walk reversed: every one after those beyond it
        r = reach[i] + ln[i]
        reach[i] = r
        reach[pp[i]] += r
    # siblings ranked by the length they drain, then id (numbers sort as ids do); the first of
    # each carries its parent's branch on, the others are side branches, numbered in turn
    kids = np.lexsort((o[1:], -np.array(reach[1:]), parent[1:])) + 1
    side = np.ones(m, dtype=bool)
    side[kids[np.flatnonzero(np.diff(parent[kids], prepend=-1))]] = False
    side[0] = False
    # where each one's branch begins: itself (a side branch, the start) or its parent's branch's
    # beginning, found by pointer jumping (a handful of array steps even along a long chain)
    head = np.where(side, np.arange(m), parent)
    head[0] = 0
    while True:
        jumped = head[head]
        if np.array_equal(jumped, head):
            break
        head = jumped
    hd = head.tolist()
    label = np.empty(m, dtype=object)
    label[0] = "1"
    forks: dict[int, int] = {}
    for i in kids[side[kids]].tolist():                  # side branches in the order the walk meets them
        b = hd[pp[i]]
        forks[b] = f = forks.get(b, 0) + 1
        label[i] = f"{label[b]}.{f}"
    distance = [0.0] * m
    for i in range(1, m):                                # in the walk's order: each after its parent
        distance[i] = distance[pp[i]] + ln[i]
    names = ix.names[o]
    columns = (range(2, m + 1), names[1:].tolist(), ix.kinds[o[1:]].tolist(), label[head[1:]].tolist(),
               ix.pipes[e].tolist(), names[parent[1:]].tolist(), ix.lengths_ft[e].tolist(), distance[1:])
    with _collector_paused():
        steps = list(map(_step, zip(*columns)))
    steps.insert(0, Step._make(first))
    return steps


_step = partial(tuple.__new__, Step)     # a Step from a tuple without a Python call: 10,000 steps a trace


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while the steps are made: 10,000 new tuples
    (which form no cycle) set off its full collections, each a pass over every object of the
    process (10-15 ms in a process holding 200,000 others, measured; 1.4 ms for the steps
    without). Turned back on only if it was on (another walk in another thread may have
    turned it off, and turns it back on itself)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def total_length_ft(steps: list[Step]) -> float:
    return sum(s.pipe_length_ft or 0.0 for s in steps)


class OutfallReach(NamedTuple):
    id: str
    water: str | None            # its receiving water
    structures: int              # upstream of it
    length_ft: float             # of pipe upstream of it


def outfall_reaches(net: Network) -> list[OutfallReach]:
    """Each outfall of ``net`` (by id) with what lies upstream of it."""
    out = []
    for s in sorted((s for s in net.structures.values() if s.kind is StructureKind.OUTFALL), key=lambda s: s.id):
        up = walk(net, s.id, Way.UP)
        out.append(OutfallReach(s.id, s.receiving_water, len(up) - 1, total_length_ft(up)))
    return out
