"""The tipping-bucket driver: debounce, double tips, a counter that survives restarts, and
gpiozero's own input device on its mock pins."""

from __future__ import annotations

import json
import time
from typing import Callable

import pytest

from ms4watch.edge.drivers.base import DriverEnv
from ms4watch.edge.drivers.pulse import PulseDriver, PulseOptions, TipCounter
from ms4watch.edge.errors import DriverError

from .conftest import CAL_OK, CAL_OVERDUE, T0, sensor
from tests.support.waiting import wait_for


class FakeSwitch:
    """An injected pulse source: the test says when the reed switch closes."""

    def __init__(self) -> None:
        self.on_edge: Callable[[float], None] | None = None

    def start(self, on_edge: Callable[[float], None]) -> None:
        self.on_edge = on_edge

    def stop(self) -> None:
        self.on_edge = None

    def close_at(self, *times_s: float) -> None:
        assert self.on_edge is not None
        for t in times_s:
            self.on_edge(t)


def gauge(env: DriverEnv, switch=None, calibration=None, unit="in", **options) -> PulseDriver:
    opts = {"pin": 17, "tip_size": 0.01, **options}
    s = sensor(id="rain", driver="pulse", quantity="rain", unit=unit, calibration=calibration, **opts)
    if switch is not None:
        env.shared.setdefault("pulse_sources", {})["rain"] = switch
    d = PulseDriver(s, PulseOptions.model_validate(s.options), env)
    d.open()
    return d


def test_depth_since_last_read(env):
    sw = FakeSwitch()
    d = gauge(env, sw)
    sw.close_at(10.0, 12.0, 14.0)
    [r] = d.read(T0)
    assert (r.value, r.unit, r.quantity, r.sensor) == (0.03, "in", "rain", "rain")
    assert d.read(T0 + 1)[0].value == 0.0
    sw.close_at(20.0)
    assert d.read(T0 + 2)[0].value == 0.01
    d.close()


def test_debounce_and_double_tip(env):
    sw = FakeSwitch()
    d = gauge(env, sw, tip_size=0.2, unit="mm")
    sw.close_at(
        100.000, 100.003, 100.008,  # one tip and its contact bounce (< 10 ms apart)
        100.600,                    # the bucket's double tip: 0.6 s after the last tip
        101.700,                    # a real tip: 1.7 s after the last accepted one
        104.000, 104.004,           # a tip with bounce
    )
    assert d.read(T0)[0].value == pytest.approx(0.6)
    assert d.counter is not None and d.counter.state.discarded == 1
    d.close()


def test_double_tip_window_is_configurable(env):
    sw = FakeSwitch()
    d = gauge(env, sw, double_tip="0.25s")
    sw.close_at(0.0, 0.2, 0.4, 0.6)  # 0.2 is within 0.25 s of 0.0; 0.4 is not; 0.6 is within 0.25 s of 0.4
    assert d.read(T0)[0].value == 0.02
    d.close()


def test_counter_survives_restart(env):
    sw = FakeSwitch()
    d = gauge(env, sw)
    sw.close_at(1.0, 3.0)
    assert d.read(T0)[0].value == 0.02
    sw.close_at(5.0, 7.0, 9.0)
    d.close()  # the agent dies before reading those three tips

    sw2 = FakeSwitch()
    d2 = gauge(env, sw2)
    assert d2.read(T0 + 1)[0].value == 0.03  # reported once, after the restart
    d2.close()
    d3 = gauge(env, FakeSwitch())
    assert d3.read(T0 + 2)[0].value == 0.0  # and never twice
    d3.close()
    state = json.loads((env.data_dir / "pulse-rain.json").read_text())
    assert state == {"total": 5, "reported": 5, "discarded": 0}


def test_corrupt_counter_file_is_kept_aside(env, caplog):
    env.data_dir.mkdir(parents=True)
    (env.data_dir / "pulse-rain.json").write_text('{"total": 3, "repor')
    sw = FakeSwitch()
    d = gauge(env, sw)
    sw.close_at(1.0)
    assert d.read(T0)[0].value == 0.01
    assert len(list(env.data_dir.glob("pulse-rain.json.corrupt-*"))) == 1
    assert "unreadable tip counter" in caplog.text
    d.close()


def test_counter_refuses_impossible_state(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"total": 2, "reported": 5}))
    c = TipCounter(p, 0.01, 1.0)
    assert (c.state.total, c.state.reported) == (0, 0)


def test_calibration_slope(env):
    sw = FakeSwitch()
    d = gauge(env, sw, calibration={**CAL_OK, "offset": 0.0, "slope": 1.05})
    sw.close_at(*[2.0 * k for k in range(20)])
    assert d.read(T0)[0].value == pytest.approx(0.21)
    d.close()


def test_rain_from_a_gauge_past_its_calibration_is_flagged(env):
    """Issue 13: every quantity of an overdue sensor carries the flag, rain included (the
    storm rule still counts it and its event says ``uncalibrated: true``)."""
    sw = FakeSwitch()
    d = gauge(env, sw, calibration=CAL_OVERDUE)
    sw.close_at(2.0, 4.0)
    [r] = d.read(T0)
    assert (r.value, r.flags) == (0.02, ("calibration_overdue",))
    d.close()


@pytest.mark.parametrize("double_tip", ["50ms", "2s"])
def test_double_tip_outside_the_regulations_range(double_tip):
    with pytest.raises(ValueError, match="double_tip must be between 0.1s and 1s"):
        PulseOptions.model_validate({"pin": 17, "tip_size": 0.01, "double_tip": double_tip})


def test_needs_a_data_dir():
    s = sensor(id="rain", driver="pulse", quantity="rain", unit="in", pin=17, tip_size=0.01)
    with pytest.raises(DriverError, match="needs a data directory"):
        PulseDriver(s, s.options, DriverEnv()).open()


def test_gpio_through_gpiozero_mock_pins(gpio_env):
    d = gauge(gpio_env, pin=22, debounce="1ms", double_tip="100ms")
    pin = gpio_env.shared["gpio_pin_factory"].pin(22)
    assert pin.state == 1  # pulled up, switch open
    for _ in range(3):
        pin.drive_low()
        time.sleep(0.002)
        pin.drive_high()
        time.sleep(0.15)
    assert wait_for(lambda: d.counter is not None and d.counter.pending() == 3)
    assert d.read(T0)[0].value == 0.03
    d.close()
    # closing releases the line: it can be opened again
    d = gauge(gpio_env, pin=22)
    d.close()


def test_gpio_line_in_use_is_a_driver_error(gpio_env):
    d = gauge(gpio_env, pin=5)
    with pytest.raises(DriverError, match="GPIO5: cannot open"):
        gauge(gpio_env, pin=5)  # the line is taken by the first gauge
    d.close()
