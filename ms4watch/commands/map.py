"""``ms4watch map import|show|trace`` — the town's storm-sewer map at a terminal.

Kept in ``network.db`` in the town's data folder (``DATA_DIR``, or ``DATA_DIR/<town>/`` in
a coalition) of the same settings the server reads (``--config``, ``MS4WATCH_*``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..network.model import Weight
from ._settings import config_option, settings_or_exit

ACRE_SQFT = 43_560.0

if TYPE_CHECKING:
    from ..settings import Settings

app = typer.Typer(help="The town's storm-sewer map: import it, see what it holds, trace it.", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="map")


def _folder(settings: "Settings", municipality: Optional[str]) -> Path:
    if municipality:
        return settings.town_data_dir(municipality)
    if settings.coalition:
        raise typer.BadParameter("the settings name a coalition's registries; say which town: --municipality",
                                 param_hint="--municipality")
    return settings.data_dir


def _fail(e: Exception) -> None:
    typer.echo(f"error: {e}", err=True)
    raise typer.Exit(2)


def _ft(v: float | None) -> str:
    return "?" if v is None else f"{v:,.0f} ft"


MUNICIPALITY = typer.Option(None, "--municipality", help="Town (a coalition's server); default the one town.")
DATA_DIR = typer.Option(None, "--data-dir", help="Data folder (default the settings' data_dir).")


@app.command("import")
def import_(
    source: Path = typer.Argument(..., help="a mapping file (.yaml) naming the town's layers, or an EPA SWMM .inp"),
    crs: Optional[str] = typer.Option(None, "--crs", help="the coordinate system of a SWMM model's coordinates, "
                                                          "e.g. EPSG:2263 (SWMM files do not say)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="read and check, keep nothing"),
    municipality: Optional[str] = MUNICIPALITY,
    data_dir: Optional[Path] = DATA_DIR,
    config: Optional[Path] = config_option(),
) -> None:
    """Read the map, print what was read and what could not be connected, keep it."""
    from ..contract.errors import Ms4Error
    from ..network.importer import import_map
    from ..network.store import NetworkStore
    try:
        got = import_map(source, crs)
    except Ms4Error as e:
        _fail(e)
    net = got.network
    from ..network.build import IMPLIED
    kinds: dict[str, int] = {}
    implied = 0
    for s in net.structures.values():
        if s.source == IMPLIED:
            implied += 1
            continue
        kinds[s.kind.value] = kinds.get(s.kind.value, 0) + 1
    links: dict[str, int] = {}
    for c in net.conveyances.values():
        links[c.kind.value] = links.get(c.kind.value, 0) + 1
    typer.echo(f"read {got.structures_read} structures ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}) "
               f"and {got.lines_read} conveyances from {source}")
    if links:
        typer.echo(f"conveyances by kind: {', '.join(f'{n} {k}' for k, n in sorted(links.items()))}")
    if implied:
        typer.echo(f"joined pipe ends at {implied} implied junctions (no structure drawn where they meet)")
    typer.echo(f"kept every feature read: {got.structures_read} structures and {got.lines_read} conveyances")
    connected = sum(1 for c in net.conveyances.values() if c.upstream and c.downstream)
    lineless = {f.feature for f in got.findings if f.kind == "no_geometry"}
    loose = [c for c in net.conveyances.values() if not (c.upstream and c.downstream)]
    no_line = sum(1 for c in loose if c.id in lineless and not c.coords)
    why = [f"{n} {label}" for n, label in ((no_line, "drawn with no line"),
                                           (len(loose) - no_line, "with an end at no structure")) if n]
    typer.echo(f"connected {connected} of {len(net.conveyances)} conveyances at both ends"
               + (f"; not: {', '.join(why)}" if why else ""))
    if not got.georeferenced:
        typer.echo("no coordinate system: positions kept in the model's own coordinates (give --crs to place them)")
    for f in got.findings:
        typer.echo(f"  {f.kind}: {f.message}")
    counts: dict[str, int] = {}
    for f in got.findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    if got.areas or got.parcels:
        by: dict[str | None, int] = {}
        for p in got.parcels:
            by[p.how] = by.get(p.how, 0) + 1
        placed = len(got.parcels) - by.get(None, 0)
        parcels = (f" and {len(got.parcels)} parcels ({placed} placed: {by.get('drainage_area', 0)} by "
                   f"drainage area, {by.get('nearest_inlet', 0)} by the nearest inlet)")
        typer.echo(f"read {len(got.areas)} drainage areas ({sum(1 for a in got.areas if a.structure)} drain to a "
                   f"structure){parcels if got.parcels else ''}")
    typer.echo(f"{len(got.findings)} findings ({', '.join(f'{n} {k}' for k, n in sorted(counts.items()))})"
               if got.findings else "no findings")
    if dry_run:
        return
    settings = settings_or_exit(config, data_dir=data_dir)
    try:
        with NetworkStore(_folder(settings, municipality)) as store:
            first = store.last_import() is None
            changes = store.replace(net, got.findings, str(source))
            land = store.replace_areas(got.areas, got.parcels)      # drainage areas and parcels
            changes.added += land.added
            changes.removed += land.removed
            changes.changed += land.changed
            path = store.path
    except Ms4Error as e:
        _fail(e)
    if not first:        # on a first import every feature is new: the counts say it
        for label, items in (("added", changes.added), ("removed", changes.removed), ("changed", changes.changed)):
            for item in items:
                typer.echo(f"  {label}: {item}")
    typer.echo(f"kept in {path}: {len(changes.added)} added, {len(changes.removed)} removed, "
               f"{len(changes.changed)} changes")


@app.command("show")
def show(municipality: Optional[str] = MUNICIPALITY, data_dir: Optional[Path] = DATA_DIR,
         config: Optional[Path] = config_option()) -> None:
    """The kept network: outfalls, counts, the last import's findings."""
    from ..network.model import StructureKind
    from ..network.store import NetworkStore
    from ..network.trace import Way, total_length_ft, walk
    settings = settings_or_exit(config, data_dir=data_dir)
    with NetworkStore(_folder(settings, municipality)) as store:
        last, net, findings = store.last_import(), store.load(), store.findings()
    if last is None:
        typer.echo("no map imported yet (ms4watch map import)")
        raise typer.Exit(1)
    typer.echo(f"imported {last['at']} from {last['source']}: {last['structures']} structures, "
               f"{last['conveyances']} conveyances, {last['findings']} findings")
    for s in sorted((s for s in net.structures.values() if s.kind is StructureKind.OUTFALL), key=lambda s: s.id):
        up = walk(net, s.id, Way.UP)
        typer.echo(f"outfall {s.id} to {s.receiving_water or '(no receiving water)'}: {len(up) - 1} structures "
                   f"upstream, {_ft(total_length_ft(up))} of pipe")
    registry = _registry(settings, municipality)
    if registry is not None:
        from ..alerts.kinds.runoff import site_words
        from ..network.monitored import How, attach
        from ..network.sites import site_reaches
        for a in attach(net, [(o.id, o.lat, o.lon) for o in registry.outfalls],
                        named={o.id: o.structure for o in registry.outfalls if o.structure}):
            where = {How.NAMED: f"on the map at {a.map_id} (named in the registry)",
                     How.UNKNOWN_STRUCTURE: f"the registry names {a.named}, not on the map",
                     How.ID: f"on the map as {a.map_id}",
                     How.POSITION: f"on the map as {a.map_id} ({_ft(a.distance_ft)} away; ids differ)",
                     How.MISSING: "not on the map"}[a.how]
            typer.echo(f"monitored outfall {a.registry_id}: {where}")
        # a site's runoff in the words its alerts use (alerts/kinds/runoff.py)
        reaches = site_reaches(net, registry.construction_sites, registry.outfalls, version="show")
        for c in registry.construction_sites:
            reach = reaches.of(c.id)
            if reach is not None:
                typer.echo(f"construction site {c.id}: {site_words(reach, located=c.located)}")
    for f in findings:
        typer.echo(f"  {f.kind}: {f.message}")


