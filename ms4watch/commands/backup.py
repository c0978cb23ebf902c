"""``ms4watch backup create|restore``: the data directory of the settings, safe while serving."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    b = typer.Typer(help="Back up the server's data directory (while it runs) and restore it.",
                    no_args_is_help=True)
    app.add_typer(b, name="backup")

    @b.command("create")
    def create(to: Path = typer.Option(..., "--to", help="A new, empty folder for the backup."),
               config: Optional[Path] = config_option(),
               data_dir: Optional[Path] = typer.Option(None, help="Data directory (default: the settings').")) -> None:
        """Snapshot every database (SQLite online backup) and file of DATA_DIR, with a manifest of SHA-256s."""
        from ..backup import BackupError, create_backup
        settings = settings_or_exit(config, data_dir=data_dir)
        try:
            items = create_backup(settings.data_dir, to, report=typer.echo)
        except BackupError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"backup of {settings.data_dir}: {len(items)} files, {sum(i.bytes for i in items):,} bytes in {to}")

    @b.command("restore")
    def restore(from_: Path = typer.Option(..., "--from", help="A folder made by `ms4watch backup create`."),
                config: Optional[Path] = config_option(),
                data_dir: Optional[Path] = typer.Option(None, help="Data directory (default: the settings')."),
                force: bool = typer.Option(False, help="Replace the files of a data directory that is not empty "
                                                       "(stop the server first).")) -> None:
        """Check the backup against its manifest, then copy it into DATA_DIR. Start `serve` afterwards:
        it re-feeds its engine from the store."""
        from ..backup import BackupError, restore_backup
        settings = settings_or_exit(config, data_dir=data_dir)
        try:
            items = restore_backup(from_, settings.data_dir, force=force, report=typer.echo)
        except BackupError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"restored {len(items)} files into {settings.data_dir}")
