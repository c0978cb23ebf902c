"""The incident service: what the engine reports and what people do, in one transaction
each with the notifications it causes.

``handle(event)`` creates or updates the incident of the event's episode and lets the
dispatcher queue its notifications in the same SQLite transaction, then wakes the delivery
worker. ``acknowledge``, ``resolve``, ``record_inspection`` and ``inbound_sms`` are the
people's side (web page, SMS reply, terminal). Nothing here waits on a network server.
"""

from __future__ import annotations

import builtins
import logging
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Iterator

from ms4watch.contract.registry import Registry

from ..events import AlertEvent, AlertKind
from ...sqlite import Synchronous, transaction
from .model import Incident
from .sms_auth import ReplyLimiter
from .store import Change, IncidentStore

if TYPE_CHECKING:
    from ..delivery.dispatch import Dispatcher
    from .sms_replies import SmsReply
    from ..delivery.queue import QueuedNotification
    from .model import AuditEntry, State

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class Operations:
    """The incident database as the server's ``/metrics`` shows it (:meth:`IncidentService.operations`)."""

    unresolved: dict[tuple[str, str], int]   # (kind, state: open | acknowledged) -> incidents
    queue: dict[str, int]                    # notification rows by status
    owed: int                                # rows delivery owes now: due, or being retried
    owed_since: datetime | None              # when the longest-waiting of them began to wait


