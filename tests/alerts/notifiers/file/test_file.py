"""The notifications file: readable entries appended, and printed."""

from __future__ import annotations

import io

from ms4watch.alerts.notifiers.base import Recipient
from ms4watch.alerts.notifiers.file import FileNotifier


def test_appends_readable_entries_and_prints_them(tmp_path, make_notification):
    out = io.StringIO()
    path = tmp_path / "var" / "notifications.txt"
    notifier = FileNotifier(path, stream=out)
    feed = Recipient(f"file:{path}", "feed", str(path))
    a = make_notification(channel="file", recipient=feed, routed_to=["Pat SMO (smo)"])
    b = make_notification(channel="file", recipient=feed, stage="escalation", routed_to=["Dee Deputy (deputy)"])
    notifier.send(a)
    notifier.send(b)
    text = path.read_text()
    assert text == out.getvalue()
    assert text.count("=" * 72) == 2
    assert "OPEN #1" in text and "To: Pat SMO (smo)" in text
    assert "ESCALATION #1" in text and "To: Dee Deputy (deputy)" in text
    assert "Peak flow         4.2 gpm" in text and f"ms4watch incidents ack {a.incident['code']}" in text


def test_nobody_routed_is_said_plainly(tmp_path, make_notification):
    path = tmp_path / "o.txt"
    FileNotifier(path, stream=io.StringIO()).send(make_notification(channel="file"))
    assert "no contact in the registry routes this" in path.read_text()
