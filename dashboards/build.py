"""Generate the Grafana dashboards (``dashboards/json/*.json``) from code: ``python dashboards/build.py``.

The five of the data: queries are InfluxQL over the schema in ``docs/store.md`` so they run
on InfluxDB 1.x, 2.x (with the DBRP mapping ``ms4watch store init`` creates) and 3.x. Every
query is a raw query (``rawQuery``) using only ``$timeFilter``, ``$__interval`` and the
dashboard's own variables; ``tests/dashboards`` checks the structure and runs every query
against a real InfluxDB.

The server's own (``ms4watch-server``): PromQL over what ``/metrics`` exports, from the
Prometheus that scrapes it (docs/operations.md, "Monitoring the server");
``tests/dashboards`` checks every metric it names is exported by a real server and runs its
queries on a real Prometheus scraping one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "json"
DATASOURCE_UID = "ms4watch-influxdb"
DS = {"type": "influxdb", "uid": DATASOURCE_UID}
PROMETHEUS_UID = "ms4watch-prometheus"
PROM = {"type": "prometheus", "uid": PROMETHEUS_UID}
ALL_TIME = "time > now() - 1096d"   # records kept ≥ 3 years: "everything still open"


def target(query: str, ref: str = "A", alias: str | None = None, table: bool = False) -> dict[str, Any]:
    t: dict[str, Any] = {"datasource": DS, "refId": ref, "query": query, "rawQuery": True,
                         "resultFormat": "table" if table else "time_series"}
    if alias:
        t["alias"] = alias
    return t


class Layout:
    """Places panels left to right in rows of 24 columns; ids count up from 1."""

    def __init__(self) -> None:
        self.panels: list[dict[str, Any]] = []
        self.x = self.y = self.row_h = 0

    def add(self, title: str, kind: str, w: int, h: int, targets: list[dict[str, Any]],
            unit: str | None = None, description: str = "", **extra: Any) -> dict[str, Any]:
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        p: dict[str, Any] = {
            "id": len(self.panels) + 1, "type": kind, "title": title, "description": description,
            "datasource": DS, "gridPos": {"x": self.x, "y": self.y, "w": w, "h": h}, "targets": targets,
            "fieldConfig": {"defaults": {"unit": unit} if unit else {}, "overrides": []}, "options": {},
        }
        for k, v in extra.items():
            if k == "defaults":
                p["fieldConfig"]["defaults"].update(v)
            elif k == "overrides":
                p["fieldConfig"]["overrides"] = v
            else:
                p[k] = v
        self.panels.append(p)
        self.x += w
        self.row_h = max(self.row_h, h)
        return p


def variable(name: str, label: str, query: str, multi: bool = True) -> dict[str, Any]:
    return {"name": name, "label": label, "type": "query", "datasource": DS, "query": query,
            "definition": query, "refresh": 1, "sort": 1, "multi": multi, "includeAll": multi,
            "current": {}, "hide": 0}


def station_variable(name: str, label: str, quantity: str, multi: bool = True) -> dict[str, Any]:
    return variable(name, label, f'SHOW TAG VALUES FROM "reading" WITH KEY = "station" WHERE "quantity" = \'{quantity}\'',
                    multi)


def annotation(name: str, query: str, color: str) -> dict[str, Any]:
    return {"name": name, "datasource": DS, "enable": True, "iconColor": color, "query": query,
            "textColumn": "text", "tagsColumn": "kind"}


def dashboard(uid: str, title: str, layout: Layout, variables: list[dict[str, Any]] = (),
              annotations: list[dict[str, Any]] = (), time_from: str = "now-7d") -> dict[str, Any]:
    builtin = {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
               "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts", "type": "dashboard"}
    return {
        "uid": uid, "title": title, "tags": ["ms4watch"], "timezone": "browser", "schemaVersion": 39,
        "version": 1, "editable": True, "refresh": "1m", "time": {"from": time_from, "to": "now"},
        "templating": {"list": list(variables)},
        "annotations": {"list": [builtin, *annotations]},
        "panels": layout.panels,
    }


def _series(quantity: str, var: str, agg: str = "mean") -> str:
    return (f'SELECT {agg}("value") FROM "reading" WHERE "quantity" = \'{quantity}\' AND "station" =~ /^${var}$/ '
            f'AND $timeFilter GROUP BY time($__interval), "station" fill(null)')


def overview() -> dict[str, Any]:
    L = Layout()
    L.add("Stations reporting", "stat", 6, 4, [target(
        'SELECT count("last") FROM (SELECT last("seq") FROM "reading" WHERE $timeFilter GROUP BY "station")')],
        description="Stations with at least one reading in the time range.")
    L.add("Open incidents", "stat", 6, 4, [target(f'SELECT sum("open") FROM "incident" WHERE {ALL_TIME}')],
          defaults={"thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None},
                                                                   {"color": "red", "value": 1}]}})
    L.add("Loggers online", "stat", 6, 4, [target(
        'SELECT sum("online") FROM (SELECT last("online") AS "online" FROM "device_status" WHERE $timeFilter GROUP BY "device")')])
    L.add("Lowest battery", "stat", 6, 4, [target(
        'SELECT min("last") FROM (SELECT last("value") FROM "reading" WHERE "quantity" = \'battery\' AND $timeFilter GROUP BY "station")')],
        unit="volt", defaults={"thresholds": {"mode": "absolute", "steps": [
            {"color": "red", "value": None}, {"color": "orange", "value": 11.8}, {"color": "green", "value": 12.2}]}})
    L.add("Stations: last reading", "table", 12, 9, [target(
        'SELECT last("seq") AS "seq" FROM "reading" WHERE $timeFilter GROUP BY "station", "device"', table=True)],
        description="Time column = the station's last reading; shown as its age.",
        overrides=[{"matcher": {"id": "byName", "options": "Time"},
                    "properties": [{"id": "unit", "value": "dateTimeFromNow"}, {"id": "displayName", "value": "last reading"}]}])
    L.add("Loggers: state", "table", 12, 9, [target(
        'SELECT last("state") AS "state", last("battery_v") AS "battery_v", last("signal_dbm") AS "signal_dbm", '
        'last("spool_depth") AS "spool_depth" FROM "device_status" WHERE $timeFilter GROUP BY "station", "device"',
        table=True)])
    L.add("Open incidents by station", "table", 12, 8, [target(
        f'SELECT sum("open") AS "open" FROM "incident" WHERE {ALL_TIME} GROUP BY "station", "kind"', table=True)])
    L.add("Battery", "timeseries", 12, 8, [target(_series("battery", "station"), alias="$tag_station")], unit="volt")
    return dashboard("ms4watch-overview", "ms4watch · Municipality overview", L,
                     [variable("station", "Station", 'SHOW TAG VALUES FROM "reading" WITH KEY = "station"')],
                     [annotation("Alerts", 'SELECT "text", "kind" FROM "alert" WHERE $timeFilter', "red")])


def outfall() -> dict[str, Any]:
    L = Layout()
    L.add("Flow", "timeseries", 18, 9, [target(_series("flow", "outfall"), alias="$tag_station")], unit="gpm",
          description="Canonical unit gpm. Dry-weather flow alerts appear as annotations.")
    L.add("Weather (trailing 72 h rain)", "stat", 6, 9, [target(
        'SELECT sum("value") FROM "reading" WHERE "quantity" = \'rain\' AND "station" =~ /^$gauge$/ AND time > now() - 72h')],
        unit="in", description="Dry weather: less than 0.10 in in the trailing 72 h (REGULATIONS.md). No rain data = unknown.",
        defaults={"mappings": [
            {"type": "range", "options": {"from": 0, "to": 0.0999, "result": {"text": "dry", "color": "green"}}},
            {"type": "range", "options": {"from": 0.1, "to": 1e9, "result": {"text": "wet", "color": "blue"}}},
            {"type": "special", "options": {"match": "null", "result": {"text": "unknown: no rain data", "color": "orange"}}}],
            "noValue": "unknown: no rain data"})
    L.add("Rain", "timeseries", 24, 7, [target(
        'SELECT sum("value") FROM "reading" WHERE "quantity" = \'rain\' AND "station" =~ /^$gauge$/ AND $timeFilter '
        'GROUP BY time($__interval), "station" fill(0)', alias="$tag_station")], unit="in",
        defaults={"custom": {"drawStyle": "bars"}})
    L.add("Alerts", "table", 24, 7, [target(
        'SELECT "text", "value", "open", "suppressed", "end" FROM "alert" WHERE "station" =~ /^$outfall$/ AND $timeFilter '
        'GROUP BY "kind"', table=True)])
    return dashboard("ms4watch-outfall", "ms4watch · Outfall", L,
                     [station_variable("outfall", "Outfall", "flow"), station_variable("gauge", "Rain gauge", "rain")],
                     [annotation("Outfall alerts",
                                 'SELECT "text", "kind" FROM "alert" WHERE "station" =~ /^$outfall$/ AND $timeFilter', "red")])


def turbidity_pair() -> dict[str, Any]:
    L = Layout()
    up = ('SELECT mean("value") FROM "reading" WHERE "quantity" = \'turbidity\' AND "station" = \'$upstream\' '
          'AND $timeFilter GROUP BY time($__interval) fill(null)')
    down = up.replace("$upstream", "$downstream")
    tenth = up.replace('mean("value")', 'mean("value") * 0.1')
    L.add("Upstream and downstream turbidity", "timeseries", 24, 8,
          [target(up, "A", "upstream"), target(down, "B", "downstream")], unit="NTU")
    L.add("Difference against its threshold", "timeseries", 24, 9,
          [target(up, "A", "upstream"), target(down, "B", "downstream"), target(tenth, "C", "10 % of upstream")],
          unit="NTU",
          description="downstream − upstream; an episode needs it above max(5 NTU, 10 % of upstream) for 15 min "
                      "(REGULATIONS.md). 5 NTU and the 250 NTU backstop are drawn as threshold lines.",
          transformations=[
              {"id": "joinByField", "options": {"byField": "Time", "mode": "outer"}},
              {"id": "calculateField", "options": {"mode": "binary", "alias": "downstream − upstream",
                                                   "binary": {"left": "downstream", "operator": "-", "right": "upstream"}}},
              {"id": "organize", "options": {"excludeByName": {"upstream": True, "downstream": True}}}],
          defaults={"custom": {"thresholdsStyle": {"mode": "line"}},
                    "thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None},
                                                                 {"color": "orange", "value": 5},
                                                                 {"color": "red", "value": 250}]}})
    L.add("Turbidity contrast episodes", "table", 24, 6, [target(
        'SELECT "text", "value", "open", "suppressed", "end" FROM "alert" WHERE "kind" = \'turbidity_contrast\' '
        'AND $timeFilter GROUP BY "station"', table=True)])
    return dashboard("ms4watch-turbidity-pair", "ms4watch · Turbidity pair", L,
                     [station_variable("upstream", "Upstream", "turbidity", multi=False),
                      station_variable("downstream", "Downstream", "turbidity", multi=False)],
                     [annotation("Contrast episodes", 'SELECT "text", "kind" FROM "alert" WHERE "kind" = '
                                 '\'turbidity_contrast\' AND $timeFilter', "orange")])


def storms() -> dict[str, Any]:
    L = Layout()
    L.add("Qualifying storms", "stat", 6, 4, [target(
        'SELECT count("depth_in") FROM "storm" WHERE "qualifying" = true AND "gauge" =~ /^$gauge$/ AND $timeFilter')])
    L.add("Inspections due", "stat", 6, 4, [target(
        f'SELECT count("due") FROM "inspection" WHERE "state" = \'due\' AND {ALL_TIME}')])
    L.add("Inspections overdue", "stat", 6, 4, [target(
        f'SELECT count("due") FROM "inspection" WHERE "state" = \'overdue\' AND {ALL_TIME}')],
        defaults={"thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None},
                                                                 {"color": "red", "value": 1}]}})
    L.add("Inspections recorded", "stat", 6, 4, [target(
        'SELECT count("due") FROM "inspection" WHERE "state" = \'recorded\' AND $timeFilter')])
    L.add("Storms", "table", 24, 8, [target(
        'SELECT "depth_in", "duration_h", "end", "qualifying", "open" FROM "storm" WHERE "gauge" =~ /^$gauge$/ '
        'AND $timeFilter GROUP BY "gauge"', table=True)],
        description="Time = storm start. Qualifying: depth ≥ 0.50 in (REGULATIONS.md).")
    L.add("Inspections after storms", "table", 24, 8, [target(
        'SELECT "due", "state", "recorded", "overdue", "reason" FROM "inspection" WHERE "gauge" =~ /^$gauge$/ '
        'AND $timeFilter GROUP BY "site", "gauge"', table=True)],
        description="Time = end of the storm that made the inspection due; due = end + 24 h.")
    L.add("Daily rain", "timeseries", 24, 7, [target(
        'SELECT sum("value") FROM "reading" WHERE "quantity" = \'rain\' AND "station" =~ /^$gauge$/ AND $timeFilter '
        'GROUP BY time(1d), "station" fill(0)', alias="$tag_station")], unit="in",
        defaults={"custom": {"drawStyle": "bars"}})
    return dashboard("ms4watch-storms", "ms4watch · Storms and inspections", L,
                     [station_variable("gauge", "Rain gauge", "rain")],
                     [annotation("Storms", 'SELECT "text", "kind" FROM "alert" WHERE "kind" = \'storm\' AND $timeFilter',
                                 "blue")], time_from="now-30d")


def device_health() -> dict[str, Any]:
    L = Layout()

    def status_series(field: str, agg: str = "mean") -> str:
        return (f'SELECT {agg}("{field}") FROM "device_status" WHERE "device" =~ /^$device$/ AND $timeFilter '
                f'GROUP BY time($__interval), "device" fill(null)')
    L.add("Battery", "timeseries", 12, 8, [target(status_series("battery_v"), alias="$tag_device")], unit="volt")
    L.add("Signal", "timeseries", 12, 8, [target(status_series("signal_dbm"), alias="$tag_device")], unit="dBm")
    L.add("Spool depth (messages waiting on the logger)", "timeseries", 12, 8,
          [target(status_series("spool_depth", "max"), alias="$tag_device")], unit="short")
    L.add("Readings with quality flags", "timeseries", 12, 8, [target(
        'SELECT count("flags") FROM "reading" WHERE "flags" != \'\' AND "device" =~ /^$device$/ AND $timeFilter '
        'GROUP BY time($__interval), "device" fill(0)', alias="$tag_device")], unit="short",
        defaults={"custom": {"drawStyle": "bars"}})
    L.add("Calibration due", "table", 12, 8, [target(
        'SELECT last("days_left") AS "days_left", last("due") AS "due" FROM "calibration" '
        'WHERE "device" =~ /^$device$/ AND time > now() - 30d GROUP BY "device", "sensor"', table=True)],
        overrides=[{"matcher": {"id": "byName", "options": "days_left"}, "properties": [
            {"id": "unit", "value": "d"},
            {"id": "thresholds", "value": {"mode": "absolute", "steps": [
                {"color": "red", "value": None}, {"color": "orange", "value": 0}, {"color": "green", "value": 14}]}},
            {"id": "custom.cellOptions", "value": {"type": "color-background"}}]}])
    L.add("Calibration history", "table", 24, 8, [target(
        'SELECT "result", "technician", "next_due", "fit", "worst_as_found_pct", "worst_as_left_pct", "id" '
        'FROM "calibration_record" WHERE "device" =~ /^$device$/ AND $timeFilter GROUP BY "device", "sensor"',
        table=True)],
        description="One row per `ms4watch calibrate` run (pass or fail): who, the largest as-found and as-left "
                    "errors [%], the fit, the next due date. Widen the time range for older runs (kept 3 years).")
    L.add("Loggers", "table", 12, 8, [target(
        'SELECT last("state") AS "state", last("agent_version") AS "agent", last("config_version") AS "config", '
        'last("uptime_s") AS "uptime_s", last("dropped") AS "dropped" FROM "device_status" '
        'WHERE "device" =~ /^$device$/ AND $timeFilter GROUP BY "device"', table=True)])
    return dashboard("ms4watch-device-health", "ms4watch · Device health", L,
                     [variable("device", "Logger", 'SHOW TAG VALUES FROM "reading" WITH KEY = "device"')])


def prom(expr: str, legend: str = "", ref: str = "A", instant: bool = False) -> dict[str, Any]:
    """A PromQL target; ``legend`` in Grafana's ``{{label}}`` form."""
    t: dict[str, Any] = {"datasource": PROM, "refId": ref, "expr": expr, "legendFormat": legend or "__auto",
                         "range": not instant, "instant": instant}
    return t


