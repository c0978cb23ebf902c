from __future__ import annotations

import pytest

from tests.support.notify_peers import SmtpSink


@pytest.fixture
def smtp():
    sink = SmtpSink().start()
    yield sink
    sink.stop()
