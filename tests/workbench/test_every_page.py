"""Every page of the workbench in headless Chromium, at a phone's (390 x 844), a tablet's
(768 x 1024) and a laptop's (1366 x 900) size, against a workbench with a town's records
(incidents, a storm, an inspection report, a case with a visit, a notice, the sewer map).

The pages are the app's own GET routes that answer HTML: each route's ids come from the
links on the pages already seen (so a new page is covered as soon as a page links to it),
or from ``unlinked_pages`` for a page nothing links to; what answers anything but HTML is listed
as skipped with its reason. On each page, at each size: the page itself never scrolls
sideways, no box in it scrolls sideways (a chart fits its width), no card label runs into
its value, and (at the phone's and the laptop's size) axe-core (vendored,
``tests/support/vendor/axe-core``) finds no serious or critical violation, its WCAG 2.2
target-size rule (24 px to tap) switched on. One browser, one login, one tab; each page
loaded once and resized to the other sizes (loaded again at each only if it has a script of its
own, which could read the width it was loaded at). Then the login form and an incident's acknowledge form are filled in and sent by
keyboard alone (Tab, typing, Enter), the focused control always showing a focus ring that
stands out from what is behind it.

A page that fails a check at a size is pictured (the whole page, in
``test-artefacts/every-page/``, named in the failure); ``A11Y_SHOTS=<dir>`` pictures every
page at every size there (and the keyboard test's focus on a map pin, otherwise not taken). Picturing all 81 on every run cost ~8 s (~0.1 s each) for pictures
nobody saw (the test's tmp dir is removed at the end of the run)."""

from __future__ import annotations

import base64
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading, SensorCalibration
from ms4watch.ingest.stores.base import DeviceStatus
from ms4watch.network.importer import import_map
from ms4watch.network.store import NetworkStore
from ms4watch.workbench.routes import ROUTERS
from tests.support.browser import Browser, chromium_binary
from tests.support.notify_peers import Clock, dwf, registry, turbidity, utc
from tests.support.workbench import PASSWORD, WORKBENCH_YAML, start_bench

T0 = utc(2026, 6, 1, 16, 0)
SIZES = [(390, 844), (768, 1024), (1366, 900)]
AXE_SIZES = (390, 1366)          # the tablet lays out by the laptop's rules (min-width: 720px): axe twice, not thrice
AXE = Path(__file__).resolve().parents[1] / "support" / "vendor" / "axe-core" / "axe.min.js"
NETWORK = Path(__file__).resolve().parents[1] / "network" / "testdata"
SHOTS = Path(__file__).resolve().parents[2] / "test-artefacts" / "every-page"   # a failing page's picture
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


