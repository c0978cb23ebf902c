"""The walk and the plan as they were before the index of arrays (network/index.py): plain
Python on networkx's dicts, kept here as the oracle the property tests compare the fast
versions to (tests/network/test_same_results.py). Not used by the package."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

# the count of ancestors, the buried junctions and the loops' forest are still the package's
# own (its fallback, unchanged from before the index): the oracle uses them as they are
from ms4watch.network.bisect import Plan, Weight, _buried, _parts_forest
from ms4watch.network.bisect import _plan_both_ways as plan_both_ways  # noqa: F401  (tests call reference.plan_both_ways)
from ms4watch.network.errors import NetworkError
from ms4watch.network.model import Network, StructureKind
from ms4watch.network.trace import Step, Way


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
    assert not two_way, "the oracle covers the plan's one-pass path only"
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


def weights(net: Network, by: Weight, areas=()) -> dict[str, float] | None:
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
