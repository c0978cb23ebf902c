"""The autosampler trigger: a relay on gpiozero's mock pins, or a serial command to a
simulated sampler on a pseudo-terminal; the bottle record survives restarts."""

from __future__ import annotations

import json
import re

import pytest

from ms4watch.edge.drivers.autosampler import AutosamplerDriver, AutosamplerOptions
from ms4watch.edge.drivers.base import DriverEnv
from ms4watch.edge.errors import DriverError

from .conftest import T0, sensor
from .instruments import LineDevice


def sampler(env: DriverEnv, port: str | None = None, **options) -> AutosamplerDriver:
    s = sensor(id="sampler", driver="autosampler", quantity="flow", unit="gpm", port=port, **options)
    d = AutosamplerDriver(s, AutosamplerOptions.model_validate(s.options, context={"sensor": s}), env)
    d.open()
    return d


def test_contact_closure_and_bottle_records(gpio_env):
    d = sampler(gpio_env, mode="gpio", pin=27, pulse="20ms", bottles=3, volume_ml=500)
    relay = gpio_env.shared["gpio_pin_factory"].pin(27)
    relay.clear_states()
    rec = d.trigger("first_flush", T0)
    assert rec == {"sensor": "sampler", "bottle": 1, "time": "2026-06-01T12:00:00Z", "trigger": "first_flush",
                   "volume_ml": 500.0, "method": "gpio", "bottles_left": 2}
    states = [s.state for s in relay.states]
    assert states[-2:] == [True, False]  # closed, then opened again
    assert relay.states[-1].timestamp >= 0.015  # a mock pin's timestamp: time since the previous change
    assert d.trigger("command", T0 + 1)["bottle"] == 2
    assert d.read(T0) == []
    d.close()

    d = sampler(gpio_env, mode="gpio", pin=27, pulse="20ms", bottles=3, volume_ml=500)  # a restart
    assert d.trigger("command", T0 + 2)["bottle"] == 3
    with pytest.raises(DriverError, match="all 3 bottles are used"):
        d.trigger("command", T0 + 3)
    d.reset_bottles()
    assert d.trigger("command", T0 + 4) | {"time": None} == {
        "sensor": "sampler", "bottle": 1, "time": None, "trigger": "command", "volume_ml": 500.0,
        "method": "gpio", "bottles_left": 2}
    d.close()


def test_active_low_relay(gpio_env):
    d = sampler(gpio_env, mode="gpio", pin=26, active_high=False, pulse="10ms", volume_ml=250)
    relay = gpio_env.shared["gpio_pin_factory"].pin(26)
    assert relay.state == 1  # idle high: relay off
    relay.clear_states()
    d.trigger("command", T0)
    assert [s.state for s in relay.states][-2:] == [False, True]
    d.close()


def test_serial_command_with_acknowledgement(env):
    def isco(req: bytes) -> bytes | None:
        return b"OK B07\r\n" if req == b"SAMPLE" else b"ERR\r\n"

    with LineDevice(isco) as dev:
        d = sampler(env, port=dev.port, mode="serial", command="SAMPLE\r", ack=r"^OK B(?P<bottle>\d+)$",
                    reply_timeout_s=0.5, volume_ml=1000)
        rec = d.trigger("first_flush", T0)
        assert (rec["bottle"], rec["method"], rec["volume_ml"]) == (7, "serial", 1000.0)
        assert dev.received == [b"SAMPLE"]
        # our count follows the sampler's
        state = json.loads((env.data_dir / "autosampler-sampler.json").read_text())
        assert state == {"next_bottle": 8}
        d.close()


def test_serial_without_acknowledgement_skips_the_bottle(env):
    replies = [None, b"noise\r\n", b"OK\r\n"]

    with LineDevice(lambda req: replies.pop(0) if replies else b"OK\r\n") as dev:
        d = sampler(env, port=dev.port, mode="serial", command="SAMPLE\r", ack="^OK$", reply_timeout_s=0.3,
                    volume_ml=1000)
        with pytest.raises(DriverError, match=re.escape("no reply matching '^OK$' within 0.3 s")):
            d.trigger("command", T0)
        with pytest.raises(DriverError, match="no reply matching"):
            d.trigger("command", T0 + 1)  # a reply, but not the acknowledgement
        assert d.trigger("command", T0 + 2)["bottle"] == 3  # bottles 1 and 2 may hold water
        d.close()


def test_corrupt_bottle_record_refuses_to_guess(env):
    env.data_dir.mkdir(parents=True)
    (env.data_dir / "autosampler-sampler.json").write_text("{not json")
    with pytest.raises(DriverError, match="unreadable bottle record"):
        sampler(env, mode="gpio", pin=4, volume_ml=100)


def test_trigger_needs_a_reason_and_an_open_driver(gpio_env):
    s = sensor(id="sampler", driver="autosampler", quantity="flow", unit="gpm", mode="gpio", pin=4, volume_ml=100)
    d = AutosamplerDriver(s, s.options, gpio_env)
    with pytest.raises(DriverError, match="before open"):
        d.trigger("command", T0)
    d.open()
    with pytest.raises(DriverError, match="needs a reason"):
        d.trigger("", T0)
    d.close()
