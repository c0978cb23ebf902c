"""``ms4watch broker-config``: the town's Mosquitto configuration, one credential per logger
and service, and the ACL, from the registry and the loggers' firmware configs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    app.command("broker-config")(broker_config)


def broker_config(
    out: Path = typer.Option(..., "--out", help="Folder to write (e.g. /etc/mosquitto/ms4watch); kept up to date "
                                                "by running again."),
    config: Optional[Path] = config_option(),
    registry: Optional[Path] = typer.Option(None, help="The municipality's site registry (default: the settings')."),
    firmware_configs: Optional[Path] = typer.Option(None, "--firmware-configs",
                                                    help="Folder of the town's logger configs, one <device>.yaml "
                                                         "each: the devices it lists (default: the settings')."),
    auth: str = typer.Option("both", help="How clients prove who they are: password, certificate, or both (a certificate, whose "
                                               "name is the user; Mosquitto then reads no password)."),
    port: int = typer.Option(8883, min=1, max=65535, help="The broker's TLS port."),
    bind: Optional[str] = typer.Option(None, help="Address the TLS listener binds (default: every address)."),
    host: list[str] = typer.Option([], "--host", help="A name or address loggers reach the broker by (repeatable; "
                                                      "the server certificate's names). Default: this machine's "
                                                      "name, localhost, 127.0.0.1."),
    rotate: list[str] = typer.Option([], "--rotate", help="Replace this client's password, key and certificate "
                                                          "(repeatable; the old certificate is revoked)."),
    group: Optional[str] = typer.Option(None, help="Group the broker runs as, given its password file, ACL and key "
                                                   "(default: mosquitto, when run as root)."),
    session_expiry: str = typer.Option("14d", "--session-expiry",
                                       help="How long a persistent session (and what is queued for it) outlives its "
                                            "client's last connection: a whole number and h, d, w, m or y. Longer "
                                            "than any ingest outage you plan for."),
) -> None:
    """Write the broker's configuration: a TLS listener, a password and a client certificate
    for every listed logger and for ingest and the workbench, and an ACL letting
    a logger publish only under its own topics and read only its own config and cmd.

    Secrets go only to files in --out (0600, or 0640 for the broker's group), never to the
    terminal. Run again after adding or removing a logger's config: credentials still listed
    are kept, those of loggers no longer listed are revoked.
    """
    from ..brokerconf import Auth, generate
    from ..brokerconf.generate import SERVICES

    settings = settings_or_exit(config, registry=registry, firmware_configs=firmware_configs)
    try:
        mode = Auth(auth)
    except ValueError:
        typer.echo(f"error: --auth: expected password, certificate or both, got {auth!r}", err=True)
        raise typer.Exit(2) from None
    if settings.firmware_configs is None:
        typer.echo("error: --firmware-configs: not set (the folder of the town's logger configs; or "
                   "firmware_configs = … in the config file)", err=True)
        raise typer.Exit(2)
    try:
        devices = settings.devices()
        assert devices is not None
        result = generate(devices, out, auth=mode, port=port, bind=bind, hosts=host, rotate=rotate, group=group,
                          expiry=session_expiry)
    except (Ms4Error, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    for label, names in (("new", result.created), ("rotated", result.rotated), ("renewed", result.renewed),
                         ("kept", result.kept), ("revoked", result.revoked)):
        if names:
            typer.echo(f"{label}: {', '.join(names)}")
    if result.new_ca:
        typer.echo(f"a new CA: {result.out / 'ca.crt'} (its key ca.key stays here, 0600)")
    typer.echo(f"{devices.municipality}: {len(devices)} loggers and {len(SERVICES)} services in "
               f"{result.out}/mosquitto.conf, passwd, acl; each client's files in "
               f"{result.out}/clients/<name>/. Include mosquitto.conf from /etc/mosquitto/conf.d/ and restart "
               f"Mosquitto (docs/operations.md).")
