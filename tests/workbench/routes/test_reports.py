"""The annual report's page: every count links to its records, the permit and the
certification head and close it, and a count stated by hand is a record of its own, audited."""

from __future__ import annotations

import re

from ms4watch.workbench.roles import Role


def counts(html: str) -> dict[str, tuple[str, str | None]]:
    """line id -> (count shown, link)"""
    out = {}
    for m in re.finditer(r'<tr id="count-([^"]+)">(.*?)</tr>', html, re.S):
        a = re.search(r'<a class="count" href="([^"]+)">([^<]+)</a>', m.group(2))
        span = re.search(r'<span class="count">([^<]+)</span>', m.group(2))
        out[m.group(1)] = (a.group(2), a.group(1)) if a else (span.group(1), None)
    return out


def test_every_count_links_to_as_many_records(bench):
    web = bench.login("smo")
    page = web.get("/reports/annual/2026")
    assert page.status_code == 200
    for words in ("GP-0-24-001", "SPDES permit ID", "MCM 3", "MCM 4", "I certify under penalty of law", "Signature"):
        assert words in page.text, words
    seen = counts(page.text)
    assert {"outfalls", "screened", "complaints", "idde_enforcement", "swppp_reviews", "inspections",
            "construction_enforcement", "fines_construction", "oversight_inspections"} <= set(seen)
    for line, (n, link) in seen.items():
        if link is None:
            assert n == "—", line                   # stated by hand only: blank until then
            continue
        listed = web.get(link.replace("&amp;", "&"))
        assert listed.status_code == 200, link
        assert int(n) == len(re.findall(r'<td class="actions">', listed.text)), (line, link)


def test_a_count_stated_by_hand_is_kept_shown_and_audited(bench):
    web = bench.login("smo")
    r = web.post_form("/reports/annual/2026/overrides", {"line": "fines_construction", "value": "2",
                                                          "reason": "two fines, town court docket 26-114 and 26-131"})
    assert r.status_code == 303, r.text
    r = web.post_form("/reports/annual/2026/overrides", {"line": "outfalls", "value": "41",
                                                          "reason": "38 outfalls mapped on paper, not yet in the registry"})
    assert r.status_code == 303, r.text
    page = web.get("/reports/annual/2026").text
    seen = counts(page)
    assert seen["fines_construction"][0] == "2" and seen["outfalls"][0] == "41"
    records = len(bench.workbench.registry.outfalls)
    assert f"records: {records}; stated by smo" in page and "town court docket 26-114" in page
    [a] = bench.workbench.audit.entries(target="report:2026:fines_construction")
    assert (a.who, a.action, a.outcome) == ("smo", "report.override", "done") and "= 2" in a.detail
    # a viewer may read the report but not state a count: refused, and the refusal audited
    viewer = bench.login(Role.VIEWER.value)
    r = viewer.post_form("/reports/annual/2026/overrides", {"line": "fines_construction", "value": "0",
                                                             "reason": "none"})
    assert r.status_code == 403
    assert any(e.outcome.startswith("refused") and e.who == "viewer" for e in
               bench.workbench.audit.entries(target="report:2026"))
    assert counts(web.get("/reports/annual/2026").text)["fines_construction"][0] == "2"


def test_a_count_needs_a_reason_and_a_known_line(bench):
    web = bench.login("smo")
    assert web.post_form("/reports/annual/2026/overrides", {"line": "fines_construction", "value": "1",
                                                            "reason": " "}).status_code == 400
    r = web.post_form("/reports/annual/2026/overrides", {"line": "no_such_line", "value": "1", "reason": "x"})
    assert r.status_code == 409 and "no line" in r.text


def test_the_api_gives_each_line_with_the_records_count_beside_the_one_reported(bench):
    web = bench.login("smo")
    web.post_form("/reports/annual/2026/overrides", {"line": "oversight_inspections", "value": "5",
                                                      "reason": "the town engineer's site visit log, 2026"})
    with bench.api("viewer") as c:
        body = c.get("/api/v1/reports/annual/2026").json()
    assert body["permit"] == "GP-0-24-001" and body["start"].startswith("2026-01-03T00:00:00")
    lines = {x["line"]: x for x in body["counts"]}
    assert (lines["oversight_inspections"]["count"], lines["oversight_inspections"]["records"]) == (5, None)
    assert (lines["fines_construction"]["count"], lines["fines_construction"]["mcm"]) == (None, 4)
    assert lines["outfalls"]["count"] == lines["outfalls"]["records"] == len(bench.workbench.registry.outfalls)
