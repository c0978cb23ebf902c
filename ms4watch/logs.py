"""Log lines as text for a terminal, or one JSON object per line for journald and shippers.

``--log-format json`` (or ``MS4WATCH_LOG_FORMAT=json``, as the systemd unit sets it): every
line a command writes is one JSON object — ``time`` (ISO 8601 with the zone, to the
millisecond), ``level``, ``logger``, ``message``, plus ``exc_info`` for a traceback — on
stderr. What a service prints for people (``serving …``, engine events, notifications,
``stopping``, one-line errors) goes through :func:`say`, so it is such a line too, and
ms4watch's own info lines are kept (third-party libraries stay at warnings).
"""

from __future__ import annotations

import logging
import sys
from datetime import datetime

import typer

FORMATS = ("text", "json")
OUTPUT_LOGGER = "ms4watch.output"


class _IsoTimes(logging.Formatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - logging's
        return datetime.fromtimestamp(record.created).astimezone().isoformat(timespec="milliseconds")


def json_formatter() -> logging.Formatter:
    from pythonjsonlogger.json import JsonFormatter

    class JsonLines(JsonFormatter):
        """python-json-logger's formatter with ISO 8601 times carrying their zone."""
        formatTime = _IsoTimes.formatTime  # noqa: N815 - logging's name

    return JsonLines("%(asctime)s %(levelname)s %(name)s %(message)s",
                     rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
                     json_ensure_ascii=False)


def setup_logging(level: int, log_format: str = "text") -> None:
    """Text lines (``2026-12-01T14:12:05.987-05:00 WARNING ms4watch.x: …``) or JSON lines."""
    if log_format not in FORMATS:
        raise typer.BadParameter(f"expected text or json, got {log_format!r}", param_hint="--log-format")
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(json_formatter())
    else:
        handler.setFormatter(_IsoTimes("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # a service's log keeps our info lines ("stopping", "engine re-fed …") whatever the verbosity
    logging.getLogger("ms4watch").setLevel(min(level, logging.INFO) if log_format == "json" else logging.NOTSET)


def json_logs() -> bool:
    """Whether log lines are JSON now (the root handler's formatter says). python-json-logger
    not imported: no formatter of it can exist, so text lines, without importing it (``say`` runs
    on ingest's writer thread at ``serve``'s first engine event)."""
    json = sys.modules.get("pythonjsonlogger.json")
    return json is not None and any(isinstance(h.formatter, json.JsonFormatter) for h in logging.getLogger().handlers)


def say(line: str, *, err: bool = False) -> None:
    """A line for people: printed (stdout, or stderr with ``err``) as text, or, with JSON
    logs, logged as one object (level INFO, or ERROR with ``err``)."""
    if json_logs():
        level = logging.ERROR if err else logging.INFO
        logging.getLogger(OUTPUT_LOGGER).log(level, line.strip().removeprefix("error: "))
    else:
        typer.echo(line, err=err)


__all__ = ["setup_logging", "json_logs", "say", "json_formatter", "FORMATS"]
