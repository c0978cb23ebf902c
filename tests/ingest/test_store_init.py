"""``ms4watch store init`` against a real influxd: creates the database with ≥ 1,096 days, refuses less."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ms4watch.commands import store

pytestmark = pytest.mark.influxdb


def _app() -> typer.Typer:
    app = typer.Typer()
    store.register(app)

    @app.callback()
    def _root() -> None:
        pass
    return app


def _policies(server, db):
    body = server.query(f'SHOW RETENTION POLICIES ON "{db}"')
    s = body["results"][0]["series"][0]
    return {row[0]: dict(zip(s["columns"], row)) for row in s["values"]}


def test_init_creates_database_with_three_years(influxd):
    r = CliRunner().invoke(_app(), ["store", "init", "--store", influxd.store_url("town")])
    assert r.exit_code == 0, r.output
    assert "retention 1096d ≥ 1096 days (3 years): OK" in r.output
    rp = _policies(influxd, "town")["ms4watch"]
    assert rp["duration"] == "26304h0m0s" and rp["default"] is True
    r = CliRunner().invoke(_app(), ["store", "init", "--store", influxd.store_url("town"), "--retention", "1200d"])
    assert r.exit_code == 0 and "updated, keeps 1200 days" in r.output
    assert _policies(influxd, "town")["ms4watch"]["duration"] == "28800h0m0s"


def test_short_retention_refused_unless_told(influxd):
    r = CliRunner().invoke(_app(), ["store", "init", "--store", influxd.store_url("town"), "--retention", "30d"])
    assert r.exit_code == 2 and "shorter than the 1096 days" in r.output
    assert "town" not in str(influxd.query("SHOW DATABASES"))
    r = CliRunner().invoke(_app(), ["store", "init", "--store", influxd.store_url("town"), "--retention", "30d",
                                    "--allow-short-retention"])
    assert r.exit_code == 0 and "keeps 30 days" in r.output and "ingest needs ?allow_short_retention" in r.output
    assert _policies(influxd, "town")["ms4watch"]["duration"] == "720h0m0s"


@pytest.mark.parametrize("args, match", [
    (["--store", "influxdb1://admin:pw@127.0.0.1:1/x"], "credentials in the store URL are refused"),
    (["--store", "sqlite:///tmp/x.db"], "not an InfluxDB store URL"),
    (["--store", "influxdb1://127.0.0.1:1/x", "--retention", "soon"], "--retention: not a duration"),
])
def test_bad_arguments(args, match):
    r = CliRunner().invoke(_app(), ["store", "init", *args])
    assert r.exit_code == 2 and match in r.output
    assert "pw" not in r.output


def test_unreachable_store_is_reported(influxd):
    port = influxd.port
    influxd.stop()
    r = CliRunner().invoke(_app(), ["store", "init", "--store", f"influxdb1://127.0.0.1:{port}/town"])
    assert r.exit_code == 2 and "connection refused" in r.output
