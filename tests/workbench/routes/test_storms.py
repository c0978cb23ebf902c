"""Storms: every storm the alert engine found, newest first, filtered by gauge, depth and
how far back; the API and its CSV."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading
from tests.support.notify_peers import utc

T0 = utc(2026, 6, 1, 16, 0)


def _rain(bench) -> None:
    """A 0.70 inch storm two days ago and a 0.05 inch shower this morning, at RG-1."""
    def storm(start, tips):
        return [CanonicalReading(to_ns(start + timedelta(minutes=2 * i)), "RG-1", "LOG-RG-1", "rain", "rain", 0.01,
                                 "in", "", 0) for i in range(tips)]
    bench.feed(storm(T0 - timedelta(days=2), 70) + storm(T0 - timedelta(hours=8), 5))
    bench.pipeline.advance(to_ns(T0))


def test_storms_newest_first_with_the_sites_they_make_due(bench):
    _rain(bench)
    s = bench.login("viewer")
    page = s.get("/storms").text
    assert page.index("0.05 in") < page.index("0.7 in")
    assert '<a href="/inspections?site=CS-7">CS-7</a>' in page          # the qualifying one's site
    only = s.get("/storms?qualifying=true").text
    assert "0.7 in" in only and "0.05 in" not in only
    assert 'href="/api/v1/storms.csv?qualifying=true"' in only
    with bench.api("viewer") as c:
        got = c.get("/api/v1/storms").json()
        assert [(x["depth_in"], x["qualifying"]) for x in got] == [(0.05, False), (0.7, True)]
        assert got[1]["sites"] == ["CS-7"] and got[1]["end"] is not None
        assert c.get("/api/v1/storms", params={"days": 1}).json()[0]["depth_in"] == 0.05
        assert c.get("/api/v1/storms", params={"gauge": "RG-9"}).json() == []
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/storms.csv", params={"qualifying": "true"}).text)))
        assert [(x["gauge"], x["depth_in"], x["sites"]) for x in rows] == [("RG-1", "0.7", "CS-7")]
