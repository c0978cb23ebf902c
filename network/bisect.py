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
from enum import Enum
from typing import TYPE_CHECKING

from .errors import NetworkError
from .model import Network, StructureKind

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


class Weight(str, Enum):
    LENGTH = "length"        # pipe length (the default: every map has it)
    INLETS = "inlets"        # catch basins and inlets
    AREA = "area"            # drainage area, square feet


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
    leaving: dict[str, int] = {}
    connected = [(c.id, c.upstream) for c in net.conveyances.values()
                 if c.upstream is not None and c.downstream is not None]
    for _, up in connected:
        leaving[up] = leaving.get(up, 0) + 1
    return {pid: node.get(up, 0.0) / leaving[up] for pid, up in connected}


def plan(net: Network, outfall: str, flow: Sequence[str] = (), no_flow: Sequence[str] = (),
         two_way: Collection[str] = (), weights: Mapping[str, float] | None = None) -> Plan:
    """The suspect reach after the observations (each structure opened: flow seen or not)
    and the next structure to open. ``two_way``: pipes whose direction is not known;
    ``weights``: what to halve instead of pipe length (pipe id -> weight, :func:`weights`)."""
    import networkx as nx
    if outfall not in net.structures:
        raise NetworkError(f"no structure {outfall!r} in the town's network")
    g = net.graph()
    for s in (*flow, *no_flow):
        if s not in g:
            raise NetworkError(f"no structure {s!r} in the town's network")
    for pid in two_way:
        if pid not in net.conveyances:
            raise NetworkError(f"no pipe {pid!r} in the town's network")
    if two_way:
        return _plan_both_ways(net, outfall, flow, no_flow, set(two_way), weights)
    # networkx's own dict of dicts (structure -> the pipes into it), not its views: the views
    # were half of a plan on a 10,000-structure network (bench/bench_network.py)
    pred: dict[str, dict[str, dict]] = g._pred
    length: dict[tuple[str, str], float] = {}
    ids: dict[tuple[str, str], str] = {}
    for v, into in pred.items():
        for u, d in into.items():
            length[u, v] = d["length_ft"] or 0.0
            ids[u, v] = d["id"]
    w = length if weights is None else {
        (u, v): sum(weights.get(i, 0.0) for i in d["ids"]) for v, into in pred.items() for u, d in into.items()}

    def draining_to(m: str) -> set[tuple[str, str]]:
        """The pipes into ``m`` and into every structure upstream of it."""
        seen, stack, pipes = {m}, [m], set()
        while stack:
            v = stack.pop()
            for u in pred[v]:
                pipes.add((u, v))
                if u not in seen:
                    seen.add(u)
                    stack.append(u)
        return pipes

    suspect = draining_to(outfall)
    for m in flow:
        suspect &= draining_to(m)
    for m in no_flow:
        suspect -= draining_to(m)
    total = sum(length[e] for e in suspect)
    total_w = None if weights is None else sum(w[e] for e in suspect)
    if not total_w:                                    # nothing collected by the weight: halve the length
        w = length
    opened = {outfall, *flow, *no_flow} | _buried(net)
    parts = _parts_tree(suspect, w) or _parts_forest(suspect, w) or {
        m: (sum(w[e] for e in part), len(part))
        for m in {u for u, _ in suspect} | {v for _, v in suspect}
        for part in [draining_to(m) & suspect]}
    half = sum(w[e] for e in suspect) / 2
    scored = [(abs(part_w - half), m, part_w) for m, (part_w, count) in parts.items()
              if m not in opened and 0 < count < len(suspect)]
    pipes = frozenset(ids[e] for e in suspect)
    if not scored:
        return Plan(pipes, total, None, None, total_w, None)
    least = min(score for score, _, _ in scored)
    tied = [(m, part_w) for score, m, part_w in scored if score == least]
    if len(tied) > 1:                                  # the nearer the outfall, then the id
        depth = nx.single_source_shortest_path_length(g.reverse(copy=False), outfall)
        tied.sort(key=lambda t: (depth.get(t[0], 0), t[0]))
    m, part_w = tied[0]
    if weights is None:
        return Plan(pipes, total, m, part_w)
    part_ft = sum(length[e] for e in draining_to(m) & suspect)
    return Plan(pipes, total, m, part_ft, total_w, part_w if total_w else 0.0)


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


def _parts_tree(suspect: set[tuple[str, str]], length: dict) -> dict[str, tuple[float, int]] | None:
    """The one-pass count of :func:`_parts_forest` on plain dictionaries, for a reach with
    no loop and no structure draining two ways (fast); None otherwise."""
    down: dict[str, str] = {}
    waiting: dict[str, int] = {}                       # pipes into a structure not yet summed
    for u, v in suspect:
        if u in down:
            return None
        down[u] = v
        waiting[v] = waiting.get(v, 0) + 1
        waiting.setdefault(u, 0)
    drained_ft = dict.fromkeys(waiting, 0.0)
    drained_pipes = dict.fromkeys(waiting, 0)
    ready = [n for n, k in waiting.items() if k == 0]
    done = 0
    while ready:
        n = ready.pop()
        done += 1
        to = down.get(n)
        if to is not None:
            drained_ft[to] += drained_ft[n] + length[(n, to)]
            drained_pipes[to] += drained_pipes[n] + 1
            waiting[to] -= 1
            if waiting[to] == 0:
                ready.append(to)
    if done != len(waiting):                           # a loop: its structures never became ready
        return None
    return {n: (drained_ft[n], drained_pipes[n]) for n in waiting}


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
