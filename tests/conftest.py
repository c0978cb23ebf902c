from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.servers import have, mosquitto

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data" / "real"


@pytest.fixture
def mosquitto_broker(tmp_path):
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    with mosquitto(tmp_path / "mosquitto") as m:
        yield m


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA
