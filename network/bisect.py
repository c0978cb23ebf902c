"""The bisection plan of a source trace: which structure to open next so that what the crew
finds there (flow or no flow) halves the pipe length still suspect.

The suspect reach is a set of pipes. At first: every pipe upstream of the outfall. Opening
structure ``m`` divides it: the pipes draining to ``m`` (whose downstream end is ``m`` or
upstream of it) and the rest. Flow at ``m`` (the dry-weather flow is there): the source is
in the first part. No flow at ``m``: in the rest. The next structure is the one whose first
part is nearest half the suspect length (ties: the nearer to the outfall, then the id).
Loops are handled as the graph has them: everything that can drain to ``m`` counts.

Pipes whose direction is not known (``two_way``: the map says so, or doubts it) may flow
either way. Flow seen at ``m`` then keeps every pipe that *may* drain to ``m`` (taking such
a pipe both ways); a dry ``m`` clears only the pipes that *surely* drain to it (reaching
``m`` without such a pipe). The next structure is the one whose worse outcome leaves the
least suspect length (with every direction known this is the structure nearest half).

The field practice it serves: storm drain network investigations working up from the
outfall through manholes at junctions, as in E. Brown, D. Caraco (Center for Watershed
Protection) and R. Pitt, "Illicit Discharge Detection and Elimination: A Guidance Manual
for Program Development and Technical Assessments", October 2004, EPA cooperative
agreement X-82907801-0. Choosing the manhole by halving the suspect pipe length is ours.

Weights (``weights=``, from :func:`weights`): instead of pipe length, what the suspect
reach collects: its catch basins and inlets, or its drainage areas' acreage. Each pipe
carries the weight of its upstream structure (shared among the pipes leaving it), so the
part draining to ``m`` weighs what enters the network upstream of ``m``. A reach that
collects nothing by that measure is split by length."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .errors import NetworkError
from .index import Index, Rows, csr_rows, index
from .model import Network, StructureKind, Weight  # Weight: in the model, so `map --by` needs no numpy

if TYPE_CHECKING:
    from .areas import DrainageArea


@dataclass(frozen=True)
class Plan:
    suspect_pipes: frozenset[str]
    suspect_length_ft: float
    next_structure: str | None       # None: the reach cannot be split further
    next_splits_ft: float | None     # suspect length draining to the next structure
    suspect_weight: float | None = None       # with weights: what the suspect reach collects
    next_splits_weight: float | None = None   # ... and the part of it upstream of the next structure


def weights(net: Network, by: Weight, areas: Iterable["DrainageArea"] = ()) -> dict[str, float] | None:
    """Each pipe's weight for :func:`plan`: its upstream structure's catch basins and inlets
    (1 or 0) or drainage area (square feet), shared among the pipes leaving that structure.
    None for :attr:`Weight.LENGTH` (the plan's default)."""
    if by is Weight.LENGTH:
        return None
    node: dict[str, float] = {}
    if by is Weight.INLETS:
        node = {s.id: 1.0 for s in net.structures.values()
                if s.kind in (StructureKind.CATCH_BASIN, StructureKind.INLET)}
    else:
        for a in areas:
            if a.structure is not None:
                node[a.structure] = node.get(a.structure, 0.0) + a.area_sqft
    ix = index(net)
    at = np.fromiter(map(node.get, ix.ids, repeat(0.0)), dtype=np.float64, count=len(ix.ids))
    up = ix.tail[ix.pipe_edge]                          # each connected pipe's upstream structure
    leaving = np.bincount(up, minlength=len(ix.ids))
    return dict(zip(ix.pipe_ids, (at[up] / leaving[up]).tolist()))


def plan(net: Network, outfall: str, flow: Sequence[str] = (), no_flow: Sequence[str] = (),
         two_way: Collection[str] = (), weights: Mapping[str, float] | None = None) -> Plan:
    """The suspect reach after the observations (each structure opened: flow seen or not)
    and the next structure to open. ``two_way``: pipes whose direction is not known;
    ``weights``: what to halve instead of pipe length (pipe id -> weight, :func:`weights`)."""
    if outfall not in net.structures:
        raise NetworkError(f"no structure {outfall!r} in the town's network")
    ix = index(net)
    for s in (*flow, *no_flow):
        if s not in ix.number:
            raise NetworkError(f"no structure {s!r} in the town's network")
    for pid in two_way:
        if pid not in net.conveyances:
            raise NetworkError(f"no pipe {pid!r} in the town's network")
    if two_way:
        fast = _both_ways_one_pass(ix, outfall, flow, no_flow, set(two_way), weights)
        return fast if fast is not None else _plan_both_ways(net, outfall, flow, no_flow, set(two_way), weights)
    # the pipes (the index's edges) as one array each: which are suspect, what they weigh
    head = ix.head
    suspect = ix.draining_to(ix.number[outfall])[head]
    for m in flow:
        suspect &= ix.draining_to(ix.number[m])[head]
    for m in no_flow:
        suspect &= ~ix.draining_to(ix.number[m])[head]
    edges = np.flatnonzero(suspect)
    length = ix.length
    total = float(length[edges].sum())
    w = length
    total_w = None
    if weights is not None:
        by_pipe = np.fromiter(map(weights.get, ix.pipe_ids, repeat(0.0)), dtype=np.float64, count=len(ix.pipe_ids))
        w = np.bincount(ix.pipe_edge, weights=by_pipe, minlength=len(head))   # parallel pipes: all of them
        total_w = float(w[edges].sum())
        if not total_w:                                # nothing collected by the weight: halve the length
            w = length
    nodes, part_w, count = _parts(ix, edges, w)
    opened = np.zeros(len(ix.ids), dtype=bool)
    opened[[ix.number[s] for s in (outfall, *flow, *no_flow)]] = True
    opened |= ix.buried
    half = float(w[edges].sum()) / 2
    score = np.abs(part_w - half)
    ok = ~opened[nodes] & (count > 0) & (count < len(edges))
    pipes = frozenset(ix.pipes[edges].tolist())
    if not ok.any():
        return Plan(pipes, total, None, None, total_w, None)
    least = score[ok].min()
    tied = np.flatnonzero(ok & (score == least))
    best = tied[0]                                     # nodes are in the order of their ids
    if len(tied) > 1:                                  # the nearer the outfall, then the id
        depth = ix.depth(ix.number[outfall], ix.up)
        def nearer(k: int) -> tuple[int, int]:         # a def: as a lambda, mypy spent 1.5 s inferring it
            return depth.get(int(nodes[k]), 0), int(nodes[k])
        best = min(tied.tolist(), key=nearer)
    nxt, nxt_w = int(nodes[best]), float(part_w[best])
    if weights is None:
        return Plan(pipes, total, ix.ids[nxt], nxt_w)
    part_ft = float(length[edges[ix.draining_to(nxt)[head[edges]]]].sum())
    return Plan(pipes, total, ix.ids[nxt], part_ft, total_w, nxt_w if total_w else 0.0)


def _parts(ix: Index, edges: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each structure at an end of the suspect pipes ``edges`` (numbers, ascending), the
    weight of the suspect pipes draining to it and their count. One pass up the reach when
    every structure in it drains on by one pipe at most (the usual storm sewer); otherwise
    the count of :func:`_parts_forest` (loops) or of each structure's ancestors."""
    tail, head = ix.tail[edges], ix.head[edges]
    at_end = np.zeros(len(ix.ids), dtype=bool)
    at_end[tail] = True
    at_end[head] = True
    nodes = np.flatnonzero(at_end)
    tree = _parts_tree(len(ix.ids), nodes, tail, head, w[edges])
    if tree is not None:
        drained_w, drained_n = tree
        return nodes, drained_w[nodes], drained_n[nodes]
    ids = ix.ids
    pairs = list(zip([ids[u] for u in tail.tolist()], [ids[v] for v in head.tolist()]))
    by_pair = dict(zip(pairs, w[edges].tolist()))
    suspect = set(pairs)
    parts = _parts_forest(suspect, by_pair)
    if parts is None:                                   # a structure draining two ways: count its ancestors
        parts = {}
        for n in nodes.tolist():
            inside = ix.draining_to(n)[head]
            parts[ids[n]] = (float(w[edges][inside].sum()), int(inside.sum()))
    return (nodes, np.array([parts[ids[n]][0] for n in nodes.tolist()], dtype=np.float64),
            np.array([parts[ids[n]][1] for n in nodes.tolist()], dtype=np.int64))


def _parts_tree(n: int, nodes: np.ndarray, tail: np.ndarray, head: np.ndarray,
                w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The one-pass count of :func:`_parts_forest` on the index's numbers (fast): per
    structure, the weight and the number of the suspect pipes (``tail`` -> ``head``, weighing
    ``w``) draining to it; None when a structure drains on by two pipes or in a loop."""
    if len(tail) and (tail == head).any():
        return None
    out = np.bincount(tail, minlength=n)
    if len(tail) and out.max() > 1:
        return None
    down_a = np.full(n, -1, dtype=np.int64)
    down_a[tail] = head
    step_a = np.zeros(n)
    step_a[tail] = w
    down, step = down_a.tolist(), step_a.tolist()
    waiting = np.bincount(head, minlength=n).tolist()    # pipes into a structure not yet summed
    drained_w = [0.0] * n
    drained_n = [0] * n
    ends = nodes.tolist()
    ready = [v for v in ends if waiting[v] == 0]
    done = 0
    while ready:
        u = ready.pop()
        done += 1
        v = down[u]
        if v >= 0:
            drained_w[v] += drained_w[u] + step[u]
            drained_n[v] += drained_n[u] + 1
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
    if done != len(ends):                              # a loop: its structures never became ready
        return None
    return np.array(drained_w), np.array(drained_n)


def _both_ways_one_pass(ix: Index, outfall: str, flow: Sequence[str], no_flow: Sequence[str],
                        unknown: set[str], weights: Mapping[str, float] | None) -> Plan | None:
    """:func:`_plan_both_ways` in one pass over each graph (the pipes that may drain, the
    pipes that surely drain) when, downstream of the suspect pipes, its loops each taken as
    one node form a forest (a pipe of unknown direction makes a loop of its two ends); None
    otherwise (the caller counts each structure's ancestors)."""
    n = len(ix.ids)
    pids = ix.pipe_ids
    pu, pv = ix.tail[ix.pipe_edge], ix.head[ix.pipe_edge]
    unk = np.fromiter(map(unknown.__contains__, pids), dtype=bool, count=len(pids))
    known = ~unk
    may = _graph(n, np.concatenate((pu, pv[unk])), np.concatenate((pv, pu[unk])))
    surely = _graph(n, pu[known], pv[known])

    def may_drain(m: int) -> np.ndarray:
        """Per pipe: its downstream end drains to ``m`` (or is ``m``) in the may graph. For
        a pipe of unknown direction either end may: one draining to ``m`` there has the
        other draining to it too, through the pipe taken the other way."""
        mask = np.zeros(n, dtype=bool)
        mask[ix.reached(m, may.up)] = True
        return mask[pv]

    def surely_drain(m: int) -> np.ndarray:
        mask = np.zeros(n, dtype=bool)
        mask[ix.reached(m, surely.up)] = True
        return known & mask[pv]

    number = ix.number
    suspect = may_drain(number[outfall])
    for s in flow:
        suspect &= may_drain(number[s])
    for s in no_flow:
        suspect &= ~surely_drain(number[s])
    ft = ix.pipe_length
    total = float(ft[suspect].sum())
    total_w = None
    w = ft
    if weights is not None:
        by = np.fromiter(map(weights.get, pids, repeat(0.0)), dtype=np.float64, count=len(pids))
        total_w = float(by[suspect].sum())
        if total_w:
            w = by
    whole = float(w[suspect].sum())
    count = int(suspect.sum())
    pipes = frozenset(np.asarray(pids, dtype=object)[suspect].tolist())
    # each pipe's part goes to every structure downstream of its (downstream) end, and a pipe
    # of unknown direction's, in the may graph, to every structure downstream of either end
    # (its ends are one loop there)
    may_parts = _drained(may, pv, suspect, w, np.ones(len(pids)))
    sure_parts = _drained(surely, pv, suspect & known, w)
    if may_parts is None or sure_parts is None:
        return None
    (may_w, may_n), (sure_w,) = may_parts, sure_parts
    opened = np.zeros(n, dtype=bool)
    opened[[number[s] for s in (outfall, *flow, *no_flow)]] = True
    opened |= ix.buried
    ends = np.zeros(n, dtype=bool)
    ends[pu[suspect]] = True
    ends[pv[suspect]] = True
    ok = ends & ~opened & (may_n > 0) & (may_n < count)
    if not ok.any():
        return Plan(pipes, total, None, None, total_w, None)
    score = np.maximum(may_w, whole - sure_w)
    least = score[ok].min()
    tied = np.flatnonzero(ok & (score == least))
    best = int(tied[0])
    if len(tied) > 1:                                  # the nearer the outfall, then the id
        depth = ix.depth(number[outfall], may.up)
        best = min(tied.tolist(), key=lambda k: (depth.get(k, 0), k))
    part_w = float(may_w[best])
    if weights is None:
        return Plan(pipes, total, ix.ids[best], part_w)
    part_ft = float(ft[suspect & may_drain(best)].sum())
    return Plan(pipes, total, ix.ids[best], part_ft, total_w, part_w if total_w else 0.0)


class _Graph(NamedTuple):
    """The edges ``tail`` -> ``head`` with their rows up and down."""
    up: Rows
    down: Rows
    tail: np.ndarray
    head: np.ndarray


def _graph(n: int, tail: np.ndarray, head: np.ndarray) -> _Graph:
    return _Graph(csr_rows(n, head, tail), csr_rows(n, tail, head), tail, head)


def _drained(g: _Graph, at: np.ndarray, which: np.ndarray, *weights: np.ndarray) -> list[np.ndarray] | None:
    """Per structure, for each of ``weights``: the sum over the pipes ``which`` whose end
    ``at`` drains to the structure (or is it) in ``g``. None when, downstream of those ends,
    a loop or a structure drains on two ways (the sums would count some pipes twice)."""
    n = len(g.down.ptr) - 1
    comp, count = _loops(n, g.down)
    c = np.asarray(comp, dtype=np.int64)
    ct, ch = c[g.tail], c[g.head]
    between = np.unique(ct[ct != ch] * count + ch[ct != ch])          # loop -> loop, once each, by loop
    outs = np.bincount(between // count, minlength=count).tolist()
    nxt_a = np.full(count, -1, dtype=np.int64)
    nxt_a[between // count] = between % count          # read only where a loop drains to one other
    nxt = nxt_a.tolist()
    counted = c[at[which]]
    active = np.zeros(count, dtype=bool)               # downstream of a pipe counted
    active[counted] = True
    on = active.tolist()
    down = [-1] * count
    for x in range(count - 1, -1, -1):                 # upstream first: one draining to another is numbered above it
        if on[x] and outs[x]:
            if outs[x] > 1:
                return None
            on[nxt[x]] = True
            down[x] = nxt[x]
    out = []
    for w in weights:
        total = np.bincount(counted, weights=w[which], minlength=count).tolist()
        for x in range(count - 1, -1, -1):
            y = down[x]
            if y >= 0:
                total[y] += total[x]
        out.append(np.asarray(total)[c])
    return out


def _loops(n: int, down: Rows) -> tuple[list[int], int]:
    """Strongly connected components (Tarjan's, iterative): each structure's, numbered so that
    one draining to another has the higher number; and how many. Ours rather than networkx's
    (``condensation`` and a topological sort): the whole plan with one pipe of unknown
    direction on bench/bench_network.py's 10,000 structures took 316 ms with networkx's against
    35 ms with this one (2026-12-02, same run, same plan); scipy's is not in the package."""
    ptr, nbr = down.ptr, down.nbr
    order = [-1] * n
    low = [0] * n
    on = bytearray(n)
    comp = [-1] * n
    stack: list[int] = []
    at_v: list[int] = []                               # the depth-first path: structures ...
    at_k: list[int] = []                               # ... and the next pipe out of each (ints: no tuple per step)
    seen = 0
    count = 0
    for root in range(n):
        if order[root] >= 0:
            continue
        order[root] = low[root] = seen
        seen += 1
        stack.append(root)
        on[root] = 1
        at_v.append(root)
        at_k.append(ptr[root])
        while at_v:
            v, k = at_v[-1], at_k[-1]
            if k < ptr[v + 1]:
                at_k[-1] = k + 1
                x = nbr[k]
                if order[x] < 0:
                    order[x] = low[x] = seen
                    seen += 1
                    stack.append(x)
                    on[x] = 1
                    at_v.append(x)
                    at_k.append(ptr[x])
                elif on[x] and order[x] < low[v]:
                    low[v] = order[x]
                continue
            at_v.pop()
            at_k.pop()
            if at_v:
                u = at_v[-1]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == order[v]:
                while True:
                    x = stack.pop()
                    on[x] = 0
                    comp[x] = count
                    if x == v:
                        break
                count += 1
    return comp, count


def _plan_both_ways(net: Network, outfall: str, flow: Sequence[str], no_flow: Sequence[str],
                    unknown: set[str], weights: Mapping[str, float] | None = None) -> Plan:
    """:func:`plan` with pipes of unknown direction, counted structure by structure (each
    structure's ancestors, twice: a quadratic count, for the few networks that need it)."""
    import networkx as nx
    may: nx.DiGraph[str] = nx.DiGraph()
    surely: nx.DiGraph[str] = nx.DiGraph()
    may.add_nodes_from(net.structures)
    surely.add_nodes_from(net.structures)
    length: dict[str, float] = {}
    for c in net.conveyances.values():
        if c.upstream is None or c.downstream is None:
            continue
        length[c.id] = c.length_ft or 0.0
        ends = [(c.upstream, c.downstream)] + ([(c.downstream, c.upstream)] if c.id in unknown else [])
        for u, v in ends:
            if not may.has_edge(u, v):
                may.add_edge(u, v, ids=set())
            may.edges[u, v]["ids"].add(c.id)
        if c.id not in unknown:
            if not surely.has_edge(c.upstream, c.downstream):
                surely.add_edge(c.upstream, c.downstream, ids=set())
            surely.edges[c.upstream, c.downstream]["ids"].add(c.id)

    def draining_to(g, m: str) -> set[str]:
        return {pid for v in nx.ancestors(g, m) | {m} for u in g.predecessors(v) for pid in g.edges[u, v]["ids"]}

    def ft(pipes: set[str]) -> float:
        return sum(length[p] for p in pipes)

    suspect = draining_to(may, outfall)
    for m in flow:
        suspect &= draining_to(may, m)
    for m in no_flow:
        suspect -= draining_to(surely, m)
    total = ft(suspect)
    by: Mapping[str, float] = weights or {}
    total_w = None if weights is None else sum(by.get(p, 0.0) for p in suspect)

    def wt(pipes: set[str]) -> float:
        return ft(pipes) if not total_w else sum(by.get(p, 0.0) for p in pipes)

    whole = wt(suspect)
    opened = {outfall, *flow, *no_flow} | _buried(net)
    suspect_ends = {e for p in suspect for e in (net.conveyances[p].upstream, net.conveyances[p].downstream)
                    if e is not None}
    scored = []
    for m in suspect_ends - opened:
        part = draining_to(may, m) & suspect
        if 0 < len(part) < len(suspect):
            part_w = wt(part)
            scored.append((max(part_w, whole - wt(draining_to(surely, m) & suspect)), m, part_w, part))
    if not scored:
        return Plan(frozenset(suspect), total, None, None, total_w, None)
    least = min(score for score, *_ in scored)
    tied = [(m, part_w, part) for score, m, part_w, part in scored if score == least]
    if len(tied) > 1:                                  # the nearer the outfall, then the id
        depth = nx.single_source_shortest_path_length(may.reverse(copy=False), outfall)
        tied.sort(key=lambda t: (depth.get(t[0], 0), t[0]))
    m, part_w, part = tied[0]
    if weights is None:
        return Plan(frozenset(suspect), total, m, part_w)
    return Plan(frozenset(suspect), total, m, ft(part), total_w, part_w if total_w else 0.0)


def _buried(net: Network) -> set[str]:
    """Junctions the import implied where pipe ends meet with no structure drawn (a wye, a
    bend): no crew can open them, so they are never named next."""
    from .build import IMPLIED
    return {s.id for s in net.structures.values() if s.source == IMPLIED}


def _parts_forest(suspect: set[tuple[str, str]], length: dict) -> dict[str, tuple[float, int]] | None:
    """Each structure's part (pipe length draining to it, and the number of pipes) in one
    pass, when the suspect reach, its loops each taken as one node, is a forest: every
    structure drains on by at most one path (the usual storm sewer). None otherwise: the
    caller counts each structure's ancestors instead."""
    import networkx as nx
    h: nx.DiGraph[str] = nx.DiGraph()
    h.add_edges_from(suspect)
    c = nx.condensation(h)
    if any(d > 1 for _, d in c.out_degree()):
        return None
    member = c.graph["mapping"]                        # structure -> its loop (or itself)
    own: dict[int, list] = {n: [0.0, 0] for n in c}    # pipes inside a loop drain to all of it
    into: dict[int, list] = {n: [0.0, 0] for n in c}
    for u, v in suspect:
        target = own if member[u] == member[v] else into
        target[member[v]][0] += length[(u, v)]
        target[member[v]][1] += 1
    drained: dict[int, tuple[float, int]] = {}
    for n in nx.topological_sort(c):                   # upstream first
        ft, k = own[n][0] + into[n][0], own[n][1] + into[n][1]
        for p in c.predecessors(n):
            ft, k = ft + drained[p][0], k + drained[p][1]
        drained[n] = (ft, k)
    return {m: drained[member[m]] for m in member}
