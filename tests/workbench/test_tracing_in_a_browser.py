"""A source trace walked in headless Chromium at a phone's size (390 x 844): from the
dry-weather-flow alert's incident to a case, two trace visits recorded on the case's page
(flow at MH-2, dry at MH-3), then the drawn map with the suspect reach (P3, P5) in red,
panned with a finger and zoomed. The network is tests/support/town_network.py's, worked by
hand there. No console errors, no sideways scrolling; screenshots in
``test-artefacts/workbench/`` (unless BROWSER_SHOTS=0; and of the page a failing test was on)."""

from __future__ import annotations

import base64
import io

import pytest

from tests.support.browser import Browser, chromium_binary
from tests.support.notify_peers import dwf
from tests.support.town_network import store_network
from tests.support.workbench import PASSWORD
from tests.workbench.test_in_a_browser import ARTEFACTS, log_in

SUSPECT_RGB = (0xB3, 0x26, 0x1E)       # networkmap.js COLOURS.suspect


def _submit(browser: Browser, form: str, then: str) -> None:
    browser.js(f"document.querySelector('{form} button[type=submit]').click()")
    browser.wait_for(f"document.readyState === 'complete' && ({then})", 30)


def _red_pixels(browser: Browser, selector: str) -> int:
    """Pixels of the suspect reach's colour inside the element, from a screenshot of it."""
    box = browser.js(f"(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect();"
                     "return [r.x, r.y, r.width, r.height]; })()")
    shot = browser.call("Page.captureScreenshot", format="png",
                        clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1})
    return _pixels_of(base64.b64decode(shot["data"]), SUSPECT_RGB)


def _pixels_of(png: bytes, rgb: tuple[int, int, int]) -> int:
    """Pixels of the picture within 24 of ``rgb`` in each channel (numpy: a loop in Python
    over the map's ~600,000 pixels cost ~0.4 s of CPU a picture)."""
    import numpy as np
    from PIL import Image
    px = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    return int((np.abs(px - np.array(rgb, dtype=np.int16)) <= 24).all(axis=2).sum())


def test_pixels_of_a_colour_are_those_within_24_of_it_in_every_channel():
    from PIL import Image
    img = Image.new("RGB", (4, 2), (255, 255, 255))
    for x, rgb in enumerate([SUSPECT_RGB, (0xB3 + 24, 0x26 - 24, 0x1E), (0xB3 + 25, 0x26, 0x1E), (0xB3, 0x26, 0x1E + 30)]):
        img.putpixel((x, 0), rgb)
    img.putpixel((0, 1), (0xB3 - 24, 0x26 + 24, 0x1E + 24))
    out = io.BytesIO()
    img.save(out, format="PNG")
    assert _pixels_of(out.getvalue(), SUSPECT_RGB) == 3


def _drag(browser: Browser, x: float, y: float, dx: float, dy: float) -> None:
    """A one-finger drag, as touch events."""
    browser.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": x, "y": y}])
    for k in range(1, 11):
        browser.call("Input.dispatchTouchEvent", type="touchMove",
                     touchPoints=[{"x": x + dx * k / 10, "y": y + dy * k / 10}])
    browser.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])


