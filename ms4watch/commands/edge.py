"""``ms4watch edge``: run the logger agent (on a Raspberry Pi, or here with simulated sensors)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ._process import stop_on_signals


def register(app: typer.Typer) -> None:
    app.command("edge")(edge)


def edge(
    config: Path = typer.Option(..., help="The logger's firmware config (firmware_configs/<device>.yaml)."),
    broker: Optional[str] = typer.Option(None, help="MQTT broker URL; default: broker.url in the config."),
    data_dir: Path = typer.Option(Path("/var/lib/ms4watch"), help="Spool and driver state (tip counters, bottles)."),
    password_file: Optional[Path] = typer.Option(None, help="MQTT password file; default: broker.password_file."),
    check: bool = typer.Option(False, "--check", help="Validate the config (and every driver's options) and exit."),
    status_interval: float = typer.Option(60.0, min=1, help="Seconds between status messages."),
) -> None:
    """Take readings on schedule, keep them in a durable spool, publish them when the broker is there.

    Exit code 75 after a remote `reboot_agent` command (the systemd unit restarts the agent).
    """
    from ..edge.agent import RESTART_EXIT_CODE, Agent
    from ..edge.clock import kernel_clock_synced
    from ..edge.config import load_agent_config

    try:
        cfg, options = load_agent_config(config)
    except Ms4Error as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    if check:
        typer.echo(f"{config}: OK ({cfg.device} at {cfg.station}, {len(cfg.sensors)} sensors, "
                   f"config version {cfg.config_version})")
        return
    try:
        password = password_file.read_text(encoding="utf-8").strip() if password_file else None
    except OSError as e:
        typer.echo(f"error: --password-file: cannot read {password_file}: {e.strerror}", err=True)
        raise typer.Exit(2) from None
    log = logging.getLogger("ms4watch.edge")
    try:
        agent = Agent(cfg, options, data_dir=data_dir, broker_url=broker, password=password,
                      clock_synced=kernel_clock_synced, config_path=config,
                      status_interval_s=status_interval).start()
    except (Ms4Error, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    stop = stop_on_signals(agent.wake)
    typer.echo(f"edge: {cfg.device} at {cfg.station}, {len(cfg.sensors)} sensors, spool in {data_dir}; "
               f"broker {agent.uplink.url}", err=False)
    try:
        agent.run(stop)
    finally:
        agent.stop()
        log.info("stopped; %d readings taken in all", agent.spool_taken)
    if agent.restart_requested:
        raise typer.Exit(RESTART_EXIT_CODE)
