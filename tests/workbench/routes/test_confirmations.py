"""Irreversible actions ask first: resolving an incident and closing a case take a note,
then a page that says what it means and asks to confirm (as withdrawing a notice does);
nothing is written until then, and the confirmed action is audited with its note."""

from __future__ import annotations

from ms4watch.alerts.incidents import State
from tests.support.notify_peers import dwf
from tests.workbench.routes.test_compliance import _case_from_incident

CLOSE = {"at": "2026-06-01T12:00", "by": "J. Rivera", "outcome": "eliminated",
         "verification": "follow-up dry-weather screening: no flow", "notes": "cross-connection plugged at 4 Main St"}


def test_resolving_an_incident_takes_a_note_and_a_confirmation(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    s = bench.login("smo")
    page = s.get("/incidents/1").text
    assert 'class="stack resolve-form"' in page
    r = s.post_form("/incidents/1/resolve", {"note": "  "})
    assert r.status_code == 400 and "why it is resolved" in r.text
    r = s.post_form("/incidents/1/resolve", {"note": "cross-connection plugged"})
    assert r.status_code == 200 and "Resolve incident 1?" in r.text and "cannot be undone" in r.text
    assert 'name="confirm" value="yes"' in r.text and "cross-connection plugged" in r.text
    assert bench.alerting.store.get(1).state is State.OPEN                            # asked, not done
    r = s.post_form("/incidents/1/resolve", {"note": "cross-connection plugged", "confirm": "yes"})
    assert r.status_code == 303 and r.headers["location"] == "/incidents/1"
    inc = bench.alerting.store.get(1)
    assert (inc.state, inc.resolution) == (State.RESOLVED, "manual")
    assert bench.alerting.store.audit(1)[-1].note == "cross-connection plugged"
    [done] = [a for a in bench.workbench.audit.entries(target="incident:1") if a.action == "incident.resolve"]
    assert (done.who, done.detail, done.outcome) == ("smo", "cross-connection plugged", "done")


def test_the_resolve_question_is_refused_to_a_role_that_may_not_resolve(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    s = bench.login("viewer")
    r = s.post_form("/incidents/1/resolve", {"note": "x"})
    assert r.status_code == 403
    assert bench.workbench.audit.entries(target="incident:1")[0].outcome.startswith("refused:")


def test_closing_a_case_takes_a_note_and_a_confirmation(bench):
    case = _case_from_incident(bench)
    s = bench.login("inspector")
    page = s.get(f"/cases/{case['id']}").text
    assert 'class="stack close-form"' in page
    assert 'value="closure"' not in page                       # not one kind among the visits
    r = s.post_form(f"/cases/{case['id']}/entries", {**CLOSE, "kind": "closure"})
    assert r.status_code == 409 and "close a case with its own form" in r.text
    r = s.post_form(f"/cases/{case['id']}/close", {**CLOSE, "notes": ""})
    assert r.status_code == 400 and "notes" in r.text
    r = s.post_form(f"/cases/{case['id']}/close", CLOSE)
    assert r.status_code == 200 and f"Close case {case['number']}?" in r.text and "cannot be undone" in r.text
    assert 'name="confirm" value="yes"' in r.text and "cross-connection plugged at 4 Main St" in r.text
    assert bench.workbench.compliance.store.case(case["id"]).status == "open"           # asked, not done
    r = s.post_form(f"/cases/{case['id']}/close", {**CLOSE, "confirm": "yes"})
    assert r.status_code == 303, r.text
    got = bench.workbench.compliance.store.case(case["id"])
    assert got.status == "closed" and got.closure.notes == CLOSE["notes"] and got.closure.outcome == "eliminated"
    audit = [a for a in bench.workbench.audit.entries(target=f"case:{case['id']}") if a.outcome == "done"]
    assert audit and audit[0].who == "inspector"
    page = s.get(f"/cases/{case['id']}").text
    assert "close-form" not in page
