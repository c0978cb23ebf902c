"""Fixtures for tests that need a real InfluxDB 1.x or VictoriaMetrics (import them by name)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Iterator

import pytest

from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.stores.base import StoredMessage

from .servers import InfluxDB1, VictoriaMetrics, have


@pytest.fixture
def influxd(tmp_path) -> Iterator[InfluxDB1]:
    if not have("influxd"):
        pytest.skip("influxd is not installed (apt-get install influxdb)")
    s = InfluxDB1(tmp_path / "influxdb").start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def victoria(tmp_path) -> Iterator[VictoriaMetrics]:
    if not have("victoria-metrics"):
        pytest.skip("victoria-metrics is not installed (apt-get install victoria-metrics)")
    s = VictoriaMetrics(tmp_path / "vm").start()
    try:
        yield s
    finally:
        s.stop()


def make_messages(n_messages: int, readings_per_message: int = 4, *, device: str = "LOG-OF12",
                  station: str = "OF-12", first_seq: int = 0, end_ns: int | None = None,
                  step: timedelta = timedelta(minutes=1)) -> list[StoredMessage]:
    """Plausible canonical messages: flow, rain, turbidity and battery, one per sample cycle."""
    end_ns = end_ns if end_ns is not None else time.time_ns() // 1_000_000_000 * 1_000_000_000
    step_ns = int(step.total_seconds() * 1e9)
    kinds = [("flow", "flow", "gpm"), ("rain", "rain", "in"), ("turb", "turbidity", "NTU"), ("batt", "battery", "V")]
    out = []
    for i in range(n_messages):
        seq = first_seq + i
        t = end_ns - (n_messages - i) * step_ns
        rs = []
        for k in range(readings_per_message):
            sensor, q, unit = kinds[k % len(kinds)]
            value = round(0.5 + (seq % 17) * 0.25 + k, 3)
            rs.append(CanonicalReading(t, station, device, f"{sensor}{k // len(kinds) or ''}", q, value, unit, "", seq))
        out.append(StoredMessage(device, seq, tuple(rs)))
    return out