def _registry(settings: "Settings", municipality: Optional[str]):
    """The town's registry when the settings name one (its monitored outfalls), else None."""
    from ..contract.errors import Ms4Error
    from ..contract.registry import load_registry
    paths = list(settings.registries) or ([settings.registry] if settings.registry else [])
    for path in paths:
        try:
            reg = load_registry(path)
        except (Ms4Error, OSError) as e:
            _fail(e)
        if municipality is None or reg.municipality == municipality:
            return reg
    return None


def _imported(settings, municipality: Optional[str]):
    """The town's kept network; exits 1 with a one-line reason when no map was imported."""
    return _imported_with_areas(settings, municipality)[0]


def _imported_with_areas(settings, municipality: Optional[str]):
    """The town's kept network, its drainage areas and its parcels; exits 1 when no map was imported."""
    from ..network.store import NetworkStore
    with NetworkStore(_folder(settings, municipality)) as store:
        if store.last_import() is None:
            typer.echo("no map imported yet (ms4watch map import)")
            raise typer.Exit(1)
        return store.load(), store.drainage_areas(), store.parcels()


def _echo_parcels(label: str, parcels: list) -> None:
    """The parcels draining to a trace or a suspect reach (when a parcel layer was imported)."""
    if parcels:
        typer.echo(f"parcels draining to {label}: {len(parcels)}: "
                   + ", ".join(f"{p.id} ({p.structure})" for p in parcels))


