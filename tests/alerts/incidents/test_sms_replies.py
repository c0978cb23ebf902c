"""A reply carrying the code acknowledges; only registered numbers may; bad bodies are refused."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from ms4watch.alerts.incidents import IncidentStore, State, connect
from ms4watch.alerts.incidents.sms_replies import InboundSms, handle_reply, parse_inbound
from ms4watch.alerts.notifiers.sms import septets
from tests.support.notify_peers import dwf, registry, utc

T0 = utc(2026, 6, 1, 16)


@pytest.fixture
def store(tmp_path):
    return IncidentStore(connect(tmp_path / "s.db"))


def test_reply_with_the_code_acknowledges(store):
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    other = store.apply_event(dwf("2026-06-01T15:30:00Z", outfall="OF-14"), T0).incident
    reply = handle_reply(store, registry().contacts, InboundSms("+15555550101", f"Yes {inc.code.lower()} on it"),
                         T0 + timedelta(minutes=3))
    assert reply.incident is not None and reply.incident.id == inc.id
    assert reply.text == f"ms4watch: {inc.code} acknowledged by Pat SMO (OF-12)." and septets(reply.text) <= 160
    assert store.get(inc.id).state is State.ACKNOWLEDGED and store.get(other.id).state is State.OPEN
    entry = store.audit(inc.id)[-1]
    assert (entry.who, entry.how, entry.note, entry.at) == ("Pat SMO", "sms reply from +15555550101",
                                                           f"Yes {inc.code.lower()} on it", T0 + timedelta(minutes=3))


def test_unknown_number_or_no_code(store):
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z"), T0).incident
    r = handle_reply(store, registry().contacts, InboundSms("+15555550000", inc.code), T0)
    assert r.incident is None and "not a registered contact" in r.text
    r = handle_reply(store, registry().contacts, InboundSms("+15555550101", "what is this?"), T0)
    assert r.incident is None and "no acknowledge code" in r.text
    assert store.get(inc.id).state is State.OPEN


def test_code_of_a_resolved_incident(store):
    inc = store.apply_event(dwf("2026-06-01T15:30:00Z", end="2026-06-01T15:50:00Z"), T0).incident
    r = handle_reply(store, registry().contacts, InboundSms("+15555550101", inc.code), T0)
    assert r.incident is None and "already resolved" in r.text


def test_parse_twilio_form_and_json():
    form = b"ToCountry=US&From=%2B15555550101&Body=ACK+ABCDE&MessageSid=SM123"
    assert parse_inbound("application/x-www-form-urlencoded; charset=utf-8", form) == InboundSms("+15555550101", "ACK ABCDE")
    assert parse_inbound("application/json", json.dumps({"from": "+1555", "body": "x"}).encode()) == InboundSms("+1555", "x")
    with pytest.raises(ValueError, match="'From' is missing"):
        parse_inbound("application/x-www-form-urlencoded", b"Body=hi")
    with pytest.raises(ValueError, match="unreadable"):
        parse_inbound("application/json", b"{nope")
