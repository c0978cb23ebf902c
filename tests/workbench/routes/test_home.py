"""The status page (home): what needs attention leads it (overdue, due today, due this
week: inspections and the laws' deadlines; alerting now; episodes that ended and nobody
reviewed), each linking to its record; the open list is newest first by when the episode
began; construction sites are on the map beside the stations."""

from __future__ import annotations

import re

from ms4watch.alerts.incidents import State
from tests.support.notify_peers import dwf, inspection, registry, turbidity
from tests.support.workbench import WORKBENCH_YAML, start_bench


def _section(page: str, ident: str, tag: str = "section") -> str:
    m = re.search(rf'<{tag}[^>]*id="{ident}"[^>]*>(.*?)</{tag}>', page, re.S)
    assert m, f"no {tag} #{ident} on the page"
    return m.group(1)


def _group(attention: str, ident: str) -> str:
    return _section(attention, ident, "div")


def test_the_status_page_leads_with_what_is_overdue_due_today_this_week_and_alerting(bench, clock):
    # at 12:00 EDT on Monday 1 June 2026: one inspection overdue since Sunday, one due at 18:00 today
    overdue = bench.alerting.handle(inspection("2026-05-31T12:00:00Z", "2026-05-30T12:00:00Z")).incident
    today = bench.alerting.handle(inspection("2026-06-01T22:00:00Z", "2026-05-31T22:00:00Z")).incident
    with bench.api("inspector") as c:               # a release's written-notice clock: days, not hours
        r = c.post("/api/v1/releases", json={"law": "schenectady-148-II", "kind": "non_hazardous",
                                             "material": "paint wash water", "location": "Elm St catch basin",
                                             "known_at": "2026-06-01T15:00:00Z", "reported_by": "caller"})
        assert r.status_code == 201, r.text
        release = r.json()
    week = [d for d in release["deadlines"] if d["state"] == "running" and d["due"]]
    assert week, release["deadlines"]
    flow = bench.alerting.handle(dwf("2026-06-01T15:30:00Z")).incident
    page = bench.login("viewer").get("/").text
    attention = _section(page, "attention")
    assert page.index('id="attention"') < page.index("<h2>Stations")          # it leads the page
    late = _group(attention, "overdue")
    assert f'href="/inspections?site=CS-7#due-{overdue.id}"' in late and "Elm St site" in late
    assert f"#due-{today.id}" not in late
    assert f'href="/inspections?site=CS-7#due-{today.id}"' in _group(attention, "due-today")
    this_week = _group(attention, "due-week")
    assert f'href="/releases#release-{release["id"]}"' in this_week or '/releases' in this_week, this_week
    assert week[0]["label"] in this_week
    alerting = _group(attention, "alerting")
    assert f'href="/incidents/{flow.id}"' in alerting and "Main St outfall" in alerting


def test_nothing_to_attend_to_says_so(bench):
    attention = _section(bench.login("viewer").get("/").text, "attention")
    assert "Nothing overdue, nothing due this week, nothing alerting." in attention


def test_open_newest_first_is_by_when_the_episode_began(bench):
    bench.alerting.handle(dwf("2026-06-01T10:00:00Z", outfall="OF-12"))        # id 1, began at 10:00
    bench.alerting.handle(turbidity("2026-06-01T15:00:00Z"))                   # id 2, began at 15:00
    bench.alerting.handle(dwf("2026-05-22T10:00:00Z", id="older", outfall="OF-12"))  # id 3, began 22 May
    newest = _section(bench.login("viewer").get("/").text, "newest")
    hrefs = re.findall(r'href="/incidents/(\d+)"', newest)
    assert hrefs == ["2", "1", "3"]


def test_construction_sites_are_on_the_map(tmp_path, clock):
    yaml = WORKBENCH_YAML.replace("active_from: 2026-05-29", "active_from: 2026-05-29, lat: 42.8120, lon: -73.9350")
    b = start_bench(tmp_path, clock, reg=registry(yaml))
    try:
        page = b.login("viewer").get("/").text
    finally:
        b.close()
    svg = page[page.index('<figure class="map">'):page.index("</figure>")]
    assert 'href="/stations/OF-12"' in svg
    assert 'href="/inspections?site=CS-7"' in svg and "Elm St site" in svg and 'class="site' in svg


def test_an_episode_that_ended_stays_on_the_board_until_reviewed(bench):
    """The flow stopped by itself: the incident resolved, but nobody has looked at it yet."""
    ended = bench.alerting.handle(dwf("2026-06-01T07:00:00Z", "2026-06-01T08:00:00Z")).incident
    assert ended.state is State.RESOLVED and ended.resolution == "auto"
    s = bench.login("smo")
    board = _group(_section(s.get("/").text, "attention"), "unreviewed")
    assert f'href="/incidents/{ended.id}"' in board and "ended, not reviewed" in board
    listed = s.get("/incidents").text                                   # the default filter shows it
    assert f'id="incident-{ended.id}"' in listed and "ended, not reviewed" in listed
    page = s.get(f"/incidents/{ended.id}").text
    assert "Acknowledge</button>" in page and "ended, not reviewed" in page
    r = s.post_form(f"/incidents/{ended.id}/acknowledge", {"note": "dye test: a car wash on Elm; told the owner"})
    assert r.status_code == 303, r.text
    inc = bench.alerting.store.get(ended.id)
    assert inc.state is State.RESOLVED and inc.acknowledged_by == "Smo User"
    assert bench.alerting.store.audit(ended.id)[-1].action == "acknowledged"
    audit = bench.workbench.audit.entries(target=f"incident:{ended.id}")
    assert (audit[0].action, audit[0].outcome) == ("incident.acknowledge", "done")
    assert "dye test" in audit[0].detail
    assert f'href="/incidents/{ended.id}"' not in _section(s.get("/").text, "attention")
    assert f'id="incident-{ended.id}"' not in s.get("/incidents").text
    assert "<dt>Reviewed</dt><dd>by Smo User" in s.get(f"/incidents/{ended.id}").text
    with bench.api("smo") as c:                                         # a second review: harmless
        assert c.post(f"/api/v1/incidents/{ended.id}/acknowledge").status_code == 200
