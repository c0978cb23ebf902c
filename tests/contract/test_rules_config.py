"""Rule overrides may only tighten the law; every range of REGULATIONS.md is enforced at load,
the boundaries themselves allowed."""

import pytest
from pydantic import ValidationError

from ms4watch.contract.rules_config import RuleSettings


@pytest.mark.parametrize("field,value", [
    ("inspection_after_storm", "24h"), ("inspection_after_storm", "1h"),
    ("routine_inspection_interval", "7d"), ("routine_inspection_interval", "1d"),
    ("turbidity_backstop_ntu", 250), ("turbidity_backstop_ntu", 100),
    ("turbidity_delta_ntu", 5), ("turbidity_delta_ntu", 25), ("turbidity_fraction", 0.1), ("turbidity_fraction", 0.2),
    ("dry_max_rain_in", "0.05"), ("dry_max_rain_in", "0.10"), ("dry_lookback", "48h"), ("dry_lookback", "72h"),
    ("storm_min_depth_in", "0.25"), ("storm_min_depth_in", "0.50"),
    ("storm_inter_event", "2h"), ("storm_inter_event", "24h"), ("double_tip", "0.1s"), ("double_tip", "1s"),
])
def test_the_boundaries_are_allowed(field, value):
    RuleSettings(**{field: value})


@pytest.mark.parametrize("field,value,text", [
    ("inspection_after_storm", "86401s", "at most 24h"),
    ("inspection_after_storm", "0s", "more than 0"),
    ("routine_inspection_interval", "8d", "from 1d to 7d"),
    ("routine_inspection_interval", "0d", "from 1d to 7d"),
    ("routine_inspection_interval", "6.5d", "whole days"),
    ("turbidity_backstop_ntu", 250.1, "at most 250 NTU"),
    ("turbidity_backstop_ntu", 0, "more than 0"),
    ("turbidity_delta_ntu", 4.9, "between 5 and 25 NTU"),
    ("turbidity_fraction", 0.21, "between 0.1 and 0.2"),
    ("dry_max_rain_in", "0.11", "between 0.05 and 0.10 in"),
    ("dry_max_rain_in", "0.04", "between 0.05 and 0.10 in"),
    ("dry_lookback", "47h", "between 48h and 72h"),
    ("storm_min_depth_in", "0.24", "between 0.25 and 0.50 in"),
    ("storm_inter_event", "25h", "between 2h and 24h"),
    ("double_tip", "0.05s", "between 0.1s and 1s"),
])
def test_outside_the_range_is_refused_naming_it(field, value, text):
    with pytest.raises(ValidationError) as e:
        RuleSettings(**{field: value})
    assert text in str(e.value) and field in str(e.value)
