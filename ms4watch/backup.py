"""Backup and restore of a server, safe while ``serve`` runs: its data directory, its
settings folder (``/etc/ms4watch``: settings, registry, loggers' configs, secrets) and the
broker's CA (``broker-config``'s ``ca.crt`` and CRL; ``ca.key`` and the revoked serials only
when asked), each in its own part of the backup (``data/``, ``config/``, ``broker/``).

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
the session secret) and the town's secrets, so it is its owner's alone whatever the umask
(``sudo`` keeps the caller's, usually 022): folders 0700, files 0600, each created so rather
than narrowed after its contents are written. The manifest keeps each settings file's mode.

``verify_backup`` checks a backup without restoring it: every file against the manifest
and every SQLite database with ``PRAGMA integrity_check``. ``restore_backup`` verifies,
then creates what a fresh server lacks: the data directory (0750, its files the service
user's, 0600), the settings folder (root and the service user's group, 0750, each file
with its recorded mode) and the broker's folder (root's, 0755).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import pwd
import shutil
import sqlite3
import stat
import time
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

from .contract.errors import Ms4Error
from .sqlite import backup as sqlite_backup
from .sqlite import connect_readonly

MANIFEST = "MANIFEST.json"
FORMAT_1 = "ms4watch.backup/1"          # the data directory alone, its files at the top of the backup
FORMAT = "ms4watch.backup/2"            # data/, config/, broker/
SKIP_SUFFIXES = ("-wal", "-shm", "-journal", ".tmp")
FILE_MODE = 0o600
DIR_MODE = 0o700
DATA, CONFIG, BROKER = "data", "config", "broker"
PARTS = (DATA, CONFIG, BROKER)
# broker-config's CA certificate and revocation list (public, 0644: the daily backup, as the
# service user, takes them); with the CA's key (root's, 0600) the serials revoked so far, also
# root's, which broker-config needs beside it to keep revoked loggers out. Not the broker's own
# key, password hashes or clients' files: `broker-config` makes them anew from the CA.
BROKER_FILES = ("ca.crt", "crl.pem")
CA_KEY = "ca.key"
REVOKED = "revoked.json"

Report = Callable[[str], None]


def _quiet(line: str) -> None:
    pass


class BackupError(Ms4Error):
    """A backup or restore that cannot be done; the message says which file and why."""


@dataclass(frozen=True)
class BackedUp:
    name: str            # relative to its part's folder
    bytes: int
    sha256: str
    sqlite: bool
    part: str = DATA
    mode: int = FILE_MODE    # the source's permission bits (a settings file is restored with them)


@dataclass(frozen=True)
class Manifest:
    folder: Path
    format: str
    parts: dict[str, str]    # part -> the folder it was taken from
    files: tuple[BackedUp, ...]

    def path(self, item: BackedUp) -> Path:
        """Where ``item`` lies in the backup."""
        return self.folder / item.name if self.format == FORMAT_1 else self.folder / item.part / item.name


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


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


@contextmanager
def _os_errors(writing: Path) -> Iterator[None]:
    """An OSError (a folder the service user may not write, a secret it may not read) as one
    line naming the file and the user, instead of a traceback."""
    try:
        yield
    except OSError as e:
        where = e.filename if e.filename is not None else writing
        text = f"{where}: {e.strerror or e}"
        if e.errno in (errno.EACCES, errno.EPERM):
            target = Path(str(where))
            if target == writing or writing in target.parents or target in writing.parents:
                parent = writing.parent
                text += (f" (running as user {_user()}; make {parent} theirs first: "
                         f"sudo install -d -o {_user()} -m 0700 {parent})")
            else:
                text += f" (running as user {_user()}, who may not read it)"
        raise BackupError(text) from None


# --- create ------------------------------------------------------------------------------

def create_backup(data_dir: Path, to: Path, report: Report = _quiet, *, config_dir: Path | None = None,
                  broker_dir: Path | None = None, include_ca_key: bool = False) -> list[BackedUp]:
    """Copy ``data_dir`` (and the settings folder ``config_dir``, the CA of ``broker_dir``:
    ``ca.key`` only with ``include_ca_key``) into the new folder ``to`` (refused if it exists
    and is not empty)."""
    to = Path(to)
    with _os_errors(to):
        return _create(Path(data_dir), to, report, config_dir, broker_dir, include_ca_key)


def _create(data_dir: Path, to: Path, report: Report, config_dir: Path | None, broker_dir: Path | None,
            include_ca_key: bool) -> list[BackedUp]:
    if not data_dir.is_dir():
        raise BackupError(f"{data_dir}: no such data directory")
    roots = {DATA: data_dir}
    if config_dir is not None:
        if not Path(config_dir).is_dir():
            raise BackupError(f"{config_dir}: no such settings folder")
        roots[CONFIG] = Path(config_dir)
    if broker_dir is not None:
        if not (Path(broker_dir) / "ca.crt").is_file():
            raise BackupError(f"{Path(broker_dir) / 'ca.crt'}: no such file (the folder `ms4watch broker-config --out` made)")
        roots[BROKER] = Path(broker_dir)
    for part, root in roots.items():
        if to.absolute() == root.absolute() or root.absolute() in to.absolute().parents:
            raise BackupError(f"{to}: inside the {part} folder it would back up ({root}); back up elsewhere")
    plan: list[tuple[str, Path, Path]] = []
    for part, root in roots.items():
        if part == BROKER:
            names = [n for n in BROKER_FILES if (root / n).is_file()]
            if include_ca_key:
                if not (root / CA_KEY).is_file():
                    raise BackupError(f"{root / CA_KEY}: no such file (--include-ca-key)")
                names.append(CA_KEY)
                if (root / REVOKED).is_file():
                    names.append(REVOKED)
            plan += [(part, root, root / n) for n in names]
        else:
            plan += [(part, root, p) for p in sorted(root.rglob("*"))
                     if p.is_file() and not p.name.endswith(SKIP_SUFFIXES)]
    if to.exists() and any(to.iterdir()):
        raise BackupError(f"{to}: not empty; back up into a new folder")
    to.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    to.chmod(DIR_MODE)                      # one that existed (empty), or mkdir's mode under an odd umask
    done: list[BackedUp] = []
    for part, root, src in plan:
        rel = src.relative_to(root)
        dst = to / part / rel
        _private_dirs(to, dst.parent)
        sqlite = _is_sqlite(src)
        t0 = time.monotonic()
        if sqlite:
            _private_file(dst).close()      # SQLite writes into it, and its journal takes its mode
            try:
                sqlite_backup(src, dst)
            except sqlite3.Error as e:
                raise BackupError(f"{src}: cannot back up: {e} (running as user {_user()})") from None
        else:
            with src.open("rb") as f, _private_file(dst) as g:
                shutil.copyfileobj(f, g)
            shutil.copystat(src, dst)
            dst.chmod(FILE_MODE)            # copystat copied the source's mode too
        item = BackedUp(str(rel), dst.stat().st_size, _sha256(dst), sqlite, part, stat.S_IMODE(src.stat().st_mode))
        done.append(item)
        report(f"{part}/{rel}: {item.bytes:,} bytes{' (sqlite snapshot)' if sqlite else ''} in {time.monotonic() - t0:.1f}s")
    if BROKER in roots and not include_ca_key:
        report(f"{BROKER}/{CA_KEY}: left out (--include-ca-key to include it)")
    with _private_file(to / MANIFEST) as f:
        f.write(json.dumps({"format": FORMAT, "created": time.time(), "source": str(data_dir),
                            "parts": {k: str(v) for k, v in roots.items()},
                            "files": [asdict(i) for i in done]}, indent=1).encode("utf-8"))
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


# --- dated backups (what the timer makes) ------------------------------------------------

STAMP = "%Y-%m-%dT%H%M%SZ"          # UTC: 2026-12-01T031500Z, sorted by name as by time


def dated_folder(into: Path, now: float | None = None) -> Path:
    """A new backup's folder in ``into``, named by the UTC time."""
    return Path(into) / time.strftime(STAMP, time.gmtime(now))


