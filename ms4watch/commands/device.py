"""``ms4watch device config|cmd``: send one logger a new config or a command, and say what it
answered. The broker and its credentials come from the server's settings (``--config``,
``MS4WATCH_*``). Exit codes: 0 applied / done, 1 refused / failed, 2 a config or usage
error (nothing sent), 3 no answer within ``--timeout`` (a config stays retained for the
logger; a command is lost if the logger is offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ms4watch.contract.errors import Ms4Error

from ._settings import config_option, settings_or_exit

EXIT = {"applied": 0, "ok": 0, "rejected": 1, "failed": 1, "no_answer": 3}


def register(app: typer.Typer) -> None:
    dev = typer.Typer(help="Send a logger a new config or a command, and report its answer.", no_args_is_help=True)

    @dev.command("config")
    def config_cmd(file: Path = typer.Argument(..., help="The logger's firmware config (YAML or JSON)."),
                   config: Optional[Path] = config_option(),
                   broker: Optional[str] = typer.Option(None, "--broker", help="Broker URL (default: the settings')."),
                   timeout: float = typer.Option(30.0, "--timeout", min=1, help="Seconds to wait for the answer."),
                   json_out: bool = typer.Option(False, "--json", help="The answer as JSON.")) -> None:
        """Validate a config completely, send it retained to its logger, report the logger's answer."""

        try:
            text = file.read_text(encoding="utf-8")
        except OSError as e:
            _fail(f"{file}: cannot read: {e.strerror}")
        link = _link(config, broker, timeout)
        try:
            answer = link.send_config(text, str(file))
        except Ms4Error as e:
            _fail(str(e))
        _report(answer, json_out)

    @dev.command("cmd")
    def cmd_cmd(device: str = typer.Argument(..., help="The logger's device id, e.g. LOG-OF12."),
                command: str = typer.Argument(..., help="read_now, sample_now, rain_report, status, reboot_agent."),
                arg: Optional[list[str]] = typer.Option(None, "--arg", help="KEY=VALUE (a number when it reads as "
                                                                            "one), e.g. rain_in=0.02; repeat."),
                station: Optional[str] = typer.Option(None, "--station", help="Its station (default: from its "
                                                                               "retained status)."),
                municipality: Optional[str] = typer.Option(None, "--municipality", help="Default: the registry's."),
                config: Optional[Path] = config_option(),
                broker: Optional[str] = typer.Option(None, "--broker", help="Broker URL (default: the settings')."),
                timeout: float = typer.Option(30.0, "--timeout", min=1, help="Seconds to wait for the answer."),
                json_out: bool = typer.Option(False, "--json", help="The answer as JSON.")) -> None:
        """Send a command to a logger and report its acknowledgement."""
        args = {}
        for a in arg or []:
            key, sep, value = a.partition("=")
            if not sep or not key:
                _fail(f"--arg {a!r}: write KEY=VALUE")
            try:
                args[key] = json.loads(value)
            except ValueError:
                args[key] = value
        town = municipality
        if town is None:
            from ms4watch.contract.registry import load_registry
            settings = settings_or_exit(config)
            try:
                town = load_registry(settings.require_registry()).municipality
            except Ms4Error as e:
                _fail(f"{e} (or give --municipality)")
        link = _link(config, broker, timeout)
        try:
            answer = link.send_command(town, device, command, args, station)
        except Ms4Error as e:
            _fail(str(e))
        _report(answer, json_out)

    app.add_typer(dev, name="device")


def _link(config: Optional[Path], broker: Optional[str], timeout: float):
    from ms4watch.device import DeviceLink
    settings = settings_or_exit(config, **({"broker": {"url": broker}} if broker else {}))
    try:
        return DeviceLink(settings.broker.url, username=settings.broker.username, password=settings.broker.secret(),
                          timeout_s=timeout, tls=settings.broker.tls())
    except Ms4Error as e:
        _fail(str(e))


def _report(answer, json_out: bool) -> None:
    if json_out:
        typer.echo(json.dumps({"state": answer.state, "detail": answer.detail, "event": answer.event}))
    else:
        typer.echo(answer.detail)
    raise typer.Exit(EXIT[answer.state])


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