def test_a_trace_from_the_alert_to_the_suspect_reach_on_a_phone(bench):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    store_network(bench.workbench.settings.town_data_dir(bench.workbench.municipality))
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    url = bench.url
    browser = Browser()
    try:
        browser.viewport(390, 844, mobile=True, scale=2)
        browser.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
        browser.goto(f"{url}/login")
        log_in(browser, "inspector", PASSWORD)

        # the alert's incident: open a case from it
        browser.goto(f"{url}/incidents/1")
        browser.js("document.querySelector('a.open-case').click()")
        browser.wait_for("location.pathname === '/cases' && !!document.querySelector('form.case-form')")
        browser.js("document.querySelector('form.case-form [name=location]').value = 'Main St outfall'")
        _submit(browser, "form.case-form", "location.pathname.startsWith('/cases/')")
        case_path = browser.js("location.pathname")
        assert browser.js("document.querySelector('.trace-next .next-structure').textContent") == "MH-2"
        browser.picture(ARTEFACTS / "phone-trace-case-start.png")

        # flow at MH-2 (the structure proposed is prefilled), with an ammonia reading
        assert browser.js("document.querySelector('form.trace-form [name=structure]').value") == "MH-2"
        browser.js("document.querySelector('form.trace-form [name=flow]').value = 'present';"
                   "document.querySelector('form.trace-form [name=odour]').value = 'sewage';"
                   "document.querySelector('form.trace-form [name=ammonia_mg_l]').value = '1.2'")
        _submit(browser, "form.trace-form",
                "document.querySelector('.trace-next .next-structure')?.textContent === 'MH-3'")
        assert "ammonia 1.2 mg/L (exceeds ammonia >= 0.5 mg/L)" in browser.js("document.body.innerText")

        # dry at MH-3: the reach cannot be split further
        browser.js("document.querySelector('form.trace-form [name=flow]').value = 'absent'")
        _submit(browser, "form.trace-form", "document.body.innerText.includes('walk the pipes P3, P5')")
        assert browser.js("document.documentElement.scrollWidth") <= 390
        browser.picture(ARTEFACTS / "phone-trace-case.png")

        # the map: the suspect reach drawn in red
        browser.js("document.querySelector('a.map-link').click()")
        browser.wait_for("location.pathname === '/network/map' && !!document.querySelector('#netmap[data-ready]')", 30)
        ds = browser.js("Object.assign({}, document.querySelector('#netmap').dataset)")
        assert (ds["pipes"], ds["suspect"], ds["structures"]) == ("5", "2", "6")
        assert "walk the pipes P3, P5" in browser.js("document.querySelector('.trace-summary').innerText")
        assert browser.js("document.documentElement.scrollWidth") <= 390
        red = _red_pixels(browser, "#netmap")
        assert red > 500, red
        browser.picture(ARTEFACTS / "phone-trace-map.png", full_page=False)

        # pan with a finger, then zoom in: the map moves and the scale changes
        pane = "document.querySelector('.leaflet-map-pane').style.transform"
        before = browser.js(pane)
        box = browser.js("(() => { const r = document.querySelector('#netmap').getBoundingClientRect();"
                         "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        _drag(browser, box[0], box[1], -80, 60)
        browser.wait_for(f"{pane} !== {before!r}")
        scale = "document.querySelector('.leaflet-control-scale-line').textContent"
        first = browser.js(scale)
        browser.js("document.querySelector('.leaflet-control-zoom-in').click()")
        browser.wait_for(f"{scale} !== {first!r}")
        browser.picture(ARTEFACTS / "phone-trace-map-panned.png", full_page=False)
        # the same map without the case: the red of the suspect reach is gone (the outfall's case and the
        # alerting station stay red)
        browser.goto(f"{url}/network/map")
        browser.wait_for("!!document.querySelector('#netmap[data-ready]')", 30)
        assert browser.js("document.querySelector('#netmap').dataset.suspect") == "0"
        plain = _red_pixels(browser, "#netmap")
        assert red > plain + 1000, (red, plain)
        # a tap (a finger) on a manhole, then on a pipe: each opens its popup (framed on the network first:
        # the page frames the stations and sites too)
        browser.js("document.querySelector('#netmap').leafletMap.setView([42.8167, -73.9446], 18, {animate: false}); true")
        for (lat, lon), says in (((42.8173, -73.9440), "MH-4\nmanhole"), ((42.81655, -73.94475), "MH-2 \u2192 MH-1")):
            x, y = browser.js(f"(() => {{ const el = document.querySelector('#netmap'), r = el.getBoundingClientRect();"
                              f"const p = el.leafletMap.latLngToContainerPoint([{lat}, {lon}]);"
                              "return [r.x + p.x, r.y + p.y]; })()")
            browser.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": x, "y": y}])
            browser.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
            browser.wait_for(f"(document.querySelector('.leaflet-popup-content')?.innerText || '').includes({says!r})")
        assert browser.console_errors() == []
        assert case_path.startswith("/cases/")
    finally:
        browser.close()
