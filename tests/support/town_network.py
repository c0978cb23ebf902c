"""A small storm-sewer network drawn by hand around the workbench registry's outfall OF-12
(Main St, 42.8161 N 73.9452 W), stored where the workbench reads the town's map.

    OF-12 <-P1 100- MH-1 <-P2 100- MH-2 <-P3 100- MH-3 <-P4 100- MH-4
                                    ^
                                    +--P5 200-- CB-1

Total 600 ft. Worked by hand: the first structure to open is MH-2 (drains P3 P4 P5, 400 ft;
MH-1 drains 500, MH-3 100: 400 is nearest half). Flow at MH-2 leaves P3 P4 P5 (400 ft) and
names MH-3 (100 ft; CB-1 and MH-4 drain no pipe). No flow at MH-3 then leaves P3 and P5:
no structure splits them, so the crew walks them."""

from __future__ import annotations

from pathlib import Path

from ms4watch.network.model import Conveyance, ConveyanceKind, DirectionSource, Network, Structure, StructureKind
from ms4watch.network.store import NetworkStore

# position of each structure, degrees: a few hundred feet apart, north-east of the outfall
PLACES = {"OF-12": (42.8161, -73.9452), "MH-1": (42.8164, -73.9449), "MH-2": (42.8167, -73.9446),
          "MH-3": (42.8170, -73.9443), "MH-4": (42.8173, -73.9440), "CB-1": (42.8164, -73.9440)}
PIPES = [("P1", "MH-1", "OF-12", 100), ("P2", "MH-2", "MH-1", 100), ("P3", "MH-3", "MH-2", 100),
         ("P4", "MH-4", "MH-3", 100), ("P5", "CB-1", "MH-2", 200)]


def main_st_network() -> Network:
    n = Network()
    for sid, (lat, lon) in PLACES.items():
        kind = StructureKind.OUTFALL if sid.startswith("OF") else \
            StructureKind.CATCH_BASIN if sid.startswith("CB") else StructureKind.MANHOLE
        n.structures[sid] = Structure(sid, kind, lon, lat, receiving_water="Mohawk River" if kind is
                                      StructureKind.OUTFALL else None)
    for pid, up, down, ft in PIPES:
        coords = ((PLACES[up][1], PLACES[up][0]), (PLACES[down][1], PLACES[down][0]))
        n.conveyances[pid] = Conveyance(pid, ConveyanceKind.PIPE, up, down, DirectionSource.DRAWING, ft,
                                        diameter_in=12, coords=coords)
    return n


def store_network(folder: Path, net: Network | None = None, findings: list | None = None) -> None:
    with NetworkStore(folder) as store:
        store.replace(net or main_st_network(), findings or [], "hand-drawn test network")


def main_st_reaches(registry_yaml: str | None = None):
    """The construction sites of the notification tests' registry (``notify_peers.REGISTRY_YAML``:
    CS-7, told to drain to CB-1) on the Main St network: CS-7 reaches OF-12 (Mohawk River)."""
    from ms4watch.network.sites import site_reaches
    from tests.support.notify_peers import REGISTRY_YAML, registry
    reg = registry((registry_yaml or REGISTRY_YAML).replace("active_from: 2026-01-01}",
                                                            "active_from: 2026-01-01, drains_to: [CB-1]}"))
    return site_reaches(main_st_network(), reg.construction_sites, reg.outfalls, version="main-st")
