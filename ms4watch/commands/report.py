"""``ms4watch report annual --year 2026`` — the MS4 annual report for a permit year, from the
town's records (``compliance.db``, the incident database, the store's calibrations and
readings): a CSV per section, a readable HTML summary whose counts link to those CSVs, and
a PDF, written into ``--out`` (default ``ms4-annual-report-<town>-<year>/``)."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer

from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    report = typer.Typer(help="Reports from the town's records.", no_args_is_help=True)
    app.add_typer(report, name="report")

    @report.command("annual")
    def annual(year: int = typer.Option(..., "--year", min=2000, max=2100,
                                         help="the reporting year: GP-0-24-001's runs 3 January YEAR to 2 January "
                                              "YEAR+1 (the registry's annual_report.year_starts sets another)"),
               town: Optional[str] = typer.Option(None, "--town", help="a coalition's municipality"),
               out: Optional[Path] = typer.Option(None, "--out", help="where to write the files"),
               calendar_year: bool = typer.Option(False, "--calendar-year", help="1 January to 31 December instead"),
               as_of: Optional[datetime] = typer.Option(
                   None, "--as-of", formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M%z"],
                   help="count to this instant, with its UTC offset (default: now; on a demo's records, the "
                        "demo's simulated present, as its workbench counts)"),
               config: Optional[Path] = config_option()) -> None:
        """Write the annual report: <section>.csv for each section, report.html, report.pdf."""
        from ms4watch.compliance import report as rp
        from ms4watch.compliance.report_overrides import ReportOverrides
        from ms4watch.contract.errors import Ms4Error
        from ms4watch.server import open_town
        from ms4watch.workbench.records.inspections import InspectionReports
        from ms4watch.workbench.records.table import connect_workbench_db
        from ms4watch.workbench.services.stations import stations_of

        settings = settings_or_exit(config)
        try:
            t = open_town(settings, town)
        except Ms4Error as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        reg, data_dir = t.registry, t.data_dir
        from ms4watch.demo import simulated_now
        now = as_of or simulated_now(data_dir) or datetime.now(timezone.utc)
        with t:
            compliance = t.open_compliance()
            overrides = ReportOverrides(data_dir / "compliance.db")
            store = t.open_store()
            bench = connect_workbench_db(settings.workbench_db) if settings.workbench_db.is_file() else None
            try:
                r = rp.build(registry=reg, store=compliance, incidents=t.incidents, year=year, now=now,
                             calibrations=store, readings=store, start_md=(1, 1) if calendar_year else None,
                             stations=lambda: stations_of(reg),
                             reports=InspectionReports(bench, threading.RLock()) if bench is not None else None,
                             overrides=overrides, map_outfalls=_map_outfalls(data_dir, reg))
                target = out or Path(f"ms4-annual-report-{reg.municipality}-{year}")
                written = rp.write(r, target)
            finally:
                store.close()
                if bench is not None:
                    bench.close()
                overrides.close()
                compliance.close()
        typer.echo(f"{reg.municipality}, reporting year {year} ({r.start:%Y-%m-%d} to {r.end:%Y-%m-%d}, exclusive)"
                   + (f", counted to {r.as_of:%Y-%m-%d %H:%M %Z}" if r.as_of < r.end else "") + ":")
        typer.echo(f"  {r.permit.id}; permittee {reg.permittee.name or reg.municipality}, SPDES ID "
                   f"{reg.permittee.spdes_id or rp.BLANK}")
        for _, label, n, _, _ in r.counts():
            typer.echo(f"  {label}: {'—' if n is None else n}")
        typer.echo(f"{len(written)} files in {target}/ (report.html, report.pdf, a CSV per section)")


def _map_outfalls(folder: Path, reg):
    """The outfalls of the town's imported storm-sewer map (the inventory), None when none was imported."""
    from ms4watch.network.monitored import inventory
    from ms4watch.network.store import NetworkStore, has_map
    if not has_map(folder):
        return None
    with NetworkStore(folder) as store:
        net = store.load()
    return inventory(net, [(o.id, o.lat, o.lon) for o in reg.outfalls],
                     named={o.id: o.structure for o in reg.outfalls if o.structure})
