import json

import pytest

from ms4watch.contract.firmware import SpoolPolicy
from ms4watch.edge.drivers.base import RawReading
from ms4watch.edge.spool import Spool

T0 = 1_780_000_000_000_000_000


def readings(n, start=0):
    return [RawReading(T0 + (start + i) * 60_000_000_000, "rain", "rain", 0.01, "in", ()) for i in range(n)]


def test_messages_carry_growing_seq_and_survive_reopen(tmp_path):
    path = tmp_path / "s.db"
    sp = Spool(path, "LOG-1")
    sp.append(readings(5))
    m1 = sp.form_message(3)
    m2 = sp.form_message(3)
    assert (m1.seq, m1.n, m2.seq, m2.n) == (1, 3, 2, 2)
    assert sp.form_message(3) is None
    body = json.loads(m1.payload)
    assert body["device"] == "LOG-1" and body["seq"] == 1 and len(body["readings"]) == 3
    sp.close()
    # A crash before the PUBACK: the same message, with the same seq, is still there.
    sp = Spool(path, "LOG-1")
    assert [m.seq for m in sp.unsent(0, 10)] == [1, 2]
    assert sp.unsent(0, 10)[0].payload == m1.payload
    sp.ack(1)
    assert sp.depth() == 2
    sp.append(readings(1, 5))
    assert sp.form_message(10).seq == 3  # never reused
    sp.ack(2)
    sp.ack(3)
    assert sp.depth() == 0 and sp.taken == 6 and sp.dropped == 0


def test_oldest_first_and_bounded_drop_oldest(tmp_path):
    sp = Spool(tmp_path / "s.db", "LOG-1", max_readings=1000, policy=SpoolPolicy.DROP_OLDEST)
    sp.append(readings(900))
    sp.append(readings(300, 900))
    assert sp.depth() == 1000 and sp.dropped == 200
    first = json.loads(sp.form_message(1).payload)["readings"][0]
    assert first["time"] == "2026-05-28T23:46:40Z"  # reading #200 is now the oldest


def test_bounded_refuse_new(tmp_path):
    sp = Spool(tmp_path / "s.db", "LOG-1", max_readings=1000, policy=SpoolPolicy.REFUSE_NEW)
    assert sp.append(readings(900)) == 900
    assert sp.append(readings(300, 900)) == 100
    assert sp.depth() == 1000 and sp.dropped == 200


def test_the_spool_draws_an_epoch_that_its_messages_carry_and_a_new_spool_draws_another(tmp_path):
    """Issue 14: a logger whose spool is lost (reflashed, new SD card) starts again at seq 1;
    the epoch kept in the spool tells its new messages from the ones ingest already stored."""
    sp = Spool(tmp_path / "s.db", "LOG-1")
    first = sp.epoch
    assert 1 <= first < 2**31
    sp.append(readings(2))
    body = json.loads(sp.form_message(1).payload)
    assert (body["epoch"], body["seq"]) == (first, 1)
    sp.close()
    sp = Spool(tmp_path / "s.db", "LOG-1")              # a reboot: same spool, same epoch
    assert sp.epoch == first and json.loads(sp.form_message(1).payload)["seq"] == 2
    sp.close()
    lost = Spool(tmp_path / "new-card.db", "LOG-1")    # the spool lost: seq 1 again, another epoch
    lost.append(readings(1))
    body = json.loads(lost.form_message(1).payload)
    assert body["seq"] == 1 and body["epoch"] == lost.epoch != first
    lost.close()


def test_a_spool_from_before_epochs_gets_one_and_its_formed_messages_keep_theirs(tmp_path):
    import sqlite3
    path = tmp_path / "old.db"
    sp = Spool(path, "LOG-1")
    sp.append(readings(2))
    formed = sp.form_message(1)
    sp.close()
    with sqlite3.connect(path) as db:                   # what an older agent left behind
        db.execute("DELETE FROM meta WHERE key = 'epoch'")
        db.execute("UPDATE outbox SET payload = ? WHERE seq = 1",
                   (formed.payload.replace(b'"epoch":%d,' % json.loads(formed.payload)["epoch"], b""),))
    sp = Spool(path, "LOG-1")
    assert sp.epoch >= 1 and "epoch" not in json.loads(sp.unsent(0, 1)[0].payload)
    assert json.loads(sp.form_message(1).payload)["epoch"] == sp.epoch
    sp.close()


# -- the live path: readings formed into their message as they are spooled ----------------------


def test_live_readings_are_formed_into_a_message_in_their_own_transaction(tmp_path):
    sp = Spool(tmp_path / "s.db", "LOG-1")
    kept, m = sp.append_formed(readings(4), 500)
    assert kept == 4 and (m.seq, m.n) == (1, 4)
    assert sp.pending() == 0 and sp.depth() == 4 and sp.taken == 4
    # the same message form_message would have made from the same readings
    other = Spool(tmp_path / "t.db", "LOG-1")
    other.append(readings(4))
    expected = json.loads(other.form_message(500).payload)
    got = json.loads(m.payload)
    assert got["readings"] == expected["readings"] and got["seq"] == 1
    assert [x.seq for x in sp.unsent(0, 10)] == [1]
    sp.ack(1)
    assert sp.depth() == 0 and sp.unsent(0, 10) == []