# -- a town with one record of each kind ------------------------------------------------------
@pytest.fixture(scope="module")
def town(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("town")
    yaml = WORKBENCH_YAML.replace("active_from: 2026-05-29", "active_from: 2026-05-29, lat: 42.8120, lon: -73.9350")
    b = start_bench(tmp, Clock(T0), reg=registry(yaml))
    try:
        _fill(b, tmp)
        yield b
    finally:
        b.close()


def _fill(b, tmp: Path) -> None:
    # a 0.70 inch storm at RG-1 (CS-7 due for inspection), flow at OF-12, the engine run to now
    start = T0 - timedelta(hours=8, minutes=20)
    b.feed([CanonicalReading(to_ns(start + timedelta(minutes=2 * i)), "RG-1", "LOG-RG-1", "rain", "rain", 0.01,
                             "in", "", 0) for i in range(70)])
    b.feed([CanonicalReading(to_ns(T0 - timedelta(hours=24) + timedelta(minutes=10 * i)), "OF-12", "LOG-OF-12",
                             "flow", "flow", 0.2 + (i % 7) * 0.3, "gpm", "", 0) for i in range(144)])
    b.feed([CanonicalReading(to_ns(T0 - timedelta(minutes=3)), "OF-14", "LOG-OF-14", "flow", "flow", 0.2, "gpm", "", 0)])
    b.store.write_status(DeviceStatus("LOG-OF-14", "OF-14", to_ns(T0), "online", 12.4, -83.0, 0, 0, "c1", "0.1", "synced",
                                      (SensorCalibration(sensor="flow", performed=date(2025, 11, 1), due=date(2026, 5, 1)),)))
    b.pipeline.advance(to_ns(T0))
    b.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    b.alerting.handle(turbidity("2026-06-01T14:00:00Z"))
    with b.api("inspector") as c:
        case = c.post("/api/v1/cases", json={"origin": "incident", "incident_id": _id(b, "dry_weather_flow"),
                                             "location": "Main St outfall", "description": "grey water",
                                             "observed_at": "2026-06-01T15:30:00Z"}).json()
        body = {"site": "CS-7", "at": "2026-06-01T15:30:00Z", "inspector": "J. Rivera", "credential": "cpesc",
                "license_no": "CPESC 4711", "disturbed_areas": "north pad", "stabilized_areas": "west slope",
                "idle_areas": "stockpile B", "sediment_pct": 35, "maintenance": "silt fence undercut",
                "deficiencies": "inlet protection missing", "certified": True}
        r = c.post("/api/v1/inspections", json=body)
        assert r.status_code == 201, r.text
        rid = r.json()["report"]["id"]
        assert c.post(f"/api/v1/inspections/{rid}/photos",
                      files={"photo": ("fence.png", PNG, "image/png")}).status_code == 201
    s = b.login("inspector")
    r = s.client.post(f"/cases/{case['id']}/entries",
                      data={"csrf": s.csrf(), "kind": "screening", "at": "2026-06-01T11:45", "by": "J. Rivera",
                            "notes": "sudsy", "dry_weather": "yes", "flow_observed": "yes"},
                      files={"photos": ("outfall.png", PNG, "image/png")})
    assert r.status_code == 303, r.text
    with b.api("smo") as c:
        party = c.post("/api/v1/parties", json={"name": "Main St Laundromat", "address": "4 Main St", "place": "outfall",
                                                "place_id": "OF-12", "role": "operator"}).json()
        r = c.post("/api/v1/notices", json={
            "law": "schenectady-148-II", "case_id": case["id"], "outfall": "OF-12", "party_id": party["id"],
            "place": "4 Main St", "violation": "washer discharge to the storm drain", "provisions": ["illicit_discharge"],
            "requirements": ["eliminate", "cease"], "remedy": "plug the floor drain", "remediation_days": 10,
            "violation_since": "2026-06-01", "issued_at": "2026-06-01T15:50:00Z", "signatory": "Dana Ortiz"})
        assert r.status_code == 201, r.text
    for name in ("structures.geojson", "pipes.geojson", "mapping.yaml"):
        shutil.copy(NETWORK / name, tmp / name)
    got = import_map(tmp / "mapping.yaml")
    with NetworkStore(b.workbench.settings.town_data_dir(b.municipality)) as store:
        store.replace(got.network, got.findings, "mapping.yaml")


def _id(b, kind: str) -> int:
    return next(i.id for i in b.alerting.incidents.list(kind=kind))


# -- the pages, from the app's routes ---------------------------------------------------------
def unlinked_pages(b) -> dict[str, str]:
    """Pages no page links to, with a real id: route path -> URL."""
    inc = b.alerting.store.get(_id(b, "turbidity_contrast"))
    return {"/ack/{token}": "/ack/" + b.workbench.links.token(inc.id)}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value and value.startswith("/") and not value.startswith("//"):
                self.urls.append(value.split("#")[0])


def _links(html: str) -> list[str]:
    p = _Links()
    p.feed(html)
    return p.urls


def html_pages(b) -> tuple[dict[str, str], dict[str, str]]:
    """(route path -> a URL of it that answers HTML, route path -> why it is not visited)
    for every GET route of the app outside the API; fails naming a route no page links to
    and ``unlinked_pages`` does not give."""
    routes = [r for router in ROUTERS for r in router.routes]        # in the order the app tries them
    assert all(hasattr(r, "path_regex") for r in routes), "a router nests another: list its routes here too"
    routes = [r for r in routes if "GET" in (getattr(r, "methods", None) or ()) and not r.path.startswith("/api/")]

    def route_of(path: str):
        return next((r for r in routes if r.path_regex.match(path)), None)

    session = b.login("smo")
    pages: dict[str, str] = {}
    skipped: dict[str, str] = {"/login": "visited logged out by the keyboard test"}
    queue = [r.path for r in routes if "{" not in r.path] + list(unlinked_pages(b).values())
    while queue:
        url = queue.pop(0)
        route = route_of(urlsplit(url).path)
        if route is None or route.path in pages or route.path in skipped:
            continue
        r = session.get(url)
        kind = r.headers.get("content-type", "").split(";")[0]
        if r.status_code == 200 and kind == "text/html":
            pages[route.path] = url
            queue += _links(r.text)
        elif r.is_redirect:
            skipped[route.path] = f"redirects to {r.headers['location']}"
            queue.append(r.headers["location"])
        else:
            skipped[route.path] = f"answers {r.status_code} {kind or 'without a type'}"
    unseen = [r.path for r in routes if r.path not in pages and r.path not in skipped]
    assert unseen == [], f"no page links to {unseen} and unlinked_pages gives none: add a real URL of each there"
    return pages, skipped


# -- what is checked on each page -------------------------------------------------------------
# boxes that scroll sideways inside the page or cut what they hold (a chart 720 px wide in a
# 360 px box; a navigation bar hiding sections behind a sideways scroll). A pan-and-zoom map
# (Leaflet's container) is a window onto a larger plane by design: it and what it holds are not.
SIDEWAYS_BOXES = """Array.from(document.querySelectorAll('body *')).filter(e => {
  if (e.closest('.leaflet-container')) return false;
  const s = getComputedStyle(e);
  return ['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX) && e.scrollWidth > e.clientWidth + 1;
}).map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '')
            + ' ' + e.scrollWidth + ' in ' + e.clientWidth)"""

# a card's label (td[data-label]::before, in the cell's left padding) with a word wider than
# that padding runs into the value beside it (the whole label, if it is placed absolutely: it
# does not wrap then)
LABEL_OVERLAPS = """(() => {
  const ctx = document.createElement('canvas').getContext('2d');
  return Array.from(document.querySelectorAll('td[data-label]')).filter(td => {
    if (!td.textContent.trim() || td.getClientRects().length === 0) return false;
    const b = getComputedStyle(td, '::before');
    if (b.content === 'none' || b.display === 'none') return false;
    ctx.font = `${b.fontStyle} ${b.fontWeight} ${b.fontSize} ${b.fontFamily}`;
    const runs = b.position === 'absolute' ? [td.dataset.label] : td.dataset.label.split(/\\s+/);
    return Math.max(...runs.map(r => ctx.measureText(r).width)) > parseFloat(getComputedStyle(td).paddingLeft) - 2;
  }).map(td => td.dataset.label);
})()"""

# words drawn in an inline SVG (a map) scaled down below what a phone's reader can read
SMALL_SVG_TEXT = """Array.from(document.querySelectorAll('svg text')).filter(t => {
  const r = t.getBoundingClientRect();
  return t.textContent.trim() && r.height > 0 && r.height < 9;
}).map(t => `"${t.textContent.trim()}" ${t.getBoundingClientRect().height.toFixed(1)} px high`)"""

# the rules of axe that can find something serious or critical (what fails the check): a rule's
# impact, or its checks', reach it; those that cannot run for nothing (~25% of axe's time
# here). The default rules otherwise, and the WCAG 2.2 target-size rule (24 px to tap) on.
AXE_RULES = """(() => {
  const rank = {minor: 1, moderate: 2, serious: 3, critical: 4};
  const rules = {'target-size': {enabled: true}};
  for (const r of axe._audit.rules) {
    const impacts = [r.impact, ...[...r.any, ...r.all, ...r.none].map(c => (axe._audit.data.checks[c.id || c] || {}).impact)];
    if (r.id !== 'target-size' && impacts.some(i => rank[i]) && Math.max(...impacts.map(i => rank[i] || 0)) < 3)
      rules[r.id] = {enabled: false};
  }
  return rules;
})()"""
AXE_RUN = """axe.run(document, {resultTypes: ['violations'], rules: %s}).then(r => r.violations
  .filter(v => ['serious', 'critical'].includes(v.impact))
  .map(v => `${v.impact} ${v.id}: ${v.help}: ` + v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' '
            + (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 160)).join(' | ')))""" % AXE_RULES


def _screenshot(browser: Browser, path: Path) -> None:
    """The whole page at the window's width (innerWidth), as a PNG in ``path``."""
    w, h = browser.js("[innerWidth, document.documentElement.scrollHeight]")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(browser.call(
        "Page.captureScreenshot", format="png", captureBeyondViewport=True, optimizeForSpeed=True,
        clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1})["data"]))


