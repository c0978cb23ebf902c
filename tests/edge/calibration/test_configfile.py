"""The new coefficients into the config file: edited in place, versioned, previous kept."""

from __future__ import annotations

from datetime import date

import pytest

from ms4watch.contract.firmware import Calibration
from ms4watch.edge.calibration.configfile import next_version, with_calibration, write_config
from ms4watch.edge.config import load_agent_config, parse_agent_config

CONFIG = """\
# LOG-DS1: the sonde below Hillcrest
device: LOG-DS1
municipality: town
station: DS-1
config_version: "3"   # the office's
sensors:
  - id: turb            # the EXO2's turbidity
    driver: sim
    quantity: turbidity
    unit: FNU
    calibration:
      performed: 2026-01-05   # by Sam
      due: 2026-04-05
    options: {model: turbidity}
  - {id: flow, driver: sim, quantity: flow, unit: gpm, options: {model: runoff}}
  - id: rain
    driver: sim
    quantity: rain
    unit: in
    options: {model: rain}
"""
CAL = Calibration(performed=date(2026, 6, 1), due=date(2026, 9, 1), slope=0.95, offset=-0.2, record="cal-9")


def test_versions_never_collide_with_the_offices():
    assert next_version("3") == "3+cal1"
    assert next_version("3+cal1") == "3+cal2"
    assert next_version("2026.06a+cal9") == "2026.06a+cal10"


@pytest.mark.parametrize("sensor", ["turb", "flow", "rain"])
def test_only_the_calibration_and_the_version_change(sensor):
    out, config, kept = with_calibration(CONFIG, "fw.yaml", sensor, CAL, "3+cal1")
    assert kept and config.config_version == "3+cal1"
    assert next(s for s in config.sensors if s.id == sensor).calibration == CAL
    others = [s for s in config.sensors if s.id != sensor]
    assert [s.calibration is not None for s in others] == [s.id == "turb" for s in others]
    for comment in ("# LOG-DS1: the sonde below Hillcrest", "# the EXO2's turbidity", "# the office's"):
        assert comment in out
    assert ('# by Sam' in out) is (sensor != "turb")       # the replaced block's own comment goes with it


def test_piecewise_block_and_a_json_config():
    pw = Calibration(performed=date(2026, 6, 1), due=date(2026, 9, 1), points=((0.3, 0.0), (21.0, 20.0)),
                     record="cal-9")
    out, config, kept = with_calibration(CONFIG, "fw.yaml", "turb", pw, "3+cal1")
    assert "points: [[0.3, 0.0], [21.0, 20.0]]" in out and config.sensors[0].calibration == pw
    json_text = ('{"device": "LOG-DS1", "municipality": "town", "station": "DS-1", "sensors": '
                 '[{"id": "turb", "driver": "sim", "quantity": "turbidity", "unit": "FNU", '
                 '"options": {"model": "turbidity"}}]}')
    out, config, kept = with_calibration(json_text, "fw.json", "turb", CAL, "1+cal1")
    assert not kept and out.startswith("# rewritten by ms4watch calibrate")
    assert config.sensors[0].calibration == CAL and config.config_version == "1+cal1"


def test_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "firmware.yaml"
    path.write_text(CONFIG)
    path.chmod(0o640)
    out, _, _ = with_calibration(CONFIG, str(path), "turb", CAL, "3+cal1")
    prev = write_config(path, out)
    assert prev.read_text() == CONFIG and path.read_text() == out
    assert (path.stat().st_mode & 0o777) == 0o640
    config, _ = load_agent_config(path)
    assert config.sensors[0].calibration == CAL


def test_a_config_with_a_tab_before_a_key_the_agent_read_gets_its_calibration():
    """libyaml (which loads configs) reads `options\t: {...}`; PyYAML's own parser (which keeps the layout)
    refuses it: the file is rewritten from what libyaml read, not refused with a YAML traceback."""
    tabbed = CONFIG.replace("unit: gpm, options: {model: runoff}", "unit: gpm, options\t: {model: runoff}")
    parse_agent_config(tabbed, "fw.yaml")   # the agent takes it (raises if it did not)
    out, config, kept = with_calibration(tabbed, "fw.yaml", "flow", CAL, "3+cal1")
    assert not kept and out.startswith("# rewritten by ms4watch calibrate")
    assert next(s for s in config.sensors if s.id == "flow").calibration == CAL
    assert [s.options for s in config.sensors][1] == {"model": "runoff"}