def _red_from(value: float) -> dict[str, Any]:
    return {"thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": value}]}}


def server() -> dict[str, Any]:
    """The server itself, from Prometheus: is it up, connected, keeping up, telling the SMO."""
    sel = 'job="ms4watch", instance=~"$instance"'
    L = Layout()
    L.add("Up", "stat", 4, 4, [prom(f"min(up{{{sel}}})", instant=True)], datasource=PROM,
          description="1: Prometheus scrapes /metrics.", defaults={
              "mappings": [{"type": "value", "options": {"0": {"text": "down", "color": "red"},
                                                         "1": {"text": "up", "color": "green"}}}]})
    L.add("Broker", "stat", 4, 4, [prom(f"min(ms4watch_broker_connected{{{sel}}})", instant=True)], datasource=PROM,
          description="1: ingest is connected to the MQTT broker and subscribed.", defaults={
              "mappings": [{"type": "value", "options": {"0": {"text": "lost", "color": "red"},
                                                         "1": {"text": "connected", "color": "green"}}}]})
    L.add("Stations stale", "stat", 4, 4, [prom(f"sum(ms4watch_stations_stale{{{sel}}})", instant=True)],
          datasource=PROM, defaults=_red_from(1),
          description="Silent for longer than rules.stale_intervals x their report interval.")
    L.add("Notifications owed", "stat", 4, 4, [prom(f"sum(ms4watch_delivery_queue_depth{{{sel}}})", instant=True)],
          datasource=PROM, defaults=_red_from(1),
          description="Due and not yet accepted by their channel, or being retried.")
    L.add("Longest wait", "stat", 4, 4, [prom(f"max(ms4watch_delivery_queue_oldest_age_seconds{{{sel}}})",
                                              instant=True)], unit="s", datasource=PROM, defaults=_red_from(900),
          description="How long the longest-waiting notification has waited for its channel.")
    L.add("Version", "stat", 4, 4, [prom(f"ms4watch_build_info{{{sel}}}", legend="{{version}}", instant=True)],
          datasource=PROM, options={"textMode": "name", "reduceOptions": {"calcs": ["lastNotNull"]}})
    L.add("Age of each station's newest reading", "timeseries", 16, 8, [
        prom(f"ms4watch_station_last_reading_age_seconds{{{sel}}}", legend="{{municipality}} {{station}}")],
        unit="s", datasource=PROM, description="By the reading's own time. Stale past its limit (right).")
    L.add("Stations: stale now", "bargauge", 8, 8, [
        prom(f"ms4watch_station_last_reading_age_seconds{{{sel}}} / ms4watch_station_stale_after_seconds{{{sel}}}",
             legend="{{municipality}} {{station}}", instant=True)], unit="percentunit", datasource=PROM,
        description="Silence as a share of the station's stale limit: past 100 % it is stale.", defaults={
            "min": 0, "max": 2, "thresholds": {"mode": "absolute", "steps": [
                {"color": "green", "value": None}, {"color": "orange", "value": 0.75}, {"color": "red", "value": 1}]}})
    L.add("Readings stored", "timeseries", 8, 7, [
        prom(f"sum by (municipality) (rate(ms4watch_readings_stored_total{{{sel}}}[5m]))", legend="stored {{municipality}}"),
        prom(f"sum by (municipality) (rate(ms4watch_messages_rejected_total{{{sel}}}[5m]))",
             legend="messages rejected {{municipality}}", ref="B")], unit="reqps", datasource=PROM,
        description="Per second; rejected messages are kept in rejected.jsonl.")
    L.add("Store", "timeseries", 8, 7, [
        prom(f"sum by (municipality) (increase(ms4watch_store_write_errors_total{{{sel}}}[5m]))",
             legend="write errors {{municipality}}"),
        prom(f"sum by (municipality) (ms4watch_store_spool_depth{{{sel}}})", legend="waiting in the spool {{municipality}}",
             ref="B")], datasource=PROM,
        description="Failed or refused writes per 5 min; readings acknowledged and waiting for a remote store.")
    L.add("Alert latency", "timeseries", 8, 7, [
        prom(f"histogram_quantile(0.5, sum by (le) (rate(ms4watch_alert_latency_seconds_bucket{{{sel}}}[1h])))",
             legend="median"),
        prom(f"histogram_quantile(0.95, sum by (le) (rate(ms4watch_alert_latency_seconds_bucket{{{sel}}}[1h])))",
             legend="95th percentile", ref="B")], unit="s", datasource=PROM,
        description="From a stored batch to the first notification of an incident it opened being accepted.")
    L.add("Unresolved incidents", "timeseries", 12, 8, [
        prom(f"sum by (kind, state) (ms4watch_incidents_unresolved{{{sel}}}) > 0", legend="{{kind}} {{state}}")],
        datasource=PROM, defaults={"custom": {"stacking": {"mode": "normal"}, "fillOpacity": 30}},
        description="Open: not acknowledged yet.")
    L.add("Delivery queue", "timeseries", 12, 8, [
        prom(f"sum by (status) (ms4watch_outbox_notifications{{{sel}}})", legend="{{status}}"),
        prom(f"sum(ms4watch_delivery_queue_depth{{{sel}}})", legend="owed now", ref="B")], datasource=PROM,
        description="Notification rows by status (sent, failed, held … since the database began) and those owed now.")
    L.add("CPU", "timeseries", 6, 7, [prom(f"rate(process_cpu_seconds_total{{{sel}}}[5m])", legend="{{instance}}")],
          unit="percentunit", datasource=PROM)
    L.add("Memory", "timeseries", 6, 7, [prom(f"process_resident_memory_bytes{{{sel}}}", legend="{{instance}}")],
          unit="bytes", datasource=PROM)
    L.add("Open files", "timeseries", 6, 7, [
        prom(f"process_open_fds{{{sel}}} / process_max_fds{{{sel}}}", legend="{{instance}}")],
        unit="percentunit", datasource=PROM)
    L.add("Data directory free", "timeseries", 6, 7, [
        prom(f"min by (instance) (ms4watch_data_dir_free_bytes{{{sel}}} / ms4watch_data_dir_size_bytes{{{sel}}})",
             legend="{{instance}}")], unit="percentunit", datasource=PROM, defaults={"min": 0, "max": 1},
        description="Share of DATA_DIR's file system free (the Ms4watchDiskFilling alert: under 10 %).")
    instance = {"name": "instance", "label": "Server", "type": "query", "datasource": PROM,
                "query": {"query": 'label_values(ms4watch_build_info{job="ms4watch"}, instance)', "refId": "instance"},
                "definition": 'label_values(ms4watch_build_info{job="ms4watch"}, instance)', "refresh": 2, "sort": 1,
                "multi": True, "includeAll": True, "current": {}, "hide": 0}
    return dashboard("ms4watch-server", "ms4watch · Server", L, [instance], time_from="now-24h")


DASHBOARDS = {"overview": overview, "outfall": outfall, "turbidity-pair": turbidity_pair,
              "storms-inspections": storms, "device-health": device_health, "server": server}


def build() -> dict[str, dict[str, Any]]:
    return {name: make() for name, make in DASHBOARDS.items()}


def render(d: dict[str, Any]) -> str:
    return json.dumps(d, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    for name, d in build().items():
        (OUT / f"{name}.json").write_text(render(d), encoding="utf-8")
        print(f"wrote {OUT / (name + '.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