@contextmanager
def axe_in_each_page(browser: Browser) -> Iterator[None]:
    """axe-core in each document the tab loads meanwhile, put there by Chromium as the document
    is made (``Page.addScriptToEvaluateOnNewDocument``), before the page's own scripts; it is
    run after the load, as before. Chromium compiles those 0.5 MB once and keeps the code for
    the next documents: ~10 ms of CPU a page, where ``Runtime.evaluate`` of the source after
    each load cost ~75 ms (sent, parsed and compiled again each time)."""
    ident = browser.call("Page.addScriptToEvaluateOnNewDocument", source=AXE.read_text())["identifier"]
    try:
        yield
    finally:
        browser.call("Page.removeScriptToEvaluateOnNewDocument", identifier=ident)


def _slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-") or "status"


@pytest.fixture(scope="module")
def browser():
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = Browser()
    b.call("Page.enable")
    yield b
    b.close()


def _open(browser: Browser, url: str) -> None:
    """Go to ``url`` and wait for its load event (its images loaded)."""
    browser.events = [e for e in browser.events if e["method"] != "Page.loadEventFired"]
    browser.call("Page.navigate", url=url)
    browser.wait_event("Page.loadEventFired")


# A page is loaded once, at the phone's size, and resized to the others (Chromium lays it out
# again and applies the media queries, as at a load at that size; a <picture> takes the source
# for the new width): a load at each size cost the page's load and axe's 0.65 MB parsed again.
# What a page's own script does with the width it was loaded at (Leaflet fits the map to its
# window) a resize does not redo: a page with a script besides the workbench's app.js (which
# reads no size) is loaded again at each size. Checked once against a load at each size, all
# 27 pages: the same checks' and axe's findings at every size, the same DOM and boxes but for
# the network map's (scripted).
OWN_SCRIPTS = "Array.from(document.scripts).filter(s => new URL(s.src || '#', location.href).pathname !== '/static/app.js').length"
AT_SIZE = """innerWidth === {width} && Array.from(document.images).every(i => i.complete)
  && Array.from(document.querySelectorAll('picture')).every(p => {{
    const s = Array.from(p.querySelectorAll('source')).find(s => !s.media || matchMedia(s.media).matches);
    const img = p.querySelector('img');
    return img.currentSrc === (s ? new URL(s.srcset.trim().split(/\\s+/)[0], location.href).href : img.src);
  }})"""


