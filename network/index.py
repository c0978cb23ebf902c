"""The network as numbered arrays, built once per network (like :meth:`Network.graph`, on
first use; the network is not changed between imports) for the walk (``trace``) and the
bisection plan (``bisect``).

Structures are numbered in the order of their ids, so that comparing numbers compares ids.
Edges are the graph's: one per pair of structures joined by a pipe, in the direction of
flow; parallel pipes between one pair keep the shorter as the edge's pipe (as
:meth:`Network.graph` does) and all count for weights. Each structure's neighbours up and
down are kept as CSR rows (offsets, neighbour numbers, edge numbers) sorted by neighbour,
as Python lists: a breadth-first walk must visit structure after structure, and plain
Python over lists of ints does it in 1-2 ms for 10,000 structures where a
level-by-level numpy walk takes 5 ms on a grid and 130 ms on a chain (one level per
structure; measured 2026-12-02). Everything that is one operation over all structures or
pipes (lengths, parts, scores) is numpy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import numpy as np

from .model import Network, StructureKind


@dataclass(frozen=True, eq=False)
class Rows:
    """One structure's neighbours: ``nbr[ptr[i]:ptr[i + 1]]``, with the edges to them."""
    ptr: list[int]
    nbr: list[int]
    edge: list[int]


@dataclass(frozen=True, eq=False)
class Index:
    ids: list[str]                      # number -> structure id (sorted)
    number: dict[str, int]              # structure id -> number
    kind: list[StructureKind | None]    # None: a pipe's end that names no structure
    buried: np.ndarray                  # bool per structure: implied by the import, never opened
    tail: np.ndarray                    # per edge: the upstream structure's number
    head: np.ndarray                    # ... the downstream one's
    length: np.ndarray                  # per edge: its pipe's length, unknown counted 0
    length_ft: list[float | None]       # ... as the map has it
    pipe: list[str]                     # per edge: its pipe's id (the shorter of parallel pipes)
    pipe_ids: list[str]                 # every connected pipe ...
    pipe_edge: np.ndarray               # ... and its edge
    pipe_length: np.ndarray             # ... and its length, unknown counted 0
    sizes: tuple[int, int]              # the network's structures and conveyances when indexed
    up: Rows                            # per structure: the structures draining into it
    down: Rows                          # ... and those it drains into
    # the same as numpy arrays of objects, to pick a walk's ids, kinds, pipes in one step each
    names: np.ndarray = field(init=False)
    kinds: np.ndarray = field(init=False)
    pipes: np.ndarray = field(init=False)
    lengths_ft: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        for name, values in (("names", self.ids), ("kinds", self.kind), ("pipes", self.pipe), ("lengths_ft", self.length_ft)):
            a = np.empty(len(values), dtype=object)
            a[:] = values
            object.__setattr__(self, name, a)

    def reached(self, start: int, rows: Rows) -> list[int]:
        """The structures reached from ``start`` along ``rows``, breadth-first, ``start`` first."""
        ptr, nbr = rows.ptr, rows.nbr
        seen = bytearray(len(self.ids))
        seen[start] = 1
        order = [start]
        add = order.append
        for node in order:                              # the list grows as it is read: the queue
            a, b = ptr[node], ptr[node + 1]
            if b == a + 1:                              # one neighbour (most structures): no inner loop
                n = nbr[a]
                if not seen[n]:
                    seen[n] = 1
                    add(n)
                continue
            for n in nbr[a:b]:
                if not seen[n]:
                    seen[n] = 1
                    add(n)
        return order

    def draining_to(self, node: int) -> np.ndarray:
        """Bool per structure: ``node`` and every structure upstream of it."""
        mask = np.zeros(len(self.ids), dtype=bool)
        mask[self.reached(node, self.up)] = True
        return mask

    def depth(self, start: int, rows: Rows) -> dict[int, int]:
        """Pipes from ``start`` to each structure it reaches along ``rows`` (the fewest)."""
        ptr, nbr = rows.ptr, rows.nbr
        depth = {start: 0}
        order = [start]
        for node in order:
            d = depth[node] + 1
            for k in range(ptr[node], ptr[node + 1]):
                n = nbr[k]
                if n not in depth:
                    depth[n] = d
                    order.append(n)
        return depth


def index(net: Network) -> Index:
    """The network's index, built on first use and kept with the network (which is not
    changed after it is read; one that gained or lost structures or pipes is indexed again)."""
    got = net._index
    if not isinstance(got, Index) or got.sizes != (len(net.structures), len(net.conveyances)):
        got = net._index = build(net)
    return got


def build(net: Network) -> Index:
    from .build import IMPLIED
    structures = net.structures
    connected = [c for c in net.conveyances.values() if c.upstream is not None and c.downstream is not None]
    ups = cast("list[str]", [c.upstream for c in connected])
    downs = cast("list[str]", [c.downstream for c in connected])
    ids = sorted(set(structures).union(ups, downs))
    number = {s: i for i, s in enumerate(ids)}
    kinds = {k: s.kind for k, s in structures.items()}
    buried = np.zeros(len(ids), dtype=bool)
    buried[[number[k] for k, s in structures.items() if s.source == IMPLIED]] = True
    # one edge per pair of structures; of parallel pipes, the first of the shortest is the edge's
    # (as Network.graph() keeps it: a later pipe replaces the edge's only when shorter)
    t = np.fromiter(map(number.__getitem__, ups), dtype=np.int64, count=len(ups))
    h = np.fromiter(map(number.__getitem__, downs), dtype=np.int64, count=len(downs))
    lengths = [c.length_ft for c in connected]
    ft = np.array([x or 0.0 for x in lengths], dtype=np.float64)
    pairs, pipe_edge = np.unique(t * len(ids) + h, return_inverse=True)
    chosen = np.lexsort((np.arange(len(t)), ft, pipe_edge))
    chosen = chosen[np.flatnonzero(np.diff(pipe_edge[chosen], prepend=-1))]      # per edge, in edge order
    pipe_ids = [c.id for c in connected]
    chosen_l = chosen.tolist()
    return Index(ids=ids, number=number, kind=list(map(kinds.get, ids)), buried=buried,
                 tail=t[chosen], head=h[chosen], length=ft[chosen], length_ft=[lengths[k] for k in chosen_l],
                 pipe=[pipe_ids[k] for k in chosen_l], pipe_ids=pipe_ids, pipe_edge=pipe_edge.astype(np.int64),
                 pipe_length=ft,
                 sizes=(len(structures), len(net.conveyances)),
                 up=csr_rows(len(ids), h[chosen], t[chosen]), down=csr_rows(len(ids), t[chosen], h[chosen]))


def csr_rows(n: int, at: np.ndarray, to: np.ndarray) -> Rows:
    """CSR rows: for each structure ``i``, the edges with ``at == i``, sorted by ``to``."""
    o = np.lexsort((to, at))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(at, minlength=n), out=ptr[1:])
    return Rows(ptr=ptr.tolist(), nbr=to[o].tolist(), edge=o.tolist())
