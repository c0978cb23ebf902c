"""A rule's parameters and threshold as the SMO reads them: words with units, never a key,
a Python list or a dict (issue 23: "floor gpm", "rain gauges ['RG-1']", "qc {'fail_span'…}",
"threshold: {"label": "flow floor"…}" on the incident page and in the packet)."""

from ms4watch.alerts.kinds.params import param_lines, threshold_words

DWF = {"floor_gpm": 0.5, "min_duration_min": 30.0, "dry_lookback_h": 72.0, "dry_max_rain_in": 0.1,
       "rain_max_gap_min": 60.0, "dry_after_rain_h": 6.0, "rain_gauges": ["RG-1", "RG-2"]}
TURBIDITY = {"delta_ntu": 5.0, "fraction": 0.1, "min_duration_min": 15.0, "backstop_ntu": 250.0,
             "align_tolerance_min": 5.0, "upstream": "US-1", "downstream": "DS-1",
             "qc": {"fail_span": [0.0, 4000.0], "spike_fail": 200.0, "flat_line_fail_h": 12.0,
                    "flat_line_tolerance": 0.0}}


def _text(lines):
    return "\n".join(f"{label}: {value}" for label, value in lines)


def test_dry_weather_flow_parameters_read_as_words_with_units():
    lines = dict(param_lines(DWF))
    assert lines["Flow floor"] == "0.5 gpm"
    assert lines["Flow lasting at least"] == "30 min"
    assert lines["Rain looked back over"] == "72 h"
    assert lines["Dry when rain is under"] == "0.1 in"
    assert lines["Rain gauges"] == "RG-1, RG-2"
    assert lines["No rain in the last"] == "6 h"


def test_turbidity_parameters_and_quality_checks_read_as_words():
    text = _text(param_lines(TURBIDITY))
    assert "Downstream above upstream by more than: 5 NTU" in text
    assert "or by more than: 10 %" in text
    assert "Upstream station: US-1" in text
    assert "0 to 4000 NTU" in text and "200" in text and "12 h" in text


def test_no_key_list_or_dict_leaks_and_order_is_kept():
    for params in (DWF, TURBIDITY, {"after_storm_h": 24.0, "routine_days": 7.0, "routine_per_period": 1,
                                    "qualifying_in": 0.5},
               {"inter_event_h": 6.0, "min_depth_in": 0.0, "double_tip_s": 1.0, "warn_days": 14.0}):
        lines = param_lines(params)
        text = _text(lines)
        assert "_" not in text and "[" not in text and "{" not in text and "'" not in text, text
        assert len(lines) == len(params)


def test_an_unknown_parameter_still_reads_without_underscores():
    assert param_lines({"new_thing_h": 3.0}) == [("New thing", "3 h")]
    assert param_lines({"mystery": "x"}) == [("Mystery", "x")]


def test_thresholds_read_as_a_sentence():
    assert threshold_words({"label": "flow floor", "value": 0.5, "unit": "gpm"}) == "flow floor: 0.5 gpm"
    assert threshold_words({"label": "upstream + max(5 NTU, 10 %)", "kind": "turbidity_contrast", "delta": 5.0,
                            "fraction": 0.1, "unit": "NTU"}) == "upstream + max(5 NTU, 10 %)"
    assert threshold_words(None) == ""
