"""Process killed with messages pending (kill -9), then a fresh process delivers each once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from ms4watch.alerts.incidents import connect
from ms4watch.alerts.delivery.queue import DeliveryQueue
from tests.support.notify_peers import SmtpSink

REPO = Path(__file__).resolve().parents[3]


def _worker(mode: str, db: Path, url: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.alerts.delivery._worker", mode, str(db), url],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_killed_with_messages_pending_then_restarted_delivers_each_once(tmp_path):
    db = tmp_path / "inc.db"
    sink = SmtpSink()  # not started: SMTP is down while the first process runs
    first = _worker("enqueue", db, sink.url)
    line = first.stdout.readline()
    assert line.startswith("READY"), first.stderr.read()
    pending = int(line.split()[1])
    assert pending == 6  # 3 x Pat (dry-weather flow) + inspection: Pat, Ian, Sam
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    assert first.returncode == -signal.SIGKILL

    rows = DeliveryQueue(connect(db)).all()
    assert len(rows) == pending and all(r.status == "pending" for r in rows)
    assert sum(r.attempts for r in rows) == 2  # tried (SMTP down), then the channel rested for the tick

    sink.start()
    try:
        second = _worker("deliver", db, sink.url)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert "DONE" in out
        keys = [m["X-MS4Watch-Key"] for m in sink.messages]
        assert sorted(keys) == sorted({r.key for r in rows})  # every one, once
        # A third start finds nothing left to send.
        third = _worker("deliver", db, sink.url)
        third.communicate(timeout=60)
        assert len(sink.messages) == pending
    finally:
        sink.stop()
