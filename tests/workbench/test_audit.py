"""The workbench's audit log is append-only: SQLite refuses to change or delete a row."""

from __future__ import annotations

import sqlite3

import pytest

from ms4watch.workbench.roles import Actor, Role, Via


def test_rows_cannot_be_changed_or_deleted(bench):
    actor = Actor("smo", "Smo User", Role.SMO, "schenectady", Via.WEB, "10.0.0.7", 3)
    bench.workbench.audit.record(actor, "incident.acknowledge", target="incident:1", detail="on site")
    [row] = bench.workbench.audit.entries(target="incident:1")
    assert (row.who, row.role, row.via, row.address, row.detail) == ("smo", "smo", "web", "10.0.0.7", "on site")
    conn = bench.workbench.conn
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE audit SET who = 'someone else'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM audit")
    assert bench.workbench.audit.entries(target="incident:1")[0].who == "smo"
