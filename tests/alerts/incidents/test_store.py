"""The incident store: lifecycle, audit log, one incident per episode, hold-off merging."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from dataclasses import replace

from ms4watch.alerts.events import AlertEvent, AlertKind
from ms4watch.alerts.incidents import EventError, IncidentError, IncidentStore, State, connect, episode_key
from tests.support.notify_peers import dwf, event, inspection, utc

T0 = utc(2026, 6, 1, 16, 0)


@pytest.fixture
def store(tmp_path):
    conn = connect(tmp_path / "inc.db")
    yield IncidentStore(conn, hold_off=timedelta(minutes=30))
    conn.close()


def test_episode_key_is_the_same_for_the_open_and_the_closed_report():
    a = dwf("2026-06-01T11:30:00-04:00")
    b = dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:40:00Z")
    assert episode_key(a) == episode_key(b) == "dry_weather_flow|id:dry_weather_flow/OF-12/1780327800000000000"
    assert episode_key(dwf("2026-06-01T15:31:00Z")) != episode_key(a)


def test_an_event_naming_no_subject_is_refused(store):
    with pytest.raises(EventError, match=": subject: ") as e:
        store.apply_event(AlertEvent(AlertKind.DRY_WEATHER_FLOW, "dwf/x/1", {"start": 1}), T0)
    assert e.value.field == "subject"
    assert store.list() == []


def test_lifecycle_open_acknowledged_resolved_with_audit(store):
    ch = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0)
    assert ch.opened and ch.incident.state is State.OPEN
    inc = store.acknowledge(ch.incident.code.lower(), by="Pat", how="sms reply", now=T0 + timedelta(minutes=5),
                            note="on my way")
    assert inc.state is State.ACKNOWLEDGED and inc.acknowledged_by == "Pat"
    inc = store.resolve(inc.id, by="Pat", how="cli", now=T0 + timedelta(hours=2), note="dye test: car wash on Elm")
    assert inc.state is State.RESOLVED and inc.resolution == "manual"
    log = store.audit(inc.id)
    assert [(a.action, a.who, a.how, a.note) for a in log] == [
        ("opened", "ms4watch", "alert engine", log[0].note),
        ("acknowledged", "Pat", "sms reply", "on my way"),
        ("resolved", "Pat", "cli", "dye test: car wash on Elm"),
    ]
    assert [a.at for a in log] == [T0, T0 + timedelta(minutes=5), T0 + timedelta(hours=2)]
    with pytest.raises(IncidentError, match="already resolved"):
        store.acknowledge(inc.id, by="Dee", how="cli", now=T0)


def test_audit_log_is_append_only(store):
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.conn.execute("UPDATE audit SET who = 'someone else' WHERE incident_id = ?", (inc.id,))
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.conn.execute("DELETE FROM audit")
    assert len(store.audit(inc.id)) == 1


def test_resolving_by_hand_needs_a_note_and_a_name(store):
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    with pytest.raises(IncidentError, match="note"):
        store.resolve(inc.id, by="Pat", how="cli", now=T0, note="  ")
    with pytest.raises(IncidentError, match="who"):
        store.acknowledge(inc.id, by="", how="cli", now=T0)
    assert store.get(inc.id).state is State.OPEN


def test_one_incident_per_episode_closed_automatically(store):
    a = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0)
    again = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0 + timedelta(minutes=1))
    b = store.apply_event(dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:40:00Z"), T0 + timedelta(minutes=50))
    assert not again.opened and not again.closed
    assert b.closed and not b.opened
    assert a.incident.id == b.incident.id and len(store.list()) == 1
    assert b.incident.state is State.RESOLVED and b.incident.resolution == "auto"
    assert b.incident.end == utc(2026, 6, 1, 16, 40)
    # The closed report delivered twice (a replay) changes nothing.
    c = store.apply_event(dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:40:00Z"), T0 + timedelta(hours=1))
    assert not c.closed and len(store.audit(a.incident.id)) == 2


@pytest.mark.parametrize("gap, merged", [(timedelta(minutes=30), True), (timedelta(minutes=30, seconds=1), False)])
def test_reopening_within_the_hold_off_merges(store, gap, merged):
    first = store.apply_event(dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:00:00Z"), T0).incident
    start = utc(2026, 6, 1, 16, 0) + gap
    ch = store.apply_event(dwf(start.isoformat()), T0 + timedelta(hours=1))
    assert ch.merged is merged and ch.opened is not merged
    if merged:
        inc = store.get(first.id)
        assert inc.state is State.OPEN and inc.episodes == 2 and inc.end is None and inc.resolved_at is None
        assert [a.action for a in store.audit(first.id)] == ["opened", "resolved", "reopened"]
        assert len(store.list()) == 1
        # ... and the merged episode's own close resolves it again.
        closed = store.apply_event(dwf(start.isoformat(), end=(start + timedelta(minutes=40)).isoformat()),
                                   T0 + timedelta(hours=2))
        assert closed.closed and closed.incident.id == first.id
    else:
        assert len(store.list()) == 2


def test_a_reopened_incident_that_was_acknowledged_stays_acknowledged(store):
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    store.acknowledge(inc.id, by="Pat", how="cli", now=T0)
    store.apply_event(dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:00:00Z"), T0)
    store.apply_event(dwf("2026-06-01T16:10:00Z"), T0)
    assert store.get(inc.id).state is State.ACKNOWLEDGED


def test_suppressed_episode_is_kept_with_its_reason(store):
    ch = store.apply_event(dwf("2026-06-01T15:30:00Z", suppressed="approved discharge: hydrant flushing"), T0)
    assert ch.incident.suppressed == "approved discharge: hydrant flushing"
    assert "suppressed" in store.audit(ch.incident.id)[0].note
    assert store.unacknowledged() == []


def test_storms_below_the_qualifying_depth_make_no_incident(store):
    ch = store.apply_event(event("storm", gauge="RG-1", start="2026-06-01T10:00:00Z", end=None, depth_in=0.49,
                                 qualifying=False), T0)
    assert ch.incident is None and ch.ignored and store.list() == []


def test_inspection_items_have_a_deadline_and_are_resolved_by_the_inspection(store):
    a = store.apply_event(inspection(due="2026-06-02T18:00:00Z", storm_end="2026-06-01T18:00:00Z"), T0).incident
    b = store.apply_event(inspection(due="2026-06-05T18:00:00Z", storm_end="2026-06-04T18:00:00Z"), T0).incident
    assert a.deadline == utc(2026, 6, 2, 18) and a.id != b.id
    done = store.record_inspection("CS-7", at=utc(2026, 6, 2, 9), by="Ian", now=utc(2026, 6, 2, 10), note="silt fence ok")
    assert [i.id for i in done] == [a.id]  # the later storm still needs its own inspection
    assert store.get(a.id).resolution == "inspection" and store.get(b.id).state is State.OPEN
    assert store.audit(a.id)[-1].who == "Ian" and "silt fence ok" in store.audit(a.id)[-1].note
    assert [i.id for i in store.with_deadline()] == [b.id]


def test_store_survives_reopening_the_file(tmp_path):
    conn = connect(tmp_path / "x.db")
    inc = IncidentStore(conn).apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    conn.close()
    again = IncidentStore(connect(tmp_path / "x.db"))
    assert again.find(inc.code).id == inc.id


def test_engine_ids_key_the_episode_and_retraction_resolves(store):
    ev = dwf("2026-06-01T11:30:00-04:00", id="dwf/OF-12/1780327800000000000")
    inc = store.apply_event(ev, T0).incident
    assert inc.key == "dry_weather_flow|id:dwf/OF-12/1780327800000000000"
    assert store.apply_event(dwf("2026-06-01T11:30:00-04:00", end="2026-06-01T12:40:00-04:00", id=ev.id), T0).closed
    ch = store.apply_event(ev.retracted(), T0)
    assert not ch.retracted and store.audit(inc.id)[-1].action == "retracted"  # already closed: noted only
    other = dwf("2026-06-01T11:30:00-04:00", outfall="OF-14", id="dwf/OF-14/1")
    inc2 = store.apply_event(other, T0).incident
    ch = store.apply_event(other.retracted(), T0)
    assert ch.retracted and store.get(inc2.id).resolution == "retracted"
    assert store.apply_event(replace(ev, id="never-seen").retracted(), T0).ignored


def test_routine_inspection_item_is_satisfied_by_an_inspection_in_its_week(store):
    routine = event("inspection_due", site="CS-7", gauge=None, storm_end=None, due="2026-06-08T16:00:00Z",
                    reason="routine", params={"routine_days": 7.0})
    inc = store.apply_event(routine, T0).incident
    assert inc.start == utc(2026, 6, 1, 16) and inc.deadline == utc(2026, 6, 8, 16)
    assert store.record_inspection("CS-7", at=utc(2026, 5, 30), by="Ian", now=T0) == []
    assert [i.id for i in store.record_inspection("CS-7", at=utc(2026, 6, 3), by="Ian", now=T0)] == [inc.id]


def test_engine_closing_an_inspection_item_resolves_it(store):
    item = inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z", id="inspection/CS-7/storm/RG-1/x",
                      closed_at=None)
    inc = store.apply_event(item, T0).incident
    ch = store.apply_event(inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z", id=item.id,
                                      closed_at="2026-06-02T10:00:00Z"), T0)
    assert ch.closed and store.get(inc.id).resolution == "inspection"


def test_acknowledge_codes_always_hold_a_letter_so_they_never_read_as_an_id(store, monkeypatch):
    """An all-digit code ("32863") would be taken for incident id 32863 by ``find``."""
    import ms4watch.alerts.incidents.store as mod
    draws = iter("32863" + "2345K")
    monkeypatch.setattr(mod.secrets, "choice", lambda alphabet: next(draws))
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    assert inc.code == "2345K" and store.find("2345k").id == inc.id


def test_a_compliance_deadline_incident_follows_its_clock_when_a_later_record_moves_it(store):
    def clock(due: str, end: str | None = None):
        return event("compliance_deadline", id="compliance/notice/3/remediation", record="notice:3",
                     number="NOV-2026-001", what_due="remedial measures (NOV-2026-001)", who="the violator",
                     start="2026-06-01T15:50:00Z", due=due, end=end, href="/notices/3", site="CS-7")
    inc = store.apply_event(clock("2026-06-17T04:00:00Z"), T0).incident
    assert inc.deadline == utc(2026, 6, 17, 4)
    ch = store.apply_event(clock("2026-06-23T04:00:00Z"), T0 + timedelta(days=4))
    assert ch.deadline_moved == utc(2026, 6, 17, 4) and ch.incident.deadline == utc(2026, 6, 23, 4)
    assert store.with_deadline()[0].deadline == utc(2026, 6, 23, 4)      # what reminders and overdue read
    assert store.audit(inc.id)[-1].action == "deadline moved"
    again = store.apply_event(clock("2026-06-23T04:00:00Z"), T0 + timedelta(days=5))
    assert again.deadline_moved is None and len(store.audit(inc.id)) == 2


def test_the_audit_notes_give_times_in_the_towns_zone_and_durations_in_words(tmp_path):
    """Issue 23: the audit read "since 2026-06-05T08:00:00.000+00:00" and "within the
    0:30:00 hold-off": the SMO reads the town's local time and a duration with its unit."""
    from zoneinfo import ZoneInfo
    conn = connect(tmp_path / "inc.db")
    store = IncidentStore(conn, hold_off=timedelta(minutes=30), tz=ZoneInfo("America/New_York"))
    first = store.apply_event(dwf("2026-06-01T15:30:00Z", end="2026-06-01T16:00:00Z"), T0).incident
    store.apply_event(dwf("2026-06-01T16:10:00Z"), T0 + timedelta(hours=1))
    notes = [a.note for a in store.audit(first.id)]
    assert notes[0].endswith("since Mon 2026-06-01 11:30 EDT"), notes
    assert "ended Mon 2026-06-01 12:00 EDT" in notes[1], notes
    assert "new episode since Mon 2026-06-01 12:10 EDT within the 30 min hold-off" in notes[2], notes
    assert not any("+00:00" in n or "T1" in n for n in notes), notes
    conn.close()