class IncidentService:
    def __init__(self, registry: Registry, store: IncidentStore, dispatcher: "Dispatcher", lock: threading.RLock,
                 *, clock: Clock | None = None, on_incident: Callable[[Incident], None] | None = None,
                 sms_limiter: ReplyLimiter | None = None):
        """``store`` and ``dispatcher`` share one incident database and ``lock``;
        ``sms_limiter`` bounds SMS replies per sender and attempts per incident."""
        self.registry = registry
        self.store = store
        self.conn = store.conn
        self.dispatcher = dispatcher
        self._lock = lock
        self.clock: Clock = clock or (lambda: datetime.now(timezone.utc))
        self.on_incident = on_incident  # told of every incident change (dashboards' incident records)
        self.sms_limiter = sms_limiter if sms_limiter is not None else ReplyLimiter()
        self._data_version: int | None = None   # see changed_elsewhere

    # -- the engine's events -------------------------------------------------------------
    def handle(self, event: AlertEvent, *, replayable: bool = False) -> Change:
        """Create/update the episode's incident and queue its notifications (atomically).
        Handling the same event twice changes nothing. Returns what it changed.

        ``replayable``: the caller can make this event again after a power cut (the alert
        pipeline: the engine re-fed from its checkpoint), so the commit is not fsynced
        (``synchronous=NORMAL`` for this one transaction; a killed process loses nothing, a
        power cut may lose it) and :meth:`make_durable` syncs it before the caller's checkpoint."""
        item = event.overdue_of
        if item is not None:   # the engine's escalation of an inspection item: that item's OVERDUE stage
            event = AlertEvent(AlertKind.INSPECTION_DUE, item, event.fields, event.params, event.provision, event.status)
        with self._lock:
            now = self.clock()
            with self._synchronous(Synchronous.NORMAL if replayable else None), transaction(self.conn):
                change = self.store.apply_event(event, now)
                if change.incident is not None:
                    self._told(change.incident)
                self.dispatcher.plan(change, now, overdue=item is not None)
        self.dispatcher.wake()
        return change

    def make_durable(self) -> None:
        """Every commit so far on disk, those :meth:`handle` made ``replayable`` included: the
        write-ahead log fsynced (SQLite syncs it only at its checkpoints in ``NORMAL``; a later
        ``FULL`` commit, e.g. the delivery worker's, syncs it too). The alert pipeline calls it
        before it checkpoints the engine's state: the state on disk never runs ahead of the
        incidents it raised, so a power cut loses only what a re-feed raises again."""
        with self._lock:
            path = self.conn.execute("PRAGMA database_list").fetchone()[2]   # (seq, name, file)
            if not path:
                return      # in memory
            wal = path + "-wal"
            try:
                fd = os.open(wal, os.O_RDONLY)
            except FileNotFoundError:   # nothing written since the log was last checkpointed and removed
                return
            try:
                os.fsync(fd)   # the file's pages, whichever descriptor wrote them
            finally:
                os.close(fd)

    @contextmanager
    def _synchronous(self, mode: Synchronous | None) -> Iterator[None]:
        """This connection's ``PRAGMA synchronous`` set to ``mode`` for the block, then back to
        ``FULL`` (the incident database's: ``db.connect``). None, or a transaction already open
        (SQLite refuses to change it inside one): unchanged."""
        if mode is None or mode is Synchronous.FULL or self.conn.in_transaction:
            yield
            return
        self.conn.execute(f"PRAGMA synchronous={mode.value}")
        try:
            yield
        finally:
            if self.conn.in_transaction:   # a COMMIT that failed (busy) leaves it open: the block's, undone
                self.conn.execute("ROLLBACK")
            self.conn.execute(f"PRAGMA synchronous={Synchronous.FULL.value}")

    # -- people ---------------------------------------------------------------------------
    def get(self, iid: int) -> Incident:
        with self._lock:
            return self.store.get(iid)

    def find(self, ref: int | str) -> Incident:
        """By id or acknowledge code (IncidentError when there is none)."""
        with self._lock:
            return self.store.find(ref)

    def acknowledge(self, ref: int | str, *, by: str, how: str = "api", note: str | None = None) -> Incident:
        with self._lock:
            inc = self._told(self.store.acknowledge(ref, by=by, how=how, now=self.clock(), note=note))
        self.dispatcher.wake()   # an escalation waiting for it is cancelled at the next tick
        return inc

    def review(self, ref: int | str, *, by: str, how: str = "api", note: str | None = None) -> Incident:
        """Acknowledge an episode that ended by itself before anyone did (it stays resolved)."""
        with self._lock:
            return self._told(self.store.review(ref, by=by, how=how, now=self.clock(), note=note))

    def ended_unreviewed(self, limit: int = 1000) -> list[Incident]:
        with self._lock:
            return self.store.ended_unreviewed(limit)

    def resolve(self, ref: int | str, *, by: str, note: str, how: str = "api") -> Incident:
        with self._lock:
            inc = self._told(self.store.resolve(ref, by=by, how=how, now=self.clock(), note=note))
        self.dispatcher.wake()
        return inc

    def record_inspection(self, site: str, *, at: datetime, by: str, note: str | None = None,
                          how: str = "api") -> list[Incident]:
        with self._lock:
            done = self.store.record_inspection(site, at=at, by=by, now=self.clock(), note=note, how=how)
            for inc in done:
                self._told(inc)
        self.dispatcher.wake()
        return done

    def inbound_sms(self, content_type: str, body: bytes) -> SmsReply:
        """The inbound-SMS webhook (see alerts/notifiers/sms/README.md). ValueError on a bad body."""
        from .sms_replies import handle_reply, parse_inbound   # the workbench's: not on a server's path to its first reading
        msg = parse_inbound(content_type, body)
        with self._lock:
            reply = handle_reply(self.store, self.dispatcher.contacts, msg, self.clock(), self.sms_limiter)
            if reply.incident is not None:
                self._told(reply.incident)
        self.dispatcher.wake()
        return reply

    # -- reading (the workbench's pages and API) ----------------------------------------------
    def list(self, states: "list[State] | None" = None, *, kind: str | None = None, subject: str | None = None,
             limit: int = 1000, offset: int = 0) -> list[Incident]:
        with self._lock:
            return self.store.list(states, limit, kind=kind, subject=subject, offset=offset)

    def audit(self, iid: int) -> "builtins.list[AuditEntry]":
        with self._lock:
            return self.store.audit(iid)

    def notifications(self, iid: int) -> "builtins.list[QueuedNotification]":
        with self._lock:
            return self.dispatcher.queue.for_incident(iid)

    def delivery_backlog(self) -> tuple[dict[str, int], datetime | None]:
        """The delivery queue's rows by status, and when its longest-waiting due row fell due."""
        with self._lock:
            queue = self.dispatcher.queue
            return queue.counts(), queue.oldest_due(self.clock())

    def operations(self) -> "Operations":
        """What ``/metrics`` reads of the incident database, in one locked read: incidents not
        resolved by (kind, state), the delivery queue's rows by status, the rows delivery owes
        now and when the longest-waiting of them began to wait (``NotificationQueue.waiting``)."""
        with self._lock:
            queue = self.dispatcher.queue
            owed, since = queue.waiting(self.clock())
            return Operations(self.store.unresolved_counts(), queue.counts(), owed, since)

    def inspections(self) -> builtins.list[tuple[int, str, datetime, str, str | None]]:
        """Every inspection recorded: (id, site, at, who, note), oldest first."""
        with self._lock:
            return self.store.inspections_after(0)

    def changed_elsewhere(self) -> bool:
        """Whether another connection (``ms4watch incidents`` in another process) committed to
        the incident database since the last call: SQLite's ``PRAGMA data_version``, which
        this connection's own commits leave alone. True at the first call. The server asks at
        every clock tick; it costs no read of any table."""
        with self._lock:
            version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        seen, self._data_version = self._data_version, version
        return seen != version

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def _told(self, inc: Incident) -> Incident:
        if self.on_incident is not None:
            try:
                self.on_incident(inc)
            except Exception:  # a dashboard record must never cost an alert
                log.exception("on_incident consumer failed for incident %s", inc.id)
        return inc


__all__ = ["IncidentService", "Operations"]