def _is_stamp(name: str) -> bool:
    try:
        time.strptime(name, STAMP)
    except ValueError:
        return False
    return True


def prune(into: Path, keep: int, report: Report = _quiet) -> list[Path]:
    """Remove all but the ``keep`` newest backups in ``into``: folders named by
    :func:`dated_folder` holding a manifest; nothing else there is touched."""
    if keep < 1:
        raise BackupError(f"--keep {keep}: keep at least the newest backup")
    into = Path(into)
    with _os_errors(into):
        ours = sorted(p for p in into.iterdir() if p.is_dir() and _is_stamp(p.name) and (p / MANIFEST).is_file())
        gone = ours[:-keep]
        for p in gone:
            shutil.rmtree(p)
            report(f"removed {p} (--keep {keep})")
    return gone


# --- verify ------------------------------------------------------------------------------

def read_manifest(backup: Path) -> Manifest:
    backup = Path(backup)
    where = backup / MANIFEST
    try:
        raw = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BackupError(f"{where}: not a readable backup manifest ({e})") from None
    fmt = raw.get("format") if isinstance(raw, dict) else None
    if fmt not in (FORMAT_1, FORMAT):
        raise BackupError(f"{where}: format {fmt!r}, expected {FORMAT}")
    try:
        files = tuple(BackedUp(**f) for f in raw["files"])
    except (KeyError, TypeError) as e:
        raise BackupError(f"{where}: files: {e}") from None
    bad = [f"{i.part}/{i.name}" for i in files
           if i.part not in PARTS or Path(i.name).is_absolute() or ".." in Path(i.name).parts]
    if bad:
        raise BackupError(f"{where}: files: {bad[0]}: not a name inside a part")
    parts = raw.get("parts") or {DATA: raw.get("source", "")}
    return Manifest(backup, fmt, parts, files)


