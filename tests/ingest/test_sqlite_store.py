import sqlite3

import pytest

from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.errors import StoreUnavailable
from ms4watch.ingest.stores import build_store
from ms4watch.ingest.stores.base import StoredMessage
from ms4watch.ingest.stores.sqlite import SqliteStore


def msg(device, seq, n=3):
    return StoredMessage(device, seq, tuple(
        CanonicalReading(1_780_000_000_000_000_000 + i, "OF-1", device, "flow", "flow", 1.0 + i, "gpm", "", seq)
        for i in range(n)))


def test_each_device_seq_is_written_once(tmp_path):
    sink = build_store(f"sqlite:///{tmp_path}/store.db")
    assert isinstance(sink, SqliteStore)
    sink.open()
    r1 = sink.write([msg("A", 1), msg("A", 2), msg("B", 1)])
    r2 = sink.write([msg("A", 2), msg("A", 3)])   # A/2 redelivered
    r3 = sink.write([msg("C", 1), msg("C", 1), msg("C", 2)])   # redelivered within one batch
    assert (r1.readings_written, r1.duplicate_messages) == (9, 0)
    assert (r2.readings_written, r2.duplicate_messages) == (3, 1)
    assert (r3.readings_written, r3.duplicate_messages) == (6, 1)
    assert sink.count_readings() == 18
    assert sink.query("SELECT count(*) FROM messages")[0][0] == 6
    sink.close()
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    assert sink.count_readings() == 18  # durable
    assert sink.query("PRAGMA journal_mode")[0][0] == "wal"


def test_unwritable_store_is_unavailable_not_a_crash(tmp_path):
    (tmp_path / "afile").write_text("not a directory")
    sink = SqliteStore(tmp_path / "afile" / "sub" / "x.db")
    with pytest.raises(StoreUnavailable, match="cannot open"):
        sink.open()
    with pytest.raises(StoreUnavailable, match="not open"):
        sink.write([msg("A", 1)])


@pytest.mark.parametrize("url", ["sqlite://", "postgres://x", "sqlite:relative.db"])
def test_bad_store_urls(url):
    with pytest.raises(ValueError):
        build_store(url)


def test_status_keeps_the_latest_calibration_per_sensor(tmp_path):
    from datetime import date

    from ms4watch.contract.wire import SensorCalibration
    from ms4watch.ingest.stores.base import DeviceStatus

    def cal(sensor, performed, due, station=None):
        return SensorCalibration(sensor=sensor, performed=date.fromisoformat(performed), due=date.fromisoformat(due),
                                 station=station)

    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    rows = lambda: sink.query("SELECT * FROM calibration ORDER BY device, sensor")  # noqa: E731
    T = 1_780_000_000_000_000_000
    sink.write_status(DeviceStatus("LOG-1", "OF-1", T, "online", calibrations=(
        cal("flow", "2026-01-05", "2026-07-05"), cal("rain", "2026-04-07", "2026-10-07", station="RG-1"))))
    sink.write_status(DeviceStatus("LOG-2", "DS-1", T, "online", calibrations=(cal("turb", "2026-05-20", "2026-06-19"),)))
    assert rows() == [("LOG-1", "flow", "OF-1", "2026-01-05", "2026-07-05", T),
                      ("LOG-1", "rain", "RG-1", "2026-04-07", "2026-10-07", T),
                      ("LOG-2", "turb", "DS-1", "2026-05-20", "2026-06-19", T)]
    # recalibrated flow meter; the rain gauge's block removed from the config: gone
    sink.write_status(DeviceStatus("LOG-1", "OF-1", T + 10, "online", calibrations=(cal("flow", "2026-07-01", "2027-01-01"),)))
    # saying nothing about calibration (the last will, an older logger) changes nothing
    sink.write_status(DeviceStatus("LOG-1", "OF-1", T + 20, "offline"))
    # a status received earlier than what is stored does not overwrite it
    sink.write_status(DeviceStatus("LOG-2", "DS-1", T - 10, "online", calibrations=(cal("turb", "2026-04-20", "2026-05-20"),)))
    assert rows() == [("LOG-1", "flow", "OF-1", "2026-07-01", "2027-01-01", T + 10),
                      ("LOG-2", "turb", "DS-1", "2026-05-20", "2026-06-19", T)]
    assert sink.query("SELECT state FROM device_status WHERE device = 'LOG-1'") == [("offline",)]
    sink.write_status(DeviceStatus("LOG-2", "DS-1", T + 30, "online", calibrations=()))  # none calibrated now
    assert [r[:2] for r in rows()] == [("LOG-1", "flow")]
    sink.close()
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    assert [r[:2] for r in rows()] == [("LOG-1", "flow")]   # durable
    sink.close()


