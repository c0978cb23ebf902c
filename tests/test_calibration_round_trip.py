"""Issue 13 end to end on real peers: an SDI-12 sonde on a pseudo-terminal, the edge agent,
real Mosquitto, ``ms4watch serve`` (SQLite store, SMTP server) and ``ms4watch calibrate`` in
a process of its own.

The sonde is past its calibration: its readings carry ``calibration_overdue`` and the SMO and
the technician are told. The technician calibrates it beside the running agent; the record
reaches the server's calibration history; the agent applies the new coefficients from its
config file; the readings change accordingly and lose the flag; the overdue notice closes.
A broker restart delivers the office's retained config again: it is not applied over the
calibration.
"""

from __future__ import annotations

import subprocess
import threading
from datetime import datetime, timedelta, timezone

import paho.mqtt.client as mqtt
import pytest

from ms4watch.edge.agent import Agent
from ms4watch.edge.config import load_agent_config
from ms4watch.server import build_server
from ms4watch.settings import Settings
from tests.commands.test_calibrate import REPO, command, drive_json
from tests.edge.drivers.instruments import Sdi12Bus, Sdi12Sensor
from tests.support.notify_peers import SmtpSink
from tests.support.waiting import wait_for
from tests.support.mqtt_clients import stop_client

pytestmark = pytest.mark.mosquitto

SITES = """\
municipality: town
timezone: America/New_York
turbidity_pairs: [{id: TP-1, upstream: US-1, downstream: DS-1}]
contacts:
  - {name: Pat Doe, role: smo, email: smo@town.test}
  - {name: Lee Tech, role: technician, email: tech@town.test}
"""
CONFIG = """\
device: LOG-DS1
municipality: town
station: DS-1
config_version: "3"
sensors:
  - id: turb
    driver: sdi12
    quantity: turbidity
    unit: FNU
    interval: 1s
    port: {port}
    options: {{address: "0", break_ms: 0, retries: 1, baudrate: 9600, framing: 8N1}}
    calibration: {{performed: 2026-01-05, due: {due}, slope: 1.0, offset: 0.0}}
"""
STREAM_RAW = 22.4          # the sonde in the stream; it reads 1.1 × true + 0.4: truly 20 FNU
RAW = {0: 0.4, 20: 22.4, 100: 110.4}


def test_calibrate_record_history_config_applied_readings_change(tmp_path, mosquitto_broker):
    (tmp_path / "sites.yaml").write_text(SITES)
    smtp = SmtpSink().start()
    server = build_server(Settings.model_validate({
        "registry": tmp_path / "sites.yaml", "broker": {"url": mosquitto_broker.url}, "data_dir": tmp_path / "server",
        "notify": [smtp.url], "http": {"listen": "off"}, "engine": {"tick": "1s"}}), report=lambda line: None).start()
    yesterday = datetime.now(timezone.utc).date() - timedelta(days=1)
    cfg, data = tmp_path / "firmware.yaml", tmp_path / "edge"
    with Sdi12Bus({"0": Sdi12Sensor([STREAM_RAW])}) as sonde:
        office = CONFIG.format(port=sonde.port, due=yesterday)
        cfg.write_text(office)
        retain(mosquitto_broker.port, "ms4/town/DS-1/LOG-DS1/config", office)      # what the office sent
        config, options = load_agent_config(cfg)
        agent = Agent(config, options, data_dir=data, broker_url=mosquitto_broker.url, config_path=cfg,
                      status_interval_s=1).start()
        stop = threading.Event()
        loop = threading.Thread(target=agent.run, args=(stop,), daemon=True)
        loop.start()
        try:
            store = server.store
            # 1. overdue: the readings are flagged, the SMO and the technician are told
            assert wait_for(lambda: turb(store) and turb(store)[-1][1:] == (STREAM_RAW, "calibration_overdue"), 30)
            for who in ("tech@town.test", "smo@town.test"):
                assert wait_for(lambda: any("calibration overdue" in str(m["Subject"]) for m in smtp.to(who)), 30)
            subjects = [str(m["Subject"]) for m in smtp.to("tech@town.test")]
            assert any(f"calibration overdue at DS-1: sensor turb of LOG-DS1, due {yesterday}" in s for s in subjects)
            overdue = [i for i in server.pipeline.incidents.list() if i.kind == "calibration_overdue"]
            assert len(overdue) == 1 and overdue[0].state.value == "open"
            assert agent.control_handled >= 1             # the retained office config: running already

            # 2. the technician calibrates beside the running agent
            proc = subprocess.Popen(command(cfg, data, "--technician", "Lee Tech", "--standard", "0:stablcal:A0",
                                            "--standard", "20:stablcal:A20", "--standard", "100:formazin:F100",
                                            "--json", "--yes", "--interval", "90d"),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
            events = drive_json(proc, sonde, {f"{stage}_{v}": r for v, r in RAW.items()
                                              for stage in ("as_found", "as_left")})
            assert proc.returncode == 0, events[-1]
            rid = events[-1]["record"]["id"]
            sonde.sensors["0"].values = [STREAM_RAW]                  # back in the stream

            # 3. the record reaches the server's history; the agent applies the new config
            assert wait_for(lambda: [r.id for r in store.calibration_history(device="LOG-DS1", sensor="turb")] == [rid],
                            30)
            assert wait_for(lambda: agent.config.config_version == "3+cal1", 20)
            [rec] = store.calibration_history(station="DS-1")
            assert rec.result.value == "pass" and rec.technician == "Lee Tech" and rec.config_version == "3+cal1"

            # 4. the readings change accordingly: 20 FNU, no flag
            assert wait_for(lambda: turb(store)[-1][1:] == (pytest.approx(20.0), ""), 30)
            # 5. the overdue notice closes (the incident resolves) once the logger reports its new calibration
            assert wait_for(lambda: server.pipeline.incidents.get(overdue[0].id).state.value == "resolved", 30)
            [st] = [c for c in store.calibrations_due(datetime.now(timezone.utc)) if c.sensor == "turb"]
            assert st.state.value == "ok" and st.last_record == rid and st.due == rec.next_due

            # 6. a broker restart delivers the office's retained config again: not applied over the calibration
            handled = agent.control_handled
            mosquitto_broker.stop()
            mosquitto_broker.start()
            assert wait_for(lambda: agent.control_handled > handled, 120)   # paho backs off up to 120 s between tries
            assert agent.config.config_version == "3+cal1"
            assert load_agent_config(cfg)[0].sensors[0].calibration.record == rid
        finally:
            stop.set()
            loop.join(10)
            agent.stop()
            server.stop()
            smtp.stop()


def turb(store) -> list[tuple[int, float, str]]:
    now = datetime.now(timezone.utc)
    return [(r.time_ns, r.value, r.flags)
            for r in store.readings("DS-1", "turbidity", now - timedelta(hours=1), now + timedelta(minutes=1))]


def retain(port: int, topic: str, payload: str) -> None:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="office", protocol=mqtt.MQTTv311)
    c.connect("127.0.0.1", port)
    c.loop_start()
    c.publish(topic, payload, qos=1, retain=True).wait_for_publish(10)
    stop_client(c)
