"""Backup and restore of a server's data directory, safe while ``serve`` runs.

What a server keeps in ``DATA_DIR`` (see docs/operations.md): SQLite databases (the
embedded store ``store.db``, the incident database ``incidents.db`` with the audit log and
the notification queue, the workbench's ``workbench.db``, the InfluxDB spool
``store-spool.db``), the engine's checkpoint ``engine-state.json`` and small files
(``rejected.jsonl``, the session secret).

Each SQLite database is copied with SQLite's online backup API, which gives a consistent
snapshot while writers go on (WAL mode); other files are copied as they are (the engine
state is replaced atomically, so it is always whole). A ``MANIFEST.json`` lists every file
with its size and SHA-256; ``restore`` checks them before anything is written. Databases
are snapshotted one after another, so the engine's checkpoint may be older than the
store: on start the server re-feeds the engine from the store (``build_server``), and
incidents and notifications are idempotent, so nothing acknowledged before the backup is
lost and nothing is notified twice.

A backup holds what the data directory does (``workbench.db``: password and token hashes;
the session secret), so it is its owner's alone whatever the umask (``sudo`` keeps the
caller's, usually 022): folders 0700, files 0600, each created so rather than narrowed
after its contents are written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .contract.errors import Ms4Error

MANIFEST = "MANIFEST.json"
FORMAT = "ms4watch.backup/1"
SKIP_SUFFIXES = ("-wal", "-shm", "-journal", ".tmp")
FILE_MODE = 0o600
DIR_MODE = 0o700


class BackupError(Ms4Error):
    """A backup or restore that cannot be done; the message says which file and why."""


@dataclass(frozen=True)
class BackedUp:
    name: str
    bytes: int
    sha256: str
    sqlite: bool


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def create_backup(data_dir: Path, to: Path, report: Callable[[str], None] = lambda line: None) -> list[BackedUp]:
    """Copy ``data_dir`` into the new folder ``to`` (refused if it exists and is not empty)."""
    data_dir, to = Path(data_dir), Path(to)
    if not data_dir.is_dir():
        raise BackupError(f"{data_dir}: no such data directory")
    if to.exists() and any(to.iterdir()):
        raise BackupError(f"{to}: not empty; back up into a new folder")
    to.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    to.chmod(DIR_MODE)                      # one that existed (empty), or mkdir's mode under an odd umask
    files = sorted(p for p in data_dir.rglob("*") if p.is_file() and not p.name.endswith(SKIP_SUFFIXES))
    done: list[BackedUp] = []
    for src in files:
        rel = src.relative_to(data_dir)
        dst = to / rel
        _private_dirs(to, dst.parent)
        sqlite = _is_sqlite(src)
        t0 = time.monotonic()
        if sqlite:
            _private_file(dst).close()      # SQLite writes into it, and its journal takes its mode
            try:
                with sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=30) as s, sqlite3.connect(dst) as d:
                    s.backup(d)
            except sqlite3.Error as e:
                raise BackupError(f"{src}: cannot back up: {e}") from None
        else:
            with src.open("rb") as f, _private_file(dst) as g:
                shutil.copyfileobj(f, g)
            shutil.copystat(src, dst)
            dst.chmod(FILE_MODE)            # copystat copied the source's mode too
        item = BackedUp(str(rel), dst.stat().st_size, _sha256(dst), sqlite)
        done.append(item)
        report(f"{rel}: {item.bytes:,} bytes{' (sqlite snapshot)' if sqlite else ''} in {time.monotonic() - t0:.1f}s")
    with _private_file(to / MANIFEST) as f:
        f.write(json.dumps({"format": FORMAT, "created": time.time(), "source": str(data_dir),
                            "files": [i.__dict__ for i in done]}, indent=1).encode("utf-8"))
    return done


def _private_dirs(root: Path, folder: Path) -> None:
    """``folder`` and the folders between ``root`` and it, made 0700."""
    for d in reversed([folder, *folder.parents]):
        if d != root and d.is_relative_to(root) and not d.exists():
            d.mkdir(mode=DIR_MODE)
            d.chmod(DIR_MODE)


def _private_file(path: Path):
    """``path`` created (or emptied) for writing, 0600 from the start."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)                # an existing file keeps its mode through O_CREAT
    return os.fdopen(fd, "wb")


def restore_backup(backup: Path, data_dir: Path, *, force: bool = False,
                   report: Callable[[str], None] = lambda line: None) -> list[BackedUp]:
    """Check every file of ``backup`` against its manifest, then copy them into ``data_dir``
    (refused when it holds files, unless ``force``: the server must be stopped)."""
    backup, data_dir = Path(backup), Path(data_dir)
    try:
        manifest = json.loads((backup / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BackupError(f"{backup / MANIFEST}: not a readable backup manifest ({e})") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{backup / MANIFEST}: format {manifest.get('format')!r}, expected {FORMAT}")
    items = [BackedUp(**f) for f in manifest["files"]]
    for i in items:
        p = backup / i.name
        if not p.is_file():
            raise BackupError(f"{p}: missing from the backup")
        if _sha256(p) != i.sha256:
            raise BackupError(f"{p}: SHA-256 differs from the manifest: the backup is damaged")
    if data_dir.exists() and any(data_dir.iterdir()) and not force:
        raise BackupError(f"{data_dir}: not empty; stop the server and restore with --force to replace it")
    data_dir.mkdir(parents=True, exist_ok=True)
    for i in items:
        dst = data_dir / i.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        for stale in (dst.with_name(dst.name + s) for s in ("-wal", "-shm")):
            stale.unlink(missing_ok=True)   # a WAL beside a restored database would be replayed into it
        shutil.copy2(backup / i.name, dst)
        report(f"{i.name}: restored ({i.bytes:,} bytes)")
    return items


__all__ = ["create_backup", "restore_backup", "BackupError", "BackedUp"]
