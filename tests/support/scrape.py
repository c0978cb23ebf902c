"""What a real ``ms4watch serve`` exports at ``/metrics``: the names the alert rules
(tests/monitoring/) and the server's dashboard (tests/dashboards/) may query.

The server is built as ``serve`` builds it, with a remote store behind its spool (so the
spool's metrics are there too) and neither the broker nor the store reachable: every family
is exported from the start, whatever the peers do."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ms4watch.server import build_server
from ms4watch.settings import Settings

from .servers import free_port
from .towns import SITES


def exported_series(tmp_path: Path) -> set[str]:
    """Every sample name of one scrape (``ms4watch_readings_stored_total``,
    ``ms4watch_alert_latency_seconds_bucket``, ``process_cpu_seconds_total`` …), and the
    gauges declared without a sample yet (a station's age before its first reading)."""
    (tmp_path / "sites.yaml").write_text(SITES)
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "data_dir": tmp_path / "data",
        "broker": {"url": f"mqtt://127.0.0.1:{free_port()}"},
        "store": f"influxdb1://127.0.0.1:{free_port()}/ms4",
        "http": {"listen": "127.0.0.1:0"}, "web": {"metrics_networks": ["127.0.0.0/8"]}}),
        report=lambda line: None).start(connect_timeout_s=0.1)
    try:
        r = httpx.get(f"{server.web_url}/metrics", timeout=30)
        assert r.status_code == 200, r.text
        families = list(text_string_to_metric_families(r.text))
        return {s.name for fam in families for s in fam.samples} | {fam.name for fam in families if fam.type == "gauge"}
    finally:
        server.stop()
