"""``ms4watch ingest``: the server-side subscriber, for a real deployment."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ._process import stop_on_signals


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


def ingest(
    municipality: str = typer.Option(..., help="Municipality id (the second topic level)."),
    broker: str = typer.Option("mqtt://127.0.0.1:1883", help="MQTT broker URL (mqtt://user:pass@host:port)."),
    store: str = typer.Option("sqlite:///ms4watch-store.db", help="Store URL: sqlite:///PATH, influxdb1://…, influxdb2://…"),
    client_id: Optional[str] = typer.Option(None, help="MQTT client id of the persistent session."),
    username: Optional[str] = typer.Option(None, envvar="MS4WATCH_MQTT_USERNAME"),
    password_file: Optional[Path] = typer.Option(None, help="File holding the MQTT password (never on the command line)."),
    rejected: Path = typer.Option(Path("rejected.jsonl"), help="Where messages that break the contract are kept."),
    spool_dir: Path = typer.Option(Path("."), help="Local spool for a remote store that is down (store-spool.db)."),
) -> None:
    """Subscribe to every logger's readings and store them; acknowledge only once stored."""
    from ..ingest.service import IngestService
    from ..ingest.sinks import open_store

    log = logging.getLogger("ms4watch.ingest")
    password = password_file.read_text(encoding="utf-8").strip() if password_file else None
    try:
        service = IngestService(broker, municipality, open_store(store, spool_dir), client_id=client_id,
                                username=username, password=password, rejected_path=rejected)
        service.start()
    except (Ms4Error, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    stop = stop_on_signals()
    typer.echo(f"ingest: {municipality} from {broker} into {store.split('?')[0]}; Ctrl-C stops")
    while not stop.wait(10):
        s = service.stats
        log.info("stored %d readings (%d messages, %d duplicates, %d rejected)",
                 s.stored_readings, s.messages, s.duplicate_messages, s.rejected_messages)
    service.stop()
    typer.echo(f"ingest stopped: {service.stats.stored_readings} readings stored")
