from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TESTDATA = Path(__file__).parent / "testdata"


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    """A copy of the synthetic network's folder (tests may edit it); the mapping file's path."""
    for name in ("structures.geojson", "pipes.geojson", "mapping.yaml"):
        shutil.copy(TESTDATA / name, tmp_path / name)
    return tmp_path / "mapping.yaml"
