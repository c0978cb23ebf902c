"""``ms4watch incidents list|show|ack|resolve|inspected`` — incidents for a person at a terminal.

Works on the incident database directly — ``DATA_DIR/incidents.db`` of the same settings
the server reads (``--config``, ``MS4WATCH_*``), or ``--db`` — so it runs beside a live
server: an acknowledgement here stops the server's escalation. Times are shown in the
municipality's time zone (from the registry in the settings), as emails and SMS show them.
"""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.table import Table

from ms4watch.contract.errors import Ms4Error
from ms4watch.contract.timeutil import parse_time

from ._settings import config_option, settings_or_exit

if TYPE_CHECKING:   # imported when a command runs: every other command starts without them
    from ms4watch.alerts.delivery.queue import DeliveryQueue
    from ms4watch.alerts.incidents import IncidentStore

class _Where:
    """The database and the time zone the settings name; ``--db`` overrides the database."""

    def __init__(self, config: Optional[Path], db: Optional[Path]):
        self.config, self.db_override = config, db
        self._tz: tzinfo | None = None

    def settings(self):
        return settings_or_exit(self.config)

    @property
    def db(self) -> Path:
        if self.db_override:
            return self.db_override
        settings = self.settings()
        if settings.coalition:
            raise typer.BadParameter("the settings name a coalition's registries; say which town's database: "
                                     "--db DATA_DIR/<municipality>/incidents.db", param_hint="--db")
        return settings.incidents_db

    @property
    def tz(self) -> tzinfo:
        if self._tz is None:
            self._tz = timezone.utc
            reg = self.settings().registry
            if reg is not None and reg.exists():
                from ms4watch.contract.registry import load_registry
                try:
                    self._tz = load_registry(reg).tz
                except Ms4Error:
                    pass   # times in UTC rather than no listing
        return self._tz


def _db_option() -> Path:
    return typer.Option(None, "--db", help="Incident database (default: DATA_DIR/incidents.db of the settings).")


def _open(where: _Where) -> tuple[IncidentStore, DeliveryQueue]:
    from ms4watch.alerts.delivery.queue import DeliveryQueue
    from ms4watch.alerts.incidents import IncidentStore, connect
    db = where.db
    if not Path(db).exists():
        raise typer.BadParameter(f"no incident database at {db} (the server's settings name its data_dir: "
                                 "--config or MS4WATCH_CONFIG)", param_hint="--db / data_dir")
    conn = connect(db)
    return IncidentStore(conn), DeliveryQueue(conn)


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


def register(app: typer.Typer) -> None:
    inc_app = typer.Typer(help="Incidents: list, acknowledge, resolve, record inspections.", no_args_is_help=True)
    app.add_typer(inc_app, name="incidents")

    @inc_app.command("list")
    def list_(db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
              all_: bool = typer.Option(False, "--all", help="Include resolved incidents."),
              limit: int = typer.Option(100, "--limit", min=1)) -> None:
        """Open and acknowledged incidents (newest first), with their notifications."""
        from ms4watch.alerts.incidents import State
        where = _Where(config, db)
        store, queue = _open(where)
        tz = where.tz
        states = list(State) if all_ else [State.OPEN, State.ACKNOWLEDGED]
        table = Table("id", "code", "state", "kind", "subject", "since", "ended", "deadline", "by", "notifications")
        for inc in store.list(states, limit=limit):
            counts: dict[str, int] = {}
            for r in queue.for_incident(inc.id):
                counts[r.status] = counts.get(r.status, 0) + 1
            who = inc.acknowledged_by or inc.resolved_by or ""
            table.add_row(str(inc.id), inc.code, inc.state.value + (" (suppressed)" if inc.suppressed else ""),
                          inc.kind, inc.subject, _t(inc.start, tz), _t(inc.end, tz), _deadline(inc, tz), who,
                          " ".join(f"{k}:{v}" for k, v in sorted(counts.items())))
        Console(width=None if Console().is_terminal else 200).print(table)

    @inc_app.command("show")
    def show(ref: str = typer.Argument(..., help="Incident id or acknowledge code."),
             db: Optional[Path] = _db_option(), config: Optional[Path] = config_option()) -> None:
        """One incident with its audit log and notifications."""
        where = _Where(config, db)
        store, queue = _open(where)
        tz = where.tz
        try:
            inc = store.find(ref)
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        typer.echo(f"#{inc.id} {inc.code} {inc.state.value} {inc.kind} {inc.subject} since {_t(inc.start, tz)}"
                   + (f" ended {_t(inc.end, tz)}" if inc.end else "")
                   + (f" deadline {_deadline(inc, tz)}" if inc.deadline else ""))
        if inc.suppressed:
            typer.echo(f"suppressed: {inc.suppressed}")
        typer.echo("audit:")
        for a in store.audit(inc.id):
            typer.echo(f"  {_t(a.at, tz)}  {a.action:<12} {a.who} via {a.how}" + (f": {a.note}" if a.note else ""))
        typer.echo("notifications:")
        for r in queue.for_incident(inc.id):
            typer.echo(f"  {r.stage:<10} {r.channel:<7} {r.recipient.name:<24} {r.status:<9} attempts={r.attempts}"
                       + (f"  {r.last_error}" if r.last_error else ""))

    @inc_app.command("ack")
    def ack(ref: str = typer.Argument(..., help="Incident id or acknowledge code."),
            db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
            by: str = typer.Option(..., "--by", help="Who acknowledges."),
            note: Optional[str] = typer.Option(None, "--note")) -> None:
        """Acknowledge: stops the escalation to the deputy."""
        store, _ = _open(_Where(config, db))
        try:
            inc = store.acknowledge(ref, by=by, how="cli", now=datetime.now(timezone.utc), note=note)
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        typer.echo(f"#{inc.id} {inc.code} {inc.state.value} by {inc.acknowledged_by}")

    @inc_app.command("resolve")
    def resolve(ref: str = typer.Argument(..., help="Incident id or acknowledge code."),
                db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
                by: str = typer.Option(..., "--by", help="Who resolves."),
                note: str = typer.Option(..., "--note", help="Why (kept in the audit log).")) -> None:
        """Resolve by hand, with a note. For an inspection item this records the inspection."""
        store, _ = _open(_Where(config, db))
        try:
            inc = store.resolve(ref, by=by, how="cli", now=datetime.now(timezone.utc), note=note)
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        typer.echo(f"#{inc.id} {inc.code} resolved ({inc.resolution}) by {inc.resolved_by}")

    @inc_app.command("inspected")
    def inspected(site: str = typer.Argument(..., help="Construction site id."),
                  db: Optional[Path] = _db_option(), config: Optional[Path] = config_option(),
                  by: str = typer.Option(..., "--by", help="Inspector."),
                  at: Optional[str] = typer.Option(None, "--at", help="When (ISO 8601 with offset); default now."),
                  note: Optional[str] = typer.Option(None, "--note")) -> None:
        """Record an inspection: resolves the site's open inspection items due from storms before it."""
        where = _Where(config, db)
        store, _ = _open(where)
        try:
            when = parse_time(at) if at else datetime.now(timezone.utc)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--at") from None
        try:
            done = store.record_inspection(site, at=when, by=by, now=datetime.now(timezone.utc), note=note)
        except Ms4Error as e:   # IncidentError and the rest of ours
            _fail(e)
            return
        if not done:
            typer.echo(f"no open inspection item for {site} from a storm before {_t(when, where.tz)}")
        for inc in done:
            typer.echo(f"#{inc.id} {inc.code} resolved: inspection of {site} at {_t(when, where.tz)}")
