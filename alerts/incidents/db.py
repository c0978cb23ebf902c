"""One SQLite file holds incidents, their audit log and the notification queue, so an
incident change and the notifications it causes commit together or not at all."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ...sqlite import connect as _connect


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating) the incident database with the package's SQLite settings
    (``ms4watch/sqlite.py``: WAL, several processes may share it), rows as ``sqlite3.Row``;
    ``synchronous=FULL``: a notification stored is a notification kept (the alert engine's
    events excepted, which it raises again after a power cut: ``IncidentService.handle``)."""
    return _connect(path, row_factory=sqlite3.Row)
