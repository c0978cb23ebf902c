"""The network of one town in SQLite (``network.db`` in the town's data folder), and what
changed between two imports, matched by the ids the town's records use."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..sqlite import connect, transaction
from . import FILENAME   # where the map is kept (re-exported)
from .errors import NetworkError
from .model import Conveyance, ConveyanceKind, DirectionSource, Finding, Network, Structure, StructureKind

SCHEMA = """
CREATE TABLE IF NOT EXISTS structures (id TEXT PRIMARY KEY, kind TEXT NOT NULL, lon REAL, lat REAL, x REAL, y REAL,
    invert_ft REAL, rim_ft REAL, receiving_water TEXT, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conveyances (id TEXT PRIMARY KEY, kind TEXT NOT NULL, upstream TEXT, downstream TEXT,
    direction TEXT NOT NULL, length_ft REAL, diameter_in REAL, material TEXT, upstream_invert_ft REAL,
    downstream_invert_ft REAL, coords TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS findings (kind TEXT NOT NULL, feature TEXT NOT NULL, message TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS imports (at TEXT NOT NULL, source TEXT NOT NULL, structures INTEGER NOT NULL,
    conveyances INTEGER NOT NULL, findings INTEGER NOT NULL);
"""
AREAS_SCHEMA = """
CREATE TABLE IF NOT EXISTS drainage_areas (id TEXT PRIMARY KEY, structure TEXT, how TEXT, area_sqft REAL NOT NULL);
CREATE TABLE IF NOT EXISTS parcels (id TEXT PRIMARY KEY, structure TEXT, drainage_area TEXT, how TEXT,
    distance_ft REAL);
"""

if TYPE_CHECKING:
    from .areas import DrainageArea, Parcel


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)        # "structure MH-7", "pipe P-3"
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)      # "pipe P-3: diameter_in 12 -> 15"

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def _close(a: object, b: object) -> bool:
    """Equal, floats to 1e-7 (degrees: about a centimetre; feet and inches: nothing)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-7
    return a == b


def diff(old: Network, new: Network) -> Changes:
    ch = Changes()
    for label, before, after in (("structure", old.structures, new.structures),
                                 ("pipe", old.conveyances, new.conveyances)):
        for i in sorted(after.keys() - before.keys()):
            ch.added.append(f"{label} {i}")
        for i in sorted(before.keys() - after.keys()):
            ch.removed.append(f"{label} {i}")
        for i in sorted(before.keys() & after.keys()):
            a, b = before[i], after[i]
            for f in fields(a):
                if f.name in ("coords", "source"):
                    continue
                va, vb = getattr(a, f.name), getattr(b, f.name)
                if not _close(va, vb):
                    ch.changed.append(f"{label} {i}: {f.name} {_show(va)} -> {_show(vb)}")
    return ch


def _show(v: object) -> str:
    if hasattr(v, "value"):
        return str(v.value)
    if isinstance(v, float):
        return f"{v:.6g}"
    return "none" if v is None else str(v)


def has_map(folder: Path) -> bool:
    """Whether a map was ever imported into ``folder`` (without creating anything)."""
    return (folder / FILENAME).is_file()


class NetworkStore:
    def __init__(self, folder: Path):
        self.path = folder / FILENAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.conn = connect(self.path)
            self.conn.executescript(SCHEMA)
            self.conn.executescript(AREAS_SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise NetworkError(f"{self.path}: cannot open: {e}") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "NetworkStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load(self) -> Network:
        net = Network()
        cur = self.conn.execute("SELECT id, kind, lon, lat, x, y, invert_ft, rim_ft, receiving_water, source "
                                "FROM structures")
        for r in cur:
            net.structures[r[0]] = Structure(r[0], StructureKind(r[1]), *r[2:])
        cur = self.conn.execute("SELECT id, kind, upstream, downstream, direction, length_ft, diameter_in, material, "
                                "upstream_invert_ft, downstream_invert_ft, coords, source FROM conveyances")
        for r in cur:
            net.conveyances[r[0]] = Conveyance(
                r[0], ConveyanceKind(r[1]), r[2], r[3], DirectionSource(r[4]), r[5], r[6], r[7], r[8], r[9],
                tuple(tuple(p) for p in json.loads(r[10])), r[11])
        return net

    def findings(self) -> list[Finding]:
        return [Finding(*r) for r in self.conn.execute("SELECT kind, feature, message FROM findings ORDER BY rowid")]

    def replace(self, net: Network, findings: list[Finding], source: str) -> Changes:
        """Store ``net`` in place of the one kept, in one transaction; what changed."""
        changes = diff(self.load(), net)
        with transaction(self.conn):
            self.conn.execute("DELETE FROM structures")
            self.conn.execute("DELETE FROM conveyances")
            self.conn.execute("DELETE FROM findings")
            self.conn.executemany("INSERT INTO structures VALUES (?,?,?,?,?,?,?,?,?,?)", [
                (s.id, s.kind.value, s.lon, s.lat, s.x, s.y, s.invert_ft, s.rim_ft, s.receiving_water, s.source)
                for s in net.structures.values()])
            self.conn.executemany("INSERT INTO conveyances VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [
                (c.id, c.kind.value, c.upstream, c.downstream, c.direction.value, c.length_ft, c.diameter_in,
                 c.material, c.upstream_invert_ft, c.downstream_invert_ft, json.dumps(c.coords), c.source)
                for c in net.conveyances.values()])
            self.conn.executemany("INSERT INTO findings VALUES (?,?,?)",
                                  [(f.kind, f.feature, f.message) for f in findings])
            self.conn.execute("INSERT INTO imports VALUES (?,?,?,?,?)", (
                datetime.now(timezone.utc).isoformat(timespec="seconds"), source, len(net.structures),
                len(net.conveyances), len(findings)))
        return changes

    def replace_areas(self, areas: list["DrainageArea"], parcels: list["Parcel"]) -> Changes:
        """Keep the import's drainage areas and parcels in place of those kept (none: cleared);
        what changed, matched by id (``area_sqft`` and ``distance_ft`` to 0.5 unit)."""
        ch = Changes()
        for label, before, after in (("drainage area", {a.id: a for a in self.drainage_areas()},
                                      {a.id: a for a in areas}),
                                     ("parcel", {p.id: p for p in self.parcels()}, {p.id: p for p in parcels})):
            ch.added += [f"{label} {i}" for i in sorted(after.keys() - before.keys())]
            ch.removed += [f"{label} {i}" for i in sorted(before.keys() - after.keys())]
            for i in sorted(before.keys() & after.keys()):
                for f in fields(after[i]):
                    va, vb = getattr(before[i], f.name), getattr(after[i], f.name)
                    same = (va is None) == (vb is None) and (abs(va - vb) < 0.5 if isinstance(va, float) else va == vb)
                    if not same:
                        ch.changed.append(f"{label} {i}: {f.name} {_show(va)} -> {_show(vb)}")
        with transaction(self.conn):
            self.conn.execute("DELETE FROM drainage_areas")
            self.conn.execute("DELETE FROM parcels")
            self.conn.executemany("INSERT INTO drainage_areas VALUES (?,?,?,?)",
                                  [(a.id, a.structure, a.how, a.area_sqft) for a in areas])
            self.conn.executemany("INSERT INTO parcels VALUES (?,?,?,?,?)",
                                  [(p.id, p.structure, p.drainage_area, p.how, p.distance_ft) for p in parcels])
        return ch

    def drainage_areas(self) -> list["DrainageArea"]:
        from .areas import DrainageArea
        return [DrainageArea(*r) for r in self.conn.execute(
            "SELECT id, structure, how, area_sqft FROM drainage_areas ORDER BY rowid")]

    def parcels(self) -> list["Parcel"]:
        from .areas import Parcel
        return [Parcel(*r) for r in self.conn.execute(
            "SELECT id, structure, drainage_area, how, distance_ft FROM parcels ORDER BY rowid")]

    def last_import(self) -> dict | None:
        r = self.conn.execute("SELECT at, source, structures, conveyances, findings FROM imports "
                              "ORDER BY rowid DESC LIMIT 1").fetchone()
        return None if r is None else dict(zip(("at", "source", "structures", "conveyances", "findings"), r))


