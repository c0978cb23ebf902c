"""``ms4watch serve``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ..logs import say
from ._process import starting_without_collection, stop_on_signals
from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    config: Optional[Path] = config_option(),
    registry: Optional[Path] = typer.Option(None, help="The municipality's site registry (sites.yaml)."),
    broker: Optional[str] = typer.Option(None, help="MQTT broker URL, mqtt://[USER@]HOST:PORT (default "
                                                    "mqtt://127.0.0.1:1883); the password comes from --password-file "
                                                    "or MS4WATCH_BROKER__PASSWORD."),
    store: Optional[str] = typer.Option(None, help="Store URL (default sqlite:///DATA_DIR/store.db)."),
    data_dir: Optional[Path] = typer.Option(None, help="Engine state, incidents, notification queue, spool "
                                                       "(default /var/lib/ms4watch)."),
    notify: list[str] = typer.Option([], help="Notification channel URL (repeatable); none: DATA_DIR/notifications.txt."),
    http: Optional[str] = typer.Option(None, help="Where the workbench (pages, API, acknowledge links, the inbound "
                                                  "SMS webhook, /health, /metrics) listens: HOST:PORT, PORT, or 'off' "
                                                  "(default 127.0.0.1:8000)."),
    public_url: Optional[str] = typer.Option(None, help="Base URL of acknowledge links as recipients reach it."),
    username: Optional[str] = typer.Option(None, help="MQTT user name."),
    password_file: Optional[Path] = typer.Option(None, help="File holding the MQTT password."),
    check: bool = typer.Option(False, "--check", help="Check the settings, their files and modes, the data "
                                                      "directory, and reach the broker, the store and SMTP; start "
                                                      "nothing. Exit 0, or 1 with one line per problem."),
) -> None:
    """Run the server: ingest, the alert engine, incidents and notifications, the SMO's workbench.

    Settings come from these options, then MS4WATCH_* environment variables, then the
    config file (--config, MS4WATCH_CONFIG, or /etc/ms4watch/ms4watch.toml).
    """
    log = logging.getLogger("ms4watch.serve")
    settings = settings_or_exit(config, registry=registry, store=store, data_dir=data_dir, notify=notify,
                                broker={"url": broker, "username": username, "password_file": password_file},
                                http={"listen": http, "public_url": public_url})
    if check:
        from ..check import check_server, report
        raise typer.Exit(report(check_server(settings), echo=say, err=lambda line: say(line, err=True)))
    stop = stop_on_signals()   # before starting: a Ctrl-C meanwhile is a stop, not an exception half-way
    try:
        with starting_without_collection():   # then tuned as for ingest: the backlog bench's CPU (docs/store.md)
            from ..server import build_server
            server = build_server(settings, report=say)
        server.start()   # a re-feed after a crash may run the rules for a while: the collector is on, tuned
    except (Ms4Error, OSError) as e:
        say(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    where = f", workbench on {server.web_url}" if server.web_url else ""
    say(f"serving {server.registry.municipality}: broker {settings.broker.url}, "
        f"store {settings.store_url.split('?')[0]}{where}")
    stop.wait()
    log.info("stopping")
    server.stop()
