"""``ms4watch demo``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ..logs import json_logs, say


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    days: float = typer.Option(7.0, min=0.01, max=366, help="Simulated days to run."),
    speed: float = typer.Option(40_000.0, min=0, help="Simulated seconds per wall second (0: as fast as possible)."),
    start: str = typer.Option("2026-06-01T00:00:00-04:00", help="Simulated start time (ISO 8601 with offset)."),
    seed: int = typer.Option(7, help="Seed of the simulated weather and sensor noise."),
    workdir: Path = typer.Option(Path("ms4watch-demo"), help="Where spools, store, incidents and notifications.txt go (cleared each run)."),
    configs: Optional[Path] = typer.Option(None, help="Folder with sites.yaml and LOG-*.yaml (default: the bundled demo town)."),
    broker: Optional[str] = typer.Option(None, help="Use this MQTT broker (mqtt://HOST:PORT) instead of the embedded one."),
    store: Optional[str] = typer.Option(None, help="Store URL (default sqlite:///WORKDIR/store.db)."),
    notify: list[str] = typer.Option([], help="Deliver notifications here (apprise-style URL, repeatable)."),
    summary_json: Optional[Path] = typer.Option(None, help="Write the end summary as JSON here."),
    http: str = typer.Option("127.0.0.1:0", help="Where the workbench listens: HOST:PORT (port 0: a free one), "
                                                 "or 'off'."),
    serve: bool = typer.Option(False, "--serve", help="Keep the workbench up after the simulated days, until Ctrl-C."),
) -> None:
    """Run a simulated municipality end to end: loggers → MQTT → ingest → store → alerts.

    Brookhollow (a made-up town) has two rain gauges, three outfalls with flow meters and a
    turbidity pair below a construction site. A week of weather brings a qualifying storm,
    a dry spell with an illicit discharge, an approved hydrant flush and a smaller storm.
    The SMO's workbench runs meanwhile: its URL and a demo login are printed.
    """
    from ..demo import Demo, DemoOptions, parse_start, write_summary

    from rich.console import Console          # here, not at the top: other commands start sooner
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    as_json = json_logs()   # --log-format json: every line one JSON object, no progress bar or table
    console = Console(quiet=as_json)
    from pydantic import ValidationError

    from ..settings import HttpSettings
    try:
        HttpSettings(listen=http)
    except ValidationError as e:
        raise typer.BadParameter(e.errors()[0]["msg"].removeprefix("Value error, "), param_hint="--http") from None
    try:
        options = DemoOptions(days=days, speed=speed, start=parse_start(start), seed=seed, workdir=workdir,
                              configs=configs, broker_url=broker, store_url=store, notify_urls=list(notify),
                              http=http, serve=serve)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    with Progress(TextColumn("[bold]simulated[/] {task.fields[day]}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("sim", total=1.0, day="day 0.0")

        def on_progress(done_ns: float, total_ns: float) -> None:
            progress.update(task, completed=done_ns / total_ns, day=f"day {done_ns / 86400e9:4.1f}")

        try:
            report = say if as_json else lambda line: console.print(line, highlight=False, soft_wrap=True)
            summary = Demo(options, report=report, progress=on_progress).run()
        except Ms4Error as e:
            if as_json:
                say(f"error: {e}", err=True)
            else:
                console.print(f"[red]error:[/] {e}")
            raise typer.Exit(2) from None
    if as_json:    # the summary as one log line, its figures as fields
        d = summary.as_dict()
        logging.getLogger("ms4watch.demo").info(
            "demo: %.1f simulated days in %.1f s", summary.simulated_days, summary.wall_s,
            extra={k: d[k] for k in ("settings_file", "devices", "readings_taken", "readings_published", "readings_stored",
                                     "duplicate_messages", "rejected_messages", "alerts_by_kind") if k in d})
        if summary_json:
            write_summary(summary, summary_json)
        if summary.readings_stored != summary.readings_published:
            say("error: stored != published", err=True)
            raise typer.Exit(1)
        return
    table = Table(title=f"ms4watch demo — {summary.simulated_days:.1f} simulated days in {summary.wall_s:.1f} s",
                  show_header=False)
    d = summary.as_dict()
    for key in ("devices", "readings_taken", "readings_published", "readings_stored",
                "duplicate_messages", "rejected_messages"):
        table.add_row(key.replace("_", " "), str(d[key]))
    table.add_row("storms", ", ".join(f"{s.get('gauge')} {float(s.get('depth_in') or 0):.2f} in" for s in summary.storms) or "none")
    table.add_row("alerts by kind", alerts_text(d["alerts_by_kind"]))
    console.print(table)
    if summary_json:
        write_summary(summary, summary_json)
        console.print(f"summary written to {summary_json}")
    if summary.settings_file:
        year = options.start.year
        for line in (f"The demo town's records stay in {workdir}/. To work on them from this shell:",
                     f"  export MS4WATCH_CONFIG={summary.settings_file}",
                     "  ms4watch incidents list",
                     f"  ms4watch report annual --year {year} --out annual-{year}",
                     "  ms4watch users add viewer1 --role viewer      # asks for a password"):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    if summary.readings_stored != summary.readings_published:
        console.print("[red]stored != published[/]")
        raise typer.Exit(1)


def alerts_text(by_kind: dict[str, int]) -> str:
    """``dry-weather flow: 2, inspection due: 6``: each kind by its name (alerts/kinds), as the pages say it."""
    from ..alerts.kinds import spec_for
    return ", ".join(f"{spec_for(k).name}: {n}" for k, n in by_kind.items()) or "none"
