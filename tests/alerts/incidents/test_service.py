"""The incident service's commits of the engine's events (``handle(event, replayable=True)``):
at ``synchronous=NORMAL`` for that transaction only, and the connection left as it was
however that transaction ends. (That the pipeline syncs them before its checkpoint:
``tests/test_pipeline.py``.)"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ms4watch.alerts.notifiers.urls import Channels
from ms4watch.pipeline import open_incidents
from tests.support.notify_peers import dwf, registry


def _service(tmp_path: Path):
    return open_incidents(registry(), tmp_path / "incidents.db", Channels(),
                          clock=lambda: datetime(2026, 6, 1, 16, 0, tzinfo=timezone.utc))


def test_a_replayable_event_whose_commit_fails_leaves_no_transaction_open_and_the_connection_full(tmp_path):
    """A COMMIT that fails (here refused by an authorizer: SQLite then keeps the transaction
    open, as it does for a busy database) is undone, ``synchronous`` is FULL again, and the
    next transaction (a person's acknowledgement) commits as usual."""
    incidents = _service(tmp_path)
    try:
        conn = incidents.conn
        refuse = {"on": True}

        def authorizer(action, arg1, *_):
            if refuse["on"] and action == sqlite3.SQLITE_TRANSACTION and arg1 == "COMMIT":
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        conn.set_authorizer(authorizer)
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            incidents.handle(dwf("2026-06-01T15:30:00Z"), replayable=True)
        assert not conn.in_transaction
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2      # FULL
        assert incidents.list() == []                                      # the refused commit undone

        refuse["on"] = False
        inc = incidents.handle(dwf("2026-06-01T15:30:00Z"), replayable=True).incident
        assert inc is not None
        assert incidents.acknowledge(inc.id, by="smo").acknowledged_by == "smo"
    finally:
        incidents.close()
