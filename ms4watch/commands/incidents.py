"""``ms4watch incidents list|show|ack|resolve|inspected`` — incidents for a person at a terminal.

Opens the town the server's settings name (``--config``, ``MS4WATCH_*``; ``--town`` in a
coalition) through the composition root's :func:`~ms4watch.server.open_town`, and changes
incidents through its incident service, as the workbench does; ``--db`` names another
incident database (a copy). It runs beside a live server: the server notices the commit at
its next clock tick (an acknowledgement here stops its escalation; an inspection closes the
engine's items too). Times are shown in the municipality's time zone, as emails and SMS show them.
"""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from ms4watch.contract.errors import Ms4Error
from ms4watch.contract.timeutil import parse_time

from ._settings import config_option, settings_or_exit

if TYPE_CHECKING:   # imported when a command runs: every other command starts without them
    from ms4watch.server import TownRecords


def _db_option() -> Any:
    return typer.Option(None, "--db", help="Incident database (default: the town's incidents.db in DATA_DIR).")


def _town_option() -> Any:
    return typer.Option(None, "--town", help="Which municipality, when the settings name a coalition's registries.")


def _open(config: Optional[Path], db: Optional[Path], town: Optional[str]) -> "TownRecords":
    """The town's records through the root (one line and exit 2 when the settings cannot name them)."""
    from ms4watch.server import open_town
    settings = settings_or_exit(config)
    try:
        return open_town(settings, town, incidents_db=db)
    except Ms4Error as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None


def _deadline(inc, tz: tzinfo) -> str:
    """An incident's deadline as every channel names it (contract/duetext.py): a day for a period of days."""
    from ms4watch.alerts.incidents.due import incident_due
    from ms4watch.contract import duetext
    due = incident_due(inc.kind, inc.deadline, inc.event, getattr(tz, "key", "UTC"))
    return duetext.short(due) if due is not None else _t(inc.deadline, tz)


def _t(dt: datetime | None, tz: tzinfo = timezone.utc) -> str:
    if not dt:
        return ""
    local = dt.astimezone(tz)
    return local.strftime("%Y-%m-%d %H:%M") + ("Z" if tz is timezone.utc else local.strftime(" %Z"))


def _fail(e: Exception) -> None:
    typer.echo(f"error: {e}", err=True)
    raise typer.Exit(1)


def _list(t: "TownRecords", states: list[Any], limit: int) -> None:
    from ms4watch.alerts.kinds import spec_for

    tz, incidents = t.registry.tz, t.incidents
    table = Table("id", "code", "state", "kind", "subject", "since", "ended", "deadline", "by", "notifications")
    for inc in incidents.list(states, limit=limit):
        counts: dict[str, int] = {}
        for r in incidents.notifications(inc.id):
            counts[r.status] = counts.get(r.status, 0) + 1
        who = inc.acknowledged_by or inc.resolved_by or ""
        table.add_row(str(inc.id), inc.code, inc.state.value + (" (suppressed)" if inc.suppressed else ""),
                      spec_for(inc.kind).name, inc.subject, _t(inc.start, tz), _t(inc.end, tz), _deadline(inc, tz), who,
                      " ".join(f"{k}:{v}" for k, v in sorted(counts.items())))
    Console(width=None if Console().is_terminal else 200).print(table)


