"""The incident service and the dispatcher against a real SMTP server (aiosmtpd on loopback) and a
controllable clock: one message per incident and stage, escalation timing, quiet hours,
caps and the digest, deadline reminders, recovery, SMTP down then up."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from ms4watch.alerts.events import AlertKind, overdue_id
from ms4watch.alerts.incidents import State
from ms4watch.alerts.delivery.routing import RoutingPolicy
from tests.support.alerting import Alerting
from ms4watch.contract.registry import Contact, Role
from tests.support.notify_peers import Clock, HttpSink, SmtpSink, dwf, event, inspection, registry, turbidity, utc

T0 = utc(2026, 6, 1, 16, 0)  # 12:00 EDT: nobody's quiet hours


def _make(tmp_path, urls, clock, reg=None, **kw):
    return Alerting(reg or registry(), tmp_path / "inc.db", urls, clock, **kw)


def _subject(m):
    return " ".join(str(m["Subject"]).split())  # unfolded, as a mail client shows it


def _subjects(msgs):
    return [_subject(m) for m in msgs]


def test_one_message_per_incident_and_stage(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    for _ in range(3):  # the engine repeating itself, ticks in between
        n.handle(dwf("2026-06-01T15:30:00Z"))
        n.tick()
    assert len(smtp.to("pat@town.test")) == 1
    assert smtp.to("dee@town.test") == [] and smtp.to("ian@town.test") == []
    msg = smtp.to("pat@town.test")[0]
    assert "dry-weather flow at Main St outfall (OF-12) since Jun 01 11:30 EDT" in _subject(msg)
    n.close()


def test_escalation_to_the_deputy_after_30_min_unacknowledged(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    clock.advance(minutes=29, seconds=59)
    n.tick()
    assert smtp.to("dee@town.test") == []
    clock.advance(seconds=1)
    n.tick()
    assert len(smtp.to("dee@town.test")) == 1  # exactly 30 min after the SMO was told
    for _ in range(3):
        clock.advance(minutes=30)
        n.tick()
    dee = smtp.to("dee@town.test")
    assert len(dee) == 1 and _subject(dee[0]).startswith("[ms4watch] ESCALATED")
    assert len(smtp.to("pat@town.test")) == 1
    n.close()


def test_acknowledged_in_time_means_no_escalation(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    code = smtp.to("pat@town.test")[0]["X-MS4Watch-Code"]
    clock.advance(minutes=20)
    n.acknowledge(code, by="Pat SMO", how="phone", note="going")
    clock.advance(hours=2)
    n.tick()
    assert smtp.to("dee@town.test") == []
    n.close()


def test_escalation_timer_waits_for_the_first_delivery(tmp_path):
    """SMTP down for 40 min: the deputy is not escalated to before the SMO could be told."""
    sink = SmtpSink()
    clock = Clock(T0)
    n = _make(tmp_path, [sink.url], clock)
    n.handle(dwf("2026-06-01T15:30:00Z"))
    for _ in range(8):
        n.tick()
        clock.advance(minutes=5)
    sink.start()
    try:
        n.tick()
        assert len(sink.to("pat@town.test")) == 1 and sink.to("dee@town.test") == []
        clock.advance(minutes=30)
        n.tick()
        assert len(sink.to("dee@town.test")) == 1
    finally:
        sink.stop()
        n.close()


def test_quiet_hours_defer_routine_not_dry_weather_flow(tmp_path, smtp):
    night = utc(2026, 6, 2, 3, 0)  # 23:00 EDT; Pat is quiet 22:00-07:00
    clock = Clock(night)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(turbidity("2026-06-02T02:40:00Z"))
    n.handle(dwf("2026-06-02T02:30:00Z"))
    n.tick()
    assert [s for s in _subjects(smtp.to("pat@town.test"))] == [
        "[ms4watch] dry-weather flow at Main St outfall (OF-12) since Jun 01 22:30 EDT"]
    assert len(smtp.to("sam@town.test")) == 1  # the site operator has no quiet hours
    n.acknowledge(smtp.to("pat@town.test")[0]["X-MS4Watch-Code"], by="Pat SMO")
    inc_t = [i for i in n.store.list() if i.kind == "turbidity_contrast"][0]
    n.acknowledge(inc_t.id, by="Sam Site")  # keep escalations out of this test
    clock.set(utc(2026, 6, 2, 10, 59))
    n.tick()
    assert len(smtp.to("pat@town.test")) == 1
    clock.set(utc(2026, 6, 2, 11, 0))  # 07:00 EDT
    n.tick()
    subjects = _subjects(smtp.to("pat@town.test"))
    assert len(subjects) == 2 and "turbidity contrast at Elm St creek (TP-1)" in subjects[1]
    n.close()


def _pat_only(tmp_path, clock, url, cap=2):
    reg = registry().model_copy(update={"contacts": [
        Contact(name="Pat SMO", role=Role.SMO, email="pat@town.test", quiet_hours="22:00-07:00")]})
    return _make(tmp_path, [url], clock, reg=reg, policy=RoutingPolicy(daily_caps={"email": cap}))


def _check_digest(n, smtp, direct, digest):
    assert _subject(digest) == "[ms4watch] Digest: 2 held notice(s) for Pat SMO"
    body = digest.get_body(("plain",)).get_content()
    codes = {i.code for i in n.store.list()}
    told = {m["X-MS4Watch-Code"] for m in direct} | set(re.findall(r"code ([A-Z0-9]{5})", body))
    assert told == codes  # every incident reached Pat: directly or in the digest
    assert body.count("held: daily email cap of 2 reached") == 2
    assert n.queue.counts() == {"sent": 3, "digested": 2}


def test_daily_cap_holds_back_into_one_digest_and_loses_nothing(tmp_path, smtp):
    """Routine items held by the cap wait for the 07:00 digest."""
    clock = Clock(T0)
    n = _pat_only(tmp_path, clock, smtp.url)
    for pair in ("TP-1", "TP-2", "TP-3", "TP-4"):
        n.handle(turbidity("2026-06-01T15:30:00Z", pair=pair))
        n.acknowledge(n.store.list()[0].id, by="Pat SMO")  # no escalations in this test
    n.tick()
    direct = smtp.to("pat@town.test")
    assert len(direct) == 2
    held = n.queue.all("held")
    assert len(held) == 2 and all("cap of 2" in r.last_error for r in held)
    for t in (utc(2026, 6, 1, 20), utc(2026, 6, 2, 10, 59)):
        clock.set(t)
        n.tick()
        assert len(smtp.to("pat@town.test")) == 2
    clock.set(utc(2026, 6, 2, 11, 0))  # digest_time 07:00 local
    n.tick()
    n.tick()
    msgs = smtp.to("pat@town.test")
    assert len(msgs) == 3
    _check_digest(n, smtp, direct, msgs[2])
    n.close()


def test_capped_dry_weather_flow_goes_out_in_a_digest_within_the_hour(tmp_path, smtp):
    clock = Clock(T0)
    n = _pat_only(tmp_path, clock, smtp.url)
    for o in ("OF-12", "OF-14", "OF-20", "OF-21"):
        n.handle(dwf("2026-06-01T15:30:00Z", outfall=o))
        n.acknowledge(n.store.list()[0].id, by="Pat SMO")
    n.tick()
    direct = smtp.to("pat@town.test")
    assert len(direct) == 2
    clock.advance(minutes=59)
    n.tick()
    assert len(smtp.to("pat@town.test")) == 2
    clock.advance(minutes=1)
    n.tick()
    msgs = smtp.to("pat@town.test")
    assert len(msgs) == 3
    _check_digest(n, smtp, direct, msgs[2])
    n.close()


def test_recovery_after_the_hold_off_and_a_reopen_cancels_it(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    n.acknowledge(1, by="Pat SMO")
    clock.set(utc(2026, 6, 1, 16, 41))
    n.handle(dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:40:00Z"))
    clock.set(utc(2026, 6, 1, 16, 55))
    n.tick()
    n.handle(dwf("2026-06-01T16:55:00Z"))       # back within 30 min: same incident, no recovery
    clock.set(utc(2026, 6, 1, 17, 20))
    n.tick()
    assert len(smtp.to("pat@town.test")) == 1 and len(n.store.list()) == 1
    n.handle(dwf("2026-06-01T16:55:00Z", end="2026-06-01T17:30:00Z"))
    clock.set(utc(2026, 6, 1, 17, 59))
    n.tick()
    assert len(smtp.to("pat@town.test")) == 1
    clock.set(utc(2026, 6, 1, 18, 0))
    n.tick()
    pat = _subjects(smtp.to("pat@town.test"))
    assert len(pat) == 2 and pat[1].startswith("[ms4watch] Resolved: dry-weather flow at Main St outfall (OF-12) ended")
    inc = n.store.get(1)
    assert inc.state is State.RESOLVED and inc.episodes == 2
    n.close()


def test_deadline_reminder_6_h_before_and_overdue(tmp_path, smtp):
    clock = Clock(utc(2026, 6, 1, 19, 0))
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(inspection(due="2026-06-02T18:00:00Z", storm_end="2026-06-01T18:00:00Z"))
    n.tick()
    for who in ("pat", "ian", "sam"):
        assert len(smtp.to(f"{who}@town.test")) == 1, who
    n.acknowledge(1, by="Ian Inspector")
    clock.set(utc(2026, 6, 2, 11, 59))
    n.tick()
    assert len(smtp.messages) == 3
    clock.set(utc(2026, 6, 2, 12, 0))
    n.tick()
    n.tick()
    assert [len(smtp.to(f"{w}@town.test")) for w in ("pat", "ian", "sam", "dee")] == [2, 2, 2, 0]
    assert _subject(smtp.to("ian@town.test")[1]).startswith("[ms4watch] REMINDER: inspection due at Elm St site")
    clock.set(utc(2026, 6, 2, 18, 0))
    n.tick()
    assert [len(smtp.to(f"{w}@town.test")) for w in ("pat", "ian", "sam", "dee")] == [3, 3, 3, 1]
    assert _subject(smtp.to("dee@town.test")[0]).startswith("[ms4watch] OVERDUE: inspection due")
    n.close()


def test_recording_the_inspection_stops_the_reminders(tmp_path, smtp):
    clock = Clock(utc(2026, 6, 1, 19, 0))
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(inspection(due="2026-06-02T18:00:00Z", storm_end="2026-06-01T18:00:00Z"))
    n.tick()
    clock.set(utc(2026, 6, 2, 9, 0))
    done = n.record_inspection("CS-7", at=utc(2026, 6, 2, 8, 30), by="Ian Inspector", note="all fine")
    assert len(done) == 1
    for h in (12, 18, 23):
        clock.set(utc(2026, 6, 2, h, 0))
        n.tick()
    assert len(smtp.messages) == 3  # the first notice to Pat, Ian, Sam only
    n.close()


def test_a_suppressed_episode_never_merges_with_an_unexplained_one(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(dwf("2026-06-01T15:00:00Z", end="2026-06-01T15:20:00Z", suppressed="approved discharge: flushing"))
    n.handle(dwf("2026-06-01T15:30:00Z"))  # 10 min later, not covered by the approval
    n.tick()
    assert len(n.store.list()) == 2 and len(smtp.to("pat@town.test")) == 1
    n.close()


def test_suppressed_episode_notifies_nobody(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(dwf("2026-06-01T15:30:00Z", suppressed="approved discharge: hydrant flushing"))
    clock.advance(hours=1)
    n.tick()
    assert smtp.messages == [] and n.store.list()[0].suppressed
    n.close()


def test_smtp_down_ten_minutes_then_every_message_arrives_once(tmp_path):
    sink = SmtpSink()  # port reserved, server not running
    clock = Clock(T0)
    n = _make(tmp_path, [sink.url], clock)
    for o in ("OF-12", "OF-14"):
        n.handle(dwf("2026-06-01T15:30:00Z", outfall=o))
    n.handle(inspection(due="2026-06-02T18:00:00Z", storm_end="2026-06-01T18:00:00Z"))
    expected = len(n.queue.all("pending"))
    assert expected == 5  # 2 x Pat, inspection: Pat, Ian, Sam
    for _ in range(10):
        n.tick()
        clock.advance(minutes=1)
    rows = n.queue.all()
    assert all(r.status == "pending" for r in rows)
    tried = [r for r in rows if r.attempts]
    # The channel is given up for the tick after two failures: two rows tried per tick.
    assert sum(r.attempts for r in rows) == 2 * 10 and max(r.attempts for r in rows) >= 3
    assert all("Connection" in r.last_error or "refused" in r.last_error for r in tried)
    sink.start()
    try:
        clock.advance(minutes=5)  # the longest backoff
        n.tick()
        for _ in range(3):
            clock.advance(minutes=1)
            n.tick()
        keys = [m["X-MS4Watch-Key"] for m in sink.messages]
        assert len(keys) == expected and len(set(keys)) == expected
        assert n.queue.counts() == {"sent": expected}
    finally:
        sink.stop()
        n.close()


def test_sms_through_apprise_to_a_local_stand_in_for_the_provider(tmp_path, smtp):
    """No SMS provider can run here: a local HTTP server stands in for it, reached through
    apprise's json:// plugin with the contact's number in the payload."""
    provider = HttpSink().start()
    try:
        clock = Clock(T0)
        url = f"json://127.0.0.1:{provider.port}/sms?:to={{sms}}"
        n = _make(tmp_path, [smtp.url, url], clock)
        n.handle(dwf("2026-06-01T15:30:00Z"))
        n.handle(dwf("2026-06-01T15:30:00Z"))
        n.tick()
        n.tick()
        assert len(provider.requests) == 1  # one SMS per incident per stage
        body = provider.json(0)
        code = n.store.get(1).code
        assert body["to"] == "+15555550101"
        assert body["message"] == f"OF-12 Main St outfall: dry-weather flow since Jun 01 11:30 EDT. Reply {code} to ack"
        assert len(smtp.to("pat@town.test")) == 1
        n.close()
    finally:
        provider.stop()


def test_no_url_writes_the_notifications_file(tmp_path, capsys):
    clock = Clock(T0)
    n = _make(tmp_path, [], clock)
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    text = (tmp_path / "notifications.txt").read_text()
    assert "dry-weather flow at Main St outfall (OF-12) since Jun 01 11:30 EDT" in text
    assert "To: Pat SMO (smo)" in text
    assert text in capsys.readouterr().out
    n.close()


def test_bad_notify_url_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of"):
        _make(tmp_path, ["mailto://127.0.0.1:2525?mode=tls"], Clock(T0))
    with pytest.raises(ValueError, match="apprise"):
        _make(tmp_path, ["nosuchscheme://x/{sms}"], Clock(T0))
    assert not (tmp_path / "inc.db").exists()


def test_engine_overdue_event_is_the_items_overdue_stage_once(tmp_path, smtp):
    clock = Clock(utc(2026, 6, 2, 18, 5))
    n = _make(tmp_path, [smtp.url], clock)
    item = inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z", id="inspection/CS-7/storm/RG-1/1",
                      closed_at=None)
    n.handle(replace(item, kind=AlertKind.INSPECTION_OVERDUE, id=overdue_id(item.id)))
    n.handle(item)
    n.tick()
    n.tick()
    assert len(n.store.list()) == 1
    assert _subjects(smtp.to("dee@town.test")) == [
        "[ms4watch] OVERDUE: inspection due at Elm St site (CS-7) by Tue 2026-06-02 14:00 EDT"]
    assert _subjects(smtp.to("pat@town.test")) == [  # learnt of it late: one message, not two
        "[ms4watch] OVERDUE: inspection due at Elm St site (CS-7) by Tue 2026-06-02 14:00 EDT"]


def test_retraction_cancels_what_is_pending_and_tells_who_was_told(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    ev = dwf("2026-06-01T15:30:00Z", id="dwf/OF-12/a")
    n.handle(ev)
    n.tick()
    n.handle(ev.retracted())
    clock.advance(hours=1)
    n.tick()
    assert _subjects(smtp.to("pat@town.test"))[1].startswith("[ms4watch] Retracted (late data")
    assert smtp.to("dee@town.test") == []  # no escalation for a retracted incident
    quiet = dwf("2026-06-01T15:30:00Z", outfall="OF-14", id="dwf/OF-14/a")
    n.handle(quiet)
    n.handle(quiet.retracted())  # before any tick: nobody was told, nobody is
    clock.advance(hours=1)
    n.tick()
    assert len(smtp.messages) == 2
    n.close()


def test_notices_go_to_the_digest_not_the_phone(tmp_path, smtp):
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(event("stale_station", station="OF-14", start="2026-06-01T15:00:00Z", end=None))
    n.handle(event("turbidity_not_evaluable", pair="TP-1", start="2026-06-01T15:10:00Z", end=None))
    n.tick()
    assert smtp.messages == []
    clock.set(utc(2026, 6, 2, 11, 0))
    n.tick()
    n.tick()
    pat = smtp.to("pat@town.test")
    assert len(pat) == 1 and _subject(pat[0]) == "[ms4watch] Digest: 2 held notice(s) for Pat SMO"
    body = pat[0].get_body(("plain",)).get_content()
    assert "- [open] stale station at Canal Rd outfall (OF-14) since Jun 01 11:00 EDT" in body
    assert "- [open] turbidity not evaluable at Elm St creek (TP-1) since Jun 01 11:10 EDT" in body
    assert body.count("held: notices go into the digest") == 2
    n.close()


def test_item_learnt_inside_the_reminder_window_gets_no_separate_reminder(tmp_path, smtp):
    clock = Clock(utc(2026, 6, 2, 14, 0))  # 4 h before the deadline
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(inspection(due="2026-06-02T18:00:00Z", storm_end="2026-06-01T18:00:00Z"))
    n.tick()
    n.acknowledge(1, by="Ian Inspector")
    clock.set(utc(2026, 6, 2, 17, 0))
    n.tick()
    assert _subjects(smtp.to("ian@town.test")) == [
        "[ms4watch] inspection due at Elm St site (CS-7) by Tue 2026-06-02 14:00 EDT"]
    clock.set(utc(2026, 6, 2, 18, 0))
    n.tick()
    assert len(smtp.to("ian@town.test")) == 2 and len(smtp.to("dee@town.test")) == 1
    n.close()


def test_the_demo_url_plain_smtp_with_to_and_no_contacts(tmp_path, smtp):
    """``--notify mailto://127.0.0.1:PORT?to=smo@town.test`` with a registry without contacts:
    the URL's address is routed as the SMO (apprise's own mailto refuses this URL: no from=)."""
    reg = registry().model_copy(update={"contacts": []})
    clock = Clock(T0)
    n = _make(tmp_path, [f"mailto://127.0.0.1:{smtp.port}?to=smo@town.test"], clock, reg=reg)
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    clock.advance(hours=2)
    n.tick()  # no deputy in this registry: nothing more
    assert smtp.envelopes == [("ms4watch@localhost", ["smo@town.test"])]
    assert _subject(smtp.messages[0]).startswith("[ms4watch] dry-weather flow at Main St outfall (OF-12)")
    n.close()


def test_an_inspection_item_pages_no_deputy_before_its_deadline(tmp_path, smtp):
    """A deadline days away is not escalated 30 min after the notice: the first line gets a
    reminder 6 h before it, and the deputies hear of it only once it is overdue."""
    clock = Clock(utc(2026, 6, 1, 16, 0))
    n = _make(tmp_path, [smtp.url], clock)
    n.handle(inspection(due="2026-06-04T16:00:00Z", storm_end="2026-06-03T16:00:00Z"))
    n.tick()
    clock.advance(hours=2)
    n.tick()
    assert smtp.to("dee@town.test") == []
    clock.set(utc(2026, 6, 4, 10, 30))
    n.tick()
    assert _subjects(smtp.to("pat@town.test"))[-1].startswith("[ms4watch] REMINDER")
    assert smtp.to("dee@town.test") == []
    clock.set(utc(2026, 6, 4, 16, 0))
    n.tick()
    assert [s[:19] for s in _subjects(smtp.to("dee@town.test"))] == ["[ms4watch] OVERDUE:"]


def test_a_tick_sends_the_sms_before_the_email_that_draws_a_chart(tmp_path, smtp):
    """Issue 22: the email's evidence chart is the slow step between an alert's queue row and
    its send; the SMS and webhooks of the same tick go out before the emails, not behind them."""
    provider = HttpSink().start()
    try:
        n = _make(tmp_path, [smtp.url, f"json://127.0.0.1:{provider.port}/sms?:to={{sms}}"], Clock(T0))
        order: list[str] = []
        for channel in (n.channels.email, n.channels.sms):
            real = channel.send
            channel.send = lambda notification, real=real, name=channel.channel: (order.append(name), real(notification))[1]
        n.handle(dwf("2026-06-01T15:30:00Z"))
        n.tick()
        assert order == ["sms", "email"]
        assert len(provider.requests) == 1 and len(smtp.to("pat@town.test")) == 1
        n.close()
    finally:
        provider.stop()


def test_a_tick_sends_what_is_due_before_it_looks_for_escalations_and_deadlines(tmp_path, smtp):
    """The row a commit woke the worker for does not wait behind the tick's scans of every
    open incident (escalations, deadline reminders, digests); what those queue is sent in the
    same tick."""
    clock = Clock(T0)
    n = _make(tmp_path, [smtp.url], clock)
    order: list[str] = []
    real_send, real_escalations = n.channels.email.send, n.dispatcher._escalations
    n.channels.email.send = lambda notification: (order.append(f"send {notification.stage}"),
                                                  real_send(notification))[1]
    n.dispatcher._escalations = lambda now: (order.append("escalations"), real_escalations(now))[1]
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    assert order == ["send open", "escalations"]
    clock.advance(minutes=30)
    order.clear()
    n.tick()
    assert order == ["escalations", "send escalation"]       # queued by the scan, sent in its tick
    assert len(smtp.to("dee@town.test")) == 1
    n.close()