@app.command("trace")
def trace(structure: str = typer.Argument(..., help="an outfall (or any structure) id"),
          down: bool = typer.Option(False, "--down", help="downstream to the outfall instead of upstream"),
          municipality: Optional[str] = MUNICIPALITY, data_dir: Optional[Path] = DATA_DIR,
          config: Optional[Path] = config_option()) -> None:
    """The structures upstream of an outfall in the order a crew walks them (or downstream of a structure)."""
    from ..network.areas import parcels_draining_to
    from ..network.errors import NetworkError
    from ..network.trace import Way, total_length_ft, walk
    net, _, parcels = _imported_with_areas(settings_or_exit(config, data_dir=data_dir), municipality)
    try:
        steps = walk(net, structure, Way.DOWN if down else Way.UP)
    except NetworkError as e:
        _fail(e)
    typer.echo(f"{'downstream' if down else 'upstream'} of {structure}: {len(steps) - 1} structures, "
               f"{_ft(total_length_ft(steps))} of pipe")
    typer.echo(f"{'#':>3}  {'branch':<8} {'structure':<14} {'kind':<12} {'via':<10} {'from':<12} "
               f"{'pipe':>9} {'from start':>11}")
    for s in steps:
        typer.echo(f"{s.order:>3}  {s.branch:<8} {s.structure:<14} {s.kind.value:<12} {s.via or '':<10} "
                   f"{s.from_structure or '':<12} {_ft(s.pipe_length_ft) if s.via else '':>9} "
                   f"{_ft(s.distance_ft):>11}")
    if not down:
        _echo_parcels("it", parcels_draining_to(parcels, {s.structure for s in steps}))


@app.command("export")
def export_(out: Path = typer.Argument(..., help="a new file: .geojson (one file per layer), .gpkg, .kml, .shp…"),
            outfalls: bool = typer.Option(False, "--outfalls", help="the outfalls only"),
            records: bool = typer.Option(False, "--records", help="and the town's IDDE records: outfalls with their "
                                         "screenings, cases, trace visits, open cases' suspect reaches"),
            municipality: Optional[str] = MUNICIPALITY, data_dir: Optional[Path] = DATA_DIR,
            config: Optional[Path] = config_option()) -> None:
    """The kept network as GIS layers in WGS 84 (structures and conveyances), with --records
    the town's cases, trace visits and screenings on it."""
    from ..contract.errors import Ms4Error
    from ..network.export import export
    settings = settings_or_exit(config, data_dir=data_dir)
    net = _imported(settings, municipality)
    try:
        if records:
            written, unplaced = _export_records(settings, municipality, net, out, outfalls)
        else:
            written, unplaced = export(net, out, outfalls_only=outfalls), []
    except Ms4Error as e:
        _fail(e)
    for path in written:
        typer.echo(f"wrote {path}")
    for line in unplaced:
        typer.echo(f"not on the map: {line}")


