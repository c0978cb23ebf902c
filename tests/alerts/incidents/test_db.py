"""The incident database's transaction (alerts/incidents/db.py)."""

import pytest

from ms4watch.alerts.incidents.db import connect, transaction


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
    conn = connect(tmp_path / "incidents.db")
    conn.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(KeyboardInterrupt):
        with transaction(_InterruptedAfterBegin(conn)):
            pass
    assert not conn.in_transaction
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    other = connect(tmp_path / "incidents.db")
    assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 1
