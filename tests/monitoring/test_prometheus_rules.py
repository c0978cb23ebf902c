"""The Prometheus alert rules shipped in the package (``ms4watch.monitoring.RULES``):
valid for Debian's ``promtool check rules``, each alert firing after its ``for`` and not
before (``promtool test rules`` on ms4watch-rules.test.yml), and querying only metrics a
real server exports."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ms4watch.monitoring import RULES
from tests.support.scrape import exported_series

HERE = Path(__file__).resolve().parent
UNIT_TESTS = HERE / "ms4watch-rules.test.yml"
ALERTS = {"Ms4watchDown", "Ms4watchBrokerLost", "Ms4watchStationStale", "Ms4watchDeliveryQueueBackingUp",
          "Ms4watchStoreWriteErrors", "Ms4watchDiskFilling"}


@pytest.fixture(scope="module")
def promtool() -> str:
    binary = shutil.which("promtool")
    if binary is None:
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    return binary


def rules() -> list[dict]:
    return [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]


def test_promtool_checks_the_rules(promtool):
    out = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in out.stdout
    assert {r["alert"] for r in rules()} == ALERTS


def test_promtool_unit_tests_pass(promtool):
    out = subprocess.run([promtool, "test", "rules", str(UNIT_TESTS)], capture_output=True, text=True, cwd=HERE)
    assert out.returncode == 0, out.stdout + out.stderr
    tested = set(re.findall(r"alertname: (\w+)", UNIT_TESTS.read_text()))
    assert tested == ALERTS, "every alert has its unit test"


def test_the_unit_tests_catch_a_rule_that_fires_too_soon(promtool, tmp_path):
    """The same unit tests on a copy of the rules whose broker alert waits 1 min, not 5: they fail."""
    (tmp_path / "rules").mkdir()
    text = RULES.read_text()
    broken = text.replace("expr: ms4watch_broker_connected == 0\n        for: 5m",
                          "expr: ms4watch_broker_connected == 0\n        for: 1m")
    assert broken != text
    (tmp_path / "rules" / RULES.name).write_text(broken)
    tests = UNIT_TESTS.read_text().replace("../../ms4watch/monitoring/prometheus/", "rules/")
    (tmp_path / UNIT_TESTS.name).write_text(tests)
    out = subprocess.run([promtool, "test", "rules", UNIT_TESTS.name], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode != 0 and "alertname: Ms4watchBrokerLost, time: 13m" in out.stdout + out.stderr, out.stdout + out.stderr


def test_every_metric_the_rules_query_and_the_docs_name_is_exported_by_the_server(tmp_path):
    queried = {name for r in rules() for name in re.findall(r"\b(ms4watch_\w+)", r["expr"])}
    assert {"ms4watch_broker_connected", "ms4watch_station_stale", "ms4watch_delivery_queue_oldest_age_seconds",
            "ms4watch_store_write_errors_total", "ms4watch_data_dir_free_bytes"} <= queried
    docs = (HERE.parents[1] / "docs" / "operations.md").read_text()
    section = docs[docs.index("### Monitoring the server"):]
    documented = set(re.findall(r"`(ms4watch_\w+)", section[:section.index("\n## ")]))
    assert len(documented) >= 12, documented
    exported = exported_series(tmp_path)
    assert queried - exported == set(), f"the rules query metrics the server does not export: {sorted(queried - exported)}"
    assert documented - exported == set(), f"docs/operations.md names metrics not exported: {sorted(documented - exported)}"