def _integrity(path: Path) -> str | None:
    """SQLite's ``PRAGMA integrity_check`` of a backed-up database: None when it says ok."""
    try:
        with closing(connect_readonly(path, immutable=True)) as c:
            rows = [str(r[0]) for r in c.execute("PRAGMA integrity_check(5)")]
    except sqlite3.Error as e:
        return str(e)
    return None if rows == ["ok"] else "; ".join(" ".join(r.split()) for r in rows)   # one line


def _file_problems(m: Manifest) -> list[str]:
    problems = []
    for i in m.files:
        p = m.path(i)
        if not p.is_file():
            problems.append(f"{p}: missing from the backup")
        elif _sha256(p) != i.sha256:
            problems.append(f"{p}: SHA-256 differs from the manifest: the backup is damaged")
        elif i.sqlite and (why := _integrity(p)) is not None:
            problems.append(f"{p}: SQLite integrity_check failed: {why}")
    return problems


def verify_backup(backup: Path) -> list[str]:
    """Every problem of ``backup``, one line each naming the file; none: it restores whole.
    A file missing or changed, a database SQLite finds damaged, a file the manifest does not
    list."""
    try:
        m = read_manifest(backup)
        problems = _file_problems(m)
        listed = {m.path(i) for i in m.files} | {m.folder / MANIFEST}
        problems += [f"{p}: not in the manifest" for p in sorted(m.folder.rglob("*")) if p.is_file() and p not in listed]
    except OSError as e:
        return [f"{e.filename or backup}: {e.strerror or e} (running as user {_user()})"]
    except BackupError as e:
        return [str(e)]
    return problems


