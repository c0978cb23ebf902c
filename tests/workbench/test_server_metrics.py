"""``/metrics`` of ``ms4watch serve`` watching the server itself, on real peers (Mosquitto,
the SQLite store or a real InfluxDB 1.x, an SMTP server): each metric follows its cause —
a logger falls silent and its station's age grows until it is stale, the broker goes away,
a mail server that refuses connections backs the delivery queue up, an acknowledgement
moves an incident from open to acknowledged, a store that goes down counts write errors.
Scraped over HTTP as Prometheus would, parsed with prometheus_client's parser."""

from __future__ import annotations

import platform
import shutil
import time
from pathlib import Path

import httpx
import paho.mqtt.client as mqtt
import pytest
from prometheus_client.parser import text_string_to_metric_families

import ms4watch
from ms4watch.contract.wire import encode_readings
from ms4watch.server import Server, build_server
from ms4watch.settings import Settings
from tests.support.notify_peers import SmtpSink
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

pytestmark = pytest.mark.mosquitto
MIN = 60 * 10**9
H = 60 * MIN
STALE_S = 3         # RG-1's report interval: silent this long, it is stale (the test waits it out once)
SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01, report_interval: %ds}]
outfalls: [{id: OF-12, name: Spook Rock Rd, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
rules: {stale_intervals: 1}
""" % STALE_S


SCRAPE_EVERY_S = 0.1
"""How often a wait scrapes: a scrape is a request the server answers by reading its
databases and the disk, and the prometheus_client parser here; at wait_for's 20 ms the
scrapes were a fifth of this file's CPU (Prometheus itself scrapes every 15 s)."""


def scraped_until(predicate, timeout_s: float) -> bool:
    return wait_for(predicate, timeout_s, poll_s=SCRAPE_EVERY_S)


class Scraper:
    """Prometheus on this host: ``GET /metrics``, each sample by name and labels."""

    def __init__(self, server: Server):
        self.c = httpx.Client(base_url=server.web_url, timeout=10)

    def __call__(self) -> dict[str, float]:
        r = self.c.get("/metrics")
        assert r.status_code == 200, r.text
        out = {}
        for fam in text_string_to_metric_families(r.text):
            for s in fam.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                out[s.name + ("{" + labels + "}" if labels else "")] = s.value
        return out

    def value(self, key: str, default: float | None = None) -> float | None:
        return self().get(key, default)


def serve(tmp_path: Path, broker_url: str, **settings) -> Server:
    (tmp_path / "sites.yaml").write_text(SITES)
    return build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": broker_url}, "data_dir": tmp_path / "data",
        "http": {"listen": "127.0.0.1:0"}, "engine": {"tick": "1s"},
        "web": {"metrics_networks": ["127.0.0.0/8"]}, **settings}), report=lambda line: None).start()


def logger(port: int) -> mqtt.Client:
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="logger", protocol=mqtt.MQTTv311)
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    return pub


def publish(pub: mqtt.Client, station: str, device: str, seq: int, rows: list) -> None:
    pub.publish(f"ms4/town/{station}/{device}/readings", encode_readings(device, seq, rows), qos=1).wait_for_publish(5)


def test_a_silent_station_ages_and_goes_stale_the_broker_and_the_process(tmp_path, mosquitto_broker):
    server = serve(tmp_path, mosquitto_broker.url)
    pub = None
    try:
        scrape = Scraper(server)
        assert scraped_until(lambda: scrape.value("ms4watch_broker_connected") == 1, 10)
        m = scrape()
        assert m["ms4watch_station_stale_after_seconds{station=RG-1}"] == STALE_S    # 1 x the registry's interval
        assert m["ms4watch_station_stale_after_seconds{station=OF-12}"] == 15 * 60   # 1 x the default 15 min
        assert "ms4watch_station_last_reading_age_seconds{station=RG-1}" not in m     # never reported: no age
        assert m[f"ms4watch_build_info{{python={platform.python_version()},version={ms4watch.__version__}}}"] == 1
        assert m["process_resident_memory_bytes"] > 10e6 and m["process_open_fds"] > 0
        free = shutil.disk_usage(tmp_path / "data").free
        assert abs(m["ms4watch_data_dir_free_bytes"] - free) < 0.01 * free
        assert m["ms4watch_data_dir_size_bytes"] == shutil.disk_usage(tmp_path / "data").total

        pub = logger(mosquitto_broker.port)
        publish(pub, "RG-1", "LOG-RG1", 1, [(time.time_ns(), "rain", "rain", 0.0, "in", [], None)])
        assert wait_for(lambda: "ms4watch_station_last_reading_age_seconds{station=RG-1}" in scrape(), 10)
        m = scrape()
        first = m["ms4watch_station_last_reading_age_seconds{station=RG-1}"]
        assert 0 <= first < STALE_S and m["ms4watch_station_stale{station=RG-1}"] == 0
        assert m["ms4watch_station_stale{station=OF-12}"] == 0 and m["ms4watch_stations_stale"] == 0

        # the logger falls silent: the age grows, and past 1 x STALE_S the station is stale
        assert scraped_until(lambda: scrape.value("ms4watch_station_stale{station=RG-1}") == 1, 15)
        m = scrape()
        assert m["ms4watch_station_last_reading_age_seconds{station=RG-1}"] > STALE_S > first
        assert m["ms4watch_stations_stale"] == 1 and m["ms4watch_station_stale{station=OF-12}"] == 0

        # it speaks again: fresh, not stale
        publish(pub, "RG-1", "LOG-RG1", 2, [(time.time_ns(), "rain", "rain", 0.0, "in", [], None)])
        assert scraped_until(lambda: scrape.value("ms4watch_station_stale{station=RG-1}") == 0, 10)
        assert scrape()["ms4watch_station_last_reading_age_seconds{station=RG-1}"] < STALE_S

        # the broker goes away and comes back
        stop_client(pub)
        pub = None
        mosquitto_broker.stop()
        assert scraped_until(lambda: scrape.value("ms4watch_broker_connected") == 0, 20)
        mosquitto_broker.start()
        assert scraped_until(lambda: scrape.value("ms4watch_broker_connected") == 1, 30)
    finally:
        if pub is not None:
            stop_client(pub)
        server.stop()


