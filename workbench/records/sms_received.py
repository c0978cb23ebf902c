"""Inbound SMS webhook posts already taken, by the provider's message id (Twilio's
``MessageSid``), in ``workbench.db``: a signed request replayed later is recognised and not
acted on again (a signature proves who sent a body, not that it is new)."""

from __future__ import annotations

from datetime import datetime, timezone

from ...sqlite import transaction
from .table import RecordTable

SCHEMA = """
CREATE TABLE IF NOT EXISTS sms_received (
    message_id TEXT PRIMARY KEY,      -- the provider's id, else sha256:<hex of the body>
    municipality TEXT NOT NULL,
    received_at TEXT NOT NULL
);
"""


class ReceivedSms(RecordTable):
    SCHEMA = SCHEMA

    def first_time(self, message_id: str, *, municipality: str, at: datetime) -> bool:
        """Record the message; False when it was recorded before (a replay)."""
        with self._lock, transaction(self.conn):
            cur = self.conn.execute("INSERT OR IGNORE INTO sms_received (message_id, municipality, received_at)"
                                    " VALUES (?,?,?)",
                                    (message_id, municipality, at.astimezone(timezone.utc).isoformat()))
            return cur.rowcount == 1

    def forget(self, message_id: str) -> None:
        """A message whose handling failed: the provider's retry is taken."""
        with self._lock, transaction(self.conn):
            self.conn.execute("DELETE FROM sms_received WHERE message_id = ?", (message_id,))


__all__ = ["ReceivedSms"]
