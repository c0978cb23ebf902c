"""The agent beside a calibration: the sensor paused and given back, the bus shared a
transaction at a time, the config file's new coefficients applied."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ms4watch.edge.agent import Agent
from ms4watch.edge.calibration.session import CalibrationSession
from ms4watch.edge.config import load_agent_config
from ms4watch.edge.spool import Spool
from tests.edge.drivers.instruments import Sdi12Bus, Sdi12Sensor
from tests.support.servers import free_port
from tests.support.waiting import wait_for

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
    options: {{address: "0", value_index: 1, break_ms: 0, retries: 0, baudrate: 9600, framing: 8N1}}
    calibration: {{performed: 2026-01-05, due: 2099-04-05, slope: 1.0, offset: 0.0}}
  - id: temp
    driver: sdi12
    quantity: temperature
    unit: degC
    interval: 1s
    port: {port}
    options: {{address: "0", value_index: 2, break_ms: 0, retries: 0, baudrate: 9600, framing: 8N1}}
"""


class Running:
    """An agent on its own loop (as ``ms4watch edge`` runs it), its broker out of reach so
    everything stays in the spool for the test to read."""

    def __init__(self, tmp_path: Path, port: str):
        self.cfg = tmp_path / "firmware.yaml"
        self.cfg.write_text(CONFIG.format(port=port))
        self.data = tmp_path / "data"
        config, options = load_agent_config(self.cfg)
        self.agent = Agent(config, options, data_dir=self.data, broker_url=f"mqtt://127.0.0.1:{free_port()}",
                           config_path=self.cfg).start()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.agent.run, args=(self.stop,), daemon=True)
        self.thread.start()

    def rows(self) -> list[tuple]:
        db = self.agent.spool._db
        with self.agent.spool._lock:
            return db.execute("SELECT time_ns, sensor, value, flags FROM pending ORDER BY id").fetchall()

    def events(self) -> list[dict]:
        return [json.loads(p) for _, p in self.agent.spool.events(0, 1000)]

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.agent.stop()


@pytest.fixture
def bus():
    with Sdi12Bus({"0": Sdi12Sensor([12.0, 18.5])}) as b:
        yield b


def test_calibration_pauses_the_sensor_shares_the_bus_and_gives_it_back(tmp_path, bus):
    run = Running(tmp_path, bus.port)
    try:
        assert wait_for(lambda: {r[1] for r in run.rows()} == {"turb", "temp"}, 15)
        with CalibrationSession(run.cfg, run.data, "turb", pause_timeout_s=10) as s:
            assert "turb" in run.agent.paused
            paused_at = len(run.rows())
            readings = []
            while sum(r[1] == "temp" for r in run.rows()[paused_at:]) < 4:   # the calibration's transactions …
                readings.append(s.read())
        assert len(readings) > 100 and set(readings) == {12.0}
        during = run.rows()[paused_at:]
        assert {r[1] for r in during} == {"temp"}                   # … beside the agent's, never interleaved
        assert all(r[2] == 18.5 and r[3] == "" for r in during)
        assert wait_for(lambda: "turb" not in run.agent.paused, 10)
        assert wait_for(lambda: any(r[1] == "turb" for r in run.rows()[paused_at + len(during):]), 15)
        kinds = [(e["kind"], e["data"]) for e in run.events()]
        assert ("sensor_paused", {"sensor": "turb", "reason": "calibration"}) in kinds
        assert ("sensor_resumed", {"sensor": "turb"}) in kinds
    finally:
        run.close()


def test_the_config_file_changed_on_disk_is_applied_and_readings_change(tmp_path, bus):
    run = Running(tmp_path, bus.port)
    try:
        assert wait_for(lambda: any(r[1] == "turb" for r in run.rows()), 15)
        text = run.cfg.read_text().replace('config_version: "3"', 'config_version: "3+cal1"').replace(
            "slope: 1.0, offset: 0.0", "slope: 0.5, offset: 1.0")
        tmp = run.cfg.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(run.cfg)
        assert wait_for(lambda: run.agent.config.config_version == "3+cal1", 10)
        mark = len(run.rows())
        assert wait_for(lambda: any(r[1] == "turb" for r in run.rows()[mark:]), 15)
        assert {r[2] for r in run.rows()[mark:] if r[1] == "turb"} == {7.0}      # 0.5 · 12 + 1
        applied = [e["data"] for e in run.events() if e["kind"] == "config_applied"]
        assert applied == [{"version": "3+cal1", "previous": "3", "source": "file"}]
        # the drivers were kept (same port, same options): no reopening, no sensor_error
        assert all(r[3] == "" for r in run.rows())
    finally:
        run.close()


def test_a_config_file_edit_that_keeps_the_version_is_not_applied(tmp_path, bus, caplog):
    run = Running(tmp_path, bus.port)
    try:
        run.cfg.write_text(run.cfg.read_text().replace("slope: 1.0", "slope: 2.0"))
        assert wait_for(lambda: "still says config_version 3" in caplog.text, 10)
        assert run.agent.config.sensors[0].calibration.slope == 1.0
    finally:
        run.close()


def test_events_another_process_adds_to_the_spool_are_seen(tmp_path):
    a = Spool(tmp_path / "s.db", "LOG-1")
    assert a.events(0, 10) == []
    b = Spool(tmp_path / "s.db", "LOG-1")        # ms4watch calibrate, another connection
    b.add_event(b'{"kind": "calibration"}')
    b.close()
    assert [p for _, p in a.events(0, 10)] == [b'{"kind": "calibration"}']
    a.close()
