"""The town's :class:`~.sites.SiteReaches` as of its latest map import, for a running server.

``ms4watch map import`` replaces ``network.db`` from another process; the server learns of it
on the next read: :meth:`TownReaches.current` compares the file's stamp (size and
modification time of ``network.db`` and of its write-ahead log when not empty, one ``stat`` each) with the one
its value was computed from, and only when they differ loads the map and computes the
value again (a town of 20,000 structures: ~2 s, mostly loading ``network.db``; the server's
clock tick reads it so an alert seldom waits for it). No map imported: None, and no alert's
words change."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from . import FILENAME
from .errors import NetworkError

if TYPE_CHECKING:
    from ..contract.registry import Registry
    from .sites import SiteReaches

log = logging.getLogger(__name__)


def map_stamp(folder: Path) -> str | None:
    """A key that changes whenever the kept map does (None: no map imported). An empty
    write-ahead log is left out: a reader's connection (the map page) makes one, and reading
    changes nothing."""
    parts = []
    for name in (FILENAME, FILENAME + "-wal"):
        try:
            st = (folder / name).stat()
        except FileNotFoundError:
            if name == FILENAME:
                return None
            continue
        if st.st_size or name == FILENAME:
            parts.append(f"{st.st_mtime_ns}:{st.st_size}")
    return "/".join(parts)


class TownReaches:
    """One town's sites on its kept map (``folder``: the town's data folder), recomputed on
    read when a new import replaced the map. A map that cannot be read keeps the last value
    (logged once per stamp): the alerts go out without the words rather than not at all."""

    def __init__(self, folder: Path, registry: "Registry"):
        self.folder = Path(folder)
        self.registry = registry
        self._lock = threading.Lock()
        self._value: SiteReaches | None = None
        self._stamp: str | None = None

    @property
    def cached(self) -> SiteReaches | None:
        """The value last computed, without looking at the map (None: none yet)."""
        return self._value

    def current(self) -> SiteReaches | None:
        stamp = map_stamp(self.folder)
        if stamp is None:
            return None
        from .sites import site_reaches   # a map was imported: its model, store and tracing, not before
        from .store import NetworkStore, has_map
        with self._lock:
            if stamp == self._stamp:
                return self._value
            self._stamp = stamp      # tried once per stamp, even if the map cannot be read
            try:
                if not has_map(self.folder):
                    return None
                with NetworkStore(self.folder) as store:
                    net = store.load()
            except (NetworkError, sqlite3.Error, OSError, ValueError) as e:
                log.warning("%s: the town's map could not be read; alerts keep the last reading of it: %s",
                            self.folder / FILENAME, e)
                return self._value
            self._value = site_reaches(net, self.registry.construction_sites, self.registry.outfalls, version=stamp)
            return self._value


__all__ = ["TownReaches", "map_stamp"]
