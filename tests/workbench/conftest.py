from __future__ import annotations

import pytest

from tests.support.influx_fixtures import influxd  # noqa: F401 (fixture: test_server_metrics.py)
from tests.support.notify_peers import Clock, utc
from tests.support.workbench import start_bench

T0 = utc(2026, 6, 1, 16, 0)


@pytest.fixture
def clock():
    return Clock(T0)


@pytest.fixture
def bench(tmp_path, clock):
    b = start_bench(tmp_path, clock)
    yield b
    b.close()


@pytest.fixture
def smtp():
    from tests.support.notify_peers import SmtpSink
    sink = SmtpSink().start()
    yield sink
    sink.stop()


@pytest.fixture
def mailing_bench(tmp_path, clock, smtp):
    """A workbench whose incidents email the registry's contacts through a real SMTP server."""
    b = start_bench(tmp_path, clock, urls=[smtp.url])
    yield b
    b.close()
