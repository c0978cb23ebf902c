"""The server's dashboard (``dashboards/json/server.json``, PromQL): every metric it names is
one a real ``ms4watch serve`` exports, and every panel's query returns data from a real
Prometheus scraping a real server (Mosquitto, a dry-weather flow alert) with the
documented scrape configuration and the shipped alert rules loaded."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import httpx
import pytest
import yaml

from ms4watch.monitoring import RULES
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.prometheus import Prometheus
from tests.support.scrape import exported_series
from tests.support.towns import SITES, publish_dry_weather_flow
from tests.support.waiting import wait_for

DASHBOARD = json.loads((Path(__file__).resolve().parents[2] / "dashboards" / "json" / "server.json").read_text())
PROMETHEUS_OWN = {"up"}      # made by Prometheus for each target, not exported
REMOTE_STORE_ONLY = {"ms4watch_store_spool_depth"}   # a SQLite store needs no spool
TOKEN = "prometheus-" + "p" * 32


def documented_scrape_config(target: str, token_file: Path) -> dict:
    """docs/operations.md's scrape configuration ("Monitoring the server"), pointed at ``target``."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    section = docs[docs.index("### Monitoring the server"):]
    config = yaml.safe_load(section[section.index("```yaml") + 7:section.index("```", section.index("```yaml") + 7)])
    [job] = config["scrape_configs"]
    assert job["job_name"] == "ms4watch" and config["rule_files"][0].endswith(RULES.name)
    job["static_configs"][0]["targets"] = [target]
    job["authorization"]["credentials_file"] = str(token_file)
    return job


def panel_queries() -> list[tuple[str, str]]:
    return [(f"{p['title']} {t['refId']}", t["expr"]) for p in DASHBOARD["panels"] for t in p["targets"]]


def metric_names(expr: str) -> set[str]:
    """The series an expression selects: every name in front of a ``{…}`` selector (each
    query of the dashboard selects by job and instance, so each names its metric so)."""
    return set(re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", expr)) - {"by", "without"}


def test_every_metric_the_dashboard_names_is_exported_by_the_server(tmp_path):
    exported = exported_series(tmp_path)
    named = {}
    for where, expr in panel_queries():
        names = metric_names(expr)
        assert names, f"{where}: no metric found in {expr}"
        for n in names:
            named.setdefault(n, where)
    variable = DASHBOARD["templating"]["list"][0]["query"]["query"]
    named.update({n: "variable instance" for n in metric_names(variable)})
    missing = {n: where for n, where in named.items() if n not in exported and n not in PROMETHEUS_OWN}
    assert missing == {}, f"the dashboard names metrics the server does not export: {missing}"
    assert {"ms4watch_station_last_reading_age_seconds", "ms4watch_incidents_unresolved", "ms4watch_broker_connected",
            "ms4watch_delivery_queue_depth", "ms4watch_build_info", "process_cpu_seconds_total"} <= set(named)


@pytest.mark.mosquitto
def test_every_panel_returns_data_from_a_real_prometheus_scraping_a_real_server(tmp_path, mosquitto_broker):
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    (tmp_path / "sites.yaml").write_text(SITES)
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": "127.0.0.1:0"}, "engine": {"tick": "1s"}, "web": {"metrics_token": TOKEN}}),
        report=lambda line: None).start()
    (tmp_path / "metrics-token").write_text(TOKEN)
    prometheus = Prometheus(tmp_path / "prometheus", [documented_scrape_config(
        server.web_url.removeprefix("http://"), tmp_path / "metrics-token")], rule_files=[RULES])
    try:
        prometheus.start()
        # Prometheus scrapes and evaluates every second: a query every 0.1 s (not wait_for's 20 ms) sees it
        assert wait_for(lambda: [s["value"][1] for s in prometheus.query('up{job="ms4watch"}')] == ["1"], 30, poll_s=0.1)

        # while it is scraped: a logger's readings, and a dry-weather flow alert delivered
        publish_dry_weather_flow(mosquitto_broker.port)
        assert wait_for(lambda: prometheus.query("increase(ms4watch_alert_latency_seconds_count[1m]) > 0"), 30,
                        poll_s=0.1)

        empty = {}
        for where, expr in panel_queries():
            got = prometheus.query(expr.replace("$instance", ".*"))
            values = [float(s["value"][1]) for s in got]
            if not values and metric_names(expr) <= REMOTE_STORE_ONLY:
                continue
            if not values or not all(math.isfinite(v) for v in values):
                empty[where] = (expr, got)
        assert empty == {}, f"panels without data: {empty}"
        instances = prometheus.api("label/instance/values", **{"match[]": 'ms4watch_build_info{job="ms4watch"}'})
        assert instances == [server.web_url.removeprefix("http://")]      # the dashboard's variable

        rules = lambda: [r for g in prometheus.api("rules")["groups"] for r in g["rules"]]   # noqa: E731
        assert wait_for(lambda: len(rules()) == 6 and all(r["health"] == "ok" for r in rules()), 10, poll_s=0.1), \
            rules()
        firing = {a["labels"]["alertname"] for a in prometheus.api("alerts")["alerts"]}
        assert "Ms4watchDown" not in firing and "Ms4watchBrokerLost" not in firing
        assert httpx.get(f"{server.web_url}/metrics").status_code == 401    # without the token: nothing
    finally:
        prometheus.stop()
        server.stop()
