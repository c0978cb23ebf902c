"""What needs attention, in headless Chromium against a workbench with its alert pipeline
(real web server, incidents, audit): the status page leads with the overdue inspection,
what is alerting, and the dry-weather flow that stopped by itself; the SMO follows each
link to its record, reviews the ended episode with a note, and the board lets it go.
At a phone's width (390 px) the status page and an incident's page do not scroll
sideways, the incident's chart fits its box (the episode on screen), and the navigation
shows every section at 390 and 768 px. Screenshots in ``test-artefacts/workbench/``
unless BROWSER_SHOTS=0 (and of the page a failing test was on)."""

from __future__ import annotations

import pytest

from ms4watch.alerts.incidents import State
from tests.support.browser import Browser, chromium_binary
from tests.support.notify_peers import dwf, inspection, registry, turbidity
from tests.support.workbench import PASSWORD, WORKBENCH_YAML, start_bench
from tests.workbench.test_in_a_browser import ARTEFACTS, log_in

LOADED = "document.readyState === 'complete'"


@pytest.fixture
def site_bench(tmp_path, clock):
    """The workbench's registry with the construction site's coordinates."""
    yaml = WORKBENCH_YAML.replace("active_from: 2026-05-29", "active_from: 2026-05-29, lat: 42.8120, lon: -73.9350")
    b = start_bench(tmp_path, clock, reg=registry(yaml))
    yield b
    b.close()


def _store_turbidity(b, start: str, minutes: int) -> None:
    """Upstream at 5 NTU, downstream rising to 80 NTU, a reading a minute from ``start``."""
    from datetime import datetime

    from ms4watch.contract.timeutil import to_ns
    from ms4watch.contract.wire import CanonicalReading
    from ms4watch.ingest.stores import SqliteStore
    from ms4watch.ingest.stores.base import StoredMessage
    t0 = to_ns(datetime.fromisoformat(start.replace("Z", "+00:00")))
    rows = {sid: tuple(CanonicalReading(t0 + k * 60 * 10**9, sid, "LOG-" + sid, "turbidity", "turbidity", v(k), "NTU", "", k)
                       for k in range(minutes))
            for sid, v in (("TU-1", lambda k: 5.0), ("TD-1", lambda k: 6.0 if k < 60 else min(80.0, 6.0 + k - 60)))}
    store = SqliteStore(b.workbench.settings.data_dir / "store.db")
    store.open()
    store.write([StoredMessage("LOG-" + sid, 1, r) for sid, r in rows.items()])
    store.close()


def _no_sideways_scroll(browser: Browser, what: str) -> None:
    wide, inner = browser.js("[document.documentElement.scrollWidth, window.innerWidth]")
    assert wide <= inner, f"{what} is {wide} px wide in a {inner} px window"


