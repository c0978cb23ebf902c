"""Driver options checked at load time, before any port opens.

Golden folders: ``testcases/<case>/firmware.yaml`` + ``expected.txt`` — ``OK``, or the
error naming file, line and field (a trailing ``...`` means the rest may vary). A new
regression case is a new folder. Each driver's ``sample.yaml`` must load as well.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.contract.firmware import load_firmware_config
from ms4watch.edge.drivers import DRIVERS, driver_class
from ms4watch.edge.drivers.validate import validate_options

HERE = Path(__file__).parent
CASES = sorted(p for p in (HERE / "testcases").iterdir() if p.is_dir())
SAMPLES = sorted((HERE.parents[2] / "edge" / "drivers").glob("*/sample.yaml"))


def load(path: str | Path) -> None:
    config = load_firmware_config(path)
    validate_options(config, path)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_firmware_case(case, monkeypatch):
    monkeypatch.chdir(case)
    expected = (case / "expected.txt").read_text().strip()
    if expected == "OK":
        load("firmware.yaml")
        return
    with pytest.raises(ConfigError) as e:
        load("firmware.yaml")
    if expected.endswith("..."):
        assert str(e.value).startswith(expected[:-3])
    else:
        assert str(e.value) == expected


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.parent.name for s in SAMPLES])
def test_sample_config_loads(sample):
    config = load_firmware_config(sample)
    validate_options(config, sample)
    assert {s.driver for s in config.sensors} & {sample.parent.name}


def test_every_real_driver_has_a_sample():
    assert {s.parent.name for s in SAMPLES} >= set(DRIVERS) - {"sim"}


@pytest.mark.parametrize("name", sorted(set(DRIVERS) - {"sim"}))
def test_driver_class_shape(name):
    cls = driver_class(name)
    assert cls.name == name
    for method in ("open", "read", "close"):
        assert callable(getattr(cls, method))
