"""The town's storm-sewer map, as pages (read only): its outfalls with the pipe upstream of
each, and a trace: the structures upstream of an outfall (or downstream of a structure)
in the order a crew walks them. Imported with ``ms4watch map import`` (docs/network.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path as PathParam, Request
from fastapi.responses import Response

from ..deps import CurrentActor, Services, render
from ..errors import NotFound

router = APIRouter(include_in_schema=False)
StructurePath = Annotated[str, PathParam(min_length=1, max_length=100)]


def _network(services):
    from ms4watch.network.store import NetworkStore, has_map
    folder = services.settings.town_data_dir(services.municipality)
    if not has_map(folder):
        return None, [], None
    with NetworkStore(folder) as store:
        return store.load(), store.findings(), store.last_import()


@router.get("/network")
def network(request: Request, actor: CurrentActor, services: Services) -> Response:
    from ms4watch.network.model import StructureKind
    from ms4watch.network.trace import Way, total_length_ft, walk
    net, findings, last = _network(services)
    rows = []
    if net is not None:
        for s in sorted((s for s in net.structures.values() if s.kind is StructureKind.OUTFALL), key=lambda s: s.id):
            up = walk(net, s.id, Way.UP)
            rows.append({"id": s.id, "water": s.receiving_water, "structures": len(up) - 1,
                         "length_ft": total_length_ft(up)})
    return render(request, "network.html", title="Storm-sewer map", actor=actor, net=net, rows=rows,
                  findings=findings, last=last)


@router.get("/network/trace/{sid}")
def trace(request: Request, sid: StructurePath, actor: CurrentActor, services: Services,
          down: bool = False) -> Response:
    from ms4watch.network.trace import Way, total_length_ft, walk
    net, _, _ = _network(services)
    if net is None or sid not in net.structures:
        raise NotFound(f"no structure {sid} on the town's map")
    steps = walk(net, sid, Way.DOWN if down else Way.UP)
    return render(request, "network_trace.html", title=f"Trace from {sid}", actor=actor, sid=sid, down=down,
                  steps=steps, total_ft=total_length_ft(steps))
