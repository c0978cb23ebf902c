"""The town's storm-sewer map, as pages (read only): its outfalls with the pipe upstream of
each, and a trace: the structures upstream of an outfall (or downstream of a structure)
in the order a crew walks them. Imported with ``ms4watch map import`` (docs/network.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Path as PathParam, Query, Request
from fastapi.responses import Response

from ...compliance.traces import observations
from ..deps import MAX_ID, CurrentActor, Services, render
from ..errors import NotFound

if TYPE_CHECKING:
    from ..services.tracing import TownMap

router = APIRouter(include_in_schema=False)
StructurePath = Annotated[str, PathParam(min_length=1, max_length=100)]


def _town_map(services) -> TownMap | None:
    """The map the last import kept, with its findings and the import's record: read once
    per import (``TraceDesk.town_map``, as the map page reads it), not at every request."""
    if services.tracing is not None:
        return services.tracing.town_map()
    from ms4watch.network.store import NetworkStore, has_map

    from ..services.tracing import TownMap
    folder = services.settings.town_data_dir(services.municipality)
    if not has_map(folder):
        return None
    with NetworkStore(folder) as store:     # (no doubted pipes: these pages do not read them)
        return TownMap(store.load(), frozenset(), findings=tuple(store.findings()), last_import=store.last_import())


@router.get("/network")
def network(request: Request, actor: CurrentActor, services: Services) -> Response:
    m = _town_map(services)
    return render(request, "network.html", title="Storm-sewer map", actor=actor, net=m.net if m else None,
                  rows=m.outfall_reaches if m else [], findings=list(m.findings) if m else [],
                  last=m.last_import if m else None)


NETWORK_JSON = "/network/map/network.json"


@router.get("/network/map")
def network_map(request: Request, actor: CurrentActor, services: Services,
                case: Annotated[int, Query(ge=0, le=MAX_ID)] = 0) -> Response:
    """The map drawn (Leaflet, vendored; no tile server unless ``web.map_tiles`` names one):
    pipes, structures, stations and construction sites with their status; with ``case``, the
    case's suspect reach, its visits and the next structure to open. The network itself is
    fetched from ``network.json``; the page carries what changes from one request to the next."""
    from .. import networkmap as nm
    tracing = services.tracing
    m = tracing.town_map() if tracing is not None else None    # read once per import, not per request
    net = m.net if m is not None else None
    trace = None
    marks = nm.TraceMarks()
    the_case = None
    if case:
        if services.compliance is None or tracing is None:
            raise NotFound("cases are not kept by this server")
        the_case = services.compliance.case(actor, case)
        trace = tracing.of_case(actor, case)
        flow, dry = observations([v for v in trace.visits])
        marks = nm.TraceMarks(frozenset(trace.suspect_pipes), {**{s: "present" for s in flow},
                                                               **{s: "absent" for s in dry}},
                              trace.next_structure, trace.outfall)
    monitored, with_cases = set(), set()
    station_notes: dict[str, str] = {}
    site_notes: dict[str, str] = {}
    located_sites = [c for c in services.registry.construction_sites if c.lat is not None and c.lon is not None]
    if m is not None and tracing is not None:
        for o in services.registry.outfalls:         # the registry's outfalls are the monitored ones
            got = tracing.map_outfall(o.id, m)
            station_notes[o.id] = f"on the map at {got}" if got else "not on the map"
            if got:
                monitored.add(got)
        site_notes = _site_notes(services, m.net, located_sites)
    board = services.stations.board(actor)
    stations = [nm.Place(s.station.id, s.station.name, lat, lon, s.state.css, f"/stations/{s.station.id}",
                         station_notes.get(s.station.id))
                for s in board.located if (lat := s.station.lat) is not None and (lon := s.station.lon) is not None]
    today = services.inspections.clock().astimezone(services.tz).date()
    sites = [nm.Place(c.id, c.name, lat, lon, "active" if c.active_on(today) else "inactive",
                      f"/inspections?site={c.id}", site_notes.get(c.id))
             for c in located_sites if (lat := c.lat) is not None and (lon := c.lon) is not None]
    if m is not None and tracing is not None:
        if services.compliance is not None:
            for c in services.compliance.cases(actor):
                got = tracing.map_outfall(c.outfall, m) if c.status == "open" else None
                if got:
                    with_cases.add(got)
    drawn = m.drawn if m is not None else None
    data = nm.overlay(net, drawn.bounds if drawn else None, network_url=NETWORK_JSON if drawn else None,
                      monitored=monitored, with_cases=with_cases, stations=stations, sites=sites, trace=marks)
    return render(request, "network_map.html", title="Storm-sewer map", actor=actor, net=net, data=data,
                  unplaced=drawn.unplaced if drawn else 0, case=the_case, trace=trace)


def _site_notes(services, net, sites) -> dict[str, str]:
    """Each site's runoff in the words its alerts use (alerts/kinds/runoff.py): its inlets (the
    registry's ``drains_to``, else the nearest) and the outfalls they reach. The server's value
    for this map import (the one its alerts word from, computed once per import), else computed
    here (a workbench opened without the server's)."""
    from ms4watch.alerts.kinds.runoff import site_words
    from ms4watch.network.sites import site_reaches
    kept = services.desk.reaches
    reaches = kept() if kept is not None else None
    if reaches is None:
        reaches = site_reaches(net, sites, services.registry.outfalls, version="page")
    return {c.id: site_words(r, located=c.located) for c in sites if (r := reaches.of(c.id)) is not None}


@router.get(NETWORK_JSON)
def network_json(request: Request, actor: CurrentActor, services: Services) -> Response:
    """The whole network in compact arrays (``networkmap.encode_network``), encoded once per
    import: gzip where the client takes it, and not sent again while its ETag holds."""
    m = services.tracing.town_map() if services.tracing is not None else None
    if m is None:
        raise NotFound("no map imported: ms4watch map import")
    drawn = m.drawn
    headers = {"ETag": drawn.etag, "Cache-Control": "private, no-cache", "Vary": "Accept-Encoding"}
    if drawn.etag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(drawn.gzip, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
    return Response(drawn.json, media_type="application/json", headers=headers)


@router.get("/network/map/records.geojson")
def records_geojson(actor: CurrentActor, services: Services) -> Response:
    """The town's IDDE records on its map as one GeoJSON FeatureCollection, each feature's
    ``layer`` saying which: ``outfalls`` (with their screenings), ``cases``, ``trace_visits``,
    ``suspect_reaches`` (as ``ms4watch map export --records`` writes them, docs/network.md)."""
    import json

    from ms4watch.network.records import feature_collection
    got = services.tracing.record_layers(actor) if services.tracing is not None else None
    if got is None:
        raise NotFound("no map imported: ms4watch map import")
    return Response(json.dumps(feature_collection(got[0])), media_type="application/geo+json",
                    headers={"Content-Disposition": 'attachment; filename="idde-records.geojson"'})


@router.get("/network/trace/{sid}")
def trace(request: Request, sid: StructurePath, actor: CurrentActor, services: Services,
          down: bool = False) -> Response:
    from ms4watch.network.trace import Way, total_length_ft, walk
    m = _town_map(services)
    net = m.net if m is not None else None
    if net is None or sid not in net.structures:
        raise NotFound(f"no structure {sid} on the town's map")
    steps = walk(net, sid, Way.DOWN if down else Way.UP)
    return render(request, "network_trace.html", title=f"Trace from {sid}", actor=actor, sid=sid, down=down,
                  steps=steps, total_ft=total_length_ft(steps))
