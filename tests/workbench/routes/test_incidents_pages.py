"""The incidents pages: the list and its filters, acknowledging from the list, an
incident's page (chart, rule, law, notifications, audit), resolving with a note."""

from __future__ import annotations

import html
import re
from xml.etree import ElementTree

from ms4watch.alerts.incidents import State
from tests.support.notify_peers import dwf, turbidity


def test_the_list_filters_and_acknowledges(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    bench.alerting.handle(turbidity("2026-06-01T14:00:00Z"))
    s = bench.login("inspector")
    page = s.get("/incidents").text
    assert "Main St outfall" in page and "Elm St creek" in page
    assert page.count('class="primary" name="ack"') == 2
    only = s.get("/incidents?kind=turbidity_contrast").text
    assert "Elm St creek" in only and "Main St outfall" not in only
    assert 'href="/api/v1/incidents.csv?kind=turbidity_contrast"' in only
    assert "No incidents match" in s.get("/incidents?state=resolved").text
    r = s.post_form("/incidents/1/acknowledge", {"back": "/incidents?kind=dry_weather_flow"})
    assert r.status_code == 303 and r.headers["location"] == "/incidents?kind=dry_weather_flow"
    inc = bench.alerting.store.get(1)
    assert inc.state is State.ACKNOWLEDGED and inc.acknowledged_by == "Inspector User"
    assert bench.alerting.store.audit(1)[-1].how == "web (inspector)"
    assert s.get("/incidents").text.count('class="primary" name="ack"') == 1
    r = s.post_form("/incidents/1/acknowledge", {"back": "https://evil.test/"})
    assert r.headers["location"] == "/incidents/1"
    assert s.get("/incidents?state=sleeping").status_code == 400


def test_an_incidents_page_and_resolving_it_with_a_note(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    viewer = bench.login("viewer").get("/incidents/1").text
    assert "Main St outfall" in viewer and "Resolve" not in viewer and "Acknowledge</button>" not in viewer
    s = bench.login("smo")
    page = s.get("/incidents/1").text
    assert re.search(r"Dry-weather flow at Main St outfall", page)
    assert "flow floor: 0.5 gpm" in page                              # the rule's threshold
    assert "<h2>The law</h2>" in page and html.escape(bench.alerting.store.get(1).provision, quote=False) in page
    # the notifications file in words, its path beside it, not the feed's raw "file:/…" label
    assert "notification log" in page and "file:/" not in page and "feed</span>" not in page
    assert 'src="/incidents/1/chart.svg' in page and 'href="/incidents/1/chart.png"' in page and "opened" in page
    chart = s.get("/incidents/1/chart.png")
    assert chart.status_code == 200 and chart.headers["content-type"] == "image/svg+xml"   # no readings here
    chart = s.get("/incidents/1/chart.svg")
    assert chart.status_code == 200 and "No readings are stored" in chart.text
    assert s.post_form("/incidents/1/resolve", {"note": ""}).status_code == 400
    r = s.post_form("/incidents/1/resolve", {"note": "cross-connection plugged", "confirm": "yes"})
    assert r.status_code == 303 and r.headers["location"] == "/incidents/1"
    page = s.get("/incidents/1").text
    assert "cross-connection plugged" in page and "manual by Smo User" in page
    assert s.post_form("/incidents/1/resolve", {"note": "again"}).status_code == 409
    assert s.get("/incidents/7").status_code == 404


def test_home_counts_what_is_unresolved(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    bench.alerting.handle(turbidity("2026-06-01T14:00:00Z"))
    bench.alerting.acknowledge(2, by="Pat SMO")
    home = bench.login("viewer").get("/").text
    assert re.search(r'<span class="count">1</span>\s*<span class="what">open</span>\s*'
                     r'<span class="kinds">1 dry weather flow</span>', home)
    assert re.search(r'<span class="count">1</span>\s*<span class="what">acknowledged</span>', home)
    assert "delivery queue" in home


def test_an_incidents_chart_is_drawn_from_the_stores_readings(bench):
    from ms4watch.contract.wire import CanonicalReading
    from ms4watch.ingest.stores import SqliteStore
    from ms4watch.ingest.stores.base import StoredMessage

    bench.alerting.handle(dwf("2026-06-01T15:30:00Z", "2026-06-01T16:30:00Z"))
    s = bench.login("viewer")
    empty = s.get("/incidents/1/chart.png")
    assert empty.headers["content-type"] == "image/svg+xml" and b"No readings" in empty.content
    t0 = 1_780_326_000_000_000_000       # 2026-06-01T15:00Z
    step = 300 * 10**9
    flow = tuple(CanonicalReading(t0 + k * step, "OF-12", "LOG-OF12", "flow", "flow", 0.2 if k < 6 else 4.0, "gpm", "", k)
                 for k in range(30))
    rain = tuple(CanonicalReading(t0 + k * step, "RG-1", "LOG-RG1", "rain", "rain", 0.0, "in", "", k) for k in range(30))
    store = SqliteStore(bench.workbench.settings.data_dir / "store.db")
    store.open()
    store.write([StoredMessage("LOG-OF12", 1, flow), StoredMessage("LOG-RG1", 1, rain)])
    store.close()
    png = s.get("/incidents/1/chart.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n" and len(png.content) > 10_000
    # the page's chart: SVG drawn from the same readings, the floor dashed, the episode shaded
    svg = s.get("/incidents/1/chart.svg?w=800")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    root = ElementTree.fromstring(svg.text)
    ns = {"s": "http://www.w3.org/2000/svg"}
    (floor,) = root.findall("s:line[@class='threshold']", ns)
    assert "flow floor" in floor.find("s:title", ns).text
    (flow,) = [p for p in root.findall("s:path[@class='series']", ns) if p.find("s:title", ns).text == "flow"]
    ys = [float(v) for v in re.findall(r"[ML][\d.]+ ([\d.]+)", flow.get("d"))]
    assert min(ys) < float(floor.get("y1")) < max(ys)          # 0.5 gpm, between the 0.2 and the 4.0 readings
    (episode,) = root.findall("s:rect[@class='band episode']", ns)
    # the window is the episode (15:30-16:30) with an hour either side: the middle third of the plot
    left, plot = 56, 800 - 56 - 46
    assert abs(float(episode.get("x")) - (left + plot / 3)) < 2 and abs(float(episode.get("width")) - plot / 3) < 2


def test_the_csv_link_of_every_state_filter_answers(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    bench.alerting.handle(turbidity("2026-06-01T14:00:00Z", "2026-06-01T14:30:00Z"))
    s = bench.login("viewer")
    for state, rows in (("all", 2), ("active", 1), ("resolved", 1), ("open", 1), ("acknowledged", 0)):
        page = s.get(f"/incidents?state={state}&kind=").text
        url = html.unescape(re.search(r'<a class="csv" href="([^"]+)"', page).group(1))
        r = s.get(url)
        assert r.status_code == 200, (state, url, r.text)
        assert len(r.text.strip().splitlines()) == 1 + rows, (state, r.text)


def test_a_storms_chart_shows_its_rain_in_bars_of_a_few_minutes(bench):
    """A tipping bucket's tips a few seconds apart: bars of a round few minutes (about a hundred
    over the window), not one bar per tip at the tips' own interval."""
    from ms4watch.contract.wire import CanonicalReading
    from ms4watch.ingest.stores import SqliteStore
    from ms4watch.ingest.stores.base import StoredMessage
    from tests.support.notify_peers import event

    storm = bench.alerting.handle(event("storm", gauge="RG-1", start="2026-06-01T10:00:00Z",
                                        end="2026-06-01T14:00:00Z", depth_in=0.9, qualifying=True,
                                        last_rain="2026-06-01T14:00:00Z")).incident
    t0 = 1_780_308_000_000_000_000       # 2026-06-01T10:00Z
    tips = tuple(CanonicalReading(t0 + k * 40 * 10**9, "RG-1", "LOG-RG1", "rain", "rain", 0.01, "in", "", k)
                 for k in range(90))      # an hour of tips 40 s apart
    store = SqliteStore(bench.workbench.settings.data_dir / "store.db")
    store.open()
    store.write([StoredMessage("LOG-RG1", 1, tips)])
    store.close()
    svg = bench.login("viewer").get(f"/incidents/{storm.id}/chart.svg?w=800").text
    assert 'class="rain"' in svg, svg[:600]
    bars = re.findall(r'<rect x="[\d.]+" y="\d+" width="([\d.]+)" height="([\d.]+)"/>', svg.split('class="rain"')[1])
    assert 5 <= len(bars) <= 30, len(bars)                 # 5-minute bars over the hour of rain
    assert max(float(h) for _, h in bars) > 0
    assert "rain per" in svg and "5 min" in svg


def test_a_site_incidents_page_and_packet_say_where_its_runoff_goes_once_a_map_is_imported(tmp_path, clock):
    """CS-7 (drains to CB-1 in the registry) below pair TP-1: no map, no words; the town's
    map imported (tests/support/town_network.py), the incident's page and its evidence packet
    (records.json and the PDF) name the inlet, outfall OF-12 and the Mohawk River."""
    import io
    import json
    import zipfile

    from tests.support.notify_peers import registry
    from tests.support.town_network import store_network
    from tests.support.workbench import WORKBENCH_YAML, start_bench
    from tests.workbench.routes.test_tracing import _pdf_text

    reg = registry(WORKBENCH_YAML.replace("active_from: 2026-05-29", "active_from: 2026-05-29, drains_to: [CB-1]"))
    bench = start_bench(tmp_path, clock, reg=reg)
    try:
        bench.alerting.handle(turbidity("2026-06-01T14:00:00Z"))
        s = bench.login("viewer")
        assert "reaching outfall" not in s.get("/incidents/1").text
        store_network(bench.workbench.settings.town_data_dir(reg.municipality))
        words = "drains to CB-1, reaching outfall OF-12 (Mohawk River)"
        page = s.get("/incidents/1").text
        assert f'<dt>Runoff</dt><dd class="runoff">{words}</dd>' in page
        z = zipfile.ZipFile(io.BytesIO(s.get("/incidents/1/packet.zip").content))
        record = json.loads(z.read(next(n for n in z.namelist() if n.endswith("records.json"))))
        [inc] = record["incidents"]
        assert inc["runoff"]["text"] == words and inc["runoff"]["outfalls"][0]["id"] == "OF-12"
        assert f"Runoff: {words}" in " ".join(_pdf_text(s.get("/incidents/1/packet.pdf").content).split())
        api = s.get("/api/v1/incidents/1").json()["incident"]          # the API says it too, as fields
        assert api["runoff"]["text"] == words and api["runoff"]["outfalls"][0]["receiving_water"] == "Mohawk River"
        assert s.get("/api/v1/incidents").json()[0]["runoff"]["inlets"] == ["CB-1"]
    finally:
        bench.close()
