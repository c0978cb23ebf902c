"""Fixtures for the ingest tests: real InfluxDB 1.x and VictoriaMetrics servers."""

from tests.support.influx_fixtures import influxd, victoria  # noqa: F401 (fixtures)