def _resizes_alike(browser: Browser) -> bool:
    """Whether the page (loaded) lays out at another size as if loaded there: no script of its own."""
    return browser.js(OWN_SCRIPTS) == 0


def _resize(browser: Browser, width: int, height: int) -> None:
    """The page at the size of a ``width`` x ``height`` window, as a load there shows it: laid out
    again, the pictures for that width loaded, scrolled to the top."""
    browser.viewport(width, height, mobile=width < 720, scale=1)
    browser.wait_for(AT_SIZE.format(width=width))
    browser.js("scrollTo(0, 0)")


def _log_in(browser: Browser, url: str) -> None:
    browser.goto(f"{url}/login")
    browser.js(f"document.querySelector('input[name=username]').value = 'smo';"
               f"document.querySelector('input[name=password]').value = {PASSWORD!r};"
               "document.querySelector('form.stack button[type=submit]').click()")
    browser.wait_for("location.pathname === '/' && document.readyState === 'complete'")


def test_every_page_fits_a_phone_a_tablet_and_a_laptop_and_passes_axe(town, browser):
    began = time.monotonic()
    pages, skipped = html_pages(town)
    print(f"\n{len(pages)} pages; skipped: " + "; ".join(f"{p} ({why})" for p, why in sorted(skipped.items())))
    keep = Path(os.environ["A11Y_SHOTS"]) if os.environ.get("A11Y_SHOTS") else None
    _log_in(browser, town.url)
    problems: list[str] = []
    with axe_in_each_page(browser):
        loads = _check_each_page(town, browser, pages, keep, problems)
    print(f"{len(pages)} pages x {len(SIZES)} sizes ({loads} loads) in {time.monotonic() - began:.1f} s")
    assert loads < len(pages) * len(SIZES) / 2, f"{loads} loads: most pages should be resized, not loaded again"
    assert problems == [], "\n".join(problems)
    assert browser.console_errors() == []


