"""``ms4watch serve``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ._process import stop_on_signals


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    registry: Path = typer.Option(..., help="The municipality's site registry (sites.yaml)."),
    broker: str = typer.Option("mqtt://127.0.0.1:1883", help="MQTT broker URL."),
    store: Optional[str] = typer.Option(None, help="Store URL (default sqlite:///DATA_DIR/store.db)."),
    data_dir: Path = typer.Option(Path("/var/lib/ms4watch"), help="Engine state, incidents, outbox, spool."),
    notify: list[str] = typer.Option([], help="Notification channel URL (repeatable); none: DATA_DIR/outbox.txt."),
    http: str = typer.Option("127.0.0.1:8000", help="Where acknowledge links and the inbound SMS webhook are served "
                                                  "(HOST:PORT, or 'off')."),
    public_url: Optional[str] = typer.Option(None, help="Base URL of acknowledge links as recipients reach it."),
    username: Optional[str] = typer.Option(None, envvar="MS4WATCH_MQTT_USERNAME"),
    password_file: Optional[Path] = typer.Option(None, help="File holding the MQTT password."),
) -> None:
    """Run the server: ingest, the alert engine, incidents and notifications, acknowledge links."""
    from ..server import Server, ServerOptions

    log = logging.getLogger("ms4watch.serve")
    host, port = (None, None) if http == "off" else (http.rsplit(":", 1)[0], int(http.rsplit(":", 1)[1]))
    opts = ServerOptions(registry=registry, broker_url=broker, store_url=store, data_dir=data_dir,
                         notify_urls=list(notify), http_host=host or "127.0.0.1", http_port=port,
                         public_url=public_url, username=username,
                         password=password_file.read_text(encoding="utf-8").strip() if password_file else None)
    try:
        server = Server(opts, report=lambda line: typer.echo(line)).start()
    except (Ms4Error, ValueError, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    stop = stop_on_signals()
    typer.echo(f"serving {server.registry.municipality}: broker {broker}, store {server.store_url.split('?')[0]}"
               + (f", acknowledge links on http://{host}:{port}" if port else ""))
    stop.wait()
    log.info("stopping")
    server.stop()
