"""The ``ms4watch`` command. Each sub-command lives in ``ms4watch/commands/<name>.py`` and
exposes ``register(app)``; this file only lists them."""

from __future__ import annotations

import logging
from importlib import import_module

import typer

# Explicit list, one line per command module.
COMMANDS = [
    "demo",
    "ingest",
    "serve",
    "edge",
    "incidents",
    "store",
    "storms",
    "replay",
    "users",
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
    def _root(verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="More log output (-vv for debug).")) -> None:
        level = logging.WARNING - 10 * min(verbose, 2)
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    for name in COMMANDS:
        import_module(f"ms4watch.commands.{name}").register(app)
    return app


def main() -> None:
    build_app()()
