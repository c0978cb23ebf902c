"""The bisection plan of a source trace: which structure to open next so that what the crew
finds there (flow or no flow) halves the pipe length still suspect.

The suspect reach is a set of pipes. At first: every pipe upstream of the outfall. Opening
structure ``m`` divides it: the pipes draining to ``m`` (whose downstream end is ``m`` or
upstream of it) and the rest. Flow at ``m`` (the dry-weather flow is there): the source is
in the first part. No flow at ``m``: in the rest. The next structure is the one whose first
part is nearest half the suspect length (ties: the nearer to the outfall, then the id).
Loops are handled as the graph has them: everything that can drain to ``m`` counts.

The field practice it serves: storm drain network investigations working up from the
outfall through manholes at junctions, as in E. Brown, D. Caraco (Center for Watershed
Protection) and R. Pitt, "Illicit Discharge Detection and Elimination: A Guidance Manual
for Program Development and Technical Assessments", October 2004, EPA cooperative
agreement X-82907801-0. Choosing the manhole by halving the suspect pipe length is ours."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import NetworkError
from .model import Network


@dataclass(frozen=True)
class Plan:
    suspect_pipes: frozenset[str]
    suspect_length_ft: float
    next_structure: str | None       # None: the reach cannot be split further
    next_splits_ft: float | None     # suspect length draining to the next structure


def plan(net: Network, outfall: str, flow: list[str] = (), no_flow: list[str] = ()) -> Plan:
    """The suspect reach after the observations (each structure opened: flow seen or not)
    and the next structure to open."""
    import networkx as nx
    if outfall not in net.structures:
        raise NetworkError(f"no structure {outfall!r} in the town's network")
    g = net.graph()
    for s in (*flow, *no_flow):
        if s not in g:
            raise NetworkError(f"no structure {s!r} in the town's network")
    length = {(u, v): (d["length_ft"] or 0.0) for u, v, d in g.edges(data=True)}
    ids = {(u, v): d["id"] for u, v, d in g.edges(data=True)}

    def draining_to(m: str) -> set[tuple[str, str]]:
        nodes = nx.ancestors(g, m) | {m}
        return {(u, v) for v in nodes for u in g.predecessors(v)}

    suspect = draining_to(outfall)
    for m in flow:
        suspect &= draining_to(m)
    for m in no_flow:
        suspect -= draining_to(m)
    total = sum(length[e] for e in suspect)
    nodes = {u for u, _ in suspect} | {v for _, v in suspect}
    depth = nx.single_source_shortest_path_length(g.reverse(copy=False), outfall)
    best: tuple[float, int, str] | None = None
    best_part = None
    for m in nodes:
        if m == outfall or m in flow or m in no_flow:
            continue
        part = draining_to(m) & suspect
        if not part or part == suspect:
            continue
        part_ft = sum(length[e] for e in part)
        key = (abs(part_ft - total / 2), depth.get(m, 0), m)
        if best is None or key < best:
            best, best_part = key, part_ft
    return Plan(frozenset(ids[e] for e in suspect), total, best[2] if best else None, best_part)
