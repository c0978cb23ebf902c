"""The root of every error the alerts package raises on purpose."""

from __future__ import annotations

from ms4watch.contract.errors import Ms4Error


class AlertError(Ms4Error):
    """An alert rule, replay or the streaming engine was given input it cannot use.

    The message names the file, station or field at fault.
    """


class RainFileError(AlertError):
    """A rain record (tip log, fixed-interval CSV, RDB) cannot be read; names file and line."""
