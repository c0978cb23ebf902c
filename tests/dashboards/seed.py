"""Seed an InfluxDB with a week of plausible canonical data for a small town, through the sink.

Readings go through ``Influx1Store.write`` exactly as ingest writes them; status, alert,
incident, storm, inspection and calibration records through ``write_records`` in the
schema of docs/store.md. (When ``ms4watch demo --store influxdb1://…`` writes all of them,
the dashboard test can seed with the demo instead.)
"""

from __future__ import annotations

import math
import random
import time
from datetime import datetime, timedelta, timezone

from ms4watch.contract.timeutil import iso_utc
from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.stores.base import StoredMessage

H = 3600 * 10**9
STEP = 15 * 60 * 10**9
STATIONS = {  # station: (device, [(sensor, quantity, unit)])
    "RG-1": ("LOG-RG1", [("rain", "rain", "in"), ("batt", "battery", "V")]),
    "OF-1": ("LOG-OF1", [("flow", "flow", "gpm"), ("batt", "battery", "V")]),
    "OF-2": ("LOG-OF2", [("flow", "flow", "gpm"), ("batt", "battery", "V")]),
    "US-3": ("LOG-TP3", [("turb_up", "turbidity", "NTU")]),
    "DS-3": ("LOG-TP3", [("turb_down", "turbidity", "NTU"), ("batt", "battery", "V")]),
}


