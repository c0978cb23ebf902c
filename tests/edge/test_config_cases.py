"""Golden folders: ``testcases/<case>/firmware.yaml`` + ``expected.txt`` — ``OK``, or the
error with file, line and field (a trailing ``...`` means the rest may vary)."""

from pathlib import Path

import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.edge.config import load_agent_config

CASES = sorted(p for p in (Path(__file__).parent / "testcases").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_firmware_case(case, monkeypatch):
    monkeypatch.chdir(case)
    expected = (case / "expected.txt").read_text().strip()
    if expected == "OK":
        config, options = load_agent_config("firmware.yaml")
        assert len(options) == len(config.sensors)
        return
    with pytest.raises(ConfigError) as e:
        load_agent_config("firmware.yaml")
    if expected.endswith("..."):
        assert str(e.value).startswith(expected[:-3])
    else:
        assert str(e.value) == expected


def test_bundled_demo_configs_load():
    from ms4watch.demo import demo_configs
    files = sorted(demo_configs().glob("LOG-*.yaml"))
    assert len(files) >= 6
    for f in files:
        config, _ = load_agent_config(f)
        assert config.municipality == "brookhollow"


def test_demo_calibrations_make_the_calibration_panel_useful():
    """Turbidity, flow and rain sensors carry calibration blocks; at least one falls due
    during the default demo week or is overdue by then, batteries and radios have none."""
    from datetime import timedelta

    from ms4watch.demo import DemoOptions, demo_configs
    o = DemoOptions()
    first, last = o.start.date(), (o.start + timedelta(days=o.days)).date()
    calibrated: dict[str, list] = {}
    for f in sorted(demo_configs().glob("LOG-*.yaml")):
        config, _ = load_agent_config(f)
        for s in config.sensors:
            if s.calibration is not None:
                calibrated.setdefault(s.quantity.value, []).append(s.calibration)
    assert set(calibrated) == {"turbidity", "flow", "rain"}
    assert all(c.performed <= first for cs in calibrated.values() for c in cs)
    assert any(c.due <= last for cs in calibrated.values() for c in cs)
    assert any(c.due > last for cs in calibrated.values() for c in cs)
