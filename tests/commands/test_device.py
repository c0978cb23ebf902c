"""``ms4watch device config|cmd`` against a real Mosquitto and a running edge agent: the
config validated before anything is sent, the logger's answer reported, an offline logger
taking the retained config when it connects."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from ms4watch.device import DeviceError, DeviceLink
from ms4watch.edge.agent import Agent
from ms4watch.edge.config import load_agent_config
from tests.commands.test_calibrate import REPO
from tests.support.cli import run_cli, run_process
from tests.support.waiting import wait_for

pytestmark = pytest.mark.mosquitto

CONFIG = """\
device: LOG-T1
municipality: town
station: OF-1
config_version: "{version}"
sensors:
  - {{id: flow, driver: sim, quantity: flow, unit: gpm, interval: 1s, options: {{model: runoff}},
     calibration: {{performed: {performed}, due: 2099-01-01, slope: {slope}}}}}
"""


def write(path: Path, version: str, slope: float = 1.0, performed: str = "2026-06-01") -> Path:
    path.write_text(CONFIG.format(version=version, slope=slope, performed=performed))
    return path


class Logger:
    def __init__(self, tmp_path: Path, url: str):
        self.cfg = write(tmp_path / "firmware.yaml", "1")
        config, options = load_agent_config(self.cfg)
        self.agent = Agent(config, options, data_dir=tmp_path / "edge", broker_url=url, config_path=self.cfg,
                           status_interval_s=1).start()
        self.stop = threading.Event()
        self.loop = threading.Thread(target=self.agent.run, args=(self.stop,), daemon=True)
        self.loop.start()
        assert wait_for(lambda: self.agent.uplink.listening, 10)

    def close(self):
        self.stop.set()
        self.loop.join(10)
        self.agent.stop()


def device(url: str, *args: str, process: bool = False) -> subprocess.CompletedProcess:
    """``ms4watch device`` in process (tests/support/cli.py), or with ``process`` through the
    console script."""
    return (run_process if process else run_cli)("device", *args, "--broker", url, "--timeout", "10", cwd=REPO)


def link(url: str, timeout_s: float = 10) -> DeviceLink:
    return DeviceLink(url, timeout_s=timeout_s)


def test_config_applied_refused_or_kept_for_an_offline_logger(tmp_path, mosquitto_broker):
    url = mosquitto_broker.url
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.format(version="2", slope=1.0, performed="2026-06-01").replace("model: runoff",
                                                                                         "model: runof"))
    out = device(url, "config", str(bad))
    assert out.returncode == 2 and f"{bad}:6: sensors[0].options.model" in out.stderr      # nothing sent
    logger = Logger(tmp_path, url)
    try:
        with pytest.raises(DeviceError, match="LOG-T1 already runs config_version '1'"):
            link(url).send_config(write(tmp_path / "v1.yaml", "1", slope=2.0).read_text(), "v1.yaml")
        out = device(url, "config", str(write(tmp_path / "v2.yaml", "2", slope=1.5)), "--json")
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)
        assert answer["state"] == "applied" and answer["detail"] == "LOG-T1 applied config 2 (was 1)"
        assert logger.agent.config.sensors[0].calibration.slope == 1.5
        # a config from the office with an older calibration than the one measured in the field
        a = link(url).send_config(write(tmp_path / "v3.yaml", "3", slope=9.0, performed="2026-01-01").read_text(),
                                  "v3.yaml")
        assert (a.state, a.detail) == ("applied", "LOG-T1 applied config 3 (was 2); it kept its newer field "
                                                  "calibration of flow")
        assert logger.agent.config.sensors[0].calibration.slope == 1.5
        # one the logger cannot open its instruments with
        sdi = CONFIG.format(version="4", slope=1.0, performed="2026-06-01").replace(
            "driver: sim", "driver: sdi12, port: /dev/ttyNOPE").replace("{model: runoff}", "{address: '0'}")
        a = link(url).send_config(sdi, "v4.yaml")
        assert a.state == "rejected" and a.detail.startswith("LOG-T1 refused config 4: opening drivers")
        assert a.detail.endswith("(it still runs 3)")
    finally:
        logger.close()
    a = link(url, 2).send_config(write(tmp_path / "v5.yaml", "5", slope=1.25, performed="2026-07-01").read_text(),
                                 "v5.yaml")
    assert a.state == "no_answer" and "LOG-T1 is offline" in a.detail and "when it next connects" in a.detail
    logger = Logger(tmp_path, url)                     # back: it takes the retained config
    try:
        assert wait_for(lambda: logger.agent.config.config_version == "5", 20)
    finally:
        logger.close()


def test_commands_and_their_acknowledgements(tmp_path, mosquitto_broker):
    url = mosquitto_broker.url
    with pytest.raises(DeviceError, match="unknown command 'format_disk'"):
        link(url).send_command("town", "LOG-T1", "format_disk")
    logger = Logger(tmp_path, url)
    try:
        out = device(url, "cmd", "LOG-T1", "read_now", "--municipality", "town", process=True)
        assert out.returncode == 0 and out.stdout.strip() == "LOG-T1: read_now done: 1 readings taken"
        a = link(url).send_command("town", "LOG-T1", "rain_report", station="OF-1")
        assert a.state == "failed" and "rain_report FAILED: rain_report needs args.rain_in" in a.detail
        a = link(url).send_command("town", "LOG-T1", "rain_report", {"rain_in": 0.02})
        assert (a.state, a.detail) == ("ok", "LOG-T1: rain_report done: 0.02 in")
    finally:
        logger.close()
    a = link(url, 2).send_command("town", "LOG-T1", "read_now")
    assert a.state == "no_answer" and "it is offline, and commands are not kept for it" in a.detail
