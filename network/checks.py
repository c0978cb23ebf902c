"""What an imported network cannot be trusted for: the findings ``map import`` prints."""

from __future__ import annotations

from enum import Enum

from .model import ConveyanceKind, Finding, Network, StructureKind

UPHILL_TOLERANCE_FT = 0.0    # any rise against the flow is reported; the town decides what is real
# SWMM links that are not gravity conveyances: a pump lifts water, an orifice, weir or outlet
# passes it by the heads on either side; their ends' inverts say nothing of a mis-drawn pipe.
CONTROLLED = (ConveyanceKind.PUMP, ConveyanceKind.ORIFICE, ConveyanceKind.WEIR, ConveyanceKind.OUTLET)
DOUBTED = ("unknown_direction", "uphill")     # findings that make a pipe's direction unknown (traced both ways)


class FindingKind(str, Enum):
    UNCONNECTED_END = "unconnected_end"
    UPHILL = "uphill"
    LOOP = "loop"
    NO_RECEIVING_WATER = "no_receiving_water"
    OUTFALL_DRAINS_ON = "outfall_drains_on"
    NO_OUTFALL_DOWNSTREAM = "no_outfall_downstream"
    ISOLATED = "isolated"


def check(net: Network) -> list[Finding]:
    import networkx as nx
    out: list[Finding] = []
    for c in net.conveyances.values():
        if c.kind in CONTROLLED:
            continue
        if c.upstream_invert_ft is not None and c.downstream_invert_ft is not None \
                and c.downstream_invert_ft - c.upstream_invert_ft > UPHILL_TOLERANCE_FT:
            out.append(Finding(FindingKind.UPHILL.value, c.id, (
                f"{c.kind.value} {c.id} flows uphill by its inverts: {c.upstream} {c.upstream_invert_ft:.2f} ft -> "
                f"{c.downstream} {c.downstream_invert_ft:.2f} ft (direction from {c.direction.value})")))
    g = net.graph()
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1:
            members = sorted(comp)
            out.append(Finding(FindingKind.LOOP.value, members[0], (
                f"flow can circle through {', '.join(members)}; check the directions of the pipes between them")))
    outfalls = {s.id for s in net.structures.values() if s.kind is StructureKind.OUTFALL}
    for sid in sorted(outfalls):
        s = net.structures[sid]
        if not s.receiving_water:
            out.append(Finding(FindingKind.NO_RECEIVING_WATER.value, sid, f"outfall {sid} has no receiving water"))
        if g.out_degree(sid):
            out.append(Finding(FindingKind.OUTFALL_DRAINS_ON.value, sid,
                               f"outfall {sid} drains on into {', '.join(sorted(g.successors(sid)))}"))
    reaches = set(outfalls)
    for o in outfalls:
        reaches |= nx.ancestors(g, o)
    for sid in sorted(g.nodes):
        if g.degree(sid) == 0:
            out.append(Finding(FindingKind.ISOLATED.value, sid, f"{net.structures[sid].kind.value} {sid} has no pipe"))
        elif sid not in reaches:
            out.append(Finding(FindingKind.NO_OUTFALL_DOWNSTREAM.value, sid,
                               f"{net.structures[sid].kind.value} {sid} reaches no outfall"))
    return out
