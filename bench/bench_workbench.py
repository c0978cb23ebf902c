"""The workbench with a year of a town's data: a station's chart over a year of 1-minute
data (SQLite and InfluxDB 1.x), beside the store's own query time for the same data; and
every page's time.

    python bench/bench_workbench.py [--days 365] [--requests 40] [--stores sqlite,influxdb1]

Targets (issue 11): a station's chart over a year of 1-min data answers in < 500 ms p95
from SQLite and from InfluxDB; every page p95 < 200 ms with a year of a town's data in the
store. Prints figures and ratios; asserts nothing.

The town is the demo's (``firmware_configs/demo/sites.yaml``: 2 rain gauges, 3 outfalls, a
turbidity pair, 2 construction sites); a year of its world (``edge/drivers/sim/world.py``:
Poisson storms, rational-method runoff, wash-off turbidity, two illicit discharges) at one
reading a minute per station — 3.7 million readings — plus each logger's status and its
calibrations. The server is the production one (``build_server``: embedded broker, store,
alert pipeline, workbench on uvicorn): readings are written to its store and fed to its
alert pipeline day by day, as ingest does, so the engine, the incidents (storms,
inspection items, dry-weather flows) and the store hold a year when the pages are timed
over HTTP (httpx, keep-alive, one client, a logged-in API token / session).

The store's own query is the same window of the same station without the workbench:
SQLite's SELECT of (time, value) rows on the store's index, InfluxDB's InfluxQL SELECT
over HTTP — the least a chart that fetched its data would wait — and the store's own
bucketed query (what ``Summarising`` runs). The plain readings port (every reading as a
``CanonicalReading``, then bucketed in numpy) is timed too: it is why the port grew the
optional ``Summarising`` ability.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from ms4watch.broker import EmbeddedBroker  # noqa: E402
from ms4watch.contract.timeutil import to_ns  # noqa: E402
from ms4watch.contract.wire import CanonicalReading, SensorCalibration  # noqa: E402
from ms4watch.demo import demo_configs  # noqa: E402
from ms4watch.edge.drivers.sim.world import MIN_NS, World, random_storms  # noqa: E402
from ms4watch.ingest.stores.base import DeviceStatus, StoredMessage  # noqa: E402
from ms4watch.ingest.stores.summary import summarise  # noqa: E402
from ms4watch.server import build_server  # noqa: E402
from ms4watch.settings import Settings  # noqa: E402
from ms4watch.workbench.roles import Role  # noqa: E402
from tests.support.servers import InfluxDB1, free_port, have  # noqa: E402

START = datetime(2025, 6, 1, tzinfo=timezone.utc)
DAY = 86400 * 10**9
STATIONS = {  # station: (device, quantity, unit)
    "RG-1": ("LOG-RG1", "rain", "in"), "RG-2": ("LOG-RG2", "rain", "in"),
    "OF-1": ("LOG-OF1", "flow", "gpm"), "OF-2": ("LOG-OF2", "flow", "gpm"), "OF-3": ("LOG-OF3", "flow", "gpm"),
    "US-1": ("LOG-US1", "turbidity", "NTU"), "DS-1": ("LOG-DS1", "turbidity", "NTU"),
}


def world_year(days: int, seed: int = 11) -> dict[str, np.ndarray]:
    """Per station, one value a minute for ``days`` days."""
    hours = days * 24
    rng = np.random.default_rng(seed)
    w = World(start_ns=to_ns(START), hours=hours, seed=seed, storms=random_storms(rng, hours))
    n = days * 1440
    rain = {"RG-1": w.tips(1.0, 0.01)[:n] * 0.01, "RG-2": w.tips(0.85, 0.01)[:n] * 0.01}
    out = dict(rain)
    for sid, (area, c, lag) in {"OF-1": (6.0, 0.45, 20), "OF-2": (4.0, 0.4, 15), "OF-3": (8.0, 0.35, 30)}.items():
        q = w.runoff_gpm(area, c, lag)[:n] + 0.05 + np.abs(w.noise(sid, 0.02)[:n])
        out[sid] = np.round(q, 3)
    for k in range(2):   # two illicit discharges in dry weather: dry-weather flow incidents
        i = int(rng.integers(n // 4, n - 1440))
        out["OF-2"][i:i + 180] += 3.5
    runoff = w.runoff_gpm(4.0, 0.4, 15)[:n]
    out["US-1"] = np.round(3.0 + 0.02 * runoff + np.abs(w.noise("US-1", 0.3)[:n]), 2)
    out["DS-1"] = np.round(3.0 + 0.09 * runoff + np.abs(w.noise("DS-1", 0.3)[:n]), 2)
    return out


def load(server, data: dict[str, np.ndarray], days: int, report) -> float:
    """A day at a time: into the store (60 readings a message), then to the alert pipeline."""
    t_start = to_ns(START)
    seq: dict[str, int] = {}
    started = time.perf_counter()
    for d in range(days):
        readings: list[CanonicalReading] = []
        msgs: list[StoredMessage] = []
        for sid, (device, q, unit) in STATIONS.items():
            vals = data[sid][d * 1440:(d + 1) * 1440].tolist()
            rows = [CanonicalReading(t_start + (d * 1440 + i) * MIN_NS, sid, device, q, q, v, unit, "", 0)
                    for i, v in enumerate(vals)]
            readings += rows
            for h in range(0, 1440, 60):
                seq[device] = seq.get(device, 0) + 1
                msgs.append(StoredMessage(device, seq[device], tuple(rows[h:h + 60])))
        server.store.write(msgs)
        readings.sort(key=lambda r: r.time_ns)
        server.pipeline.feed(readings)
        server.pipeline.advance(t_start + (d + 1) * DAY)
        if d % 30 == 29:
            report(f"  {d + 1} days loaded ({time.perf_counter() - started:.0f} s)")
    end = t_start + days * DAY
    for sid, (device, q, unit) in STATIONS.items():     # each logger's status, with a calibration
        due = (START + timedelta(days=days - 20 if sid != "OF-1" else days - 40)).date()
        server.store.write_status(DeviceStatus(device, sid, end, "online", 12.6, -78.0, 0, 0, "c1", "0.1", "synced",
                                              (SensorCalibration(sensor=q, performed=date(2025, 5, 1), due=due),)))
    return time.perf_counter() - started


def timed(fn, n: int) -> list[float]:
    fn()   # warm
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def p(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100)[int(q) - 1] if len(xs) > 1 else xs[0]


def run_store(kind: str, days: int, requests: int, data, workdir: Path, report) -> None:
    influx = None
    store = None
    if kind == "influxdb1":
        if not have("influxd"):
            print("influxdb1: influxd is not installed; skipped")
            return
        influx = InfluxDB1(workdir / "influxdb").start()
        store = influx.store_url("town")
        from ms4watch.ingest.stores import build_store
        admin = build_store(store)
        admin.ensure_store(timedelta(days=1096))
        admin.close()
    broker = EmbeddedBroker(port=free_port()).start()
    settings = Settings.model_validate({
        "registry": demo_configs() / "sites.yaml", "data_dir": workdir / f"data-{kind}", "store": store,
        "broker": {"url": broker.url, "username": "bench", "password": "bench"},
        "http": {"listen": "127.0.0.1:0"}, "engine": {"eval_interval": "60min"}})
    server = build_server(settings, report=lambda line: None, simulated=True).start()
    try:
        report(f"{kind}: loading {days} days of {len(STATIONS)} stations at 1 min "
               f"({days * 1440 * len(STATIONS):,} readings) into the store and the alert pipeline")
        took = load(server, data, days, report)
        wb = server.workbench
        pw = secrets.token_urlsafe(12)
        wb.users.add("bench", pw, municipality=wb.municipality, role=Role.ADMIN)
        token = wb.users.create_token("bench", "bench")[1]
        incidents = wb.desk.incidents.list(limit=100_000)
        storms = [e for e in server.pipeline.engine_events() if e.kind.value == "storm"]
        report(f"{kind}: loaded in {took:.0f} s: {len(incidents)} incidents, {len(storms)} storms in the engine")
        end = START + timedelta(days=days)
        a, b = end - timedelta(days=365 if days >= 365 else days), end
        sid = "OF-1"
        client = httpx.Client(base_url=server.web_url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        session = httpx.Client(base_url=server.web_url, timeout=60)
        page = session.get("/login")
        import re
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        session.post("/login", data={"username": "bench", "password": pw, "csrf": csrf, "next": "/"})

        q = f"start={a.isoformat()}&end={b.isoformat()}".replace("+", "%2B")
        chart = timed(lambda: client.get(f"/stations/{sid}/chart.svg?{q}&w=900").raise_for_status(), requests)
        api = timed(lambda: client.get(f"/api/v1/stations/{sid}/readings?{q}&buckets=800").raise_for_status(),
                    requests)
        store = server.store
        inner = getattr(store, "inner", store)
        width = (to_ns(b) - to_ns(a)) // 800
        if kind == "sqlite":
            ids = [r[0] for r in store._read("SELECT id FROM series WHERE station = ? AND quantity = 'flow'", (sid,))]
            own = timed(lambda: store._read(f"SELECT time_ns, value FROM samples WHERE series IN "
                                           f"({','.join(map(str, ids))}) AND time_ns BETWEEN ? AND ?",
                                           (to_ns(a), to_ns(b))), requests)
            what = "SELECT time_ns, value … (rows fetched)"
        else:
            own = timed(lambda: inner.query(f"SELECT \"value\" FROM \"reading\" WHERE \"station\" = '{sid}' AND "
                                            f"\"quantity\" = 'flow' AND time >= {to_ns(a)} AND time <= {to_ns(b)}"),
                        max(5, requests // 4))
            what = "InfluxQL SELECT value … (JSON over HTTP, parsed)"
        own_buckets = timed(lambda: inner.summary(sid, "flow", a, b, width), requests)
        plain = timed(lambda: summarise(store.readings(sid, "flow", a, b), to_ns(a), width), 3)
        n_rows = len(store.readings(sid, "flow", a, b))
        print(f"\n== {kind}: a station's chart over {(b - a).days} days of 1-min data ({n_rows:,} readings), "
              f"{requests} requests (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        print(f"  {'what':58} {'p50 ms':>8} {'p95 ms':>8}")
        for label, xs in (("chart.svg over HTTP (target p95 < 500 ms)", chart),
                          ("the API's readings (800 buckets, JSON) over HTTP", api),
                          (f"the store's own query: {what}", own),
                          ("the store's own bucketed query (Summarising)", own_buckets),
                          ("plain readings port + numpy buckets (not used)", plain)):
            print(f"  {label:58} {p(xs, 50):8.1f} {p(xs, 95):8.1f}")
        print(f"  ratio chart p95 / store's own query p95: {p(chart, 95) / p(own, 95):.2f}; "
              f"plain port / chart: {p(plain, 95) / p(chart, 95):.1f}x slower")

        pages = ["/", "/incidents", "/incidents?state=all", f"/incidents/{incidents[0].id}", "/stations",
                 "/stations/OF-1", "/inspections", "/outfalls", "/outfalls/OF-1", "/approvals", "/storms",
                 "/storms?days=1100", "/calibrations"]
        apis = ["/api/v1/incidents", "/api/v1/stations", "/api/v1/inspections/due", "/api/v1/storms",
                "/api/v1/approvals", "/api/v1/calibrations", "/api/v1/stations.csv", "/api/v1/storms.csv"]
        print(f"\n== {kind}: every page with {(b - a).days} days of the town's data ({requests} requests each; "
              f"target p95 < 200 ms; load average {os.getloadavg()[0]:.1f})")
        print(f"  {'page':40} {'p50 ms':>8} {'p95 ms':>8} {'bytes':>9}")
        worst = 0.0
        for path in pages + apis:
            c = session if not path.startswith("/api/") else client
            size = len(c.get(path).content)
            xs = timed(lambda: c.get(path).raise_for_status(), requests)
            worst = max(worst, p(xs, 95))
            print(f"  {path:40} {p(xs, 50):8.1f} {p(xs, 95):8.1f} {size:9,}")
        print(f"  worst page p95: {worst:.1f} ms ({worst / 200:.2f} of the target)")
        client.close()
        session.close()
    finally:
        server.stop(to_ns(START) + days * DAY)
        broker.stop()
        if influx is not None:
            influx.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--stores", default="sqlite,influxdb1")
    args = ap.parse_args()
    t = time.perf_counter()
    data = world_year(args.days)
    print(f"a simulated year: {args.days} days, {sum(len(v) for v in data.values()):,} readings "
          f"({time.perf_counter() - t:.1f} s to simulate)")
    with tempfile.TemporaryDirectory(prefix="ms4watch-bench-") as tmp:
        for kind in args.stores.split(","):
            run_store(kind.strip(), args.days, args.requests, data, Path(tmp), report=print)


if __name__ == "__main__":
    main()
