"""How commands read the one :class:`~ms4watch.settings.Settings`: a ``--config`` option
and a one-line error naming the setting instead of a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer


def config_option() -> Any:
    return typer.Option(None, "--config", envvar="MS4WATCH_CONFIG",
                        help="Settings file (TOML); default /etc/ms4watch/ms4watch.toml when it exists.")


def settings_or_exit(config: Optional[Path], **flags: Any):
    from ..settings import SettingsError, load_settings
    try:
        return load_settings(config, **flags)
    except SettingsError as e:
        from ..logs import say
        say(f"error: {e}", err=True)
        raise typer.Exit(2) from None