def test_the_smo_sees_what_needs_attention_and_reviews_an_ended_discharge(site_bench):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = site_bench
    late = b.alerting.handle(inspection("2026-05-31T12:00:00Z", "2026-05-30T12:00:00Z")).incident
    ended = b.alerting.handle(dwf("2026-06-01T07:00:00Z", "2026-06-01T08:00:00Z")).incident
    alerting = b.alerting.handle(turbidity("2026-06-01T14:00:00Z")).incident
    assert ended.state is State.RESOLVED

    browser = Browser()
    try:
        browser.viewport(1366, 900)
        browser.goto(f"{b.url}/login")
        log_in(browser, "smo", PASSWORD)
        assert browser.js("document.querySelector('main section').id") == "attention"   # it leads the page
        assert browser.js("!!document.querySelector('.map svg a[href=\"/inspections?site=CS-7\"] rect.site')")
        # the map's key says what each colour counts ("4 stale"), not dots alone (the network
        # map's legend style once shrank these to its 12 px swatches and hid their words)
        keys = browser.js("[...document.querySelectorAll('p.legend .key')].map(k => "
                          "[k.innerText, k.getBoundingClientRect().width, k.scrollWidth <= k.clientWidth + 1])")
        assert keys and all(text.strip() and width > 30 and fits for text, width, fits in keys), keys
        browser.picture(ARTEFACTS / "laptop-status-attention.png")

        # the overdue inspection: one click to its item
        browser.js(f"document.querySelector('#overdue a[href$=\"#due-{late.id}\"]').click()")
        browser.wait_for(f"location.pathname === '/inspections' && {LOADED} && !!document.querySelector('#due-{late.id}')")
        assert "overdue by" in browser.js(f"document.querySelector('#due-{late.id}').innerText")

        # alerting now: one click to the incident
        browser.goto(f"{b.url}/")
        browser.js(f"document.querySelector('#alerting a[href=\"/incidents/{alerting.id}\"]').click()")
        browser.wait_for(f"location.pathname === '/incidents/{alerting.id}' && {LOADED}")

        # the flow that stopped by itself: on the board until the SMO reviews it
        browser.goto(f"{b.url}/")
        assert "ended, not reviewed" in browser.js("document.querySelector('#unreviewed').innerText")
        browser.js(f"document.querySelector('#unreviewed a[href=\"/incidents/{ended.id}\"]').click()")
        browser.wait_for(f"location.pathname === '/incidents/{ended.id}' && {LOADED}")
        browser.js("document.querySelector('form.review-form [name=note]').value = 'dye test: car wash on Elm'")
        browser.picture(ARTEFACTS / "laptop-incident-review.png")
        browser.js("document.querySelector('form.review-form button[type=submit]').click()")
        browser.wait_for(f"{LOADED} && !document.querySelector('form.review-form') && "
                         "document.body.innerText.includes('Reviewed')")
        inc = b.alerting.store.get(ended.id)
        assert (inc.state, inc.acknowledged_by) == (State.RESOLVED, "Smo User")
        assert b.alerting.store.audit(ended.id)[-1].note == "dye test: car wash on Elm"
        browser.goto(f"{b.url}/")
        assert not browser.js("!!document.querySelector('#unreviewed')")

        # the turbidity episode's readings, for its chart (SVG: both probes, the moving limit dashed)
        _store_turbidity(b, "2026-06-01T13:00:00Z", minutes=150)

        # a phone: no sideways scrolling of the page itself
        browser.viewport(390, 844, mobile=True, scale=2)
        for name, path in (("status", "/"), ("incident", f"/incidents/{alerting.id}")):
            browser.goto(b.url + path)
            browser.wait_for(LOADED + " && Array.from(document.images).every(i => i.complete)")
            browser.picture(ARTEFACTS / f"phone-390-{name}.png")
            _no_sideways_scroll(browser, path)
        fits = browser.js("document.querySelector('.chart img').getBoundingClientRect().width"
                          " <= document.querySelector('.chart').clientWidth")
        assert fits, "the incident's chart is wider than its box: the episode is off-screen on a phone"
        src, drawn = browser.js("[document.querySelector('.chart img').getAttribute('src'),"
                                " document.querySelector('.chart img').naturalWidth]")
        assert src.startswith(f"/incidents/{alerting.id}/chart.svg") and drawn > 0
        svg = browser.js(f"fetch('/incidents/{alerting.id}/chart.svg?w=800').then(r => r.text())")
        assert 'class="series"' in svg and 'path class="threshold"' in svg and 'class="band episode"' in svg, svg[:400]
        for width in (390, 768):              # every section in the navigation is in sight, none cut
            browser.viewport(width, 900, mobile=width < 720, scale=2 if width < 720 else 1)
            browser.goto(f"{b.url}/")
            hidden = browser.js("Array.from(document.querySelectorAll('.bar nav a')).filter(a => {"
                                " const r = a.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth;"
                                " }).map(a => a.textContent)")
            assert hidden == [], f"at {width} px the navigation hides {hidden}"
            browser.picture(ARTEFACTS / f"nav-{width}.png", full_page=False)
        assert browser.console_errors() == []
    finally:
        browser.close()
