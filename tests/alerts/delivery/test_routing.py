"""Routing: recipients by role/stations/kinds, quiet hours (with DST), caps."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from ms4watch.alerts.incidents import IncidentStore, Priority, Stage, connect
from ms4watch.alerts.delivery.routing import RoutingPolicy, Verdict, decide, next_local, quiet_until, recipients
from ms4watch.contract.registry import Contact, Role
from tests.support.notify_peers import dwf, inspection, registry, turbidity, utc

NY = ZoneInfo("America/New_York")
PAT = Contact(name="Pat", role=Role.SMO, email="pat@town.test", quiet_hours="22:00-07:00")


@pytest.mark.parametrize("now, until", [
    (utc(2026, 6, 2, 2, 30), utc(2026, 6, 2, 11, 0)),     # 22:30 EDT -> 07:00 EDT
    (utc(2026, 6, 2, 10, 59), utc(2026, 6, 2, 11, 0)),    # 06:59 EDT
    (utc(2026, 6, 2, 11, 0), None),                       # 07:00 EDT: awake
    (utc(2026, 6, 2, 1, 59), None),                       # 21:59 EDT
    (utc(2026, 3, 8, 4, 0), utc(2026, 3, 8, 11, 0)),      # spring forward: 23:00 EST -> 07:00 EDT
    (utc(2026, 11, 1, 3, 0), utc(2026, 11, 1, 12, 0)),    # fall back: 23:00 EDT -> 07:00 EST
])
def test_quiet_until(now, until):
    assert quiet_until("22:00-07:00", now, NY) == until


def test_quiet_span_within_one_day_and_none():
    assert quiet_until("12:00-13:00", utc(2026, 6, 2, 16, 30), NY) == utc(2026, 6, 2, 17, 0)
    assert quiet_until("12:00-13:00", utc(2026, 6, 2, 18, 0), NY) is None
    assert quiet_until(None, utc(2026, 6, 2, 3, 0), NY) is None


def test_next_local_digest_time():
    assert next_local(utc(2026, 6, 2, 12, 0), "07:00", NY) == utc(2026, 6, 3, 11, 0)
    assert next_local(utc(2026, 6, 2, 10, 0), "07:00", NY) == utc(2026, 6, 2, 11, 0)


def _decide(priority, stage=Stage.OPEN, now=utc(2026, 6, 2, 3, 0), sent_today=0, contact=PAT, channel="sms"):
    return decide(priority=priority, stage=stage, channel=channel, contact=contact, now=now, tz=NY,
                  sent_today=sent_today, policy=RoutingPolicy(daily_caps={"sms": 3}))


def test_quiet_hours_defer_routine_but_never_dry_weather_flow_or_deadlines():
    d = _decide(Priority.ROUTINE)
    assert d.verdict is Verdict.DEFER and d.until == utc(2026, 6, 2, 11, 0)
    assert _decide(Priority.URGENT).verdict is Verdict.SEND
    assert _decide(Priority.DEADLINE).verdict is Verdict.SEND
    assert _decide(Priority.ROUTINE, Stage.OVERDUE).verdict is Verdict.SEND
    assert _decide(Priority.URGENT, Stage.RECOVERY).verdict is Verdict.DEFER  # "it stopped" can wait
    assert _decide(Priority.ROUTINE, now=utc(2026, 6, 2, 15, 0)).verdict is Verdict.SEND


def test_daily_cap_holds_for_the_digest():
    assert _decide(Priority.URGENT, sent_today=2).verdict is Verdict.SEND
    d = _decide(Priority.URGENT, sent_today=3)
    assert d.verdict is Verdict.HOLD and "cap of 3" in d.reason
    assert _decide(Priority.DEADLINE, Stage.REMINDER, sent_today=3).verdict is Verdict.HOLD
    assert _decide(Priority.ROUTINE, Stage.DIGEST, sent_today=99, now=utc(2026, 6, 2, 15)).verdict is Verdict.SEND
    assert _decide(Priority.URGENT, sent_today=99, channel="email").verdict is Verdict.SEND  # no email cap set
    assert _decide(Priority.URGENT, sent_today=99, contact=None).verdict is Verdict.SEND    # feeds: no cap


def test_notices_go_to_the_digest():
    assert _decide(Priority.NOTICE, now=utc(2026, 6, 2, 15, 0)).verdict is Verdict.HOLD


def test_policy_refuses_bad_numbers():
    with pytest.raises(ValueError, match="escalate_after"):
        RoutingPolicy(escalate_after=timedelta(minutes=-1))
    with pytest.raises(ValueError, match="cap"):
        RoutingPolicy(daily_caps={"sms": 0})
    with pytest.raises(ValueError, match="07:00"):
        RoutingPolicy(digest_time="7am")


@pytest.fixture
def store(tmp_path):
    return IncidentStore(connect(tmp_path / "r.db"))


def _names(reg, inc, stage, **kw):
    return [c.name for c in recipients(reg.contacts, reg, inc, stage, **kw)]


def test_recipients_by_role_station_and_kind(store):
    reg = registry()
    t = utc(2026, 6, 1, 16)
    flow = store.apply_event(dwf("2026-06-01T15:30:00Z"), t).incident
    turb = store.apply_event(turbidity("2026-06-01T15:30:00Z"), t).incident
    insp = store.apply_event(inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z"), t).incident
    assert _names(reg, flow, Stage.OPEN) == ["Pat SMO"]
    assert _names(reg, flow, Stage.ESCALATION) == ["Dee Deputy"]
    assert _names(reg, turb, Stage.OPEN) == ["Pat SMO", "Sam Site"]          # the pair is below CS-7
    assert _names(reg, insp, Stage.OPEN) == ["Pat SMO", "Ian Inspector", "Sam Site"]
    assert _names(reg, insp, Stage.OVERDUE) == ["Pat SMO", "Dee Deputy", "Ian Inspector", "Sam Site"]
    assert _names(reg, flow, Stage.RECOVERY) == ["Pat SMO"]
    assert _names(reg, flow, Stage.RECOVERY, escalated=True) == ["Pat SMO", "Dee Deputy"]


def test_contact_filters_by_station_list(store):
    reg = registry().model_copy(update={"contacts": [
        Contact(name="North SMO", role=Role.SMO, email="n@town.test", stations=["OF-14"]),
        Contact(name="Flow only", role=Role.SMO, email="f@town.test", kinds=["dry_weather_flow"])]})
    t = utc(2026, 6, 1, 16)
    flow = store.apply_event(dwf("2026-06-01T15:30:00Z"), t).incident
    turb = store.apply_event(turbidity("2026-06-01T15:30:00Z"), t).incident
    assert _names(reg, flow, Stage.OPEN) == ["Flow only"]
    assert _names(reg, turb, Stage.OPEN) == []