def _check_each_page(town, browser: Browser, pages: dict[str, str], keep: Path | None, problems: list[str]) -> int:
    """Each page at each size, what it breaks added to ``problems``; the number of loads."""
    loads = 0
    for route, url in sorted(pages.items()):
        loaded_at = None
        for width, height in SIZES:
            if loaded_at is None or not _resizes_alike(browser):
                browser.viewport(width, height, mobile=width < 720, scale=1)
                _open(browser, town.url + url)
                assert browser.js("location.pathname") != "/login", f"{url} sent the browser to log in"
                loaded_at, loads = width, loads + 1
            else:
                _resize(browser, width, height)
            found_before = len(problems)
            # the width beside the scroll bar (innerWidth counts the bar: a page under it still hides)
            wide, inner = browser.js("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            if wide > inner:
                problems.append(f"{width} px {url}: the page is {wide} px wide in a {inner} px window")
            checks = [("scrolls sideways", SIDEWAYS_BOXES), ("label runs into its value", LABEL_OVERLAPS),
                      ("text too small to read", SMALL_SVG_TEXT)]
            if width in AXE_SIZES:
                checks.append(("axe", AXE_RUN))                     # axe_in_each_page put it there
            for what, check in checks:
                found = browser.js(check)
                problems += [f"{width} px {url}: {what}: {x}" for x in found]
            if keep or len(problems) > found_before:
                shot = (keep or SHOTS) / f"{width}-{_slug(route)}.png"
                _screenshot(browser, shot)
                if len(problems) > found_before:
                    problems.append(f"{width} px {url}: its picture: {shot}")
    return loads


# -- by keyboard alone ------------------------------------------------------------------------
FOCUS = """(() => {
  const e = document.activeElement, s = getComputedStyle(e);
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
                                     .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  let p = e.parentElement, bg = 'rgb(255, 255, 255)';
  for (; p; p = p.parentElement) { const c = getComputedStyle(p).backgroundColor; if (rgb(c).length === 3 || rgb(c)[3] > 0) { bg = c; break; } }
  const [a, b] = [lum(rgb(s.outlineColor)), lum(rgb(bg))];
  return {name: e.name || e.textContent.trim().slice(0, 30), tag: e.tagName.toLowerCase(), style: s.outlineStyle,
          width: parseFloat(s.outlineWidth), contrast: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)};
})()"""


def _focus_shows(browser: Browser) -> dict:
    f = browser.js(FOCUS)
    assert f["style"] != "none" and f["width"] >= 2 and f["contrast"] >= 3, f"no visible focus ring on {f}"
    return f


def _tab_to(browser: Browser, condition: str, most: int = 60) -> dict:
    for _ in range(most):
        browser.press("Tab")
        if browser.js(condition):
            return _focus_shows(browser)
    raise AssertionError(f"{most} presses of Tab never reached {condition}")


def test_the_login_and_an_acknowledgement_by_keyboard_alone(town, browser):
    keep = Path(os.environ["A11Y_SHOTS"]) if os.environ.get("A11Y_SHOTS") else None   # the focused map pin
    browser.call("Network.clearBrowserCookies")
    browser.viewport(390, 844, mobile=True, scale=1)
    browser.goto(f"{town.url}/incidents")
    browser.wait_for("location.pathname === '/login'")
    _tab_to(browser, "document.activeElement.name === 'username'")
    browser.type("smo")
    _tab_to(browser, "document.activeElement.name === 'password'", most=1)
    browser.type(PASSWORD)
    browser.press("Enter")
    browser.wait_for("location.pathname === '/incidents' && document.readyState === 'complete'")

    browser.goto(f"{town.url}/")                  # the status page, its map's pins too: the ring on each control
    seen = []
    for _ in range(200):                          # until the focus leaves the page or comes round again
        browser.press("Tab")
        here = browser.js("(e => e === document.body || e === window.firstFocused ? null :"
                          " ((window.firstFocused = window.firstFocused || e), e.getAttribute('href') || ''))"
                          "(document.activeElement)")
        if here is None:
            break
        seen.append(_focus_shows(browser)["name"])
        if keep and here.endswith("/stations/OF-12") and browser.js("!!document.activeElement.closest('svg')"):
            browser.screenshot(keep / "focus-on-a-map-pin.png", full_page=False)
    assert len(seen) > 20 and any("OF-12" in x for x in seen), seen

    iid = _id(town, "turbidity_contrast")
    browser.goto(f"{town.url}/incidents/{iid}")
    seen = []
    for _ in range(60):                 # every control on the way shows where the focus is
        browser.press("Tab")
        seen.append(_focus_shows(browser)["name"])
        if browser.js("document.activeElement.name === 'note'"):
            break
    else:
        raise AssertionError(f"Tab never reached the acknowledgement's note; it went through {seen}")
    browser.type("on my way")
    browser.press("Enter")
    browser.wait_for(f"location.pathname === '/incidents/{iid}' && document.readyState === 'complete' && "
                     "document.body.innerText.includes('on my way')")
    inc = town.alerting.store.get(iid)
    assert (inc.state.value, inc.acknowledged_by) == ("acknowledged", "Smo User")


# -- axe's rules ------------------------------------------------------------------------------
FAILING = """<!doctype html><html><head><title>t</title></head><body>
<h1>t</h1><h4>skipped levels</h4><div id="a">a</div><div id="a">b</div>
<img src="data:image/png;base64,iVBORw0KGgo="><button></button>
<p style="color:#bbb;background:#fff">faint text</p><a href="#"></a>
<input type="text"><ul><div>not an item</div></ul><table><tr><th></th><td>x</td></tr></table>
<div role="banner"><div role="banner">two</div></div><marquee>old</marquee>
<a href="#" style="display:inline-block;width:8px;height:8px">x</a><a href="#" style="display:inline-block;width:8px;height:8px">y</a>
</body></html>"""


def test_axe_is_in_each_page_loaded_while_asked_for(browser):
    """``axe_in_each_page``: axe-core is in each document the tab loads meanwhile, with no
    evaluation of it after the load; a page loaded after it has none."""
    with axe_in_each_page(browser):
        for page in ("<title>one</title>", "<title>two</title><script>window.own = 1</script>"):
            _open(browser, "data:text/html," + page)
            assert browser.js("typeof axe === 'object' && typeof axe.run === 'function'"), page
    _open(browser, "data:text/html,<title>three</title>")
    assert browser.js("typeof axe") == "undefined"


def test_axe_skips_only_rules_that_cannot_fail_the_check(browser):
    """``AXE_RULES`` leaves out the rules whose every check is minor or moderate (a quarter of
    axe's time on these pages): on a page breaking rules of every impact, the serious and
    critical violations are the same as with all of axe's rules."""
    browser.goto("data:text/html," + FAILING.replace("#", "%23"))
    browser.call("Runtime.evaluate", expression=AXE.read_text())
    everything = browser.js(AXE_RUN.replace(AXE_RULES, "{'target-size': {enabled: true}}"))
    assert len(everything) >= 5, everything
    assert browser.js(AXE_RUN) == everything
    off = browser.js(f"Object.keys({AXE_RULES}).filter(id => id !== 'target-size')")
    assert "region" in off and "heading-order" in off and "color-contrast" not in off, off


# -- a page at the next size: resized, or loaded again -------------------------------------------
def test_a_page_whose_scripts_may_read_its_width_is_loaded_again_at_each_size(town, browser):
    """The network map (Leaflet fits the sewers to the window it was loaded in) and the field
    page have scripts of their own: loaded again at each size; a page with the workbench's
    app.js alone (which reads no size) is resized."""
    _log_in(browser, town.url)
    browser.viewport(390, 844, mobile=True, scale=1)
    for url, alike in (("/network/map", False), ("/field/", False), ("/incidents", True)):
        _open(browser, town.url + url)
        assert _resizes_alike(browser) is alike, url


def test_a_resized_page_shows_the_picture_chosen_for_its_width(town, browser):
    """An incident's chart is a <picture>, 420 px wide on a phone, 800 px wider: at the laptop's
    size after the phone's, the 800 px one has loaded before the page is looked at."""
    _log_in(browser, town.url)
    browser.viewport(390, 844, mobile=True, scale=1)
    _open(browser, town.url + f"/incidents/{_id(town, 'dry_weather_flow')}")
    assert browser.js("document.querySelector('.chart img').currentSrc").endswith("w=420")
    _resize(browser, 1366, 900)
    assert browser.js("[innerWidth, document.querySelector('.chart img').currentSrc]")[1].endswith("w=800")
    assert browser.js("document.querySelector('.chart img').naturalWidth") > 0
