"""The dispatcher: which notifications an incident change causes, and their delivery.

``plan(change, now)`` runs inside the incident transaction (the incident service calls it)
and only writes rows into the durable queue — who hears of the change, over which channel,
at which stage. ``tick()`` is the delivery worker's unit of work: escalations of what nobody
acknowledged, deadline reminders, digests of held notices, then every due row is sent.
Nothing that waits on a network server runs anywhere but in ``tick``.

The backlog: an item whose deadline passed before the server first ran (``first_run``: a
construction site active for weeks before the town installed ms4watch owes every weekly
inspection since) is an incident like any other, but it is not told on its own: its rows
are held, and one summary per recipient lists them all (``summarise_backlog``), outside the
daily cap, so the first start does not spend the day's messages on the past.

    incidents = IncidentService(registry, db, store, dispatcher)   # handle(event) → plan(...)
    worker = DeliveryWorker(dispatcher.tick); dispatcher.wake = worker.wake
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable

from ms4watch.contract.registry import Contact, Registry, Role

from ..events import AlertKind
from ..incidents import IncidentStore, transaction
from ..incidents.model import Incident, Priority, Stage, State, from_iso, iso
from ..incidents.store import Change
from ..kinds import spec_for, words_of
from ..notifiers.base import Notifier, PermanentError, Recipient, RetryableError
from ..notifiers.urls import Channels
from .queue import BACKOFF_FIRST, BACKOFF_MAX, DeliveryQueue, QueuedNotification
from .routing import RoutingPolicy, Verdict, decide, local_day_bounds, next_local, recipients

if TYPE_CHECKING:
    from ms4watch.network.sites import SiteReaches

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]
AckLink = Callable[[Incident], str]   # the acknowledge link of an incident (signed, expiring: the workbench's)
Reaches = Callable[[], "SiteReaches | None"]   # the town's sites on its latest map (None: no map imported)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Dispatcher:
    def __init__(self, registry: Registry, conn: Any, lock: threading.RLock, store: IncidentStore,
                 channels: Channels, *, clock: Clock | None = None, policy: RoutingPolicy | None = None,
                 ack_link: AckLink | None = None, retry_first: timedelta = BACKOFF_FIRST,
                 retry_max: timedelta = BACKOFF_MAX, reaches: Reaches | None = None):
        """``conn``/``lock``/``store``: the incident database the incident service writes (one
        transaction holds an incident change and the rows it queues); ``channels``: from
        :func:`~ms4watch.alerts.notifiers.urls.build_channels` (which refuses a bad URL before
        anything is opened); ``ack_link``: makes the acknowledge link a notification carries
        (None: no link; the SMS code still works); ``reaches``: the town's construction sites on
        its latest map (``network.current.TownReaches.current``), read as each notification is
        queued (None: the town has no map)."""
        self.registry = registry
        self.reaches = reaches
        self.clock: Clock = clock or _utcnow
        self.policy = policy or RoutingPolicy()
        self.ack_link = ack_link
        self.tz = registry.tz
        self.conn = conn
        self._lock = lock
        self.store = store
        self.wake: Callable[[], None] = lambda: None   # the delivery worker's, once there is one
        self.on_sent: Callable[[QueuedNotification], None] | None = None   # told of every delivery (metrics)
        self.channels = channels
        self.contacts: list[Contact] = list(registry.contacts)
        known = {c.email for c in self.contacts if c.email}
        for addr in self.channels.email_to:
            if addr not in known:
                self.contacts.append(Contact(name=addr, role=Role.SMO, email=addr))
        for what, transport, has in (("mailto://", self.channels.email, lambda c: c.email),
                                     ("SMS ({sms})", self.channels.sms, lambda c: c.sms)):
            if transport is not None and not any(has(c) for c in self.contacts):
                log.warning("%s URL given but no registry contact has an address for it: it will send nothing", what)
        self.queue = DeliveryQueue(conn, retry_first=retry_first, retry_max=retry_max)
        self.first_run: datetime | None = None   # items due before it are the backlog (None: no backlog)
        self.summarising = True                  # False while the server catches up at start (one summary after)

    def record_first_run(self, now: datetime) -> datetime:
        """The server's first run on this incident database, recorded now if it never ran
        (a database from before this record: its first incident's opening). Items due before
        it are the backlog from now on."""
        with self._lock:
            earliest = from_iso(self.conn.execute("SELECT min(opened_at) FROM incidents").fetchone()[0]) or now
            self.first_run = self.queue.first_run(min(earliest, now))
        return self.first_run

    def _backlog(self, inc: Incident) -> bool:
        return self.first_run is not None and inc.deadline is not None and inc.deadline < self.first_run

    # -- what a change causes (inside the incident transaction) -------------------------------
    def plan(self, change: Change, now: datetime, *, overdue: bool = False) -> None:
        """Queue the notifications of one incident change. ``overdue``: the engine escalated
        an inspection item whose deadline passed."""
        inc = change.incident
        if inc is None or inc.suppressed:
            return
        if change.retracted:
            self._retract(inc, now)
            return
        if change.deadline_moved is not None:
            self._deadline_moved(inc)
        if overdue and inc.state is not State.RESOLVED:
            self._queue(inc, Stage.OVERDUE, now)
        if change.opened or change.unsuppressed:
            if inc.deadline is not None and inc.deadline <= now and inc.state is not State.RESOLVED:
                self._queue(inc, Stage.OVERDUE, now)  # learnt of it late: one message, not two
            else:
                self._queue(inc, Stage.OPEN, now)
        if change.merged:
            self.queue.cancel_pending(inc.id, Stage.RECOVERY.value, "re-opened within the hold-off")
            if any(r.status == "sent" for r in self.queue.for_incident(inc.id, Stage.RECOVERY.value)):
                self._queue(inc, Stage.REOPENED, now)
        if (change.closed and not change.opened and inc.resolution == "auto" and inc.policy.recovery
                and inc.end is not None):
            # Wait out the hold-off: a re-open in that time cancels the recovery message.
            self._queue(inc, Stage.RECOVERY, now, not_before=max(now, inc.end + self.policy.hold_off))

    def _retract(self, inc: Incident, now: datetime) -> None:
        """Withdrawn by the engine: nothing more goes out; whoever was told hears it was retracted."""
        told = False
        for r in self.queue.for_incident(inc.id):
            if r.status in ("pending", "held"):
                self.queue.cancel(r.id, "the event was retracted")
            elif r.status == "sent":
                told = True
        if told:
            self._queue(inc, Stage.RETRACTED, now)

    def _deadline_moved(self, inc: Incident) -> None:
        """A later record moved the deadline: a reminder or overdue notice still waiting for the
        old one is not sent (one already sent stays in the record; the new deadline gets its own)."""
        for r in self.queue.for_incident(inc.id):
            if r.stage in _DEADLINE_STAGES and r.status in ("pending", "held") and not _for_deadline(r, inc):
                self.queue.cancel(r.id, f"the deadline moved to {_iso(inc.deadline)}")

    # -- time passing (the delivery worker) ---------------------------------------------------
    def tick(self) -> None:
        """Deliver every due row, then escalate, remind, gather digests, and deliver what
        that queued. Sending first: the row a commit woke the worker for does not wait behind
        the scans of every open incident."""
        now = self.clock()
        failures: dict[int, int] = {}       # per channel, over the whole tick
        self._deliver(now, failures)
        with self._lock:
            self._escalations(now)
            self._deadlines(now)
            self._digests(now)
            if self.summarising:
                self._summarise_backlog(now)
        self._deliver(now, failures)

    def summarise_backlog(self, now: datetime | None = None) -> int:
        """Queue one summary per recipient of the backlog rows held so far (see the module's
        docstring); from now on new ones are summarised at every tick. Returns how many
        summaries were queued."""
        with self._lock:
            self.summarising = True
            n = self._summarise_backlog(now or self.clock())
        self.wake()
        return n

    # -- queueing ---------------------------------------------------------------------------
    def _queue(self, inc: Incident, stage: Stage, now: datetime, not_before: datetime | None = None) -> int:
        """Queue one stage for everyone it routes to; returns how many rows were new."""
        escalated = bool(self.queue.for_incident(inc.id, Stage.ESCALATION.value))
        people = recipients(self.contacts, self.registry, inc, stage, escalated=escalated)
        reaches = self.reaches() if self.reaches is not None else None
        payload = {"incident": snapshot(self.registry, inc, reaches), "station_name": station_name(self.registry, inc),
                   "timezone": self.registry.timezone, "ack_url": self._ack_url(inc),
                   "threshold": threshold_for(self.registry, inc)}
        held = inc.priority is Priority.NOTICE
        backlog = self._backlog(inc)
        new = 0
        for c in people:
            for channel, address, transport in (("email", c.email, self.channels.email),
                                                ("sms", c.sms, self.channels.sms)):
                if address and transport is not None:
                    new += self._enqueue(inc, Recipient(c.name, c.role.value, address), channel, stage, payload,
                                         now, not_before, held, backlog)
        routed = [f"{c.name} ({c.role.value})" for c in people]
        for rcpt, notifier in self.channels.feeds:
            new += self._enqueue(inc, rcpt, notifier.channel, stage, {**payload, "routed_to": routed}, now,
                                 not_before, False, backlog)
        return new

    def _enqueue(self, inc: Incident, rcpt: Recipient, channel: str, stage: Stage, payload: dict, now: datetime,
                 not_before: datetime | None, held: bool, backlog: bool = False) -> int:
        oid = self.queue.enqueue(ref=_ref(inc, stage), incident_id=inc.id, recipient=rcpt, channel=channel,
                                  stage=stage.value, priority=inc.priority.value, payload=payload, now=now,
                                  not_before=not_before, held=held, backlog=backlog,
                                  reason="notices go into the digest" if held else None)
        return 0 if oid is None else 1

    def _ack_url(self, inc: Incident) -> str | None:
        return self.ack_link(inc) if self.ack_link is not None else None

    # -- escalation, deadlines, digests -----------------------------------------------------
    def _escalations(self, now: datetime) -> None:
        for inc in self.store.unacknowledged():
            if (self.queue.for_incident(inc.id, Stage.ESCALATION.value)
                    or self.queue.for_incident(inc.id, Stage.OVERDUE.value)):
                continue  # already escalated, or overdue (which told the deputies already)
            base = self._escalation_base(inc)
            if base is not None and now - base >= self.policy.escalate_after:
                with transaction(self.conn):
                    self._queue(inc, Stage.ESCALATION, now)

    def _escalation_base(self, inc: Incident) -> datetime | None:
        """The clock starts when the first person was told (not while the message waits
        for quiet hours or a dead SMTP server); with nobody to tell, when it opened."""
        rows = [r for r in self.queue.for_incident(inc.id, Stage.OPEN.value) if r.recipient.role != "feed"]
        sent = [r.sent_at for r in rows if r.sent_at is not None]
        if sent:
            return min(sent)
        if any(r.status == "pending" for r in rows):
            return None
        return inc.opened_at

    def _deadlines(self, now: datetime) -> None:
        for inc in self.store.with_deadline():
            assert inc.deadline is not None
            if now >= inc.deadline:
                stage = Stage.OVERDUE
            elif now >= inc.deadline - self.policy.reminder_before:
                if inc.opened_at >= inc.deadline - self.policy.reminder_before:
                    continue  # opened inside the reminder window: the first notice was the reminder
                stage = Stage.REMINDER
            else:
                continue
            if any(_for_deadline(r, inc) for r in self.queue.for_incident(inc.id, stage.value)):
                continue  # queued for this deadline already (one for an earlier deadline does not count)
            with transaction(self.conn):
                self._queue(inc, stage, now)

    def _digests(self, now: datetime) -> None:
        by_recipient: dict[str, list[QueuedNotification]] = {}
        for r in self.queue.held():
            by_recipient.setdefault(r.recipient.name, []).append(r)
        for name, rows in by_recipient.items():
            first = min(r.held_at or r.created_at for r in rows)
            due = next_local(first, self.policy.digest_time, self.tz)
            pressing = [r.held_at or r.created_at for r in rows
                        if r.priority in (Priority.URGENT.value, Priority.DEADLINE.value)]
            if pressing:
                due = min(due, min(pressing) + self.policy.urgent_digest_after)
            if now < due:
                continue
            ref = f"digest:{due.astimezone(self.tz).date().isoformat()}:{min(r.id for r in rows)}"
            self._summary(name, rows, Stage.DIGEST, ref, now)

    def _summarise_backlog(self, now: datetime) -> int:
        by_recipient: dict[str, list[QueuedNotification]] = {}
        for r in self.queue.held(backlog=True):
            by_recipient.setdefault(r.recipient.name, []).append(r)
        for name, rows in by_recipient.items():
            self._summary(name, rows, Stage.BACKLOG, f"backlog:{min(r.id for r in rows)}", now)
        return len(by_recipient)

    def _summary(self, name: str, rows: list[QueuedNotification], stage: Stage, ref: str, now: datetime) -> None:
        """One message to ``name`` listing ``rows`` (held for it), which it then carries."""
        contact = self._contact(rows[0])
        channel, address = rows[0].channel, rows[0].recipient.address
        if contact.email and self.channels.email is not None:
            channel, address = "email", contact.email
        elif contact.sms and self.channels.sms is not None:
            channel, address = "sms", contact.sms
        items, seen = [], set()
        for r in rows:
            k = (r.incident_id, r.stage)
            if k in seen:
                continue
            seen.add(k)
            items.append({"stage": r.stage, "channel": r.channel, "incident": r.payload.get("incident"),
                          "station_name": r.payload.get("station_name"),
                          "reason": (r.last_error or "").removeprefix("held for the digest: ")})
        with transaction(self.conn):
            oid = self.queue.enqueue(
                ref=ref, incident_id=None, recipient=Recipient(name, rows[0].recipient.role, address),
                channel=channel, stage=stage.value, priority=Priority.ROUTINE.value,
                payload={"items": items, "timezone": self.registry.timezone}, now=now)
            if oid is None:  # the same batch was queued before a crash; find it
                oid = self.conn.execute("SELECT id FROM notification_queue WHERE ref = ? AND recipient = ? AND stage = ?",
                                        (ref, name, stage.value)).fetchone()["id"]
            self.queue.mark_digested([r.id for r in rows], oid)

    # -- delivery ---------------------------------------------------------------------------
    def _deliver(self, now: datetime, failures: dict[int, int]) -> None:
        """Send the due rows, emails last (each draws its evidence chart first, the slow step
        before a send: an SMS or webhook of the same alert does not wait for it). A channel
        that failed twice in this tick (``failures``, by notifier) is not tried again until the
        next one (a dead SMTP server costs two timeouts per tick, not one per row)."""
        with self._lock:
            due = sorted(self.queue.due(now), key=lambda r: r.channel == "email")   # stable: else in queue order
        for row in due:
            with self._lock:
                notifier, verdict = self._prepare(row, now)
            if notifier is None or failures.get(id(notifier), 0) >= 2:
                continue
            try:
                notifier.send(row.notification())
            except RetryableError as e:
                failures[id(notifier)] = failures.get(id(notifier), 0) + 1
                with self._lock:
                    when = self.queue.retry(row.id, now, str(e))
                log.warning("notification %s not delivered, retry at %s: %s", row.key, when.isoformat(), e)
            except PermanentError as e:
                with self._lock:
                    self.queue.fail(row.id, now, str(e))
                log.error("notification %s cannot be delivered (kept as failed): %s", row.key, e)
            except Exception as e:  # a notifier bug must not stop the others or lose this one
                with self._lock:
                    self.queue.retry(row.id, now, f"{type(e).__name__}: {e}")
                log.exception("notification %s: unexpected error, will retry", row.key)
            else:
                with self._lock:
                    self.queue.mark_sent(row.id, self.clock())
                if self.on_sent is not None:
                    try:
                        self.on_sent(row)
                    except Exception:  # a metric must never cost a delivery
                        log.exception("on_sent consumer failed for notification %s", row.key)

    def _prepare(self, row: QueuedNotification, now: datetime) -> tuple[Notifier | None, Verdict | None]:
        notifier = self._notifier_for(row)
        if notifier is None:
            self.queue.fail(row.id, now, f"channel {row.channel!r} for {row.recipient.name} is not configured"
                                          " (no matching --notify URL)")
            return None, None
        if row.incident_id is not None:
            why = _superseded(row, self.store.get(row.incident_id))
            if why:
                self.queue.cancel(row.id, why)
                return None, None
        if row.recipient.role == "feed":
            return notifier, Verdict.SEND
        start, end = local_day_bounds(now, self.tz)
        d = decide(priority=Priority(row.priority), stage=Stage(row.stage), channel=row.channel,
                   contact=self._contact(row), now=now, tz=self.tz,
                   sent_today=self.queue.sent_between(row.recipient.name, row.channel, start, end), policy=self.policy)
        if d.verdict is Verdict.DEFER:
            assert d.until is not None
            self.queue.defer(row.id, d.until, d.reason)
            return None, d.verdict
        if d.verdict is Verdict.HOLD:
            self.queue.hold(row.id, now, d.reason)
            return None, d.verdict
        return notifier, d.verdict

    def _notifier_for(self, row: QueuedNotification) -> Notifier | None:
        if row.recipient.role == "feed":
            return self.channels.feed(row.recipient.name)
        return {"email": self.channels.email, "sms": self.channels.sms}.get(row.channel)

    def _contact(self, row: QueuedNotification) -> Contact:
        c = next((c for c in self.contacts if c.name == row.recipient.name), None)
        if c is not None:
            return c
        try:
            role = Role(row.recipient.role)
        except ValueError:
            role = Role.SMO
        return Contact(name=row.recipient.name, role=role)  # removed from the registry since: no quiet hours


_DEADLINE_STAGES = (Stage.REMINDER.value, Stage.OVERDUE.value)


def _iso(t: datetime | None) -> str | None:
    return iso(t) if t is not None else None


def _ref(inc: Incident, stage: Stage) -> str:
    """The queue's ``ref``: ``incident:<id>``; a compliance deadline's reminder and overdue
    notice also name the deadline they are for, so a deadline a later record moved gets its own
    (the queue's unique key is one row per incident, recipient, channel and stage)."""
    if (stage.value in _DEADLINE_STAGES and inc.kind == AlertKind.COMPLIANCE_DEADLINE.value
            and inc.deadline is not None):
        return f"incident:{inc.id}@{_iso(inc.deadline)}"
    return f"incident:{inc.id}"


def _for_deadline(row: QueuedNotification, inc: Incident) -> bool:
    """Whether a reminder or overdue row was queued for the incident's current deadline."""
    queued_for = (row.payload.get("incident") or {}).get("deadline")
    return queued_for is None or inc.deadline is None or queued_for == _iso(inc.deadline)


def _superseded(row: QueuedNotification, inc: Incident) -> str | None:
    stage = row.stage
    if stage in _DEADLINE_STAGES and row.status in ("pending", "held") and not _for_deadline(row, inc):
        return f"the deadline moved to {_iso(inc.deadline)} before the {stage} went out"
    if stage == Stage.ESCALATION.value and inc.state is not State.OPEN:
        return f"{inc.state.value} by {inc.acknowledged_by or inc.resolved_by} before the escalation went out"
    if stage in (Stage.REMINDER.value, Stage.OVERDUE.value) and inc.state is State.RESOLVED:
        return f"resolved by {inc.resolved_by} before the {stage} went out"
    return None


def station_name(registry: Registry, inc: Incident) -> str:
    sid = inc.subject
    for coll in (registry.outfalls, registry.construction_sites, registry.turbidity_pairs, registry.rain_gauges):
        for item in coll:
            if item.id == sid:
                return getattr(item, "name", None) or sid
    return sid


def threshold_for(registry: Registry, inc: Incident) -> dict[str, Any] | None:
    """The chart's dashed line for the incident, from the town's parameters (alerts/kinds/)."""
    return spec_for(inc.kind).threshold(registry, inc.subject)


def snapshot(registry: Registry, inc: Incident, reaches: "SiteReaches | None" = None) -> dict[str, Any]:
    """The incident as queued: its snapshot with ``what`` and ``rule`` in the town's words, and
    ``runoff`` where the town's map (``reaches``) says where the subject's runoff goes."""
    return {**inc.snapshot(), **words_of(registry, inc.kind, inc.subject, reaches)}


__all__ = ["AckLink", "Dispatcher", "RoutingPolicy", "snapshot", "station_name", "threshold_for"]