def test_status_on_a_store_made_before_the_calibration_table(tmp_path):
    import sqlite3

    from ms4watch.ingest.stores.base import DeviceStatus
    from ms4watch.ingest.stores.sqlite.store import SCHEMA
    db = sqlite3.connect(tmp_path / "old.db")
    db.executescript(SCHEMA.split("CREATE TABLE IF NOT EXISTS calibration")[0])   # the tables before it
    db.close()
    sink = SqliteStore(tmp_path / "old.db")
    sink.open()                                     # adds the table
    sink.write_status(DeviceStatus("LOG-1", "OF-1", 1, "online", calibrations=()))
    assert sink.query("SELECT count(*) FROM calibration") == [(0,)]
    sink.close()


def test_readings_are_stored_once_per_series_and_read_back_through_the_view(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    sink.write([msg("A", 1), msg("A", 2), msg("B", 1, n=2)])
    assert sink.query("SELECT device, count(*) FROM series GROUP BY device") == [("A", 1), ("B", 1)]
    rows = sink.query("SELECT * FROM readings WHERE device = 'A' AND seq = 2 ORDER BY time_ns")
    assert rows == [tuple(r) for r in msg("A", 2).readings]
    sink.close()
    again = SqliteStore(tmp_path / "store.db")        # series ids are found again on reopening
    again.open()
    again.write([msg("A", 3)])
    assert again.query("SELECT count(*) FROM series")[0][0] == 2 and again.count_readings() == 11
    again.close()


def test_a_store_of_the_first_layout_is_converted_when_opened(tmp_path):
    import sqlite3
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:                # the layout of ms4watch before series/samples
        db.executescript("""
            CREATE TABLE messages (device TEXT NOT NULL, seq INTEGER NOT NULL, received_ns INTEGER NOT NULL,
                n INTEGER NOT NULL, PRIMARY KEY (device, seq)) WITHOUT ROWID;
            CREATE TABLE readings (time_ns INTEGER NOT NULL, station TEXT NOT NULL, device TEXT NOT NULL,
                sensor TEXT NOT NULL, quantity TEXT NOT NULL, value REAL, unit TEXT NOT NULL, flags TEXT NOT NULL,
                seq INTEGER NOT NULL);
            CREATE INDEX readings_station_time ON readings (station, quantity, time_ns);""")
        old = [tuple(r) for m in (msg("A", 1), msg("B", 7)) for r in m.readings]
        db.executemany("INSERT INTO readings VALUES (?,?,?,?,?,?,?,?,?)", old)
        db.executemany("INSERT INTO messages VALUES (?,?,0,3)", [("A", 1), ("B", 7)])
    sink = SqliteStore(path)
    sink.open()
    assert sorted(sink.query("SELECT * FROM readings")) == sorted(old)
    r = sink.write([msg("A", 1), msg("A", 2)])       # the duplicate filter came along
    assert (r.readings_written, r.duplicate_messages) == (3, 1)
    assert sink.count_readings() == 9
    assert sink.query("SELECT type FROM sqlite_master WHERE name = 'readings'") == [("view",)]
    assert sink.query("SELECT device, epoch, seq, digest FROM messages WHERE device = 'B'") == [("B", 0, 7, None)]
    sink.close()


def test_a_store_from_before_epochs_is_converted_when_opened(tmp_path):
    """Its messages become epoch 0 with no digest: redeliveries of them are still duplicates."""
    import sqlite3
    path = tmp_path / "old.db"
    sink = SqliteStore(path)
    sink.open()
    sink.write([msg("A", 1), msg("A", 2)])
    sink.close()
    with sqlite3.connect(path) as db:                # the messages table as it was before epochs
        db.executescript("""
            DROP TABLE messages;
            CREATE TABLE messages (device TEXT NOT NULL, seq INTEGER NOT NULL, received_ns INTEGER NOT NULL,
                n INTEGER NOT NULL, PRIMARY KEY (device, seq)) WITHOUT ROWID;
            INSERT INTO messages VALUES ('A', 1, 5, 3), ('A', 2, 5, 3);""")
    sink = SqliteStore(path)
    sink.open()
    assert sink.query("SELECT device, epoch, seq, received_ns, n, digest FROM messages") == [
        ("A", 0, 1, 5, 3, None), ("A", 0, 2, 5, 3, None)]
    r = sink.write([msg("A", 2)._replace(digest=12345678), msg("A", 3), msg("A", 1)._replace(epoch=44)])
    assert (r.readings_written, r.duplicate_messages, r.conflicts) == (6, 1, ())
    sink.close()
    sink = SqliteStore(path)
    sink.open()                                      # converted once
    assert sink.query("SELECT count(*) FROM messages") == [(4,)]
    sink.close()


def test_a_repeated_message_with_other_content_is_a_conflict_not_a_duplicate(tmp_path):
    """Issue 14: a logger whose sequence restarted had every new message dropped as a
    duplicate. (device, epoch, seq) is the key; under one key, the digest of the payload
    tells a redelivery (a duplicate) from another message (a conflict: not written, reported)."""
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    first = [msg("A", s)._replace(epoch=5, digest=1000 + s) for s in (1, 2)]
    assert sink.write(first).readings_written == 6
    restarted = [msg("A", s, n=2)._replace(epoch=5, digest=2000 + s) for s in (1, 2)]
    new_epoch = [m._replace(epoch=6) for m in restarted]
    r = sink.write([first[0], restarted[0], new_epoch[0], restarted[1], new_epoch[1], msg("A", 2)._replace(epoch=5)])
    assert (r.readings_written, r.duplicate_messages) == (4, 2)      # the new epoch; a redelivery, an unknown digest
    assert [(m.epoch, m.seq) for m, _ in r.conflicts] == [(5, 1), (5, 2)]
    assert "A epoch 5 seq 1 is stored already with other content (received 20" in r.conflicts[0][1]
    assert sink.query("SELECT epoch, seq, n FROM messages ORDER BY epoch, seq") == [(5, 1, 3), (5, 2, 3), (6, 1, 2),
                                                                                    (6, 2, 2)]
    assert sink.count_readings() == 10
    sink.close()


@pytest.mark.parametrize("n", [0, 1, 49, 50, 4999, 5000, 5049, 10051])
def test_multi_row_inserts_write_every_row_in_order(n):
    import sqlite3
    from ms4watch.ingest.stores.sqlite.store import insert_rows
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (a INTEGER, b TEXT)")
    rows = [(i, f"r{i}") for i in range(n)]
    insert_rows(db, "INSERT INTO t", 2, rows)
    assert db.execute("SELECT a, b FROM t ORDER BY rowid").fetchall() == rows


def test_data_the_store_cannot_hold_is_refused_message_by_message_not_retried(tmp_path):
    """Issue 14: an integer beyond 64 bits made SQLite raise OverflowError, which ingest took
    for an outage and retried for ever. It is the data's fault: those messages are refused,
    the rest of the batch is written, and the store goes on taking writes."""
    from ms4watch.ingest.errors import MessagesRejected
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    huge_seq = msg("A", 2**63)
    huge_time = StoredMessage("A", 7, (msg("A", 7).readings[0]._replace(time_ns=2**64),))
    no_flags = StoredMessage("B", 1, (msg("B", 1).readings[0]._replace(flags=None),))     # NOT NULL
    not_a_number = StoredMessage("B", 2, (msg("B", 2).readings[0]._replace(value=[1.0]),))
    with pytest.raises(MessagesRejected) as e:
        sink.write([msg("A", 1), huge_seq, msg("A", 2), huge_time, no_flags, not_a_number, msg("A", 1), msg("C", 1)])
    assert [(m.device, m.seq, reason.split(":")[0]) for m, reason in e.value.rejected] == [
        ("A", 2**63, "OverflowError"), ("A", 7, "OverflowError"), ("B", 1, "IntegrityError"),
        ("B", 2, "ProgrammingError")]
    assert (e.value.result.readings_written, e.value.result.duplicate_messages) == (9, 1)
    assert "4 of 8 messages refused (A seq 9223372036854775808: OverflowError" in str(e.value)
    assert sink.count_readings() == 9
    assert sink.query("SELECT device, seq FROM messages ORDER BY device, seq") == [("A", 1), ("A", 2), ("C", 1)]
    assert sink.write([msg("A", 3)]).readings_written == 3          # nothing left behind
    assert sink.query("SELECT count(*) FROM series")[0][0] == 2    # no series of a refused message
    sink.close()


@pytest.mark.parametrize("error, data", [
    (OverflowError("Python int too large to convert to SQLite INTEGER"), True),
    (sqlite3.IntegrityError("NOT NULL constraint failed: samples.flags"), True),
    (sqlite3.ProgrammingError("Error binding parameter 3: type 'list' is not supported"), True),
    (sqlite3.ProgrammingError("Cannot operate on a closed database."), False),
    (sqlite3.OperationalError("database is locked"), False),
    (sqlite3.OperationalError("database or disk is full"), False),
    (sqlite3.DatabaseError("database disk image is malformed"), False),
])
def test_what_is_the_datas_fault(error, data):
    from ms4watch.ingest.stores.sqlite.store import is_data_fault
    assert is_data_fault(error) is data


def test_the_payload_digest_tells_the_same_bytes_from_others():
    from ms4watch.ingest.stores.base import payload_digest
    payload = b'{"schema":"ms4watch.readings/1","device":"LOG-1","seq":7,"readings":[]}'
    assert payload_digest(payload) == payload_digest(bytes(payload))
    assert payload_digest(payload.replace(b"7", b"8")) != payload_digest(payload)
    assert payload_digest(payload + b" ") != payload_digest(payload)
    assert 0 <= payload_digest(b"x" * 16 * 2**20) < 2**63       # an SQLite INTEGER, whatever ingest takes