def test_a_mail_server_that_refuses_backs_the_queue_up_and_an_acknowledgement_moves_the_incident(
        tmp_path, mosquitto_broker):
    smtp = SmtpSink()           # not started yet: connections to its port are refused
    server = serve(tmp_path, mosquitto_broker.url, notify=[smtp.url],
                   delivery={"retry_first": "1s", "retry_max": "1s"})
    pub = logger(mosquitto_broker.port)
    try:
        scrape = Scraper(server)
        m = scrape()
        assert m["ms4watch_delivery_queue_depth"] == 0 and m["ms4watch_delivery_queue_oldest_age_seconds"] == 0
        assert m["ms4watch_incidents_unresolved{kind=dry_weather_flow,state=open}"] == 0

        # an illicit discharge: flow for 35 min after three dry days
        now = time.time_ns() // MIN * MIN
        publish(pub, "RG-1", "LOG-RG1", 1, [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None)
                                            for k in range(80 * 4 + 1)])
        publish(pub, "OF-12", "LOG-OF12", 1, [(now - 35 * MIN + k * 5 * MIN, "flow", "flow",
                                               0.3 if k < 1 else 4.0 + k / 10, "L/s", [], None) for k in range(8)])
        assert scraped_until(lambda: scrape.value("ms4watch_incidents_unresolved{kind=dry_weather_flow,state=open}") == 1,
                        20)
        assert scraped_until(lambda: scrape.value("ms4watch_delivery_queue_depth", 0) >= 1, 20)
        age = scrape()["ms4watch_delivery_queue_oldest_age_seconds"]
        assert scraped_until(lambda: scrape.value("ms4watch_delivery_queue_oldest_age_seconds") > age + 1, 10)
        [incident] = server.pipeline.incidents.list(kind="dry_weather_flow")
        assert wait_for(lambda: any(r.attempts >= 1 and "refused" in (r.last_error or "")   # tried and refused
                                    for r in server.pipeline.incidents.notifications(incident.id)), 30)
        assert scrape()["ms4watch_delivery_queue_depth"] == 1          # being retried: still owed

        server.pipeline.incidents.acknowledge(incident.id, by="Pat Doe")
        m = scrape()
        assert m["ms4watch_incidents_unresolved{kind=dry_weather_flow,state=open}"] == 0
        assert m["ms4watch_incidents_unresolved{kind=dry_weather_flow,state=acknowledged}"] == 1

        smtp.start()            # the mail server answers: what was owed is delivered
        assert scraped_until(lambda: scrape.value("ms4watch_delivery_queue_depth") == 0, 20)
        assert scrape()["ms4watch_delivery_queue_oldest_age_seconds"] == 0 and smtp.to("smo@town.test")
    finally:
        stop_client(pub)
        server.stop()
        smtp.stop()


def test_a_store_that_goes_down_counts_write_errors(tmp_path, mosquitto_broker, influxd):
    influxd.query("CREATE DATABASE ms4")
    server = serve(tmp_path, mosquitto_broker.url, store=influxd.store_url("ms4"))
    pub = logger(mosquitto_broker.port)
    try:
        scrape = Scraper(server)
        now = time.time_ns()
        publish(pub, "RG-1", "LOG-RG1", 1, [(now, "rain", "rain", 0.0, "in", [], None)])
        assert scraped_until(lambda: scrape.value("ms4watch_readings_stored_total") == 1, 20)
        m = scrape()
        assert m["ms4watch_store_write_errors_total"] == 0 and m["ms4watch_store_spool_depth"] == 0

        influxd.stop()
        publish(pub, "RG-1", "LOG-RG1", 2, [(now + 10**9, "rain", "rain", 0.0, "in", [], None)])
        assert scraped_until(lambda: scrape.value("ms4watch_store_write_errors_total") >= 1, 30)
        assert scraped_until(lambda: scrape.value("ms4watch_store_spool_depth") == 1, 30)   # acknowledged, kept for the store
        influxd.start()
        assert scraped_until(lambda: scrape.value("ms4watch_store_spool_depth") == 0, 60)
    finally:
        stop_client(pub)
        server.stop()
