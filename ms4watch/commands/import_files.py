"""``ms4watch import FILE…``: readings from loggers already in the ground (HOBOware CSV
exports, HOBOconnect CSV, Campbell TOA5 files, KorEXO, Win-Situ, VuSitu/HydroVu and Solinst exports, and what ``storms``
reads) into the store and/or a readings CSV
for ``replay``; says what was read, in which zone, and which stations the registry does not
know."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ms4watch.contract.errors import Ms4Error

from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_files(
        files: list[Path] = typer.Argument(..., help="HOBOware or HOBOconnect CSV, Campbell TOA5 (.dat), KorEXO "
                                                      "CSV, Win-Situ CSV, VuSitu CSV or HTML, HydroVu CSV, Solinst "
                                                      "CSV, .xle or .lev, readings CSV, tip log, "
                                                      "fixed-interval CSV or USGS RDB files"),
        station: Optional[str] = typer.Option(None, "--station", help="the station the file's readings belong to "
                                                                       "(default: the station the file names)"),
        device: Optional[str] = typer.Option(None, "--device", help="device id to store them under (default "
                                                                     "IMPORT-<format>-<serial or station>)"),
        tz: Optional[str] = typer.Option(None, "--tz", help="zone of a logger clock when the file names none "
                                                            "(default: the registry's)"),
        tip: Optional[str] = typer.Option(None, "--tip", help="depth of one tip of an event logger, e.g. 0.01in"),
        fmt: Optional[str] = typer.Option(None, "--format", help="hoboware | toa5 | korexo | winsitu | vusitu | solinst | "
                                                                  "readings | "
                                                                  "tips | fixed | rdb "
                                                                  "(default: what the header says; a --format it "
                                                                  "contradicts is refused)"),
        date_order: Optional[str] = typer.Option(None, "--date-order", help="mdy | dmy | ymd: the order of a "
                                                 "logger file's dates when the file cannot settle it"),
        out: Optional[Path] = typer.Option(None, "--out", help="also write a readings CSV for `ms4watch replay`"),
        dry_run: bool = typer.Option(False, "--dry-run", help="print per column what would be stored (sensor, "
                                                               "quantity, unit, count, first and last time, min/max); "
                                                               "store and write nothing"),
        no_store: bool = typer.Option(False, "--no-store", help="do not write into the store (with --out)"),
        registry: Optional[Path] = typer.Option(None, "--registry", help="sites.yaml (default: the settings')"),
        store: Optional[str] = typer.Option(None, "--store", help="store URL (default: the settings')"),
        config: Optional[Path] = config_option(),
    ) -> None:
        """Import readings from logger files; stations the registry does not know are left out and named."""
        from ms4watch.alerts.rainfiles import parse_depth
        from ms4watch.contract.registry import load_registry
        from ms4watch.importing import against_store, messages, read_file, summary, write_csv
        from ms4watch.ingest.stores.base import ReadingsSource

        settings = settings_or_exit(config, registry=registry, store=store)
        from ms4watch.ingest.stores import build_store
        try:
            reg = load_registry(settings.require_registry())
            tip_in = parse_depth(tip) if tip else None
            readings_store = None if dry_run or no_store else build_store(settings.store_url)   # a bad URL: before any work
            imported = [read_file(f, reg, fmt=fmt, station=station, device=device, tz=tz, tip_in=tip_in,
                                  date_order=date_order)
                        for f in files]
        except (Ms4Error, OSError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        for imp in imported:
            counts = ", ".join(f"{st} {q} {n}" for (st, q), n in sorted(imp.by_station().items())) or "nothing"
            typer.echo(f"{imp.path}: {imp.format}, times in {imp.tz}: {len(imp.readings)} readings ({counts})")
            for note in imp.notes:
                typer.echo(f"  {note}")
            for col, why in imp.skipped_columns:
                typer.echo(f"  column {col!r} not imported: {why}")
            if imp.repeated:
                typer.echo(f"  {imp.repeated} rows repeat a time with the same value: stored once")
            if imp.conflicts:
                verb = "repeats" if len(imp.conflicts) == 1 else "repeat"
                typer.echo(f"  {_n(len(imp.conflicts), 'row')} {verb} a time with another value, not stored (the "
                           f"first kept): " + "; ".join(c.describe("kept") for c in imp.conflicts[:10])
                           + (" …" if len(imp.conflicts) > 10 else ""))
            if dry_run:
                for column in summary(imp):
                    typer.echo(f"  would store {column.describe()}")
            if imp.unknown:
                which = ", ".join(f"{st} ({n})" for st, n in sorted(imp.unknown.items()))
                typer.echo(f"  {sum(imp.unknown.values())} readings of stations the registry does not know, left "
                           f"out: {which}")
        if dry_run:
            typer.echo("dry run: nothing stored")
            return
        if out is not None:
            typer.echo(f"{write_csv(imported, out)} readings written to {out}")
        if readings_store is None:   # --no-store
            return
        try:
            readings_store.open()
            written = dup = 0
            for imp in imported:
                if isinstance(readings_store, ReadingsSource):
                    imp = against_store(imp, readings_store)
                    _report_store(imp)
                res = readings_store.write(messages(imp))
                written += res.readings_written
                dup += res.duplicate_messages
        except Ms4Error as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        finally:
            readings_store.close()
        typer.echo(f"{written} readings stored in {settings.store_url}"
                   + (f" ({dup} batches were stored already)" if dup else ""))


def _n(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def _report_store(imp) -> None:
    """What the store already held of one file: the same values skipped, other values refused."""
    if imp.already_stored:
        typer.echo(f"{imp.path}:\n  {imp.already_stored} readings already stored with the same value: skipped")
    if imp.store_conflicts:
        typer.echo(f"{imp.path}:\n  {_n(len(imp.store_conflicts), 'reading')} "
                   f"{'conflicts' if len(imp.store_conflicts) == 1 else 'conflict'} with the store (a different "
                   "value at a stored time), not stored: "
                   + "; ".join(c.describe() for c in imp.store_conflicts[:10])
                   + (" …" if len(imp.store_conflicts) > 10 else ""))
