"""Field sends: the first result per (town, key) is kept and never changed or deleted; a
key's claim holds until its result is kept or it is released; photos' times and places are
found by the record they came with."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone

import pytest

from ms4watch.workbench.records.table import connect_workbench_db
from ms4watch.workbench.records.field_sends import FieldSends

T = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
KEY = "0123456789abcdef0123"


@pytest.fixture
def sends(tmp_path):
    conn = connect_workbench_db(tmp_path / "workbench.db")
    yield FieldSends(conn, threading.RLock(), lambda: T)
    conn.close()


def test_the_first_result_of_a_key_is_kept_and_never_changed(sends):
    first = sends.add("schenectady", KEY, kind="inspection", status=201, result={"report": 7}, photos=[], by="jr")
    again = sends.add("schenectady", KEY, kind="inspection", status=409, result={"detail": "x"}, photos=[], by="jr")
    assert (again.status, again.result) == (201, {"report": 7}) == (first.status, first.result)
    other_town = sends.add("ramapo", KEY, kind="visit", status=201, result={"case": 1}, photos=[], by="jr")
    assert other_town.kind == "visit" and sends.count("schenectady") == sends.count("ramapo") == 1
    for sql in ("UPDATE field_sends SET status = 500", "DELETE FROM field_sends"):
        with pytest.raises(sqlite3.DatabaseError, match="a field send is"):
            sends.conn.execute(sql)


def test_a_claim_holds_until_the_result_is_kept_or_released(sends):
    assert sends.claim("schenectady", KEY, kind="visit", by="jr") is None
    assert sends.claim("schenectady", KEY, kind="visit", by="ab") == ("jr", "2026-06-01T12:00:00+00:00")
    sends.release("schenectady", KEY)
    assert sends.claim("schenectady", KEY, kind="visit", by="ab") is None
    sends.add("schenectady", KEY, kind="visit", status=201, result={"case": 3}, by="ab",
              photos=[{"sha256": "a" * 64, "taken_at": "2026-06-01T11:31:00-04:00", "position": None}])
    assert sends.claim("schenectady", "another-key-0123456", kind="visit", by="ab") is None
    assert sends.conn.execute("SELECT key FROM field_claims").fetchall()[0][0] == "another-key-0123456"
    assert set(sends.photos_of("schenectady", "visit", 3)) == {"a" * 64}
    assert sends.photos_of("schenectady", "visit", 4) == {} == sends.photos_of("schenectady", "inspection", 3)
