"""What each procedure decides, with numbers computed by hand."""

from __future__ import annotations

import pytest

from ms4watch.contract.calibration import Fit, FitKind, Result, Standard
from ms4watch.edge.calibration import procedures as P

STDS = [Standard(value=v, unit="FNU", kind="stablcal", lot=f"L{v}") for v in (0, 20, 100, 800)]
RAW_LINEAR = [0.4, 22.4, 110.4, 880.4]              # raw = 1.1 · standard + 0.4


def test_turbidity_out_of_criteria_is_refitted_and_passes_as_left():
    out = P.turbidity(STDS, RAW_LINEAR, Fit(), RAW_LINEAR)
    assert [p.ok for p in out.as_found] == [True, False, False, False]      # 0.4 within 0.5; 2.4 > 1.0; …
    assert out.as_found[1].error == pytest.approx(2.4) and out.as_found[1].error_pct == pytest.approx(12.0)
    assert out.adjusted and out.fit.kind is FitKind.LINEAR
    assert out.fit.slope == pytest.approx(1 / 1.1) and out.fit.offset == pytest.approx(-0.4 / 1.1)
    assert all(p.ok for p in out.as_left)
    assert [p.reading for p in out.as_left] == pytest.approx([0, 20, 100, 800], abs=1e-9)
    assert out.result is Result.PASS and out.problems == ()


def test_turbidity_within_criteria_keeps_its_correction():
    raws = [0.2, 20.6, 103.0, 790.0]
    prev = Fit(slope=1.0, offset=0.1)
    out = P.turbidity(STDS, raws, prev, None)
    assert not out.adjusted and out.fit == prev and out.as_left == ()
    assert [p.reading for p in out.as_found] == pytest.approx([0.3, 20.7, 103.1, 790.1])
    assert out.result is Result.PASS


def test_turbidity_as_left_exactly_on_the_five_percent_boundary_passes_a_hundredth_past_fails():
    fit_raw = [0.0, 20.0, 100.0, 800.0]               # the sensor needs no correction: identity fit
    on = P.turbidity(STDS, fit_raw, Fit(), [0.0, 20.0, 105.0, 800.0], adjust="always", fit_kind="linear", unit="FNU")
    assert on.result is Result.PASS
    past = P.turbidity(STDS, fit_raw, Fit(), [0.0, 20.0, 105.01, 800.0], adjust="always", fit_kind="linear",
                       unit="FNU")
    assert past.result is Result.FAIL
    assert past.problems == ("as-left 100 FNU stablcal lot L100: read 105.01 FNU, +5.01 FNU (+5.01 %), limit ±5 FNU",)


def test_turbidity_half_ntu_boundary_at_low_standards():
    stds = [Standard(value=v, unit="NTU", kind="formazin") for v in (0, 10)]
    ok = P.turbidity(stds, [0.5, 10.5], Fit(), None, unit="NTU")
    assert ok.result is Result.PASS and not ok.adjusted
    out = P.turbidity(stds, [0.51, 10.5], Fit(), None, adjust="never", unit="NTU")
    assert out.result is Result.FAIL and out.problems[0].startswith("as-found 0 NTU formazin: read 0.51 NTU")


def test_turbidity_piecewise_when_the_response_bends():
    raws = [0.0, 20.0, 100.0, 700.0]
    out = P.turbidity(STDS, raws, Fit(), raws)
    assert out.fit.kind is FitKind.PIECEWISE and out.result is Result.PASS
    assert out.details["fit_kind"] == "piecewise"


TIP_ML = 3.141592653589793 * 4 ** 2 * 0.01 * 16.387064     # 8 in orifice, 0.01 in: 8.2370 mL
EXPECTED = 473 / TIP_ML                                      # 57.424 tips


def test_rain_volume_within_the_makers_tolerance():
    out = P.rain_volume(473, 8, 0.01, 0.01, 57, None, 2.0)
    d = out.details
    assert d["tip_volume_ml"] == pytest.approx(TIP_ML, abs=1e-4) and d["expected_tips"] == pytest.approx(EXPECTED,
                                                                                                          abs=1e-4)
    assert out.result is Result.PASS and out.adjusted                   # -0.74 %, within ±2 %
    assert out.fit.slope == pytest.approx(EXPECTED / 57, abs=1e-6)      # the correction factor
    assert out.as_found[0].reference == pytest.approx(EXPECTED * 0.01, abs=1e-8) and out.as_found[0].reading == 0.57


