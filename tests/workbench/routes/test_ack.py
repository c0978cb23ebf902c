"""The acknowledge link in an alert email: signed, expiring; its page shows the incident
and a form, and only the form's POST acknowledges (a GET never changes state)."""

from __future__ import annotations

import re

import httpx
from itsdangerous import TimestampSigner

from ms4watch.alerts.incidents import State
from tests.support.notify_peers import dwf


def _link(bench, smtp) -> str:
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    bench.alerting.tick()
    body = smtp.to("pat@town.test")[0].get_body(("plain",)).get_content()
    return re.search(r"Acknowledge: (\S+)", body).group(1)


def test_the_emailed_link_acknowledges_after_a_button_press(mailing_bench, smtp, clock):
    """On a real uvicorn (``bench.url``): the link, as a mail client follows it."""
    bench = mailing_bench
    link = _link(bench, smtp)
    assert re.fullmatch(rf"{bench.url}/ack/[\w.-]+", link)
    assert bench.alerting.store.get(1).code not in link            # the SMS code is not the link's secret
    with httpx.Client(follow_redirects=False) as c:
        for _ in range(2):                                           # a mail scanner, then the SMO
            page = c.get(link)
            assert page.status_code == 200 and "<form" in page.text and "Main St outfall" in page.text
        assert bench.alerting.store.get(1).state is State.OPEN
        r = c.post(link, data={"by": "  "})
        assert r.status_code == 400 and bench.alerting.store.get(1).state is State.OPEN
        r = c.post(link, data={"by": "Pat SMO", "note": "on site 14:10"})
        assert r.status_code == 200 and "<title>Acknowledged</title>" in r.text and "acknowledged by Pat SMO" in r.text
        page = c.get(link)
        assert "Already acknowledged by Pat SMO" in page.text and "<form" not in page.text
    last = bench.alerting.store.audit(1)[-1]
    assert (last.action, last.who, last.how, last.note) == ("acknowledged", "Pat SMO", "email link", "on site 14:10")
    web = bench.workbench.audit.entries(target="incident:1")[0]
    assert (web.who, web.via, web.address, web.role, web.outcome) == ("Pat SMO", "email link", "127.0.0.1", None, "done")
    clock.advance(hours=1)
    bench.alerting.tick()
    assert smtp.to("dee@town.test") == []                           # the escalation to the deputy was called off


def test_a_tampered_or_forged_link_is_refused(mailing_bench, smtp):
    link = _link(mailing_bench, smtp)
    token = link.rsplit("/", 1)[1]
    other = mailing_bench.workbench.links.token(2)                 # a real link, but to another incident
    payload, stamp, sig = token.split(".")
    forged_sig = f"{payload}.{stamp}.{('B' if sig[0] != 'B' else 'C') + sig[1:]}"   # (not the last character: its
    other_payload = f"eyJpbmNpZGVudCI6Mn0.{stamp}.{sig}"                             # low bits are base64 padding)
    with mailing_bench.client() as c:
        assert c.get(f"{mailing_bench.base_url}/ack/{forged_sig}").status_code == 404
        assert c.post(f"{mailing_bench.base_url}/ack/{forged_sig}", data={"by": "Mallory"}).status_code == 404
        assert c.post(f"{mailing_bench.base_url}/ack/{other_payload}", data={"by": "Mallory"}).status_code == 404
        assert c.get(f"{mailing_bench.base_url}/ack/{other}").status_code == 404     # no incident 2
    assert mailing_bench.alerting.store.get(1).state is State.OPEN


def test_a_link_older_than_its_lifetime_has_expired(mailing_bench, smtp, monkeypatch):
    bench = mailing_bench
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    lifetime = bench.workbench.settings.web.ack_link_lifetime
    real = TimestampSigner.get_timestamp
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: real(self) - int(lifetime.total_seconds()) - 5)
    old = bench.workbench.links.url(bench.alerting.store.get(1))     # made a week and 5 s ago
    monkeypatch.setattr(TimestampSigner, "get_timestamp", real)
    with bench.client() as c:
        for r in (c.get(old), c.post(old, data={"by": "Pat SMO"})):
            assert r.status_code == 410 and "expired" in r.text and "log in" in r.text
    assert bench.alerting.store.get(1).state is State.OPEN


def test_a_resolved_incident_cannot_be_acknowledged_by_link(mailing_bench, smtp):
    link = _link(mailing_bench, smtp)
    mailing_bench.alerting.resolve(1, by="Pat SMO", note="fixed")
    with mailing_bench.client() as c:
        assert "Resolved (manual) by Pat SMO" in c.get(link).text
        r = c.post(link, data={"by": "Dee"})
    assert r.status_code == 409 and "already resolved" in r.text
    refused = mailing_bench.workbench.audit.entries(target="incident:1")[0]
    assert refused.who == "Dee" and refused.outcome.startswith("refused:")


def test_the_link_of_an_episode_that_ended_unreviewed_reviews_it(mailing_bench, smtp):
    link = _link(mailing_bench, smtp)
    mailing_bench.alerting.handle(dwf("2026-06-01T15:30:00Z", "2026-06-01T15:55:00Z"))    # the flow stopped
    assert mailing_bench.alerting.store.get(1).resolution == "auto"
    with mailing_bench.client() as c:
        page = c.get(link).text
        assert "ended, not reviewed" in page and "<form" in page
        r = c.post(link, data={"by": "Pat SMO", "note": "seen: a hydrant flush"})
    assert r.status_code == 200 and "reviewed by Pat SMO" in r.text
    inc = mailing_bench.alerting.store.get(1)
    assert (inc.state, inc.acknowledged_by) == (State.RESOLVED, "Pat SMO")
    web = mailing_bench.workbench.audit.entries(target="incident:1")[0]
    assert (web.who, web.via, web.outcome) == ("Pat SMO", "email link", "done")
    with mailing_bench.client() as c:
        assert "<form" not in c.get(link).text
