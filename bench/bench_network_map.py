"""The drawn storm-sewer map at a phone's width: the whole town's network encoded on the
server (``networkmap.encode_network``: compact arrays, gzip), then fetched by the page and
drawn by Leaflet in headless Chromium (390 x 844), with the page's bare load (its HTML and
scripts, no network) as the peer measured in the same run. The files are served over HTTP
from localhost (a page cannot fetch from file://), the network gzipped as the workbench
sends it.

    python bench/bench_network_map.py [--structures 10000] [--repeat 3]

Prints figures; asserts nothing. Target (issue 24): the map page with the whole network
under 500 ms to first draw at phone width. The network is bench_network.py's grid (every
structure upstream of one outfall).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_network import best, write_town  # noqa: E402
from ms4watch.network.importer import import_map  # noqa: E402
from ms4watch.workbench import networkmap  # noqa: E402

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="leaflet.css"><link rel="stylesheet" href="app.css"></head><body>
<div id="netmap" class="netmap" data-tiles="" data-base=""></div>
{preload}<script type="application/json" id="netmap-data">{data}</script>
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
        build_s, drawn = best(lambda: networkmap.encode_network(net), args.repeat)
        static = Path(__file__).resolve().parents[1] / "workbench" / "static"
        for name, src in (("leaflet.js", static / "vendor/leaflet/leaflet.js"),
                          ("leaflet.css", static / "vendor/leaflet/leaflet.css"),
                          ("networkmap.js", static / "networkmap.js"), ("app.css", static / "app.css")):
            (folder / name).write_bytes(src.read_bytes())
        (folder / "network.json").write_bytes(drawn.gzip)
        for name, url in (("full", "/network.json"), ("empty", None)):
            page = networkmap.overlay(net, drawn.bounds, network_url=url)
            preload = f'<link rel="preload" href="{url}" as="fetch" crossorigin>' if url else ""
            (folder / f"{name}.html").write_text(PAGE.format(preload=preload,
                                                             data=json.dumps(page).replace("<", "\\u003c")))
        print(f"network: {len(net.structures):,} structures, {len(net.conveyances):,} pipes; "
              f"network.json {len(drawn.json) / 1e6:.2f} MB, gzipped {len(drawn.gzip) / 1e6:.2f} MB; "
              f"encoded in {build_s * 1000:.0f} ms (once per import)")
        if chromium_binary() is None:
            print("chromium is not installed: no drawing measured")
            return
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Files, directory=str(folder)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        root = f"http://127.0.0.1:{server.server_address[1]}"
        b = Browser()
        try:
            b.viewport(390, 844, mobile=True, scale=2)
            for name in ("empty", "full"):
                times = []
                for _ in range(args.repeat):
                    b.call("Page.navigate", url="about:blank")
                    b.wait_for("location.href === 'about:blank'")
                    t = time.perf_counter()
                    b.call("Page.navigate", url=f"{root}/{name}.html")
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
            server.shutdown()


class _Files(http.server.SimpleHTTPRequestHandler):
    """The folder over HTTP, network.json as the workbench sends it (gzip), nothing cached."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        if self.path.endswith(".json"):
            self.send_header("Content-Encoding", "gzip")
        super().end_headers()

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    main()
