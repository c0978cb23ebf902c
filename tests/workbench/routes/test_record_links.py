"""Every record links to the records it came from and those made from it: incident ↔ case
↔ notice; an outfall's page lists its cases and notices. An incident with a case offers the
case, not a second one."""

from __future__ import annotations

import re

from tests.workbench.routes.test_compliance import _case_from_incident, _idde_notice


def test_incident_case_and_notice_link_both_ways(bench):
    case = _case_from_incident(bench)
    notice = _idde_notice(bench, case_id=case["id"])
    s = bench.login("smo")
    incident = s.get("/incidents/1").text
    assert f'href="/cases/{case["id"]}"' in incident and case["number"] in incident
    assert f'href="/notices/{notice["id"]}"' in incident and notice["number"] in incident
    assert "Open a case" not in incident and 'class="open-case"' not in incident     # no duplicate one click away
    page = s.get(f"/cases/{case['id']}").text
    assert 'href="/incidents/1"' in page and f'href="/notices/{notice["id"]}"' in page
    page = s.get(f"/notices/{notice['id']}").text
    assert f'href="/cases/{case["id"]}">{case["number"]}</a>' in page
    assert 'href="/incidents/1"' in page and 'href="/outfalls/OF-12"' in page
    forms = s.get("/cases?incident=1").text                        # the form from the incident says so, too
    assert f'href="/cases/{case["id"]}"' in forms and "already" in forms


def test_an_incident_without_a_case_offers_to_open_one(bench):
    from tests.support.notify_peers import dwf
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    page = bench.login("smo").get("/incidents/1").text
    assert 'class="open-case" href="/cases?incident=1#open"' in page


def test_an_outfalls_page_lists_its_cases_and_notices(bench):
    case = _case_from_incident(bench)
    notice = _idde_notice(bench, case_id=case["id"])
    loose = _idde_notice(bench, issued_at="2026-06-01T16:00:00Z")           # no case: the outfall names it
    page = bench.login("viewer").get("/outfalls/OF-12").text
    cases = re.search(r'<section id="cases">(.*?)</section>', page, re.S).group(1)
    assert f'href="/cases/{case["id"]}"' in cases and case["number"] in cases
    notices = re.search(r'<section id="notices">(.*?)</section>', page, re.S).group(1)
    assert f'href="/notices/{notice["id"]}"' in notices and f'href="/notices/{loose["id"]}"' in notices
    other = bench.login("viewer").get("/outfalls/OF-14").text
    assert case["number"] not in other and "None." in other


def test_adding_a_party_keeps_the_case_chosen_on_the_notice_form(bench):
    case = _case_from_incident(bench)
    s = bench.login("smo")
    page = s.get(f"/notices?case={case['id']}").text
    assert f'<input type="hidden" name="case" value="{case["id"]}">' in page
    r = s.post_form("/parties", {"name": "Main St Laundromat", "address": "4 Main St", "case": str(case["id"])})
    assert r.status_code == 303 and r.headers["location"] == f"/notices?party=1&case={case['id']}#issue"
    page = s.get(r.headers["location"].split("#")[0]).text
    assert re.search(rf'<option value="{case["id"]}" selected>{case["number"]}', page)
    r = s.post_form("/parties", {"name": "Elm St Garage", "address": "9 Elm St", "case": "1e9"})
    assert r.headers["location"] == "/notices?party=2#issue"
