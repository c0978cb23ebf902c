"""Grafana provisioning: structure checks; every query of the five data dashboards run against a
real InfluxDB; the server's dashboard naming only metrics a real server exports, and its
queries run on a real Prometheus scraping a real server."""

from __future__ import annotations

import importlib.util
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from ms4watch.ingest.stores import build_store
from tests.dashboards.seed import seed

ROOT = Path(__file__).resolve().parents[2] / "dashboards"
BUILTINS = {"timeFilter", "__interval", "__interval_ms", "__timeFilter", "__from", "__to", "tag_station",
            "tag_device", "tag_gauge"}
KINDS = {"overview", "outfall", "turbidity-pair", "storms-inspections", "device-health", "server"}
PROMETHEUS_KINDS = {"server"}      # PromQL over the server's /metrics; the others InfluxQL over the store


def _build_module():
    spec = importlib.util.spec_from_file_location("ms4watch_dashboards_build", ROOT / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUILD = _build_module()
FILES = {p.stem: json.loads(p.read_text()) for p in sorted((ROOT / "json").glob("*.json"))}
DATA = {name: d for name, d in FILES.items() if name not in PROMETHEUS_KINDS}


def _datasource_uids() -> dict[str, str]:
    """uid -> type of every provisioned datasource."""
    uids = {}
    for f in (ROOT / "provisioning" / "datasources").glob("*.yaml"):
        for ds in yaml.safe_load(f.read_text())["datasources"]:
            uids[ds["uid"]] = ds["type"]
    return uids


def _queries(d):
    """(where, datasource ref, query) of every panel target, variable and annotation."""
    for p in d["panels"]:
        for t in p["targets"]:
            yield f"panel {p['id']} {p['title']!r} {t['refId']}", t.get("datasource", p["datasource"]), \
                t["expr"] if t.get("datasource", p["datasource"])["type"] == "prometheus" else t["query"]
    for v in d["templating"]["list"]:
        yield f"variable {v['name']}", v["datasource"], v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    for a in d["annotations"]["list"]:
        if not a.get("builtIn"):
            yield f"annotation {a['name']!r}", a["datasource"], a["query"]


def test_checked_in_json_is_what_build_makes():
    built = BUILD.build()
    assert set(built) == set(FILES) == KINDS
    for name, d in built.items():
        assert BUILD.render(d) == (ROOT / "json" / f"{name}.json").read_text(), \
            f"dashboards/json/{name}.json is stale: run python dashboards/build.py"


def test_unique_ids_and_positions():
    uids = [d["uid"] for d in FILES.values()]
    assert len(set(uids)) == len(uids)
    for name, d in FILES.items():
        ids = [p["id"] for p in d["panels"]]
        assert len(set(ids)) == len(ids), name
        cells: dict[tuple[int, int], int] = {}
        for p in d["panels"]:
            g = p["gridPos"]
            assert g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24 and g["h"] > 0, (name, p["title"])
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    assert (x, y) not in cells, f"{name}: panels {cells[(x, y)]} and {p['id']} overlap at {(x, y)}"
                    cells[(x, y)] = p["id"]


def test_datasource_references_resolve():
    uids = _datasource_uids()
    assert uids == {BUILD.DATASOURCE_UID: "influxdb", BUILD.PROMETHEUS_UID: "prometheus"}
    for name, d in FILES.items():
        kind = "prometheus" if name in PROMETHEUS_KINDS else "influxdb"
        for where, ds, _ in _queries(d):
            assert uids.get(ds["uid"]) == ds["type"] == kind, f"{name}: {where}"
        for p in d["panels"]:
            assert uids.get(p["datasource"]["uid"]) == kind, f"{name}: panel {p['title']!r}"


def test_variables_used_are_defined():
    for name, d in FILES.items():
        defined = {v["name"] for v in d["templating"]["list"]}
        used = set()
        for _, _, q in _queries(d):
            used |= set(re.findall(r"\$\{?(\w+)", q))
        for p in d["panels"]:
            for t in p["targets"]:
                used |= set(re.findall(r"\$\{?(\w+)", t.get("alias", "")))
        assert used - BUILTINS <= defined, f"{name}: undefined variables {sorted(used - BUILTINS - defined)}"


def _values(server, db, query) -> list[str]:
    body = server.query(query, db)
    return [row[1] for s in body["results"][0].get("series", []) for row in s["values"]]


def _run_panels(server, db: str) -> tuple[list[str], int]:
    """Run every panel and annotation query (variables filled from their own queries).

    Returns (failures, queries run).
    """
    failures, ran = [], 0
    for name, d in DATA.items():
        values = {}
        for v in d["templating"]["list"]:
            vals = _values(server, db, v["query"])
            if not vals:
                failures.append(f"{name}: variable {v['name']} has no values")
            values[v["name"]] = "(" + "|".join(re.escape(x) for x in vals) + ")" if v["multi"] else (vals or [""])[0]
        for where, _, q in _queries(d):
            if where.startswith("variable"):
                continue
            sql = q.replace("$timeFilter", "time > now() - 7d").replace("$__interval", "1h")
            for k, val in values.items():
                sql = sql.replace(f"${k}", val)
            assert not re.search(r"\$[A-Za-z_{]", sql), f"{name} {where}: unreplaced variable in {sql}"
            ran += 1
            res = server.query(sql, db)["results"][0]
            if "error" in res:
                failures.append(f"{name} {where}: {res['error']}: {sql}")
                continue
            rows = [row for s in res.get("series", []) for row in s["values"] if any(x is not None for x in row[1:])]
            if not rows:
                failures.append(f"{name} {where}: no rows: {sql}")
    return failures, ran


@pytest.mark.influxdb
def test_every_query_returns_rows_on_a_seeded_influxdb(influxd):
    sink = build_store(influxd.store_url("ms4watch"))
    sink.ensure_store(timedelta(days=1096))
    sink.open()
    assert seed(sink) > 0
    failures, ran = _run_panels(influxd, "ms4watch")
    assert not failures, "\n".join(failures)
    assert ran == sum(len(p["targets"]) for d in DATA.values() for p in d["panels"]) + \
        sum(1 for d in DATA.values() for a in d["annotations"]["list"] if not a.get("builtIn"))
    sink.close()


@pytest.mark.influxdb
@pytest.mark.mosquitto
def test_panels_return_rows_on_a_store_filled_by_the_demo(influxd, tmp_path, mosquitto_broker):
    """The demo pipeline (simulated loggers → MQTT → ingest → Influx1Store → alert engine →
    incidents) fills the store: readings, device status and the calibrations the loggers
    report in it, alerts, storms, inspections and incidents. Every panel returns rows.

    Through a real Mosquitto rather than the demo's embedded broker (amqtt, in this process:
    a third of the simulation's CPU; tests/test_demo.py tests it), and without the workbench
    (its admin's password hash and its server write nothing to the store).
    """
    from datetime import datetime, timezone

    from ms4watch.demo import Demo, DemoOptions
    url = influxd.store_url("ms4watch")
    build_store(url).ensure_store(timedelta(days=1096))
    start = (datetime.now(timezone.utc) - timedelta(days=4.5)).replace(microsecond=0)
    summary = Demo(DemoOptions(days=4.5, speed=0, start=start, workdir=tmp_path / "demo", store_url=url,
                               broker_url=mosquitto_broker.url, http="off"),
                   report=lambda *a: None).run()
    assert summary.readings_stored == summary.readings_published > 0
    failures, ran = _run_panels(influxd, "ms4watch")
    assert ran == sum(len(p["targets"]) for d in DATA.values() for p in d["panels"]) + \
        sum(1 for d in DATA.values() for a in d["annotations"]["list"] if not a.get("builtIn"))
    assert not failures, "\n".join(failures)


def test_queries_use_only_documented_measurements():
    from ms4watch.ingest.stores.influxdb.schema import MEASUREMENTS
    for name, d in DATA.items():
        for where, _, q in _queries(d):
            used = set(re.findall(r'FROM "(\w+)"', q))
            assert used and used <= set(MEASUREMENTS), f"{name} {where}: {sorted(used - set(MEASUREMENTS))}"
    documented = (ROOT.parent / "docs" / "store.md").read_text()
    for m in MEASUREMENTS:
        assert f"`{m}`" in documented, f"measurement {m} is not documented in docs/store.md"
