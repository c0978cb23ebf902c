"""``ms4watch backup create|verify|restore``: the data directory of the settings, the settings
folder and the broker's CA, safe while serving."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from ._settings import config_option, settings_or_exit

CONFIG_DIR = Path("/etc/ms4watch")
BROKER_DIR = Path("/etc/mosquitto/ms4watch")      # broker-config --out, as docs/operations.md has it
SERVICE_USER = "ms4watch"


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _folders(config_dir: Optional[Path], broker_dir: Optional[Path], data_only: bool,
             say) -> tuple[Optional[Path], Optional[Path]]:
    """The settings and broker folders to take: those given, else the system's when they exist."""
    if data_only:
        if config_dir is not None or broker_dir is not None:
            raise _fail("--data-only leaves the settings and the broker out: give no --config-dir or --broker-dir")
        return None, None
    if config_dir is None:
        config_dir = CONFIG_DIR if CONFIG_DIR.is_dir() else None
        if config_dir is None:
            say(f"config: {CONFIG_DIR} does not exist; left out (--config-dir to name the settings folder)")
    if broker_dir is None:
        broker_dir = BROKER_DIR if (BROKER_DIR / "ca.crt").is_file() else None
        if broker_dir is None:
            say(f"broker: no {BROKER_DIR / 'ca.crt'}; left out (--broker-dir to name broker-config's folder)")
    return config_dir, broker_dir


def register(app: typer.Typer) -> None:
    b = typer.Typer(help="Back up the server (data, settings, the broker's CA) while it runs; verify; restore.",
                    no_args_is_help=True)
    app.add_typer(b, name="backup")

    config_dir_opt = typer.Option(None, "--config-dir", help=f"The settings folder (default {CONFIG_DIR}, when it exists).")
    broker_dir_opt = typer.Option(None, "--broker-dir", help=f"`broker-config --out`'s folder (default {BROKER_DIR}, "
                                                             "when it holds ca.crt).")
    data_only_opt = typer.Option(False, "--data-only", help="The data directory alone.")

    @b.command("create")
    def create(to: Optional[Path] = typer.Option(None, "--to", help="A new, empty folder for the backup."),
               into: Optional[Path] = typer.Option(None, "--into", help="Back up into a new folder here named by the "
                                                                        "UTC time (2026-12-01T031500Z)."),
               keep: Optional[int] = typer.Option(None, "--keep", min=1,
                                                  help="With --into: then remove all but the KEEP newest backups there."),
               config: Optional[Path] = config_option(),
               data_dir: Optional[Path] = typer.Option(None, help="Data directory (default: the settings')."),
               config_dir: Optional[Path] = config_dir_opt, broker_dir: Optional[Path] = broker_dir_opt,
               include_ca_key: bool = typer.Option(False, "--include-ca-key",
                                                   help="Take the broker CA's private key too (root only: keep such a "
                                                        "backup offline)."),
               data_only: bool = data_only_opt) -> None:
        """Snapshot every database (SQLite online backup) and file of DATA_DIR, the settings folder and the
        broker's CA certificate and revocation list, with a manifest of SHA-256s; folders 0700, files 0600."""
        from ..backup import BackupError, create_backup, dated_folder, prune
        if (to is None) == (into is None):
            raise _fail("give --to or --into (one of them)")
        if keep is not None and into is None:
            raise _fail("--keep goes with --into")
        settings = settings_or_exit(config, data_dir=data_dir)
        if include_ca_key and data_only:
            raise _fail("--include-ca-key with --data-only: the CA is not in a data-only backup")
        config_dir, broker_dir = _folders(config_dir, broker_dir, data_only, typer.echo)
        if to is None:
            assert into is not None          # one of them, checked above
            to = dated_folder(into)
        try:
            items = create_backup(settings.data_dir, to, typer.echo, config_dir=config_dir, broker_dir=broker_dir,
                                  include_ca_key=include_ca_key)
            if keep is not None and into is not None:      # --keep without --into was refused above
                prune(into, keep, typer.echo)
        except BackupError as e:
            raise _fail(str(e)) from None
        typer.echo(f"backup of {settings.data_dir}{', ' + str(config_dir) if config_dir else ''}"
                   f"{', ' + str(broker_dir) if broker_dir else ''}: {len(items)} files, "
                   f"{sum(i.bytes for i in items):,} bytes in {to}")

    @b.command("verify")
    def verify(backup: Path = typer.Argument(..., help="A folder made by `ms4watch backup create`.")) -> None:
        """Check a backup without restoring it: each file against the manifest's SHA-256, each database with
        SQLite's integrity check, no file the manifest does not list. Exit 0, or 1 naming each problem."""
        from ..backup import read_manifest, verify_backup
        problems = verify_backup(backup)
        if problems:
            for p in problems:
                typer.echo(f"error: {p}", err=True)
            typer.echo(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} found", err=True)
            raise typer.Exit(1)
        m = read_manifest(backup)
        parts = ", ".join(f"{p} {sum(1 for i in m.files if i.part == p)}" for p in dict.fromkeys(i.part for i in m.files))
        typer.echo(f"ok: {len(m.files)} files ({parts}), {sum(i.bytes for i in m.files):,} bytes in {backup}")

    @b.command("restore")
    def restore(from_: Path = typer.Option(..., "--from", help="A folder made by `ms4watch backup create`."),
                config: Optional[Path] = config_option(),
                data_dir: Optional[Path] = typer.Option(None, help="Data directory (default: the settings')."),
                config_dir: Optional[Path] = typer.Option(None, "--config-dir",
                                                          help=f"Where the settings go (default {CONFIG_DIR})."),
                broker_dir: Optional[Path] = typer.Option(None, "--broker-dir",
                                                          help=f"Where the broker's CA goes (default {BROKER_DIR})."),
                owner: Optional[str] = typer.Option(None, "--owner",
                                                    help=f"The service user given the data, whose group reads the "
                                                         f"settings (default {SERVICE_USER} when run as root)."),
                data_only: bool = data_only_opt,
                force: bool = typer.Option(False, help="Replace the files of folders that are not empty "
                                                       "(stop the server first).")) -> None:
        """Verify the backup, then copy it into DATA_DIR, the settings folder and the broker's, creating what a
        fresh server lacks. Start `serve` afterwards: it re-feeds its engine from the store."""
        from ..backup import BackupError, restore_backup
        if data_dir is None:         # a fresh server may have no settings file yet: the default data directory
            data_dir = settings_or_exit(config).data_dir
        if data_only:
            config_dir = broker_dir = None
        else:
            config_dir, broker_dir = config_dir or CONFIG_DIR, broker_dir or BROKER_DIR
        if owner is None and os.geteuid() == 0:
            import pwd
            try:
                pwd.getpwnam(SERVICE_USER)
                owner = SERVICE_USER
            except KeyError:
                typer.echo(f"owner: no user {SERVICE_USER}; the files stay root's (--owner to name the service user)")
        try:
            items = restore_backup(from_, data_dir, typer.echo, force=force, config_dir=config_dir,
                                   broker_dir=broker_dir, owner=owner)
        except BackupError as e:
            raise _fail(str(e)) from None
        typer.echo(f"restored {len(items)} files into {data_dir}"
                   f"{' (owner ' + owner + ')' if owner else ''}")