def _show(t: "TownRecords", ref: str) -> None:
    tz, incidents = t.registry.tz, t.incidents
    try:
        inc = incidents.find(ref)
    except Ms4Error as e:   # IncidentError and the rest of ours
        _fail(e)
        return
    from ms4watch.alerts.kinds import spec_for

    typer.echo(f"#{inc.id} {inc.code} {inc.state.value} {spec_for(inc.kind).name} {inc.subject} since {_t(inc.start, tz)}"
               + (f" ended {_t(inc.end, tz)}" if inc.end else "")
               + (f" deadline {_deadline(inc, tz)}" if inc.deadline else ""))
    if inc.suppressed:
        typer.echo(f"suppressed: {inc.suppressed}")
    typer.echo("audit:")
    for a in incidents.audit(inc.id):
        typer.echo(f"  {_t(a.at, tz)}  {a.action:<12} {a.who} via {a.how}" + (f": {a.note}" if a.note else ""))
    typer.echo("notifications:")
    for r in incidents.notifications(inc.id):
        typer.echo(f"  {r.stage:<10} {r.channel:<7} {r.recipient.name:<24} {r.status:<9} attempts={r.attempts}"
                   + (f"  {r.last_error}" if r.last_error else ""))


def register(app: typer.Typer) -> None:
    inc_app = typer.Typer(help="Incidents: list, acknowledge, resolve, record inspections.", no_args_is_help=True)
    app.add_typer(inc_app, name="incidents")

    @inc_app.command("list")
    def list_(db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
              town: Optional[str] = _town_option(),
              all_: bool = typer.Option(False, "--all", help="Include resolved incidents."),
              limit: int = typer.Option(100, "--limit", min=1)) -> None:
        """Open and acknowledged incidents (newest first), with their notifications."""
        from ms4watch.alerts.incidents import State
        with _open(config, db, town) as t:
            _list(t, list(State) if all_ else [State.OPEN, State.ACKNOWLEDGED], limit)

    @inc_app.command("show")
    def show(ref: str = typer.Argument(..., help="Incident id or acknowledge code."),
             db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
             town: Optional[str] = _town_option()) -> None:
        """One incident with its audit log and notifications."""
        with _open(config, db, town) as t:
            _show(t, ref)

    @inc_app.command("ack")
    def ack(ref: str = typer.Argument(..., help="Incident id or acknowledge code."),
            db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
            town: Optional[str] = _town_option(),
            by: str = typer.Option(..., "--by", help="Who acknowledges."),
            note: Optional[str] = typer.Option(None, "--note")) -> None:
        """Acknowledge: stops the escalation to the deputy."""
        try:
            with _open(config, db, town) as t:
                inc = t.incidents.acknowledge(ref, by=by, how="cli", note=note)
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        typer.echo(f"#{inc.id} {inc.code} {inc.state.value} by {inc.acknowledged_by}")

    @inc_app.command("resolve")
    def resolve(ref: str = typer.Argument(..., help="Incident id or acknowledge code."),
                db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
                town: Optional[str] = _town_option(),
                by: str = typer.Option(..., "--by", help="Who resolves."),
                note: str = typer.Option(..., "--note", help="Why (kept in the audit log).")) -> None:
        """Resolve by hand, with a note. For an inspection item this records the inspection."""
        try:
            with _open(config, db, town) as t:
                inc = t.incidents.resolve(ref, by=by, how="cli", note=note)
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        typer.echo(f"#{inc.id} {inc.code} resolved ({inc.resolution}) by {inc.resolved_by}")

    @inc_app.command("inspected")
    def inspected(site: str = typer.Argument(..., help="Construction site id."),
                  db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
                  town: Optional[str] = _town_option(),
                  by: str = typer.Option(..., "--by", help="Inspector."),
                  at: Optional[str] = typer.Option(None, "--at", help="When (ISO 8601 with offset); default now."),
                  note: Optional[str] = typer.Option(None, "--note")) -> None:
        """Record an inspection: resolves the site's open inspection items due from storms before it."""
        try:
            when = parse_time(at) if at else datetime.now(timezone.utc)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--at") from None
        try:
            with _open(config, db, town) as t:
                done = t.incidents.record_inspection(site, at=when, by=by, note=note, how="cli")
                tz = t.registry.tz
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        if not done:
            typer.echo(f"no open inspection item for {site} from a storm before {_t(when, tz)}")
        for inc in done:
            typer.echo(f"#{inc.id} {inc.code} resolved: inspection of {site} at {_t(when, tz)}")
