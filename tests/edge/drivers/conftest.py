from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from ms4watch.contract.firmware import Sensor
from ms4watch.edge.drivers.base import DriverEnv

# 2026-06-01T12:00:00Z
T0 = 1_780_315_200_000_000_000


def sensor(id: str = "turb", driver: str = "sdi12", quantity: str = "turbidity", unit: str = "FNU",
           port: str | None = None, calibration: dict[str, Any] | None = None, **options: Any) -> Sensor:
    return Sensor.model_validate({"id": id, "driver": driver, "quantity": quantity, "unit": unit, "port": port,
                                  "calibration": calibration, "options": options})


@pytest.fixture
def env(tmp_path) -> DriverEnv:
    return DriverEnv(data_dir=tmp_path / "data")


@pytest.fixture
def gpio_env(tmp_path) -> DriverEnv:
    """gpiozero on its mock pins: the real library, no Raspberry Pi."""
    mock = pytest.importorskip("gpiozero.pins.mock")
    return DriverEnv(data_dir=tmp_path / "data", shared={"gpio_pin_factory": mock.MockFactory()})


CAL_OK = {"performed": date(2026, 5, 1), "due": date(2026, 8, 1), "offset": 0.5, "slope": 2.0}
CAL_OVERDUE = {"performed": date(2026, 1, 1), "due": date(2026, 5, 31), "offset": 0.0, "slope": 1.0}