def test_rain_volume_outside_the_tolerance_fails_and_keeps_the_gauge_as_it_was():
    prev = Fit(slope=1.01)
    out = P.rain_volume(473, 8, 0.01, 0.01, 52, prev, 2.0)
    assert out.result is Result.FAIL and out.fit_in_force == prev
    assert "counted 52 tips for 57.42 expected (-9.44 %)" in out.problems[0]


def test_level_zero_moves_the_offset_only():
    prev = Fit(slope=1.0, offset=0.0)
    out = P.level_zero(0.52, 0.48, prev, 0.481, 0.01, unit="ft")
    assert not out.as_found[0].ok and out.as_found[0].error == pytest.approx(-0.04)
    assert out.fit.slope == 1.0 and out.fit.offset == pytest.approx(0.04)
    assert out.as_left[0].reading == pytest.approx(0.521) and out.result is Result.PASS


def test_flow_against_a_vnotch_weir():
    ref = P.flow_reference("vnotch", "gpm", head_ft=0.5)
    assert ref.value == pytest.approx(2.49 * 0.5 ** 2.48 * 448.831169, rel=1e-6)     # cfs → gpm
    out = P.flow_check([ref], [180.0], None, [181.0], 10.0, "gpm")
    assert not out.as_found[0].ok and out.as_found[0].error_pct == pytest.approx(100 * (180 - ref.value) / ref.value,
                                                                                 abs=1e-4)
    assert out.fit.slope == pytest.approx(ref.value / 180.0) and out.fit.offset == 0
    assert out.result is Result.PASS and out.details["head_ft"] == 0.5


def test_flow_references_in_the_sensors_unit():
    pipe = P.flow_reference("manning", "cfs", depth_ft=1.0, diameter_in=12, slope=0.01, material="concrete")
    assert pipe.value == pytest.approx(3.563, abs=1e-3)
    bucket = P.flow_reference("bucket", "gpm", volume_gal=5, seconds=10)
    assert bucket.value == pytest.approx(30.0)
    av = P.flow_reference("area_velocity", "cfs", depth_ft=0.5, diameter_in=12, velocity_ft_s=2.0)
    assert av.value == pytest.approx(3.141592653589793 / 4)
    with pytest.raises(ValueError, match="needs the head"):
        P.flow_reference("vnotch", "gpm")


def test_a_percentage_past_the_limit_is_never_shown_as_the_limit():
    # 58 tips for 57.4236 expected (473 mL, 8 in funnel, 0.01 in tips) is +1.0038 %: outside ±1 %
    out = P.rain_volume(473, 8, 0.01, 0.01, 58, None, 1.0)
    assert out.result is Result.FAIL
    assert "(+1.004 %)" in out.problems[0] and "(+1 %)" not in out.problems[0]
    assert P.describe_point("as found", out.as_found[0], "in").count("+1.004 %") == 1
    assert P.pct_text(1.0, 1.0) == "+1" and P.pct_text(-5.0004, 5.0) == "-5.0004"
    assert P.pct_text(4.99996, 5) == "+4.99996"


def test_an_expired_standard_is_refused_unless_a_reason_is_recorded():
    from datetime import date
    stds = [Standard(value=0, unit="NTU", kind="stablcal"),
            Standard(value=100, unit="NTU", kind="formazin", lot="F100", expires=date(2019, 6, 30))]
    with pytest.raises(ValueError, match=r"100 NTU formazin lot F100 expired on 2019-06-30 \(the run is on "
                                         r"2026-12-01\).*--expired-ok"):
        P.check_expiry(stds, date(2026, 12, 1), None)
    marked = P.check_expiry(stds, date(2026, 12, 1), "no other 100 NTU standard on the truck")
    assert marked[1].note == "EXPIRED on 2019-06-30, used on 2026-12-01: no other 100 NTU standard on the truck"
    assert marked[0] == stds[0]
    assert P.check_expiry(stds, date(2019, 6, 30), None) == stds            # good through its expiry day
