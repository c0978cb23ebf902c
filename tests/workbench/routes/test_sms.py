"""``POST /sms/inbound``: the SMS provider's webhook; a contact's reply with the code
acknowledges (Twilio form → TwiML, JSON → JSON); the workbench's audit log says so."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import httpx

from ms4watch.alerts.incidents import State
from tests.support.notify_peers import dwf

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def test_inbound_sms_twilio_form_acknowledges_and_answers_twiml(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    code = bench.alerting.store.get(1).code
    with httpx.Client(base_url=bench.url) as c:
        r = c.post("/sms/inbound", content=urlencode({"From": "+15555550101", "To": "+15555550199",
                                                      "Body": f"ok {code.lower()} thx"}), headers=FORM)
    assert r.status_code == 200 and r.text.startswith("<?xml") and f"{code} acknowledged by Pat SMO" in r.text
    inc = bench.alerting.store.get(1)
    assert inc.state is State.ACKNOWLEDGED and bench.alerting.store.audit(1)[-1].how == "sms reply from +15555550101"
    web = bench.workbench.audit.entries(target="incident:1")[0]
    assert (web.who, web.via, web.action, web.address) == ("+15555550101", "sms", "incident.acknowledge", "127.0.0.1")


def test_inbound_sms_json_and_bad_bodies(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    code = bench.alerting.store.get(1).code
    with httpx.Client(base_url=bench.url) as c:
        r = c.post("/sms/inbound", json={"from": "+15555559999", "body": code})
        assert r.status_code == 200 and r.json()["acknowledged"] is None
        assert bench.alerting.store.get(1).state is State.OPEN          # a stranger cannot acknowledge
        r = c.post("/sms/inbound", content=urlencode({"Body": code}), headers=FORM)
        assert r.status_code == 400 and "From" in r.json()["detail"]
        r = c.post("/sms/inbound", content=b"\xff\xfe", headers={"Content-Type": "application/json"})
        assert r.status_code == 400
        r = c.post("/sms/inbound", content=json.dumps({"from": "+1 (555) 555-0102", "body": f"ACK {code}"}),
                   headers={"Content-Type": "application/json"})
    assert r.json()["acknowledged"] == 1 and bench.alerting.store.get(1).acknowledged_by == "Dee Deputy"


def test_the_webhook_checks_the_providers_signature_and_is_off_by_default(tmp_path, clock):
    from ms4watch.alerts.incidents.sms_auth import sign_body
    from tests.support.workbench import start_bench

    signed = start_bench(tmp_path / "hmac", clock, sms={"inbound": "hmac", "secret": "k" * 32})
    off = start_bench(tmp_path / "off", clock, sms={"inbound": "off"})
    try:
        signed.alerting.handle(dwf("2026-06-01T15:30:00Z"))
        code = signed.alerting.store.get(1).code
        body = json.dumps({"from": "+15555550101", "body": code}).encode()
        ctype = {"Content-Type": "application/json"}
        with httpx.Client(base_url=signed.url) as c:
            r = c.post("/sms/inbound", content=body, headers=ctype)
            assert r.status_code == 403 and "X-MS4Watch-Signature" in r.json()["detail"]
            r = c.post("/sms/inbound", content=body, headers={**ctype, "X-MS4Watch-Signature": sign_body("k" * 31 + "x", body)})
            assert r.status_code == 403
            assert signed.alerting.store.get(1).state is State.OPEN
            r = c.post("/sms/inbound", content=body, headers={**ctype, "X-MS4Watch-Signature": sign_body("k" * 32, body)})
            assert r.status_code == 200 and r.json()["acknowledged"] == 1
        with httpx.Client(base_url=off.url) as c:
            r = c.post("/sms/inbound", content=body, headers=ctype)
            assert r.status_code == 404 and "sms.inbound" in r.json()["detail"]
    finally:
        signed.close()
        off.close()
