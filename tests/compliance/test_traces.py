"""Trace visits' field tests against the screening thresholds, and what a set of visits says."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ms4watch.compliance.errors import ComplianceError
from ms4watch.compliance.labs import DEFAULT_THRESHOLDS, Threshold
from ms4watch.compliance.traces import FieldTest, Flow, Indicator, TraceVisit, judge, observations


@pytest.mark.parametrize("indicator, value, unit, verdict, threshold", [
    (Indicator.AMMONIA, 0.6, "mg/L", "exceeds", "ammonia >= 0.5 mg/L"),
    (Indicator.AMMONIA, 0.4, "mg/L", "below", "ammonia >= 0.5 mg/L"),
    (Indicator.SURFACTANTS, 0.25, "mg/L", "exceeds", "surfactants >= 0.25 mg/L"),
    (Indicator.FLUORIDE, 0.1, "mg/L", "below", "fluoride >= 0.25 mg/L"),
    (Indicator.POTASSIUM, 21, "mg/L", "exceeds", "potassium >= 20 mg/L"),       # FIELD_THRESHOLDS
    (Indicator.E_COLI, 240, "MPN/100 mL", "exceeds", "E. coli >= 235 CFU/100 mL"),
    (Indicator.TEMPERATURE, 30, "°C", "no_threshold", None),
])
def test_field_tests_are_judged_by_the_screening_thresholds(indicator, value, unit, verdict, threshold):
    got = judge(FieldTest(indicator, value, unit), DEFAULT_THRESHOLDS)
    assert (got.verdict, got.threshold) == (verdict, threshold)


def test_a_towns_own_threshold_wins_over_the_field_default():
    town = (Threshold(parameter="potassium", limit=5, unit="mg/L", source="the town's IDDE plan"),)
    assert judge(FieldTest(Indicator.POTASSIUM, 6, "mg/L"), town).verdict == "exceeds"
    assert judge(FieldTest(Indicator.AMMONIA, 6, "mg/L"), town).verdict == "no_threshold"


@pytest.mark.parametrize("test, says", [
    (lambda: FieldTest(Indicator.AMMONIA, 1, "ppm"), "ammonia: unit 'ppm' is not one of mg/L"),
    (lambda: FieldTest(Indicator.E_COLI, -1, "CFU/100 mL"), "below zero"),
    (lambda: FieldTest(Indicator.FLUORIDE, float("nan"), "mg/L"), "not a number"),
])
def test_a_bad_field_test_is_refused(test, says):
    with pytest.raises(ComplianceError, match=says):
        test()


def test_the_latest_visit_at_a_structure_counts():
    t0 = datetime(2026, 6, 1, 15, tzinfo=timezone.utc)

    def v(i, structure, flow):
        return TraceVisit(i, 1, structure, t0 + timedelta(minutes=i), "J. Rivera", flow, None, None, "")
    flow, dry = observations([v(1, "MH-2", Flow.ABSENT), v(2, "MH-3", Flow.ABSENT), v(3, "MH-2", Flow.PRESENT)])
    assert (flow, dry) == (["MH-2"], ["MH-3"])
