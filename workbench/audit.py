"""The workbench's append-only audit log: every write made through it — who, when, what,
from where — in ``workbench.db``. SQLite triggers refuse UPDATE and DELETE, as they do for
the incident log (``alerts/incidents/store.py``), which keeps its own rows (who, how) too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ..sqlite import transaction
from .roles import Actor
from .records.table import RecordTable, append_only

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    who TEXT NOT NULL,                -- user name, or the name typed on an acknowledge link, or a phone number
    role TEXT,                        -- the role the action was allowed under (none for a link or an SMS)
    via TEXT NOT NULL,                -- web, api, email link, sms, terminal
    address TEXT,                     -- the client's IP address
    municipality TEXT NOT NULL,
    action TEXT NOT NULL,             -- incident.acknowledge, user.add, ...
    target TEXT,                      -- incident:12, user:pat
    detail TEXT,
    outcome TEXT NOT NULL DEFAULT 'done'   -- done, or refused: why
);
CREATE INDEX IF NOT EXISTS audit_target ON audit (target, id);
""" + append_only("audit", changed="the audit log is append-only", deleted="the audit log is append-only")


@dataclass(frozen=True)
class AuditRecord:
    id: int
    at: datetime
    who: str
    role: str | None
    via: str
    address: str | None
    municipality: str
    action: str
    target: str | None
    detail: str | None
    outcome: str


class AuditLog(RecordTable):
    SCHEMA = SCHEMA

    def record(self, actor: Actor, action: str, *, target: str | None = None, detail: str | None = None,
               outcome: str = "done") -> None:
        self.write(who=actor.username, role=actor.role.value, via=actor.via.value, address=actor.address,
                   municipality=actor.municipality, action=action, target=target, detail=detail, outcome=outcome)

    def write(self, *, who: str, via: str, municipality: str, action: str, role: str | None = None,
              address: str | None = None, target: str | None = None, detail: str | None = None,
              outcome: str = "done") -> None:
        at = self.clock().astimezone(timezone.utc).isoformat(timespec="milliseconds")
        with self._lock, transaction(self.conn):
            self.conn.execute(
                "INSERT INTO audit (at, who, role, via, address, municipality, action, target, detail, outcome)"
                " VALUES (?,?,?,?,?,?,?,?,?,?)",
                (at, who, role, via, address, municipality, action, target, detail, outcome))

    def entries(self, *, target: str | None = None, limit: int = 1000) -> list[AuditRecord]:
        """Newest first."""
        q = "SELECT * FROM audit" + (" WHERE target = ?" if target else "") + " ORDER BY id DESC LIMIT ?"
        with self._lock:
            rows = self.conn.execute(q, (target, limit) if target else (limit,)).fetchall()
        return [AuditRecord(r["id"], datetime.fromisoformat(r["at"]), r["who"], r["role"], r["via"], r["address"],
                            r["municipality"], r["action"], r["target"], r["detail"], r["outcome"]) for r in rows]


__all__ = ["AuditLog", "AuditRecord"]
