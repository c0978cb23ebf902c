"""The ``ms4watch`` command. Each sub-command lives in ``ms4watch/commands/<name>.py`` and
exposes ``register(app)``; this file only lists them."""

from __future__ import annotations

import logging
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

import typer

# Explicit list, one line per command module.
COMMANDS = [
    "demo",
    "ingest",
    "serve",
    "edge",
    "calibrate",
    "device",
    "corrections",
    "incidents",
    "store",
    "storms",
    "replay",
    "import_files",
    "backup",
    "users",
    "broker_config",
    "rejected",
    "report",
]


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="ms4watch",
        help="Watch a municipality's storm-sewer outfalls: loggers → MQTT → store → alerts the SMO can act on.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="More log output (-vv for debug)."),
              log_format: str = typer.Option("text", "--log-format", envvar="MS4WATCH_LOG_FORMAT",
                                             help="Log lines as 'text' or 'json' (one object per line, for journald "
                                                  "and log shippers)."),
              _version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                            help="Print the version and exit.")) -> None:
        setup_logging(logging.WARNING - 10 * min(verbose, 2), log_format)

    for name in COMMANDS:
        import_module(f"ms4watch.commands.{name}").register(app)
    return app


def _print_version(value: bool) -> None:
    if value:
        try:
            typer.echo(f"ms4watch {version('ms4watch')}")
        except PackageNotFoundError:   # running from a source tree that was never installed
            typer.echo("ms4watch (not installed)")
        raise typer.Exit()


def setup_logging(level: int, log_format: str = "text") -> None:
    """Text lines for a terminal, or one JSON object per line (time, level, logger, message)."""
    if log_format not in ("text", "json"):
        raise typer.BadParameter(f"expected text or json, got {log_format!r}", param_hint="--log-format")
    handler = logging.StreamHandler()
    if log_format == "json":
        from pythonjsonlogger.json import JsonFormatter
        handler.setFormatter(JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s",
                                           rename_fields={"asctime": "time", "levelname": "level", "name": "logger"}))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)


def main() -> None:
    build_app()()
