"""``/health``, ``/health/ready`` and ``/metrics`` of ``ms4watch serve`` on real peers:
Mosquitto, the SQLite store, the delivery queue; readiness follows the broker going away
and coming back, the metrics follow readings and an alert."""

from __future__ import annotations


import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.support.waiting import wait_for
from tests.support.towns import SITES, publish_dry_weather_flow

pytestmark = pytest.mark.mosquitto


def metrics(c: httpx.Client) -> dict[str, float]:
    out = {}
    for fam in text_string_to_metric_families(c.get("/metrics").text):
        for s in fam.samples:
            key = s.name + ("{" + ",".join(f"{k}={v}" for k, v in sorted(s.labels.items())) + "}" if s.labels else "")
            out[key] = s.value
    return out


def test_health_readiness_and_metrics(tmp_path, mosquitto_broker):
    (tmp_path / "sites.yaml").write_text(SITES)
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "data",
        "http": {"listen": "127.0.0.1:0"}, "engine": {"tick": "1s"},
        "web": {"metrics_networks": ["127.0.0.0/8"]}}), report=lambda line: None).start()   # Prometheus on this host
    try:
        c = httpx.Client(base_url=server.web_url, timeout=10)
        assert c.get("/health").json() == {"status": "ok"}
        assert wait_for(lambda: c.get("/health/ready").status_code == 200, 10)
        ready = c.get("/health/ready").json()
        assert ready["status"] == "ready" and set(ready["checks"]) == {"broker", "store", "delivery queue"}
        m = metrics(c)
        assert m["ms4watch_readings_stored_total"] == 0 and m["ms4watch_outbox_notifications{status=pending}"] == 0

        published = publish_dry_weather_flow(mosquitto_broker.port, ("ms4/town/OF-12/LOG-OF12/readings", b"{not json"))
        # the alert can be raised before the bad message after the readings is taken: wait for both
        assert wait_for(lambda: metrics(c).get("ms4watch_alert_latency_seconds_count", 0) >= 1
                        and metrics(c).get("ms4watch_messages_rejected_total", 0) >= 1, 20)
        m = metrics(c)
        assert m["ms4watch_readings_stored_total"] == published
        assert m["ms4watch_messages_rejected_total"] == 1
        assert m["ms4watch_outbox_notifications{status=sent}"] >= 1      # the notifications file took it
        assert 0 < m["ms4watch_alert_latency_seconds_sum"] < 10

        mosquitto_broker.stop()
        assert wait_for(lambda: c.get("/health/ready").status_code == 503, 20)
        down = c.get("/health/ready").json()["checks"]
        assert down["broker"]["ok"] is False and down["store"]["ok"] is True
        mosquitto_broker.start()
        assert wait_for(lambda: c.get("/health/ready").status_code == 200, 30)
    finally:
        server.stop()
