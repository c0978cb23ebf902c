"""Fixtures for the dashboard tests: a real InfluxDB 1.x."""

from tests.support.influx_fixtures import influxd  # noqa: F401 (fixture)
