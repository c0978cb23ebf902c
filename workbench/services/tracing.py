"""Source tracing on a case: the case's outfall on the town's map, the trace visits the crew
recorded (``compliance.traces``), the suspect reach they leave and the next structure to
open (``network.bisect``).

Pipes the import doubted (an ``unknown_direction`` or ``uphill`` finding) are taken as
flowing either way. Where the map has drainage areas, the next structure is the one that
halves the suspect reach's drainage area (``network.bisect.weights``); where it has parcels,
the trace names those draining to the suspect reach. The map is read from ``network.db`` in the town's data folder, again
only when a new import has replaced it."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ...compliance import traces
from ...compliance.inputs import TraceVisitIn
from ...compliance.traces import FieldTest, Flow, Indicator, TraceVisit
from ...network.areas import DrainageArea, Parcel, parcels_draining_to, reach_entries
from ...network.bisect import Plan, Weight, plan, weights
from ...network.checks import DOUBTED        # findings that make a pipe's direction unknown
from ...network.index import index
from ...network.model import Finding, Network, StructureKind
from ..errors import Conflict
from ..roles import Actor, Permission
from .compliance import Refused

if TYPE_CHECKING:
    from ...compliance.report import MapOutfall
    from ...network.export import Layer
    from ...network.trace import OutfallReach
    from ..networkmap import EncodedNetwork
    from .compliance import ComplianceDesk


@dataclass(frozen=True)
class TownMap:
    net: Network
    doubted: frozenset[str]       # pipes taken both ways
    areas: tuple[DrainageArea, ...] = ()
    parcels: tuple[Parcel, ...] = ()
    weights: dict[str, float] | None = None    # by drainage area, where the map has areas
    findings: tuple[Finding, ...] = ()         # what the import found doubtful (the outfalls page)
    last_import: dict | None = None            # when, from what, how much (``NetworkStore.last_import``)

    @cached_property
    def outfall_reaches(self) -> list["OutfallReach"]:
        """What lies upstream of each outfall (the outfalls page), walked once per import."""
        from ...network.trace import outfall_reaches
        return outfall_reaches(self.net)

    @cached_property
    def drawn(self) -> "EncodedNetwork":
        """The network as the map page fetches it, encoded once per import."""
        from ..networkmap import encode_network
        return encode_network(self.net)


@dataclass(frozen=True)
class CaseTrace:
    case_id: int
    outfall: str | None                   # the case's outfall on the map (None: not on it, or no map)
    why_not: str | None                   # why there is no plan
    visits: list[TraceVisit]
    plan: Plan | None

    @property
    def next_structure(self) -> str | None:
        return self.plan.next_structure if self.plan else None

    @property
    def suspect_structures(self) -> list[str]:
        """The structures at the ends of the suspect pipes (for the map and the packet)."""
        return sorted({x for p in self.suspect_pipes for x in (self.pipe_ends or {}).get(p, ())})

    @property
    def suspect_pipes(self) -> list[str]:
        return sorted(self.plan.suspect_pipes) if self.plan else []

    pipe_ends: dict[str, tuple[str, ...]] | None = None     # suspect pipe -> its structures
    suspect_parcels: tuple[Parcel, ...] = ()                 # the parcels draining to the suspect reach


class TraceDesk:
    def __init__(self, compliance: "ComplianceDesk", folder: Path):
        self.compliance = compliance
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._cached: tuple[float, TownMap] | None = None

    # -- the map --------------------------------------------------------------------------------
    def town_map(self) -> TownMap | None:
        from ...network.store import FILENAME, NetworkStore, has_map
        if not has_map(self.folder):
            return None
        stamp = (self.folder / FILENAME).stat().st_mtime
        with self._lock:
            if self._cached is not None and self._cached[0] == stamp:
                return self._cached[1]
            with NetworkStore(self.folder) as store:
                net = store.load()
                findings = tuple(store.findings())
                doubted = frozenset(f.feature for f in findings if f.kind in DOUBTED and f.feature in net.conveyances)
                areas, parcels = tuple(store.drainage_areas()), tuple(store.parcels())
                last = store.last_import()
            attached = [a for a in areas if a.structure is not None]
            index(net)      # the arrays the walk and the plan read, built with the map once per import
            got = TownMap(net, doubted, areas, parcels, weights(net, Weight.AREA, attached) if attached else None,
                          findings, last)
            self._cached = (stamp, got)
            return got

    def outfall_inventory(self) -> list[MapOutfall] | None:
        """The outfalls of the town's imported map with the registry stations attached (None:
        no map imported): the annual report's outfall inventory."""
        from ...network.monitored import inventory
        m = self.town_map()
        if m is None:
            return None
        reg = self.compliance.registry.outfalls
        return inventory(m.net, [(o.id, o.lat, o.lon) for o in reg],
                         named={o.id: s for o in reg if (s := o.structure)})

    def map_outfall(self, oid: str | None, m: TownMap) -> str | None:
        """The map's structure of a registry outfall: the one the registry names (``structure:``),
        else the outfall of the same id, else by position (network.monitored)."""
        from ...network.monitored import attach
        if not oid:
            return None
        o = next((o for o in self.compliance.registry.outfalls if o.id == oid), None)
        lat, lon = (getattr(o, "lat", None), getattr(o, "lon", None)) if o is not None else (None, None)
        named = getattr(o, "structure", None)
        return attach(m.net, [(oid, lat, lon)], named={oid: named} if named else None)[0].map_id

    # -- reading --------------------------------------------------------------------------------
    def of_case(self, actor: Actor, cid: int) -> CaseTrace:
        actor.require(Permission.READ)
        case = self.compliance.case(actor, cid)
        visits = self.compliance.store.trace_visits(cid, self.compliance.thresholds)
        m = self.town_map()
        if m is None:
            return CaseTrace(cid, None, "no map imported (ms4watch map import)", visits, None)
        outfall = self.map_outfall(case.outfall, m)
        if outfall is None:
            return CaseTrace(cid, None, f"the case's outfall {case.outfall or '(none)'} is not on the town's map",
                             visits, None)
        flow, dry = traces.observations([v for v in visits if v.structure in m.net.structures])
        p = plan(m.net, outfall, flow=flow, no_flow=dry, two_way=sorted(m.doubted), weights=m.weights)
        ends = {c.id: tuple(x for x in (c.upstream, c.downstream) if x) for c in m.net.conveyances.values()
                if c.id in p.suspect_pipes}
        parcels = parcels_draining_to(m.parcels, reach_entries(m.net, p.suspect_pipes, outfall, flow, dry))
        return CaseTrace(cid, outfall, None, visits, p, ends, tuple(parcels))

    def record_layers(self, actor: Actor) -> tuple[list["Layer"], list[str]] | None:
        """The town's IDDE records on its map (``network.records``: outfalls with their
        screenings, cases, trace visits, open cases' suspect reaches) and what could not be
        placed; None without a map."""
        from ...network.records import Records, record_layers
        actor.require(Permission.READ)
        m = self.town_map()
        if m is None:
            return None
        d = self.compliance
        cases = d.cases(actor)
        visits = {c.id: d.store.trace_visits(c.id, d.thresholds) for c in cases}
        reg = d.registry.outfalls
        return record_layers(m.net, Records(cases, visits, [(o.id, o.lat, o.lon) for o in reg],
                                            {o.id: s for o in reg if (s := o.structure)}),
                             tz=d.tz, two_way=m.doubted)

    # -- writing --------------------------------------------------------------------------------
    def record_visit(self, actor: Actor, cid: int, body: TraceVisitIn) -> TraceVisit:
        d = self.compliance

        def work() -> TraceVisit:
            case = d._get(lambda: d.store.case(cid))
            if case.closure is not None:
                raise Conflict(f"case {case.number} is closed ({case.closure.at.date()})")
            d._not_future(body.at, "at")
            m = self.town_map()
            if m is None:
                raise Refused("structure: no map imported: a trace visit is made at a structure of the town's map")
            if body.structure not in m.net.structures:
                raise Refused(f"structure: no structure {body.structure!r} on the town's map")
            outfall = self.map_outfall(case.outfall, m)
            if outfall is None:
                raise Refused(f"structure: the case's outfall {case.outfall or '(none)'} is not on the town's map")
            import networkx as nx
            g = m.net.graph()
            if body.structure != outfall and not nx.has_path(g.to_undirected(as_view=True), body.structure, outfall):
                raise Refused(f"structure: {body.structure} is not connected to outfall {outfall}")
            tests = _tests(body)
            flow = Flow(body.flow)
            kind = m.net.structures[body.structure].kind
            where = f"{kind.value.replace('_', ' ')} {body.structure}" if kind is not StructureKind.JUNCTION \
                else body.structure
            entry = d.store.add_entry(
                cid, kind="tracing", at=body.at, by=body.by, notes=body.notes, location=where,
                flow_observed=flow is Flow.PRESENT, recorded_by=actor.username,
                then=lambda conn, eid: traces.write(conn, eid, body.structure, flow, body.odour, body.colour, tests))
            return next(v for v in d.store.trace_visits(cid, d.thresholds) if v.entry_id == entry.id)
        return d._write(actor, Permission.RECORD_CASE, "case.trace_visit", f"case:{cid}", work,
                        lambda v: f"trace visit at {v.structure}: flow {v.flow.value}"
                                  + (f"; {len(v.tests)} field test(s)" if v.tests else ""))


def _tests(body: TraceVisitIn) -> tuple[FieldTest, ...]:
    out = []
    for ind, value, unit in ((Indicator.AMMONIA, body.ammonia_mg_l, "mg/L"),
                             (Indicator.SURFACTANTS, body.surfactants_mg_l, "mg/L"),
                             (Indicator.FLUORIDE, body.fluoride_mg_l, "mg/L"),
                             (Indicator.POTASSIUM, body.potassium_mg_l, "mg/L"),
                             (Indicator.TEMPERATURE, body.temperature, body.temperature_unit),
                             (Indicator.E_COLI, body.e_coli, body.e_coli_unit)):
        if value is not None:
            out.append(FieldTest(ind, value, unit))
    return tuple(out)


__all__ = ["TraceDesk", "CaseTrace", "TownMap"]
