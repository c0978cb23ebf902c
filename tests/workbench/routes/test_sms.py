"""``POST /sms/inbound``: the SMS provider's webhook; a contact's reply with the code
acknowledges (Twilio form → TwiML, JSON → JSON); the workbench's audit log says so."""

from __future__ import annotations

import json
import socket
import threading
from urllib.parse import urlencode

import pytest

from ms4watch.alerts.incidents import State
from tests.support.notify_peers import dwf

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def test_inbound_sms_twilio_form_acknowledges_and_answers_twiml(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    code = bench.alerting.store.get(1).code
    with bench.client() as c:
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
    with bench.client() as c:
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
        with signed.client() as c:
            r = c.post("/sms/inbound", content=body, headers=ctype)
            assert r.status_code == 403 and "X-MS4Watch-Signature" in r.json()["detail"]
            r = c.post("/sms/inbound", content=body, headers={**ctype, "X-MS4Watch-Signature": sign_body("k" * 31 + "x", body)})
            assert r.status_code == 403
            assert signed.alerting.store.get(1).state is State.OPEN
            r = c.post("/sms/inbound", content=body, headers={**ctype, "X-MS4Watch-Signature": sign_body("k" * 32, body)})
            assert r.status_code == 200 and r.json()["acknowledged"] == 1
        with off.client() as c:
            r = c.post("/sms/inbound", content=body, headers=ctype)
            assert r.status_code == 404 and "sms.inbound" in r.json()["detail"]
    finally:
        signed.close()
        off.close()


def test_a_replayed_signed_request_is_not_acted_on_again(tmp_path, clock):
    """A Twilio signature proves who sent a body, not that it is new: the provider's
    MessageSid is remembered in workbench.db and a replay is answered with nothing."""
    from twilio.request_validator import RequestValidator

    from ms4watch.alerts.incidents import connect
    from ms4watch.workbench.records import ReceivedSms
    from tests.support.workbench import start_bench

    token = "t" * 32
    bench = start_bench(tmp_path, clock, sms={"inbound": "twilio", "secret": token})
    try:
        bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
        code = bench.alerting.store.get(1).code
        params = {"MessageSid": "SM0123456789abcdef0123456789abcdef", "From": "+15555550101", "To": "+15555550199",
                  "Body": f"ack {code}"}
        signature = RequestValidator(token).compute_signature(bench.base_url + "/sms/inbound", params)
        signed = {**FORM, "X-Twilio-Signature": signature}
        with bench.client() as c:
            first = c.post("/sms/inbound", content=urlencode(params), headers=signed)
            replay = c.post("/sms/inbound", content=urlencode(params), headers=signed)
        assert first.status_code == 200 and "<Message>" in first.text and "acknowledged" in first.text
        assert replay.status_code == 200 and "<Message>" not in replay.text
        assert [e.action for e in bench.workbench.audit.entries(target="incident:1")] == ["incident.acknowledge"]
        assert len([a for a in bench.alerting.store.audit(1) if "sms" in (a.how or "")]) == 1
        conn = connect(tmp_path / "data" / "workbench.db")        # remembered on disk, for a restarted server
        try:
            taken = ReceivedSms(conn, threading.RLock())
            assert not taken.first_time("id:" + params["MessageSid"], municipality="x", at=clock())
        finally:
            conn.close()
    finally:
        bench.close()


def test_a_json_replay_without_an_id_is_known_by_its_body(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    code = bench.alerting.store.get(1).code
    body = json.dumps({"from": "+15555550101", "body": code})
    with bench.client() as c:
        first = c.post("/sms/inbound", content=body, headers={"Content-Type": "application/json"})
        again = c.post("/sms/inbound", content=body, headers={"Content-Type": "application/json"})
    assert first.json()["acknowledged"] == 1 and again.json() == {"reply": None, "acknowledged": None, "replay": True}


@pytest.mark.parametrize("ctype", ["multipart/form-data; boundary=xyz", "application/x-www-form-urlencoded",
                                   "application/json", "text/plain"])
def test_the_body_limit_holds_for_every_content_type_before_the_body_is_read(bench, ctype):
    """A chunked body with no length: refused (413) once 64 KB have come, without waiting
    for the rest (a multipart body used to be read up to the photo limit, 100 MB)."""
    port = int(bench.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"POST /sms/inbound HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ctype}\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"x" * 16384
        for _ in range(6):                                   # 96 KB of a body that would go on for ever
            s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = _answer(s)                                  # answered now, the body not finished
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert answer.endswith(b"body over 65536 bytes\"}")


def _answer(s: socket.socket) -> bytes:
    """One HTTP answer (head and a Content-Length body) read off the socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = s.recv(65536)
        assert more, "the server closed the connection without answering"
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += s.recv(65536)
    return head + b"\r\n\r\n" + body


def test_a_declared_length_over_the_limit_is_refused_at_once(bench):
    with bench.client() as c:
        r = c.post("/sms/inbound", content=b"a" * (64 * 1024 + 1),
                   headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    assert r.status_code == 413