def test_offline_or_behind_a_backlog_readings_wait_in_pending(tmp_path):
    sp = Spool(tmp_path / "s.db", "LOG-1")
    assert sp.append_formed(readings(4), 0) == (4, None)          # offline: no message of 4
    assert sp.pending() == 4
    # connected, but older readings wait: they leave first, in order (the uplink forms them)
    assert sp.append_formed(readings(4, 4), 500) == (4, None)
    assert sp.pending() == 8
    m = sp.form_message(500)
    times = [r["time"] for r in json.loads(m.payload)["readings"]]
    assert len(times) == 8 and times == sorted(times)
    # more than one message's worth never goes in one message
    assert sp.append_formed(readings(3, 8), 2) == (3, None)
    assert sp.pending() == 3


def test_live_messages_keep_their_seq_across_a_reopen_until_acknowledged(tmp_path):
    path = tmp_path / "s.db"
    sp = Spool(path, "LOG-1")
    _, m1 = sp.append_formed(readings(2), 500)
    _, m2 = sp.append_formed(readings(2, 2), 500)
    sp.ack(m1.seq)
    sp.close()
    sp = Spool(path, "LOG-1")                       # a crash before m2's PUBACK
    assert [(x.seq, x.payload) for x in sp.unsent(0, 10)] == [(m2.seq, m2.payload)]
    assert sp.unsent(m2.seq, 10) == []
    _, m3 = sp.append_formed(readings(1, 4), 500)
    assert m3.seq == m2.seq + 1 and [x.seq for x in sp.unsent(0, 10)] == [m2.seq, m3.seq]


def test_the_live_path_keeps_the_spools_bound(tmp_path):
    sp = Spool(tmp_path / "s.db", "LOG-1", max_readings=10, policy=SpoolPolicy.REFUSE_NEW)
    sp.append_formed(readings(8), 500)              # in the outbox, not acknowledged
    kept, m = sp.append_formed(readings(4, 8), 500)
    assert kept == 2 and m.n == 2 and sp.dropped == 2 and sp.depth() == 10


def test_a_failed_transaction_leaves_no_trace_in_the_file_or_the_counts(tmp_path, monkeypatch):
    real = Spool._put_message

    def fails_after_forming(self, rows, taken=0):
        real(self, rows, taken)
        raise OSError("disk I/O error")          # as a failing COMMIT would, after the message was put

    sp = Spool(tmp_path / "s.db", "LOG-1")
    sp.append(readings(5))
    live = Spool(tmp_path / "live.db", "LOG-1")
    monkeypatch.setattr(Spool, "_put_message", fails_after_forming)
    with pytest.raises(OSError):
        sp.form_message(10)                              # the uplink's path
    with pytest.raises(OSError):
        live.append_formed(readings(4), 500)             # the agent's live path
    monkeypatch.setattr(Spool, "_put_message", real)
    assert (sp.pending(), sp.depth(), sp.taken, sp.unsent(0, 10)) == (5, 5, 5, [])
    assert (live.pending(), live.depth(), live.taken, live.unsent(0, 10)) == (0, 0, 0, [])
    assert sp.form_message(10).seq == 1                  # no seq used up by the failures
    assert live.append_formed(readings(4), 500)[1].seq == 1 and live.taken == 4


class _InterruptedAfterBegin:
    """The spool's connection, with an exception (a KeyboardInterrupt from a signal) raised
    just after ``BEGIN IMMEDIATE`` has returned, before the transaction's body."""

    def __init__(self, db):
        self._db = db
        self.armed = True

    def execute(self, sql, *args):
        cur = self._db.execute(sql, *args)
        if sql == "BEGIN IMMEDIATE" and self.armed:
            self.armed = False
            raise KeyboardInterrupt
        return cur

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_an_exception_as_the_transaction_begins_leaves_none_open(tmp_path):
    """Left open, the next acknowledgement fails ('Safety level may not be changed inside a
    transaction') in paho's thread, and nothing else the spool holds is ever acknowledged."""
    sp = Spool(tmp_path / "s.db", "LOG-1")
    sp.append(readings(3))
    sp._db = _InterruptedAfterBegin(sp._db)
    with pytest.raises(KeyboardInterrupt):
        sp.append(readings(2, start=3))
    assert not sp._db.in_transaction
    m = sp.form_message(10)
    sp.ack(m.seq)
    assert (m.n, sp.depth(), sp.taken) == (3, 0, 3)


def test_the_spool_and_its_wal_are_the_loggers_alone(tmp_path):
    """A logger's spool was 0644 (readable by any account on the Pi); it is 0600 from its
    creation, its WAL and shared-memory files too, and an old spool is narrowed when opened."""
    import os
    import stat
    old = os.umask(0o022)
    try:
        sp = Spool(tmp_path / "LOG-1.spool.db", "LOG-1")
        sp.append(readings(3))
        made = sorted(tmp_path.glob("LOG-1.spool.db*"))
        assert {p.name for p in made} >= {"LOG-1.spool.db", "LOG-1.spool.db-wal"}
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in made} == {p.name: 0o600 for p in made}
        sp.close()
        (tmp_path / "LOG-1.spool.db").chmod(0o644)       # a spool made before
        Spool(tmp_path / "LOG-1.spool.db", "LOG-1").close()
        assert stat.S_IMODE((tmp_path / "LOG-1.spool.db").stat().st_mode) == 0o600
    finally:
        os.umask(old)
