"""The durable delivery queue: unique key, backoff, survives reopening the database."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ms4watch.alerts.incidents import connect
from ms4watch.alerts.notifiers.base import Recipient
from ms4watch.alerts.delivery.queue import DeliveryQueue, backoff
from tests.support.notify_peers import utc

T0 = utc(2026, 6, 1, 16)
PAT = Recipient("Pat", "smo", "pat@town.test")


def _q(ob, stage="open", rcpt=PAT, channel="email", now=T0, **kw):
    return ob.enqueue(ref="incident:1", incident_id=None, recipient=rcpt, channel=channel, stage=stage,
                      priority="urgent", payload={"incident": {"id": 1}}, now=now, **kw)


def test_one_row_per_incident_recipient_channel_stage(tmp_path):
    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    first = _q(ob)
    assert first is not None
    assert _q(ob) is None and _q(ob, now=T0 + timedelta(hours=1)) is None
    assert _q(ob, stage="escalation") is not None
    assert _q(ob, channel="sms") is not None
    assert _q(ob, rcpt=Recipient("Dee", "deputy", "dee@town.test")) is not None
    assert len(ob.all()) == 4


def test_backoff_doubles_from_15_s_to_at_most_5_min():
    assert [backoff(n).total_seconds() for n in range(1, 8)] == [15, 30, 60, 120, 240, 300, 300]


def test_retry_schedules_and_due_respects_it(tmp_path):
    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    oid = _q(ob)
    assert [r.id for r in ob.due(T0)] == [oid]
    when = ob.retry(oid, T0, "connection refused")
    assert when == T0 + timedelta(seconds=15)
    assert ob.due(T0 + timedelta(seconds=14)) == []
    row = ob.due(when)[0]
    assert row.attempts == 1 and row.last_error == "connection refused" and row.status == "pending"
    ob.mark_sent(oid, when)
    assert ob.due(when + timedelta(days=1)) == [] and ob.get(oid).status == "sent"


def test_not_before_defers_the_first_attempt(tmp_path):
    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    _q(ob, not_before=T0 + timedelta(minutes=30))
    assert ob.due(T0 + timedelta(minutes=29)) == []
    assert len(ob.due(T0 + timedelta(minutes=30))) == 1


def test_what_delivery_owes_is_due_or_being_retried_and_waits_from_its_due_time(tmp_path):
    """``/metrics``' queue depth and oldest age: a row scheduled for later (an escalation)
    is not owed before its time; a row being retried is owed throughout its back-off, and
    waits from its queuing; a row sent or failed for good is owed no more."""
    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    assert ob.waiting(T0) == (0, None)
    later = _q(ob, stage="escalation", not_before=T0 + timedelta(minutes=30))
    assert ob.waiting(T0 + timedelta(minutes=29)) == (0, None)
    assert ob.waiting(T0 + timedelta(minutes=31)) == (1, T0 + timedelta(minutes=30))   # due since 16:30
    oid = _q(ob, now=T0 + timedelta(minutes=10))
    assert ob.waiting(T0 + timedelta(minutes=20)) == (1, T0 + timedelta(minutes=10))
    ob.retry(oid, T0 + timedelta(minutes=20), "connection refused")      # next attempt in 15 s: still owed
    assert ob.waiting(T0 + timedelta(minutes=20, seconds=1)) == (1, T0 + timedelta(minutes=10))
    ob.fail(oid, T0 + timedelta(minutes=21), "550 no such user")
    ob.mark_sent(later, T0 + timedelta(minutes=31))
    assert ob.waiting(T0 + timedelta(hours=1)) == (0, None)


def test_cancelled_row_is_revived_by_a_new_enqueue(tmp_path):
    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    oid = _q(ob, stage="recovery")
    ob.cancel(oid, "re-opened")
    assert ob.due(T0) == []
    assert _q(ob, stage="recovery", now=T0 + timedelta(hours=1)) == oid
    assert ob.get(oid).status == "pending"


def test_pending_rows_survive_a_new_connection(tmp_path):
    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    ids = [_q(ob, stage=s) for s in ("open", "escalation", "recovery")]
    ob.conn.close()
    again = DeliveryQueue(connect(tmp_path / "o.db"))
    assert [r.id for r in again.due(T0)] == ids


def test_status_is_checked_by_the_database(tmp_path):
    import sqlite3

    ob = DeliveryQueue(connect(tmp_path / "o.db"))
    oid = _q(ob)
    with pytest.raises(sqlite3.IntegrityError):
        ob.conn.execute("UPDATE notification_queue SET status = 'dropped' WHERE id = ?", (oid,))


def test_an_incident_database_from_before_keeps_its_queued_rows(tmp_path):
    """Databases made when the queue table was called ``outbox`` are converted on open."""
    import sqlite3
    db = tmp_path / "old.db"
    q = DeliveryQueue(connect(db))
    oid = _q(q)
    q.conn.close()
    with sqlite3.connect(db) as c:
        c.execute("ALTER TABLE notification_queue RENAME TO outbox")
    q = DeliveryQueue(connect(db))
    assert [r.id for r in q.all("pending")] == [oid]


def test_retry_waits_are_configurable(tmp_path):
    q = DeliveryQueue(connect(tmp_path / "q.db"), retry_first=timedelta(seconds=1), retry_max=timedelta(seconds=3))
    oid = _q(q)
    assert q.retry(oid, T0, "down") == T0 + timedelta(seconds=1)
    assert q.retry(oid, T0, "down") == T0 + timedelta(seconds=2)
    assert q.retry(oid, T0, "down") == T0 + timedelta(seconds=3)
    with pytest.raises(ValueError):
        DeliveryQueue(connect(tmp_path / "q.db"), retry_first=timedelta(seconds=5), retry_max=timedelta(seconds=1))
