"""Reference flows and volumes against hand computation and published relations."""

from __future__ import annotations

import math

import pytest

from ms4watch.edge.calibration import ratings as r


def test_vnotch_90_by_hand():
    assert r.vnotch_90_cfs(1.0) == pytest.approx(2.49)                         # 2.49 · 1^2.48
    assert r.vnotch_90_cfs(0.5) == pytest.approx(2.49 * math.exp(2.48 * math.log(0.5)))
    assert r.vnotch_90_cfs(0.5) == pytest.approx(0.44632, abs=5e-5)
    assert r.vnotch_90_cfs(0.0) == 0.0


@pytest.mark.parametrize("head_ft", [0.2, 0.3, 0.5, 0.75, 1.0, 1.25])
def test_vnotch_agrees_with_kindsvater_shen_within_one_percent(head_ft):
    """USBR WMM: for a fully contracted 90° notch, eq. 7-6 and the Kindsvater–Shen relation
    (eq. 7-3, Ce 0.578, kh 0.0029 ft) give comparable results over the valid heads."""
    ks = r.kindsvater_shen_cfs(head_ft, 90)
    assert r.vnotch_90_cfs(head_ft) == pytest.approx(ks, rel=0.01)


def test_kindsvater_shen_by_hand_at_one_foot():
    # 4.28 · 0.578 · tan 45° · (1.0029)^2.5
    assert r.kindsvater_shen_cfs(1.0) == pytest.approx(4.28 * 0.578 * 1.0029 ** 2.5)
    with pytest.raises(ValueError, match="90"):
        r.kindsvater_shen_cfs(0.5, 60)


def test_manning_full_12_inch_concrete_pipe_at_one_percent():
    # full: A = π/4, R = D/4 = 0.25 ft: Q = 1.486/0.013 · 0.785398 · 0.25^(2/3) · 0.1 = 3.563 ft³/s
    full = r.manning_pipe_cfs(1.0, 1.0, 0.01, r.manning_n("concrete"))
    assert full == pytest.approx(1.486 / 0.013 * math.pi / 4 * 0.25 ** (2 / 3) * 0.1)
    assert full == pytest.approx(3.563, abs=1e-3)


def test_manning_partly_full_hydraulic_elements():
    """Published hydraulic elements of a circular pipe (ASCE MOP 60): half full carries half
    the full flow; the most is carried near 0.94 D, about 1.08 × full."""
    full = r.manning_pipe_cfs(1.0, 1.0, 0.005, 0.013)
    assert r.manning_pipe_cfs(0.5, 1.0, 0.005, 0.013) == pytest.approx(full / 2)
    depths = [i / 1000 for i in range(1, 1001)]
    best = max(depths, key=lambda y: r.manning_pipe_cfs(y, 1.0, 0.005, 0.013))
    assert best == pytest.approx(0.938, abs=0.002)
    assert r.manning_pipe_cfs(best, 1.0, 0.005, 0.013) / full == pytest.approx(1.076, abs=0.002)


def test_circular_segment_by_hand():
    a, p = r.circular_segment(0.5, 1.0)            # half full: θ = π
    assert a == pytest.approx(math.pi / 8) and p == pytest.approx(math.pi / 2)
    with pytest.raises(ValueError, match="more than the pipe"):
        r.circular_segment(1.2, 1.0)


def test_area_velocity_and_bucket():
    assert r.area_velocity_cfs(math.pi / 8, 2.0) == pytest.approx(math.pi / 4)
    # 5 gal in 10 s = 0.5 gal/s = 30 gpm = 0.0668403 cfs
    q = r.volumetric_cfs(5, 10)
    assert q == pytest.approx(0.5 / 7.48052, rel=1e-5)
    assert r.cfs_to_gpm(q) == pytest.approx(30.0)


def test_rain_gauge_funnel_by_hand():
    # 8 in orifice: π·4² = 50.265 in²; 0.01 in per tip = 0.50265 in³ = 8.237 mL (makers' tables: 8.24 mL)
    assert r.funnel_tip_volume_ml(8, 0.01) == pytest.approx(8.237, abs=1e-3)
    assert r.expected_tips(473, 8, 0.01) == pytest.approx(57.42, abs=0.01)
    # 24.5 cm (9.646 in) orifice at 0.1 mm: π·12.25² cm² · 0.01 cm = 4.714 mL
    assert r.funnel_tip_volume_ml(24.5 / 2.54, 0.1 / 25.4) == pytest.approx(4.714, abs=1e-3)
