"""Typed values of the storm-sewer network. Units in every name: feet for elevations and
lengths, inches for diameters, degrees (WGS 84) for positions."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class StructureKind(str, Enum):
    OUTFALL = "outfall"
    MANHOLE = "manhole"
    CATCH_BASIN = "catch_basin"
    INLET = "inlet"
    HEADWALL = "headwall"
    JUNCTION = "junction"      # a node whose kind the map does not say (a SWMM junction, a bend)
    STORAGE = "storage"        # a SWMM storage unit, a detention basin


class Weight(str, Enum):
    """What a bisection plan (``bisect.py``) halves."""
    LENGTH = "length"        # pipe length (the default: every map has it)
    INLETS = "inlets"        # catch basins and inlets
    AREA = "area"            # drainage area, square feet


class ConveyanceKind(str, Enum):
    PIPE = "pipe"
    DITCH = "ditch"
    CULVERT = "culvert"
    CHANNEL = "channel"
    ORIFICE = "orifice"        # SWMM links that are not conduits: kept so the network is whole
    WEIR = "weir"
    OUTLET = "outlet"
    PUMP = "pump"


class DirectionSource(str, Enum):
    """Where a conveyance's direction of flow was read from."""
    ATTRIBUTE = "attribute"    # the map's own flow-direction field
    INVERTS = "inverts"        # from the higher invert to the lower
    DRAWING = "drawing"        # the order the line was drawn in (SWMM: from node -> to node)


@dataclass(frozen=True)
class Structure:
    id: str
    kind: StructureKind
    lon: float | None          # WGS 84 degrees; None when the source has no coordinate system
    lat: float | None
    x: float | None = None     # in the source's own coordinates (for a map without a CRS)
    y: float | None = None
    invert_ft: float | None = None
    rim_ft: float | None = None
    receiving_water: str | None = None
    source: str = ""           # file and layer or section, for messages

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a structure needs an id")


@dataclass(frozen=True)
class Conveyance:
    id: str
    kind: ConveyanceKind
    upstream: str | None       # structure ids after directing; None: the end touches no structure
    downstream: str | None
    direction: DirectionSource
    length_ft: float | None
    diameter_in: float | None = None
    material: str | None = None
    upstream_invert_ft: float | None = None
    downstream_invert_ft: float | None = None
    coords: tuple[tuple[float, float], ...] = field(default=(), compare=False)  # lon, lat from up to down
    source: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a conveyance needs an id")


@dataclass(frozen=True)
class Finding:
    """Something the import could not connect or doubts; never a silent drop."""
    kind: str                  # see checks.FindingKind
    feature: str               # the structure or conveyance id (or source feature)
    message: str


@dataclass
class Network:
    """Built once by a reader or the store, then read: :meth:`graph` (and the arrays of
    ``network.index``) are computed on first use."""
    structures: dict[str, Structure] = field(default_factory=dict)
    conveyances: dict[str, Conveyance] = field(default_factory=dict)
    _graph: object = field(default=None, init=False, repr=False, compare=False)
    _index: object = field(default=None, init=False, repr=False, compare=False)   # network/index.py

    def graph(self):
        """A networkx DiGraph: structures as nodes, conveyances as edges in the direction of
        flow (keyed by the conveyance's id in the edge attribute ``id``). Conveyances with an
        unconnected end are left out of the graph (they are reported at import). Parallel
        pipes between one pair of structures keep the shorter as the edge and list all ids."""
        if self._graph is not None:
            return self._graph
        import networkx as nx
        g = nx.DiGraph()
        for s in self.structures.values():
            g.add_node(s.id, kind=s.kind)
        for c in self.conveyances.values():
            if c.upstream is None or c.downstream is None:
                continue
            if g.has_edge(c.upstream, c.downstream):
                e = g.edges[c.upstream, c.downstream]
                e["ids"].append(c.id)
                if (c.length_ft or 0) < (e["length_ft"] or 0):
                    e.update(id=c.id, length_ft=c.length_ft)
                continue
            g.add_edge(c.upstream, c.downstream, id=c.id, ids=[c.id], length_ft=c.length_ft)
        self._graph = g
        return g
