"""The ``ms4watch`` command. Each sub-command lives in ``ms4watch/commands/<name>.py`` and
exposes ``register(app)``; this file only lists them."""

from __future__ import annotations

import logging
import os
import sys
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

import typer

from .logs import setup_logging

# Explicit table, one line per command module: the command's name -> its module.
COMMANDS = {
    "demo": "demo",
    "ingest": "ingest",
    "serve": "serve",
    "edge": "edge",
    "calibrate": "calibrate",
    "device": "device",
    "corrections": "corrections",
    "incidents": "incidents",
    "store": "store",
    "storms": "storms",
    "replay": "replay",
    "import": "import_files",
    "backup": "backup",
    "users": "users",
    "broker-config": "broker_config",
    "rejected": "rejected",
    "report": "report",
    "map": "map",
}


def build_app(command: str | None = None) -> typer.Typer:
    """The application with every command; with ``command`` (a name in :data:`COMMANDS`), with
    that one alone — what :func:`main` runs, so that a service such as ``ingest`` starts
    without importing the other commands' modules."""
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

    for module in [COMMANDS[command]] if command in COMMANDS else COMMANDS.values():
        import_module(f"ms4watch.commands.{module}").register(app)
    return app


def invoked_command(args: list[str]) -> str | None:
    """The command named on a command line (after the root options), or None: no command,
    an unknown one (typer's error lists them all) or only ``--help``/``--version``."""
    words = iter(args)
    for a in words:
        if a == "--log-format":
            next(words, None)          # its value
        elif not a.startswith("-"):
            return a if a in COMMANDS else None
    return None


def _print_version(value: bool) -> None:
    if value:
        try:
            typer.echo(f"ms4watch {version('ms4watch')}")
        except PackageNotFoundError:   # running from a source tree that was never installed
            typer.echo("ms4watch (not installed)")
        raise typer.Exit()


BLAS_THREADS = "1"
"""OpenBLAS threads of a command's numpy: no ms4watch array is a matrix product, and a pool of
one thread a core, made at numpy's import, spins 15-70 ms of CPU at each start of ``serve``
(docs/store.md); a setting in the environment is kept."""


def main() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", BLAS_THREADS)   # before any command imports numpy
    build_app(invoked_command(sys.argv[1:]))()
