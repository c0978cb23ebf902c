"""The one SQLite helper (ms4watch/sqlite.py): every store opened through it has the
documented settings, and no module outside it opens SQLite on its own."""

from __future__ import annotations

import ast
import functools
import sqlite3
from pathlib import Path
from typing import Callable

import pytest

from ms4watch.sqlite import (Synchronous, backup, columns, connect, connect_readonly, create_schema, inserted_id,
                             transaction)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("contract", "edge", "ingest", "alerts", "workbench", "compliance", "network", "ms4watch")
HELPER = ROOT / "ms4watch" / "sqlite.py"


# -- the stores ---------------------------------------------------------------------------------
def _spool(tmp: Path, synchronous: str = "FULL") -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.edge.spool import Spool
    s = Spool(tmp / "LOG-1.spool.db", "LOG-1", synchronous=synchronous)
    return s._db, s._db.close


def _sqlite_store(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.ingest.stores.sqlite.store import SqliteStore
    sink = SqliteStore(tmp / "store.db")
    sink.open()
    assert sink._db is not None
    return sink._db, sink.close


def _spooling_store(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.ingest.stores.spooling import SpoolingStore
    from ms4watch.ingest.stores.sqlite.store import SqliteStore
    sink = SpoolingStore(SqliteStore(tmp / "store.db"), tmp / "spool.db")
    sink.open()
    assert sink._db is not None
    return sink._db, sink.close


def _corrections(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.ingest.corrections import CorrectionStore
    store = CorrectionStore(tmp / "corrections.db")
    return store._db, store.close


def _incidents(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.alerts.incidents.db import connect as open_incidents_db
    conn = open_incidents_db(tmp / "incidents.db")
    return conn, conn.close


def _workbench(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.workbench.records.table import connect_workbench_db   # what the workbench and `report` open
    conn = connect_workbench_db(tmp / "workbench.db")
    return conn, conn.close


def _compliance(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.compliance.store import ComplianceStore
    store = ComplianceStore(tmp / "compliance.db")
    return store.conn, store.close


def _report_overrides(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.compliance.report_overrides import ReportOverrides
    store = ReportOverrides(tmp / "report_overrides.db")
    return store.conn, store.close


def _network(tmp: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    from ms4watch.network.store import NetworkStore
    store = NetworkStore(tmp / "town")
    return store.conn, store.close


# (name, the module that opens it, how, the synchronous level it keeps: FULL = 2, NORMAL = 1,
#  foreign keys: on = 1; off only where ms4watch/sqlite.py says why)
STORES = [
    ("edge spool", "edge/spool.py", _spool, 2, 1),
    ("edge spool, NORMAL (demo, bench)", "edge/spool.py", lambda t: _spool(t, "normal"), 1, 1),
    ("embedded store", "ingest/stores/sqlite/store.py", _sqlite_store, 2, 0),   # a look-up per stored reading
    ("server spool", "ingest/stores/spooling.py", _spooling_store, 2, 1),
    ("corrections", "ingest/corrections.py", _corrections, 2, 1),
    ("incidents.db", "alerts/incidents/db.py", _incidents, 2, 1),
    ("workbench.db", "workbench/records/table.py", _workbench, 2, 1),
    ("compliance.db", "compliance/store.py", _compliance, 2, 1),
    ("report overrides", "compliance/report_overrides.py", _report_overrides, 2, 1),
    ("network.db", "network/store.py", _network, 2, 1),
]


@pytest.mark.parametrize("open_store,synchronous,foreign_keys", [s[2:] for s in STORES], ids=[s[0] for s in STORES])
def test_every_store_has_the_documented_settings(tmp_path, open_store, synchronous, foreign_keys):
    conn, close = open_store(tmp_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == foreign_keys
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 10_000
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == synchronous
        assert conn.isolation_level is None     # transactions explicit (``transaction``), none implicit
    finally:
        close()


# -- nobody else opens SQLite ---------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """The syntax tree's nodes; none for a file that never says both ``sqlite`` and ``connect``."""
    text = path.read_text(encoding="utf-8")
    if "sqlite" not in text or "connect" not in text:
        return ()
    return tuple(ast.walk(ast.parse(text, str(path))))


def _sqlite_connects(path: Path) -> list[str]:
    """``sqlite3.connect(…)`` calls (and ``from sqlite3 import connect``) in ``path``."""
    out = []
    for node in _nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module == "sqlite3" and any(a.name == "connect" for a in node.names):
            out.append(f"{path.name}:{node.lineno}: from sqlite3 import connect")
        elif (isinstance(node, ast.Attribute) and node.attr == "connect" and isinstance(node.value, ast.Name)
              and node.value.id == "sqlite3"):
            out.append(f"{path.name}:{node.lineno}: sqlite3.connect")
    return out


def _package_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_no_module_outside_the_helper_calls_sqlite3_connect():
    files = _package_files()
    assert len(files) > 300 and HELPER in files
    found = [hit for f in files if f != HELPER for hit in _sqlite_connects(f)]
    assert found == []


def test_the_check_sees_a_connect(tmp_path):
    (tmp_path / "x.py").write_text("import sqlite3\nfrom sqlite3 import connect\n"
                                   "def f(p):\n    return sqlite3.connect(p, timeout=3)\n")
    assert _sqlite_connects(tmp_path / "x.py") == ["x.py:2: from sqlite3 import connect", "x.py:4: sqlite3.connect"]


def _helper_openers(path: Path) -> bool:
    """Whether ``path`` imports the helper's read-write ``connect``."""
    for node in _nodes(path):
        if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "sqlite"
                and any(a.name == "connect" for a in node.names)):
            return True
    return False


def test_every_module_that_opens_a_store_has_a_case_above():
    """A new store opened through the helper gets its line in STORES (and so its check)."""
    openers = {str(f.relative_to(ROOT)) for f in _package_files() if f != HELPER and _helper_openers(f)}
    assert openers and openers <= {s[1] for s in STORES}


def test_the_helper_imports_nothing_of_ours():
    """A leaf: the logger's spool imports it, and edge imports only the contract."""
    tree = ast.parse(HELPER.read_text(encoding="utf-8"))
    ours = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.level or "ms4watch" in (n.module or ""))]
    ours += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Import) and any("ms4watch" in a.name for a in n.names)]
    assert ours == []


# -- the helper itself -----------------------------------------------------------------------------
def test_synchronous_is_full_or_normal_and_refuses_anything_else(tmp_path):
    assert Synchronous.of("normal") is Synchronous.NORMAL and Synchronous.of(Synchronous.FULL) is Synchronous.FULL
    with pytest.raises(ValueError, match="synchronous must be FULL or NORMAL, got 'OFF; DROP TABLE x'"):
        connect(tmp_path / "x.db", synchronous="OFF; DROP TABLE x")
    assert not (tmp_path / "x.db").exists()


def test_connect_makes_the_folder_and_takes_the_row_factory_and_timeout(tmp_path):
    conn = connect(tmp_path / "a" / "b" / "x.db", row_factory=sqlite3.Row, busy_timeout_s=30)
    assert conn.execute("SELECT 1 AS one").fetchone()["one"] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    conn.close()


def test_foreign_keys_are_enforced(tmp_path):
    conn = connect(tmp_path / "x.db")
    conn.executescript("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p (id));")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        conn.execute("INSERT INTO c VALUES (7)")
    conn.close()


def test_readonly_never_creates_nor_writes(tmp_path):
    with pytest.raises(sqlite3.OperationalError):
        connect_readonly(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()
    w = connect(tmp_path / "odd name #1?.db")
    w.execute("CREATE TABLE t (x)")
    r = connect_readonly(tmp_path / "odd name #1?.db", row_factory=sqlite3.Row)
    assert r.execute("SELECT count(*) AS n FROM t").fetchone()["n"] == 0
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        r.execute("INSERT INTO t VALUES (1)")
    r.close()
    w.close()


def test_backup_copies_a_live_database(tmp_path):
    w = connect(tmp_path / "live.db")
    w.execute("CREATE TABLE t (x)")
    w.execute("INSERT INTO t VALUES (1)")
    backup(tmp_path / "live.db", tmp_path / "copy.db")
    w.close()
    c = connect_readonly(tmp_path / "copy.db", immutable=True)
    assert c.execute("SELECT x FROM t").fetchall() == [(1,)]
    c.close()


def test_columns_of_a_table_and_of_none(tmp_path):
    conn = connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (a, b)")
    assert columns(conn, "t") == {"a", "b"} and columns(conn, "nothing") == set()
    conn.close()


def test_inserted_id(tmp_path):
    conn = connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x)")
    assert inserted_id(conn.execute("INSERT INTO t (x) VALUES (1)")) == 1
    conn.close()


class _InterruptedAfterBegin:
    """A connection raising (as a signal's KeyboardInterrupt would) just as ``BEGIN`` returns."""

    def __init__(self, conn):
        self._conn = conn

    def execute(self, sql, *args):
        cur = self._conn.execute(sql, *args)
        if sql == "BEGIN IMMEDIATE":
            raise KeyboardInterrupt
        return cur

    def __getattr__(self, name):
        return getattr(self._conn, name)


def test_an_exception_as_the_transaction_begins_leaves_none_open(tmp_path):
    """Left open, every later ``transaction`` on the connection would join it and commit
    nothing, and other connections would wait on its lock."""
    conn = connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(KeyboardInterrupt):
        with transaction(_InterruptedAfterBegin(conn)):
            pass
    assert not conn.in_transaction
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    other = connect(tmp_path / "x.db")
    assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 1


def test_a_transaction_rolls_back_on_error_and_joins_an_open_one(tmp_path):
    conn = connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(ZeroDivisionError):
        with transaction(conn):
            conn.execute("INSERT INTO t VALUES (1)")
            1 / 0
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (2)")
        with transaction(conn):                  # joins: commits with the outer one
            conn.execute("INSERT INTO t VALUES (3)")
        assert conn.in_transaction
    assert conn.execute("SELECT x FROM t ORDER BY x").fetchall() == [(2,), (3,)]
    conn.close()


def test_a_schema_is_made_in_one_transaction(tmp_path):
    """One commit for the whole script: with ``synchronous=FULL`` each statement run on its
    own is a commit and an fsync (a fresh data directory's ~90 made serve's start ~0.3 s
    longer, docs/store.md)."""
    conn = connect(tmp_path / "a.db")
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    create_schema(conn, "CREATE TABLE IF NOT EXISTS a (x);\nCREATE TABLE IF NOT EXISTS b (y);\n"
                        "CREATE TRIGGER IF NOT EXISTS keep BEFORE DELETE ON a BEGIN SELECT RAISE(ABORT, 'no'); END;")
    assert [q.split()[0].rstrip(";") for q in seen] == ["BEGIN", "CREATE", "CREATE", "CREATE", "COMMIT"]
    assert not conn.in_transaction
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master")} == {"a", "b", "keep"}


def test_a_schema_that_fails_half_way_leaves_nothing(tmp_path):
    conn = connect(tmp_path / "a.db")
    with pytest.raises(sqlite3.OperationalError):
        create_schema(conn, "CREATE TABLE a (x);\nCREATE TABLE b (y);\nCREATE TABLE a (z);")
    assert not conn.in_transaction
    assert list(conn.execute("SELECT name FROM sqlite_master")) == []
