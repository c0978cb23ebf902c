"""``ms4watch rejected``: what ingest set aside (``rejected.jsonl`` and the store spool's
``rejected`` table in the data directory), listed and filtered, or one record in full."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer

from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="What ingest set aside: messages breaking the contract, oversized, refused by the "
                             "store, conflicting with a stored one.", no_args_is_help=True)
    group.command("list")(list_rejected)
    group.command("show")(show_rejected)
    app.add_typer(group, name="rejected")


def _since(text: str | None) -> datetime | None:
    from ..contract.timeutil import parse_duration, parse_time
    if text is None:
        return None
    try:
        return parse_time(text)
    except ValueError:
        pass
    try:
        return datetime.now(timezone.utc) - parse_duration(text)
    except ValueError:
        raise typer.BadParameter(f"expected a duration (2h, 7d) or a time with an offset "
                                 f"(2026-06-01T00:00:00Z), got {text!r}", param_hint="--since") from None


def list_rejected(
    config: Optional[Path] = config_option(),
    data_dir: Optional[Path] = typer.Option(None, help="The data directory (default: the settings', as for serve)."),
    device: Optional[str] = typer.Option(None, help="Only this device's."),
    reason: Optional[str] = typer.Option(None, help="contract, oversize, store, conflict, or text the reason "
                                                    "contains (e.g. readings[0].time)."),
    since: Optional[str] = typer.Option(None, help="Set aside in the last 2h, 7d…, or since a time "
                                                   "(2026-06-01T00:00:00Z)."),
    limit: int = typer.Option(50, min=1, help="At most this many, newest first."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line, payload included."),
) -> None:
    """List what was set aside, newest first, one line each: id, time, device, reason."""
    from ..ingest.rejected import read_rejected

    settings = settings_or_exit(config, data_dir=data_dir)
    got = read_rejected(settings.data_dir, device=device, reason=reason, since=_since(since), limit=limit)
    for r in got.records:
        if as_json:
            typer.echo(json.dumps(r.to_dict()))
        else:
            when = r.received.strftime("%Y-%m-%d %H:%M:%SZ")
            typer.echo(f"{r.id:>8}  {when}  {r.device or '-':<16} {r.kind:<9} {r.error}")
    shown = len(got.records)
    more = f" (the newest {shown} of {got.matched}; --limit for more)" if got.matched > shown else ""
    bad = f"; {got.unreadable} unreadable lines skipped" if got.unreadable else ""
    where = ", ".join(str(p) for p in got.sources) or f"nothing set aside in {settings.data_dir}"
    typer.echo(f"{got.matched} set aside{more}{bad} ({where})", err=True)


def show_rejected(
    record: str = typer.Argument(..., help="The record's id, as `rejected list` shows it (j12, s3…)."),
    config: Optional[Path] = config_option(),
    data_dir: Optional[Path] = typer.Option(None, help="The data directory (default: the settings')."),
) -> None:
    """Show one record in full: topic, device, epoch and seq, size, reason and the payload kept."""
    from ..ingest.rejected import find_rejected

    settings = settings_or_exit(config, data_dir=data_dir)
    r = find_rejected(settings.data_dir, record)
    if r is None:
        typer.echo(f"error: {record}: no such record in {settings.data_dir} (see `ms4watch rejected list`)", err=True)
        raise typer.Exit(2)
    for k, v in r.to_dict().items():
        if k != "payload":
            typer.echo(f"{k}: {v}")
    if r.payload is not None:
        typer.echo("payload:")
        typer.echo(r.payload)