def _export_records(settings: "Settings", municipality: Optional[str], net, out: Path,
                    outfalls_only: bool) -> tuple[list[Path], list[str]]:
    """The network's layers and the records' (network.records), the town's compliance records
    opened as ``ms4watch report`` opens them; the files written and what could not be placed."""
    from ..compliance.labs import DEFAULT_THRESHOLDS, load_thresholds
    from ..network.checks import DOUBTED
    from ..network.records import Records, export_records
    from ..network.store import NetworkStore
    from ..server import open_town
    with NetworkStore(_folder(settings, municipality)) as ns:
        doubted = {f.feature for f in ns.findings() if f.kind in DOUBTED}
    with open_town(settings, municipality) as town:
        p = town.data_dir / "screening-thresholds.yaml"         # as the workbench judges field tests
        thresholds = load_thresholds(p) if p.exists() else DEFAULT_THRESHOLDS
        store = town.open_compliance()
        try:
            cases = store.cases()
            visits = {c.id: store.trace_visits(c.id, thresholds) for c in cases}
        finally:
            store.close()
        reg = town.registry
        got = export_records(net, Records(cases, visits, [(o.id, o.lat, o.lon) for o in reg.outfalls],
                                          {o.id: o.structure for o in reg.outfalls if o.structure}),
                             out, tz=reg.tz, two_way=doubted, with_network=True, outfalls_only=outfalls_only)
    return got.written, got.unplaced


@app.command("bisect")
def bisect(outfall: str = typer.Argument(..., help="the outfall where the dry-weather flow was found"),
           flow: list[str] = typer.Option([], "--flow", help="a structure opened where the flow was seen (repeat)"),
           no_flow: list[str] = typer.Option([], "--no-flow", help="a structure opened and found dry (repeat)"),
           by: Weight = typer.Option(Weight.LENGTH, "--by", help="what to halve: the pipe length, the catch "
                                     "basins and inlets, or the drainage area (of an imported drainage_areas layer)"),
           municipality: Optional[str] = MUNICIPALITY, data_dir: Optional[Path] = DATA_DIR,
           config: Optional[Path] = config_option()) -> None:
    """The next structure to open: the one that halves the pipe length (or --by) still suspect."""
    from ..network.areas import parcels_draining_to, reach_entries
    from ..network.bisect import plan, weights
    from ..network.errors import NetworkError
    net, areas, parcels = _imported_with_areas(settings_or_exit(config, data_dir=data_dir), municipality)
    try:
        p = plan(net, outfall, flow, no_flow, weights=weights(net, by, areas))
    except NetworkError as e:
        _fail(e)
    typer.echo(f"suspect: {len(p.suspect_pipes)} pipes, {_ft(p.suspect_length_ft)}: {', '.join(sorted(p.suspect_pipes))}")
    if p.next_structure is None:
        typer.echo("no structure splits it further: walk these pipes")
    else:
        share, part, whole = "", p.next_splits_weight, p.suspect_weight
        if part is None or whole is None:
            pass
        elif by is Weight.AREA:
            share = f"; {part / ACRE_SQFT:,.2f} of the {whole / ACRE_SQFT:,.2f} acres of drainage area"
        elif by is Weight.INLETS:
            share = f"; {part:g} of the {whole:g} catch basins and inlets"
        typer.echo(f"open next: {p.next_structure} ({_ft(p.next_splits_ft)} of the suspect pipe drains to it{share})")
    _echo_parcels("the suspect reach", parcels_draining_to(
        parcels, reach_entries(net, p.suspect_pipes, outfall, flow, no_flow)))
