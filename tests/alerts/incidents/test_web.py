"""The acknowledge link and the inbound-SMS webhook, over real HTTP on loopback."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest

from ms4watch.alerts.incidents import State
from ms4watch.alerts.incidents.web import serve
from tests.support.alerting import Alerting
from tests.support.notify_peers import Clock, dwf, registry, utc
from tests.support.servers import free_port

T0 = utc(2026, 6, 1, 16, 0)


@pytest.fixture
def served(tmp_path, smtp):
    port = free_port()
    clock = Clock(T0)
    n = Alerting(registry(), tmp_path / "inc.db", [smtp.url], clock, ack_base_url=f"http://127.0.0.1:{port}")
    server = serve(n.incidents, port=port)
    yield n, clock, port
    server.shutdown()
    server.server_close()
    n.close()


def _req(url, data=None, ctype="application/x-www-form-urlencoded"):
    req = urllib.request.Request(url, data=data, headers={"Content-Type": ctype} if data is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_emailed_link_acknowledges_after_a_button_press(served, smtp):
    n, clock, port = served
    n.handle(dwf("2026-06-01T15:30:00Z"))
    n.tick()
    body = smtp.to("pat@town.test")[0].get_body(("plain",)).get_content()
    link = next(w for w in body.split() if w.startswith("http://127.0.0.1"))
    status, page = _req(link)
    assert status == 200 and "<form" in page
    assert n.store.get(1).state is State.OPEN  # a GET (a mail scanner) acknowledges nothing
    url = link.split("?")[0]
    assert _req(url, urlencode({"code": "WRONG", "by": "Pat SMO"}).encode())[0] == 403
    status, page = _req(url, urlencode({"code": n.store.get(1).code.lower(), "by": "Pat SMO",
                                        "note": "on site 14:10"}).encode())
    assert status == 200 and "acknowledged by Pat SMO" in page
    last = n.store.audit(1)[-1]
    assert (last.action, last.who, last.how, last.note) == ("acknowledged", "Pat SMO", "email link", "on site 14:10")
    clock.advance(hours=1)
    n.tick()
    assert smtp.to("dee@town.test") == []


def test_inbound_sms_twilio_form_acknowledges_and_answers_twiml(served):
    n, _, port = served
    n.handle(dwf("2026-06-01T15:30:00Z"))
    code = n.store.get(1).code
    status, xml = _req(f"http://127.0.0.1:{port}/sms/inbound",
                       urlencode({"From": "+15555550101", "To": "+15555550199", "Body": f"ok {code.lower()} thx"}).encode())
    assert status == 200 and xml.startswith("<?xml") and f"{code} acknowledged by Pat SMO" in xml
    inc = n.store.get(1)
    assert inc.state is State.ACKNOWLEDGED and n.store.audit(1)[-1].how == "sms reply from +15555550101"


def test_inbound_sms_json_and_bad_bodies(served):
    n, _, port = served
    n.handle(dwf("2026-06-01T15:30:00Z"))
    code = n.store.get(1).code
    url = f"http://127.0.0.1:{port}/sms/inbound"
    status, text = _req(url, json.dumps({"from": "+15555559999", "body": code}).encode(), "application/json")
    assert status == 200 and json.loads(text)["acknowledged"] is None
    assert n.store.get(1).state is State.OPEN  # a stranger cannot acknowledge
    status, text = _req(url, urlencode({"Body": code}).encode())
    assert status == 400 and "From" in text
    status, text = _req(url, json.dumps({"from": "+1 (555) 555-0102", "body": f"ACK {code}"}).encode(), "application/json")
    assert json.loads(text)["acknowledged"] == 1 and n.store.get(1).acknowledged_by == "Dee Deputy"
