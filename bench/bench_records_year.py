"""A year of a town's records behind the pages that read all of them: the annual report
and its sections, and an incident's page, chart and evidence packet.

    python bench/bench_records_year.py [--days 330] [--requests 20] [--profile]

Targets (issue 23): ``/reports/annual/2026`` and its sections p95 < 200 ms with a year of
a town's records; an incident's chart on its page p95 < 200 ms; its packet p95 < 1 s; the
first request for a chart or a packet no slower than the rest. Prints figures and ratios;
asserts nothing.

The town is the demo's (``firmware_configs/demo/sites.yaml``) from the permit year's first
day (3 January 2026): a reading every 5 minutes at each of its 7 stations from
``bench_workbench.world_year`` (rain summed, flow and turbidity sampled), written to the
production server's store (``build_server``: SQLite); and the records a year makes, written
through the services the workbench writes through: a storm incident per storm at each gauge,
an inspection item per storm at each active construction site (most inspected on time, some
late, some never), dry-weather flows and turbidity contrasts, monthly dry-weather screening
of each outfall, complaints traced to illicit discharges, notices with their parties,
SWPPP reviews. Pages are timed over HTTP (httpx, keep-alive, a logged-in session). The
first requests for ``chart.png`` and ``packet.pdf`` are timed before anything else draws
a PNG or a PDF in the process.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import secrets
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import httpx  # noqa: E402

from bench_workbench import STATIONS, p, timed  # noqa: E402
from ms4watch.broker import EmbeddedBroker  # noqa: E402
from ms4watch.contract.timeutil import to_ns  # noqa: E402
from ms4watch.contract.wire import CanonicalReading  # noqa: E402
from ms4watch.demo import demo_configs  # noqa: E402
from ms4watch.edge.drivers.sim.world import MIN_NS  # noqa: E402
from ms4watch.ingest.stores.base import StoredMessage  # noqa: E402
from ms4watch.server import build_server  # noqa: E402
from ms4watch.settings import Settings  # noqa: E402
from ms4watch.workbench.roles import Role  # noqa: E402
from tests.support.notify_peers import dwf, event, inspection, turbidity  # noqa: E402
from tests.support.servers import free_port  # noqa: E402

START = datetime(2026, 1, 3, 5, tzinfo=timezone.utc)     # the demo's permit year: 3 January (local)
STEP = 5                                                 # minutes between readings


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def readings(server, days: int) -> int:
    import bench_workbench
    bench_workbench.START = START
    data = bench_workbench.world_year(days)
    t0 = to_ns(START)
    n = 0
    for d in range(0, days, 7):             # a week a write
        msgs = []
        for sid, (device, q, unit) in STATIONS.items():
            v = data[sid][d * 1440:(d + 7) * 1440]
            v = v[: len(v) // STEP * STEP].reshape(-1, STEP)
            v = v.sum(axis=1) if q == "rain" else v[:, 0]
            rows = tuple(CanonicalReading(t0 + (d * 1440 + i * STEP) * MIN_NS, sid, device, q, q, float(x), unit, "", 0)
                         for i, x in enumerate(v.tolist()))
            msgs += [StoredMessage(device, d * 1000 + k, rows[k:k + 288]) for k in range(0, len(rows), 288)]
            n += len(rows)
        server.store.write(msgs)
    return n


def records(server, days: int, rng: np.random.Generator) -> dict[str, int]:
    """A year's incidents and compliance records, through the services that keep them."""
    incidents = server.pipeline.incidents
    reg = server.registry
    store = server.workbench.compliance.store
    counts = dict.fromkeys(("storms", "inspection items", "inspections", "dry-weather flows", "turbidity contrasts",
                            "cases", "notices", "swppps"), 0)
    end = START + timedelta(days=days)
    t = START + timedelta(days=2)
    while t < end - timedelta(days=3):          # a storm every ~4 days
        for gauge in ("RG-1", "RG-2"):
            s, e = t, t + timedelta(hours=float(rng.uniform(3, 20)))
            incidents.handle(event("storm", gauge=gauge, start=iso(s), end=iso(e), depth_in=round(float(rng.uniform(0.25, 2)), 2),
                                   last_rain=iso(e), qualifying=True))
            counts["storms"] += 1
            for site in reg.construction_sites:
                if site.active_from <= e.date() and (site.active_to is None or site.active_to >= e.date()) \
                        and gauge in site.rain_gauges:
                    due = e + timedelta(hours=24)
                    incidents.handle(inspection(iso(due), iso(e), site=site.id, storm_start=iso(s)))
                    counts["inspection items"] += 1
                    lag = float(rng.choice([6, 12, 20, 30, -1], p=[.3, .3, .2, .1, .1]))
                    if lag > 0 and e + timedelta(hours=lag) < end:
                        incidents.record_inspection(site.id, at=e + timedelta(hours=lag), by="J. Rivera")
                        counts["inspections"] += 1
        t += timedelta(days=float(rng.uniform(2, 6)))
    for k in range(12):
        s = START + timedelta(days=float(rng.uniform(5, days - 5)))
        incidents.handle(dwf(iso(s), iso(s + timedelta(hours=3)), outfall=str(rng.choice(["OF-1", "OF-2", "OF-3"]))))
        counts["dry-weather flows"] += 1
    for k in range(20):
        s = START + timedelta(days=float(rng.uniform(5, days - 5)))
        incidents.handle(turbidity(iso(s), iso(s + timedelta(hours=2)), pair="TP-1"))
        counts["turbidity contrasts"] += 1
    parties = [store.add_party(name=f"Owner {k}", address=f"{k} Mill St", phone=None, email=None, by="smo")
               for k in range(15)]
    for month in range(days // 30):
        for o in ("OF-1", "OF-2", "OF-3"):
            at = START + timedelta(days=30 * month + float(rng.uniform(1, 25)))
            c = store.open_case(origin="screening", incident_id=None, outfall=o, location=f"{o} headwall",
                                description="dry-weather screening", reporter=None, reporter_contact=None,
                                observed_at=at, by="smo")
            store.add_entry(c.id, kind="screening", at=at, by="J. Rivera", notes="dry, no flow", dry_weather=True,
                            flow_observed=False, recorded_by="smo")
            counts["cases"] += 1
    for k in range(25):
        at = START + timedelta(days=float(rng.uniform(3, days - 20)))
        c = store.open_case(origin="complaint", incident_id=None, outfall="OF-1", location=f"{k} Mill St",
                            description="suds", reporter="a neighbour", reporter_contact=None, observed_at=at, by="smo")
        store.add_entry(c.id, kind="screening", at=at + timedelta(hours=2), by="J. Rivera", notes="grey water",
                        dry_weather=True, flow_observed=True, recorded_by="smo")
        store.add_entry(c.id, kind="tracing", at=at + timedelta(days=1), by="J. Rivera", notes="traced",
                        finding="illicit_discharge", recorded_by="smo")
        counts["cases"] += 1
        if k % 2 == 0:
            party = parties[k % len(parties)]
            n = store.issue_notice(kind="nov", law="schenectady-148-II", case_id=c.id, site=None, outfall="OF-1",
                                   party_id=party.id, place=f"{k} Mill St", violation="floor drain to the storm sewer",
                                   requirements=["eliminate"], remedy="disconnect", remediation_days=10,
                                   violation_since=at.date(), prior=[], issued_at=at + timedelta(days=2), by="smo",
                                   signatory="Dana Ortiz")
            counts["notices"] += 1
            if k % 6 == 0:
                store.notice_event(n.id, kind="withdrawn", at=at + timedelta(days=3), by="smo", note="wrong address")
        if k % 3 == 0:
            store.add_entry(c.id, kind="closure", at=at + timedelta(days=12), by="J. Rivera", notes="disconnected",
                            outcome="eliminated", verification="dry-weather screening: no flow", recorded_by="smo")
    for k in range(6):
        at = START + timedelta(days=150 + 20 * k)
        plan = store.add_swppp(site="CS-2", title=f"Quarry Road Plaza SWPPP rev {k}", party_id=parties[0].id,
                               received_at=at, deviates=False, by="smo")
        store.swppp_event(plan.id, kind="complete", at=at + timedelta(days=2), by="smo")
        counts["swppps"] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=330)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--profile", action="store_true", help="profile the annual report's build in process")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ms4watch-bench-") as tmp:
        broker = EmbeddedBroker(port=free_port()).start()
        settings = Settings.model_validate({
            "registry": demo_configs() / "sites.yaml", "data_dir": Path(tmp) / "data",
            "broker": {"url": broker.url, "username": "bench", "password": "bench"},
            "http": {"listen": "127.0.0.1:0"}, "engine": {"eval_interval": "60min"}})
        t = time.perf_counter()
        server = build_server(settings, report=lambda line: None).start()
        started = time.perf_counter() - t
        try:
            t = time.perf_counter()
            n = readings(server, args.days)
            counts = records(server, args.days, np.random.default_rng(23))
            wb = server.workbench
            pw = secrets.token_urlsafe(12)
            wb.users.add("bench", pw, municipality=wb.municipality, role=Role.ADMIN)
            print(f"a year of records: {args.days} days, {n:,} readings at {STEP} min, "
                  + ", ".join(f"{v} {k}" for k, v in counts.items())
                  + f" ({time.perf_counter() - t:.0f} s to make; server started in {started:.2f} s)")
            s = httpx.Client(base_url=server.web_url, timeout=60)
            csrf = re.search(r'name="csrf" value="([^"]+)"', s.get("/login").text).group(1)
            s.post("/login", data={"username": "bench", "password": pw, "csrf": csrf, "next": "/"})
            dwfs = wb.desk.incidents.list(kind="dry_weather_flow", limit=100)
            iid = dwfs[0].id
            first = {}
            for path in (f"/incidents/{iid}/chart.png", f"/incidents/{iid}/packet.pdf"):
                t = time.perf_counter()
                s.get(path).raise_for_status()
                first[path] = (time.perf_counter() - t) * 1000
            print(f"\n== {args.requests} requests each (target p95 < 200 ms for pages and the page's chart, "
                  f"< 1 s for a packet; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
            print(f"  {'path':44} {'first ms':>9} {'p50 ms':>8} {'p95 ms':>8} {'bytes':>9}")
            for path in ("/reports/annual/2026", "/reports/annual/2026/inspections", "/reports/annual/2026/storms",
                         "/reports/annual/2026/enforcement", f"/incidents/{iid}", f"/incidents/{iid}/chart.svg?w=800",
                         f"/incidents/{iid}/chart.png", f"/incidents/{iid}/packet.pdf"):
                size = len(s.get(path).content)
                xs = timed(lambda: s.get(path).raise_for_status(), args.requests)
                f = f"{first[path]:9.0f}" if path in first else " " * 9
                print(f"  {path:44} {f} {p(xs, 50):8.1f} {p(xs, 95):8.1f} {size:9,}")
                if path in first:
                    print(f"  {'':44} first / p50: {first[path] / p(xs, 50):.1f}x")
            s.close()
            if args.profile:
                prof = cProfile.Profile()
                desk = wb.compliance
                import ms4watch.compliance.report as rp
                prof.enable()
                for _ in range(5):
                    rp.build(registry=desk.registry, store=desk.store, incidents=desk.incidents, year=2026,
                             now=desk.clock(), calibrations=desk.calibrations, readings=desk.readings,
                             stations=lambda: __import__("ms4watch.workbench.services.stations",
                                                         fromlist=["stations_of"]).stations_of(desk.registry),
                             reports=desk.reports, overrides=desk.overrides)
                prof.disable()
                pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        finally:
            server.stop()
            broker.stop()


if __name__ == "__main__":
    main()
