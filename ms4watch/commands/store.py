"""``ms4watch store init``: create the InfluxDB database or bucket, keeping data ≥ 3 years."""

from __future__ import annotations

from datetime import timedelta

import typer

from ms4watch.contract.errors import Ms4Error
from ms4watch.contract.timeutil import format_duration, parse_duration


def register(app: typer.Typer) -> None:
    store_app = typer.Typer(help="Set up the time-series store readings are written to.", no_args_is_help=True)

    @store_app.command("init")
    def init(
        store: str = typer.Option(..., "--store", help="influxdb1://HOST:PORT/DATABASE or "
                                  "influxdb2://HOST:PORT/BUCKET?org=ORG (token from MS4WATCH_INFLUX_TOKEN "
                                  "or MS4WATCH_INFLUX_TOKEN_FILE)"),
        retention: str = typer.Option("1096d", "--retention", help="how long the store keeps data, e.g. 1096d"),
        allow_short_retention: bool = typer.Option(
            False, "--allow-short-retention",
            help="accept a retention shorter than the 1,096 days (3 years) records must be kept"),
    ) -> None:
        """Create the database/bucket (or update its retention) and say what it keeps."""
        from ms4watch.ingest.stores.influxdb import MIN_RETENTION, open_admin

        try:
            keep = parse_duration(retention)
        except ValueError as e:
            _fail(f"--retention: {e}")
        if keep < timedelta(days=1):
            _fail(f"--retention {retention}: must be at least 1 day")
        if keep < MIN_RETENTION and not allow_short_retention:
            _fail(f"--retention {format_duration(keep)} is shorter than the 1096 days (3 years) "
                  "records must be kept; pass --allow-short-retention to do it anyway")
        try:
            admin = open_admin(store)
        except ValueError as e:
            _fail(str(e))
        try:
            done = admin.ensure_store(keep)
        except Ms4Error as e:
            _fail(str(e))
        finally:
            admin.close()
        typer.echo(f"{admin.target.display}: {done}")
        if keep < MIN_RETENTION:
            typer.echo(f"warning: retention {format_duration(keep)} is shorter than 1096 days (3 years); "
                       "ingest needs ?allow_short_retention=true in the store URL to accept it", err=True)
        else:
            typer.echo(f"retention {format_duration(keep)} ≥ 1096 days (3 years): OK")

    app.add_typer(store_app, name="store")


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