# --- restore -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Owner:
    """The service user the data directory is given to (its group reads the settings)."""
    name: str
    uid: int
    gid: int

    @classmethod
    def named(cls, user: str) -> "Owner":
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            raise BackupError(f"user {user!r} does not exist: create it first "
                              f"(adduser --system --group {user}) or name another with --owner") from None
        return cls(user, pw.pw_uid, pw.pw_gid)


def restore_backup(backup: Path, data_dir: Path, report: Report = _quiet, *, force: bool = False,
                   config_dir: Path | None = None, broker_dir: Path | None = None,
                   owner: str | None = None) -> list[BackedUp]:
    """Check every file of ``backup`` against its manifest (and SQLite's integrity check), then
    copy its parts into ``data_dir``, ``config_dir`` and ``broker_dir`` (a part whose folder
    is None is left out), creating the folders that are missing. A folder that holds files is
    refused unless ``force`` (the server must be stopped). ``owner``: the service user the data
    is given to, whose group reads the settings (root only)."""
    data_dir = Path(data_dir)
    with _os_errors(data_dir):
        m = read_manifest(backup)
        problems = _file_problems(m)
        if problems:
            more = f" (and {len(problems) - 1} more: `ms4watch backup verify {backup}`)" if len(problems) > 1 else ""
            raise BackupError(problems[0] + more)
        who = Owner.named(owner) if owner is not None else None
        if who is not None and os.geteuid() != 0 and who.uid != os.geteuid():
            raise BackupError(f"--owner {who.name}: only root can give files to another user (running as {_user()})")
        targets = {DATA: data_dir, CONFIG: config_dir, BROKER: broker_dir}
        parts = [p for p in PARTS if any(i.part == p for i in m.files)]
        for part in parts:
            target = targets[part]
            if target is None:
                report(f"{part}: in the backup, not restored (no folder given for it)")
            elif Path(target).exists() and any(Path(target).iterdir()) and not force:
                what = "stop the server and restore" if part == DATA else "restore"
                raise BackupError(f"{target}: not empty; {what} with --force to replace its files")
        restored = []
        for part in parts:
            given = targets[part]
            if given is None:
                continue
            target = Path(given)
            uid = who.uid if who and part == DATA else -1
            gid = who.gid if who and part in (DATA, CONFIG) else -1
            top, sub = {DATA: (0o750, DIR_MODE), CONFIG: (0o750, 0o750), BROKER: (0o755, 0o755)}[part]
            _made_dir(target, top, uid, gid)
            for i in (i for i in m.files if i.part == part):
                dst = target / i.name
                for d in reversed([d for d in dst.parents if d != target and target in d.parents]):
                    _made_dir(d, sub, uid, gid)
                for stale in (dst.with_name(dst.name + s) for s in ("-wal", "-shm")):
                    stale.unlink(missing_ok=True)   # a WAL beside a restored database would be replayed into it
                mode = FILE_MODE if part == DATA else i.mode & 0o755
                _install(m.path(i), dst, mode, uid, gid)
                restored.append(i)
                report(f"{part}/{i.name}: restored ({i.bytes:,} bytes) into {target}")
        return restored


def _made_dir(path: Path, mode: int, uid: int, gid: int) -> None:
    path.mkdir(mode=mode, parents=True, exist_ok=True)
    path.chmod(mode)
    if uid != -1 or gid != -1:
        os.chown(path, uid, gid)


def _install(src: Path, dst: Path, mode: int, uid: int, gid: int) -> None:
    """``src`` copied to ``dst``, with ``mode`` and owner from the start."""
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.fchmod(fd, mode)
    if uid != -1 or gid != -1:
        os.fchown(fd, uid, gid)
    with os.fdopen(fd, "wb") as g, src.open("rb") as f:
        shutil.copyfileobj(f, g)
    st = src.stat()
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


__all__ = ["create_backup", "restore_backup", "verify_backup", "read_manifest", "dated_folder", "prune", "BackupError", "BackedUp",
           "Manifest", "Owner", "DATA", "CONFIG", "BROKER"]
