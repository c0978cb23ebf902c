"""Reading the embedded SQLite store from a test while ingest (in this process or another) writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ms4watch.ingest.stores.sqlite import SqliteStore


def query_one(store: str | Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    """The first column of the first row ``sql`` gives on the store at ``store``."""
    s = SqliteStore(store)
    s.open()
    try:
        return s.query(sql, params)[0][0]
    finally:
        s.close()


def readings_stored(store: str | Path) -> int:
    """How many readings the store holds; 0 while it is not made yet (ingest still starting)."""
    s = SqliteStore(store)
    try:
        s.open()
        return s.count_readings()
    except Exception:   # noqa: BLE001 — not created yet, or locked mid-creation: nothing stored to count
        return 0
    finally:
        s.close()
