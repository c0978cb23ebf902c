"""Sampling decisions on the logger, hand-computed at their boundaries."""

from datetime import timedelta
from decimal import Decimal

from ms4watch.contract.firmware import DryWeatherFlowTrigger, FirstFlushTrigger
from ms4watch.edge.decisions import DryWeatherFlow, FirstFlush

MIN = 60 * 10**9
H = 60 * MIN


def test_first_flush_fires_once_per_storm_when_rain_and_flow_pass():
    ff = FirstFlush(FirstFlushTrigger(rain_in=Decimal("0.10"), flow_gpm=1.0))
    for i in range(9):                         # 0.09 in: not yet
        ff.rain(i * MIN, 0.01)
    assert ff.flow(9 * MIN, 50.0) is None
    ff.rain(10 * MIN, 0.01)                    # exactly 0.10 in (integer micro-inches)
    assert ff.flow(10 * MIN, 1.0) is None      # flow must exceed 1 gpm
    assert ff.flow(11 * MIN, 1.5) == "first_flush"
    assert ff.flow(12 * MIN, 80.0) is None     # once per storm
    ff.rain(10 * MIN + 6 * H + MIN, 0.10)      # 6 h 01 min later: a new storm
    assert ff.flow(10 * MIN + 6 * H + 2 * MIN, 5.0) == "first_flush"


def test_first_flush_does_not_fire_long_after_the_rain():
    ff = FirstFlush(FirstFlushTrigger())
    ff.rain(0, 0.5)
    assert ff.flow(7 * H, 100.0) is None       # the storm ended after 6 h dry


def settings(**kw):
    return DryWeatherFlowTrigger(lookback=timedelta(hours=72), max_rain_in=Decimal("0.10"),
                                 flow_floor_gpm=0.5, min_duration=timedelta(minutes=30), **kw)


def test_dry_weather_flow_needs_rain_data_covering_the_lookback():
    d = DryWeatherFlow(settings())
    d.rain(0, 0.0)
    assert d.dry(71 * H) is None               # 71 h of data: unknown, never assumed dry
    for m in range(0, 31, 5):
        assert d.flow(71 * H + m * MIN, 4.0) is None
    assert d.dry(72 * H) is True


def test_dry_weather_flow_fires_at_30_minutes_not_29_and_rearms():
    d = DryWeatherFlow(settings())
    d.rain(0, 0.09)                            # 0.09 in in the window: still dry
    assert d.dry(5 * H) is False and d.flow(5 * H, 9.0) is None  # within 6 h of rain: a storm, wet
    t0 = 80 * H - 1 * H
    assert d.flow(t0, 2.0) is None
    assert d.flow(t0 + 29 * MIN, 2.0) is None
    assert d.flow(t0 + 30 * MIN, 2.0) == "dry_weather_flow"
    assert d.flow(t0 + 35 * MIN, 2.0) is None  # one trigger per episode
    assert d.flow(t0 + 40 * MIN, 0.5) is None  # at the floor: the episode ends
    assert d.flow(t0 + 45 * MIN, 2.0) is None
    assert d.flow(t0 + 75 * MIN, 2.0) == "dry_weather_flow"


def test_wet_weather_never_fires():
    d = DryWeatherFlow(settings())
    d.rain(0, 0.0)
    d.rain(70 * H, 0.10)                       # 0.10 in: not dry (strictly less is dry)
    for m in range(0, 60, 5):
        assert d.flow(73 * H + m * MIN, 9.0) is None


def test_the_server_can_tell_a_gaugeless_logger_the_rain():
    d = DryWeatherFlow(settings())
    assert d.dry(5 * H) is None
    d.told(5 * H, 0.02)
    assert d.dry(5 * H + 10 * MIN) is True
    assert d.dry(7 * H) is None                # a report older than an hour is stale


def test_agent_samples_first_flush_and_dry_weather_flow_itself(tmp_path):
    """A week of the demo's weather at one logger with its own gauge and a sampler relay
    (gpiozero mock pins): it samples the storm's first flush and the illicit discharge."""
    import json

    import pytest

    from ms4watch.contract.timeutil import iso_utc, parse_time, to_ns
    from ms4watch.edge.agent import Agent
    from ms4watch.edge.config import parse_agent_config
    from ms4watch.edge.drivers.base import DriverEnv
    from ms4watch.edge.drivers.sim.world import World

    mock = pytest.importorskip("gpiozero.pins.mock")
    config, options = parse_agent_config("""
device: LOG-OF2
municipality: town
station: OF-2
sensors:
  - {id: rain, driver: sim, quantity: rain, unit: in, interval: 1min, options: {model: rain}}
  - {id: flow, driver: sim, quantity: flow, unit: L/s, interval: 5min,
     options: {model: runoff, area_acres: 3.5, runoff_coeff: 0.5, lag_min: 15, baseflow_gpm: 0, noise: 0.003,
               illicit: [{start_h: 100, hours: 4, gpm: 6.0}]}}
  - {id: sampler, driver: autosampler, quantity: flow, unit: gpm, interval: 1h,
     options: {mode: gpio, pin: 27, pulse: 10ms, bottles: 24, volume_ml: 500}}
triggers:
  first_flush: {rain_in: 0.10, flow_gpm: 5}
  dry_weather_flow: {}
""", "firmware.yaml")
    t0 = to_ns(parse_time("2026-06-01T00:00:00Z"))
    env = DriverEnv(data_dir=tmp_path, shared={"world": World(start_ns=t0, hours=24 * 5),
                                               "gpio_pin_factory": mock.MockFactory()})
    agent = Agent(config, options, data_dir=tmp_path, env=env, broker_url="mqtt://127.0.0.1:1")
    for d in agent.drivers:
        d.open()
    for m in range(0, 110 * 60, 15):
        agent.sample_due(t0 + m * MIN)
    records = [json.loads(p)["data"] for _, p in agent.spool.events(0, 100)]
    agent.spool.close()
    assert [(r["trigger"], r["bottle"]) for r in records] == [("first_flush", 1), ("dry_weather_flow", 2)]
    ff, dwf = records
    assert iso_utc(t0 + 8 * H) < ff["time"] < iso_utc(t0 + 10 * H)           # early in the 08:00 storm
    assert dwf["time"] == iso_utc(t0 + 100 * H + 30 * MIN)                   # 30 min into the discharge
