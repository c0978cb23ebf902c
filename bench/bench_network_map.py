"""The drawn storm-sewer map at a phone's width: the whole town's network built into the
page's GeoJSON on the server, then drawn by Leaflet in headless Chromium (390 x 844), with
the page's bare load (its HTML and scripts, no features) as the peer measured in the same
run.

    python bench/bench_network_map.py [--structures 10000] [--repeat 3]

Prints figures; asserts nothing. Target (issue 24): the map page with the whole network
under 500 ms to first draw at phone width. The network is bench_network.py's grid (every
structure upstream of one outfall).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_network import best, write_town  # noqa: E402
from ms4watch.network.importer import import_map  # noqa: E402
from ms4watch.workbench import networkmap  # noqa: E402

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="leaflet.css"><link rel="stylesheet" href="app.css"></head><body>
<div id="netmap" class="netmap" data-tiles="" data-base=""></div>
<script type="application/json" id="netmap-data">{data}</script>
<script src="leaflet.js"></script><script src="networkmap.js"></script></body></html>"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--structures", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from tests.support.browser import Browser, chromium_binary
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        net = import_map(write_town(folder, args.structures)).network
        build_s, data = best(lambda: networkmap.build(net), args.repeat)
        static = Path(__file__).resolve().parents[1] / "workbench" / "static"
        for name, src in (("leaflet.js", static / "vendor/leaflet/leaflet.js"),
                          ("leaflet.css", static / "vendor/leaflet/leaflet.css"),
                          ("networkmap.js", static / "networkmap.js"), ("app.css", static / "app.css")):
            (folder / name).write_bytes(src.read_bytes())
        payload = json.dumps({"features": data.geojson, "bounds": data.bounds}).replace("<", "\\u003c")
        (folder / "full.html").write_text(PAGE.format(data=payload))
        empty = json.dumps({"features": {"type": "FeatureCollection", "features": []}, "bounds": data.bounds})
        (folder / "empty.html").write_text(PAGE.format(data=empty))
        print(f"network: {len(net.structures):,} structures, {len(net.conveyances):,} pipes; "
              f"page data {len(payload) / 1e6:.1f} MB; built in {build_s * 1000:.0f} ms")
        if chromium_binary() is None:
            print("chromium is not installed: no drawing measured")
            return
        b = Browser()
        try:
            b.viewport(390, 844, mobile=True, scale=2)
            for name in ("empty", "full"):
                times = []
                for _ in range(args.repeat):
                    b.call("Page.navigate", url="about:blank")
                    b.wait_for("location.href === 'about:blank'")
                    t = time.perf_counter()
                    b.call("Page.navigate", url=(folder / f"{name}.html").as_uri())
                    b.wait_for("!!document.querySelector('#netmap[data-ready]')", 60)
                    b.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                    times.append(time.perf_counter() - t)
                    marks = b.js("performance.getEntriesByType('mark').map(m => m.name + ' ' + Math.round(m.startTime))"
                                 ".join(', ')")
                print(f"  last run's marks (ms since navigation): {marks}")
                print(f"{name:5} page to first draw at 390 px: best {min(times) * 1000:.0f} ms "
                      f"(of {args.repeat}: {', '.join(f'{x * 1000:.0f}' for x in times)})")
        finally:
            b.close()


if __name__ == "__main__":
    main()