def seed(sink, days: int = 7, seed_value: int = 5) -> int:
    rnd = random.Random(seed_value)
    now = time.time_ns() // STEP * STEP
    start = now - days * 24 * H
    storm = (now - 30 * H, now - 22 * H)           # 8 h storm ending a day ago
    seqs: dict[str, int] = {}
    msgs: list[StoredMessage] = []
    for t in range(start, now, STEP):
        raining = storm[0] <= t < storm[1]
        rain = round(rnd.uniform(0.05, 0.12), 2) if raining else 0.0
        wet = 1.0 if storm[0] <= t < storm[1] + 6 * H else 0.0
        by_device: dict[str, list[CanonicalReading]] = {}
        for station, (device, sensors) in STATIONS.items():
            for sensor, q, unit in sensors:
                flags = ""
                if q == "rain":
                    v = rain
                elif q == "flow":
                    base = 0.0 if station == "OF-1" else 2.5   # OF-2 flows in dry weather
                    v = round(base + 40 * wet + rnd.uniform(0, 0.3), 3)
                elif q == "turbidity":
                    v = round(8 + 60 * wet * (2.0 if station == "DS-3" else 1.0) + rnd.uniform(0, 2), 2)
                else:
                    v = round(12.6 - 0.4 * ((t - start) / (days * 24 * H)) + 0.1 * math.sin(t / H), 3)
                if rnd.random() < 0.01:
                    flags = "spike"
                if q == "turbidity" and rnd.random() < 0.005:
                    v, flags = None, "sensor_error"
                by_device.setdefault(device, []).append(
                    CanonicalReading(t, station, device, sensor, q, v, unit, flags, seqs.get(device, 0)))
        for device, rs in by_device.items():
            msgs.append(StoredMessage(device, seqs.get(device, 0), tuple(rs)))
            seqs[device] = seqs.get(device, 0) + 1
    written = 0
    for i in range(0, len(msgs), 500):
        written += sink.write(msgs[i:i + 500]).readings_written

    records = []
    devices = sorted({d for d, _ in STATIONS.values()})
    station_of = {d: s for s, (d, _) in STATIONS.items()}
    for t in range(start, now, H):
        for i, d in enumerate(devices):
            records.append(("device_status", {"station": station_of[d], "device": d}, {
                "online": 1, "state": "online", "battery_v": round(12.5 - 0.05 * i + rnd.uniform(-0.05, 0.05), 3),
                "signal_dbm": float(-70 - 3 * i + rnd.randint(-4, 4)), "spool_depth": rnd.choice([0, 0, 0, 3, 12]),
                "dropped": 0, "uptime_s": float((t - start) // 10**9), "clock_synced": 1,
                "agent_version": "0.1.0", "config_version": "3"}, t))
    dwf_start = now - 4 * 24 * H
    records += [
        ("alert", {"kind": "dry_weather_flow", "station": "OF-2"},
         {"open": 1, "value": 2.8, "text": "Dry-weather flow at OF-2: 2.8 gpm for 30 min while dry", "suppressed": "",
          "end": ""}, dwf_start),
        ("alert", {"kind": "turbidity_contrast", "station": "TP-3"},
         {"open": 0, "value": 63.0, "text": "Turbidity contrast TP-3: +63 NTU", "suppressed": "",
          "end": iso_utc(storm[1])}, storm[0] + 2 * H),
        ("alert", {"kind": "storm", "station": "RG-1"},
         {"open": 0, "value": 0.62, "text": "Qualifying storm at RG-1: 0.62 in", "suppressed": "",
          "end": iso_utc(storm[1])}, storm[0]),
        ("incident", {"kind": "dry_weather_flow", "station": "OF-2"},
         {"incident_id": "INC-1", "state": "acknowledged", "open": 1, "by": "smo"}, dwf_start),
        ("incident", {"kind": "turbidity_contrast", "station": "TP-3"},
         {"incident_id": "INC-2", "state": "resolved", "open": 0, "by": "auto"}, storm[0] + 2 * H),
        ("storm", {"gauge": "RG-1"}, {"depth_in": 0.62, "duration_h": 8.0, "qualifying": True,
                                      "end": iso_utc(storm[1]), "open": 0}, storm[0]),
        ("storm", {"gauge": "RG-1"}, {"depth_in": 0.12, "duration_h": 1.5, "qualifying": False,
                                      "end": iso_utc(now - 100 * H), "open": 0}, now - 101 * H - H // 2),
        ("inspection", {"site": "CS-7", "gauge": "RG-1"}, {"due": iso_utc(storm[1] + 24 * H), "state": "due",
                                                           "recorded": "", "overdue": 0, "reason": "storm"}, storm[1]),
        ("inspection", {"site": "CS-8", "gauge": "RG-1"}, {"due": iso_utc(storm[1] + 24 * H), "state": "recorded",
                                                           "recorded": iso_utc(storm[1] + 5 * H), "overdue": 0,
                                                           "reason": "storm"}, storm[1]),
        ("inspection", {"site": "CS-9", "gauge": "RG-1"}, {"due": iso_utc(now - 120 * H), "state": "overdue",
                                                           "recorded": "", "overdue": 1, "reason": "routine"},
         now - 144 * H),
    ]
    for d in devices:
        for sensor, days_left in (("flow", 40), ("turbidity", -2)):
            due = datetime.fromtimestamp(now // 10**9, tz=timezone.utc).date() + timedelta(days=days_left)
            records.append(("calibration", {"station": station_of[d], "device": d, "sensor": sensor},
                            {"due": due.isoformat(), "performed": (due - timedelta(days=90)).isoformat(),
                             "days_left": float(days_left)}, now - H))
    for i, (d, sensor, result, found, left) in enumerate((("LOG-TP3", "turbidity", "pass", 7.1, 0.4),
                                                         ("LOG-OF1", "flow", "fail", -12.0, -11.5))):
        records.append(("calibration_record", {"station": station_of[d], "device": d, "sensor": sensor,
                                               "procedure": sensor if sensor == "turbidity" else "flow_primary"},
                        {"id": f"cal-seed-{i}", "result": result, "technician": "Lee Tech",
                         "next_due": iso_utc(now + 60 * 24 * H)[:10], "fit": "slope 0.93, offset -0.1",
                         "slope": 0.93, "offset": -0.1, "worst_as_found_pct": found, "worst_as_left_pct": left,
                         "record": "{}"}, now - (30 + i) * H))
    sink.write_records(records)
    return written
