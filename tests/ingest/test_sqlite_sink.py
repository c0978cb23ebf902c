import pytest

from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.errors import StoreUnavailable
from ms4watch.ingest.sinks import open_sink
from ms4watch.ingest.sinks.base import StoredMessage
from ms4watch.ingest.sinks.sqlite import SqliteSink


def msg(device, seq, n=3):
    return StoredMessage(device, seq, tuple(
        CanonicalReading(1_780_000_000_000_000_000 + i, "OF-1", device, "flow", "flow", 1.0 + i, "gpm", "", seq)
        for i in range(n)))


def test_each_device_seq_is_written_once(tmp_path):
    sink = open_sink(f"sqlite:///{tmp_path}/store.db")
    assert isinstance(sink, SqliteSink)
    sink.open()
    r1 = sink.write([msg("A", 1), msg("A", 2), msg("B", 1)])
    r2 = sink.write([msg("A", 2), msg("A", 3)])   # A/2 redelivered
    assert (r1.readings_written, r1.duplicate_messages) == (9, 0)
    assert (r2.readings_written, r2.duplicate_messages) == (3, 1)
    assert sink.count_readings() == 12
    sink.close()
    sink = SqliteSink(tmp_path / "store.db")
    sink.open()
    assert sink.count_readings() == 12  # durable
    assert sink.query("PRAGMA journal_mode")[0][0] == "wal"


def test_unwritable_store_is_unavailable_not_a_crash(tmp_path):
    (tmp_path / "afile").write_text("not a directory")
    sink = SqliteSink(tmp_path / "afile" / "sub" / "x.db")
    with pytest.raises(StoreUnavailable, match="cannot open"):
        sink.open()
    with pytest.raises(StoreUnavailable, match="not open"):
        sink.write([msg("A", 1)])


@pytest.mark.parametrize("url", ["sqlite://", "postgres://x", "sqlite:relative.db"])
def test_bad_store_urls(url):
    with pytest.raises(ValueError):
        open_sink(url)
