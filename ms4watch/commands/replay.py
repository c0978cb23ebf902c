"""``ms4watch replay``: run the alert rules over a readings CSV and write events.jsonl."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ms4watch.contract.errors import ConfigValueError, Ms4Error


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay(
        registry: Path = typer.Option(..., "--registry", help="sites.yaml of the municipality"),
        readings: Path = typer.Option(..., "--readings", help="readings CSV (time,station,quantity,value,unit)"),
        out: Path = typer.Option(..., "--out", help="events.jsonl to write"),
        now: Optional[str] = typer.Option(None, "--now", help="judge open episodes at this time (default: last reading)"),
        inspections: Optional[Path] = typer.Option(None, "--inspections",
                                                   help="inspections CSV (site,time,inspector,note) closing inspection items"),
        approvals: Optional[Path] = typer.Option(None, "--approvals",
                                                 help="approved discharges and exempt flows recorded on the workbench: "
                                                      "its approvals.csv export, or DATA_DIR/workbench.db itself"),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="progress bar"),
        corrections: Optional[Path] = typer.Option(
            None, "--corrections", help="corrections database (the town's corrections.db: DATA_DIR, or "
                                        "DATA_DIR/<municipality> in a coalition): run the rules on values "
                                        "corrected for fouling and drift; every event then says values: corrected"),
    ) -> None:
        """Replay history through the alert rules (same events as the streaming engine)."""
        from ms4watch.alerts.replay import replay_files
        from ms4watch.contract.registry import load_registry
        from ms4watch.contract.timeutil import parse_time, to_ns

        try:
            now_ns = to_ns(parse_time(now)) if now else None
            if corrections is not None and not corrections.is_file():
                raise ConfigValueError(f"--corrections {corrections}: no such file")
            reg = load_registry(registry)
            csv = None
            if approvals is not None and _is_sqlite(approvals):
                from ms4watch.workbench.records import load_suppressions, with_recorded
                reg = with_recorded(reg, load_suppressions(approvals, reg.municipality))
            else:
                csv = approvals
            n, problems, unknown = replay_files(reg, readings, out, show_progress=progress, now_ns=now_ns,
                                                inspections=inspections, corrections=corrections,
                                                suppressions=csv)
        except (Ms4Error, OSError) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        for line, field, msg in problems[:20]:
            typer.echo(f"{readings}:{line}: {field}: {msg} (row left out)", err=True)
        if len(problems) > 20:
            typer.echo(f"... and {len(problems) - 20} more rows left out", err=True)
        if unknown:
            total = sum(unknown.values())
            which = ", ".join(f"{st} ({c})" for st, c in list(unknown.items())[:20])
            more = f" and {len(unknown) - 20} more stations" if len(unknown) > 20 else ""
            typer.echo(f"{readings}: {total} readings belonged to stations {registry} does not know and took part in "
                       f"no rule: {which}{more}", err=True)
        typer.echo(f"{n} events written to {out}", err=True)


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
