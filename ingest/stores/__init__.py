"""Stores readings can be written to. One folder per implementation; pick one by URL.

``sqlite:///PATH`` (default, embedded), later ``influxdb1://…`` and ``influxdb2://…``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from ...contract.errors import ConfigValueError
from .base import ReadingsStore, StoredMessage, WriteResult
from .sqlite import SqliteStore

__all__ = ["ReadingsStore", "StoredMessage", "WriteResult", "build_store", "open_store"]


def open_store(url: str, spool_dir: str | Path) -> ReadingsStore:
    """The store for a URL as ingest uses it: a remote store (InfluxDB) behind a local
    spool, so acknowledged readings are durable while the store is down; the embedded
    SQLite store needs none."""
    store = build_store(url)
    if isinstance(store, SqliteStore):
        return store
    from .spooling import SpoolingStore
    return SpoolingStore(store, Path(spool_dir) / "store-spool.db")


def build_store(url: str) -> ReadingsStore:
    """Build (not connect) the store a URL names. Raises ConfigValueError (a ValueError
    too) for an unknown scheme or a URL its store refuses."""
    try:
        return _build_store(url)
    except ConfigValueError:
        raise
    except ValueError as e:   # the stores' URL parsers: a setting the user wrote
        raise ConfigValueError(str(e)) from None


def _build_store(url: str) -> ReadingsStore:
    scheme = urlparse(url).scheme
    if scheme == "sqlite":
        return SqliteStore.from_url(url)
    # Registry of further stores: explicit import list, one line per implementation.
    if scheme in ("influxdb1", "influxdb1s"):
        from .influxdb import Influx1Store
        return Influx1Store.from_url(url)
    if scheme in ("influxdb2", "influxdb2s"):
        from .influxdb import Influx2Store
        return Influx2Store.from_url(url)
    raise ConfigValueError(f"unknown store URL scheme {scheme!r} in {url!r} (sqlite:///PATH, influxdb1://…, influxdb2://…)")
