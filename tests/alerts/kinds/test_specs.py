"""The kind registry: every event kind has its spec; the words at REGULATIONS.md's defaults."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.incidents.model import Priority, policy_for
from ms4watch.alerts.kinds import KINDS, describe, spec_for
from ms4watch.alerts.kinds.units import duration, inches, percent
from tests.support.notify_peers import registry


def test_every_event_kind_has_one_spec():
    assert set(KINDS) == set(AlertKind)
    assert all(k is s.kind for k, s in KINDS.items())


def test_an_unknown_kind_is_a_notice_named_after_itself():
    s = spec_for("sewer_overflow")
    assert (s.priority, s.name, s.escalates) == (Priority.NOTICE, "sewer overflow", False)
    assert policy_for("sewer_overflow").what == "sewer overflow"


@pytest.mark.parametrize("td, text", [(timedelta(hours=72), "72 h"), (timedelta(hours=48), "48 h"),
                                      (timedelta(days=7), "7 d"), (timedelta(minutes=30), "30 min"),
                                      (timedelta(seconds=0.5), "0.5 s"), (timedelta(minutes=90), "90 min"),
                                      (timedelta(hours=36), "36 h")])
def test_durations_are_written_with_their_unit(td, text):
    assert duration(td) == text


def test_depths_and_fractions():
    assert (inches(Decimal("0.5")), inches(Decimal("0.25")), inches(0.125)) == ("0.50 in", "0.25 in", "0.125 in")
    assert percent(0.1) == "10 %"


def test_the_words_at_the_defaults():
    reg = registry()
    storm = describe(reg, AlertKind.STORM, "RG-1")
    assert storm.what == "storm >= 0.50 in"
    assert storm.rule == "storm depth >= 0.50 in (6 h minimum inter-event time; a tip within 1 s of the last is not counted)"
    dwf = describe(reg, AlertKind.DRY_WEATHER_FLOW, "OF-12")
    assert dwf.rule == ("flow above the outfall's floor (0.5 gpm) in every reading for >= 30 min with < 0.10 in of "
                        "rain in 72 h and none in the last 6 h")
    assert dwf.threshold == {"label": "flow floor", "value": 0.5, "unit": "gpm"}
    tc = describe(reg, AlertKind.TURBIDITY_CONTRAST, "TP-1")
    assert tc.rule.startswith("downstream - upstream > max(5 NTU, 10 % of upstream) for >= 15 min (backstop 250 NTU")
    assert tc.threshold["label"] == "upstream + max(5 NTU, 10 % of upstream)"
    assert describe(reg, AlertKind.INSPECTION_DUE, "CS-7").rule == (
        "inspection within 24 h of the end of a storm >= 0.50 in, and at least every 7 d")
    assert describe(reg, AlertKind.STALE_STATION, "TD-1").rule == (
        "no reading for more than 3 x the station's report interval (its logger's, else 15 min)")


def test_a_stale_station_is_judged_on_the_interval_the_registry_states_for_it():
    from tests.support.notify_peers import REGISTRY_YAML
    reg = registry(REGISTRY_YAML.replace("rain_gauges: [{id: RG-1}]", "rain_gauges: [{id: RG-1, report_interval: 20min}]"))
    assert describe(reg, AlertKind.STALE_STATION, "RG-1").rule == (
        "no reading for more than 3 x the station's report interval (20 min)")
