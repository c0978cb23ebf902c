"""Turbidity contrast on the real Esopus Creek record (USGS): tributaries upstream vs Coldbrook."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ms4watch.alerts.rules.qc import qartod_fail
from ms4watch.alerts.rules.turbidity import ContrastParams, align_pair, exceeds, turbidity_contrast

FILE = "usgs_esopus_creek_ny_turbidity_15min.csv"


@pytest.fixture(scope="module")
def esopus(request):
    from tests.conftest import SHARED_DATA
    if not (SHARED_DATA / FILE).exists():
        pytest.skip("shared data not found")
    df = pd.read_csv(SHARED_DATA / FILE, dtype=str)
    df["t"] = pd.to_datetime(df["datetime_utc"], utc=True)

    def site(no: str) -> pd.Series:
        d = df[df["site_no"] == no]
        dts = pd.to_numeric(d["turb_dts12_fnu"], errors="coerce")
        ana = pd.to_numeric(d["turb_analite_fnu"], errors="coerce")
        s = pd.Series(dts.fillna(ana).to_numpy(), index=pd.DatetimeIndex(d["t"])).dropna()
        return s[~s.index.duplicated()].sort_index()

    return {"coldbrook": site("01362500"), "stony_clove": site("01362370"), "little_beaver": site("01362497")}


@pytest.mark.parametrize("upstream", ["stony_clove", "little_beaver"])
def test_contrast_episodes_are_real_sustained_exceedances(esopus, upstream):
    up, down = esopus[upstream], esopus["coldbrook"]
    lo, hi = max(up.index[0], down.index[0]), min(up.index[-1], down.index[-1])
    up, down = up[lo:hi], down[lo:hi]
    p = ContrastParams()
    up_bad, down_bad = qartod_fail(up), qartod_fail(down)
    eps, nev = turbidity_contrast(up, down, upstream_bad=up_bad, downstream_bad=down_bad, params=p)
    assert len(eps) > 10
    # docs/rules.md's table: runs end at silences of Coldbrook's probe (> 45 min), not at a
    # missed report or two (30-45 min gaps)
    hours = round((eps["end"] - eps["start"]).dt.total_seconds().sum() / 3600)
    assert (len(eps), hours) == {"stony_clove": (98, 824), "little_beaver": (355, 874)}[upstream]
    # Coldbrook has data in the overlap only from 2023-07-12: every episode lies in it
    assert eps["start"].min() >= pd.Timestamp("2023-07-12", tz="UTC")
    al = align_pair(up, down, p.align_tolerance)
    ok = exceeds(al["up"].to_numpy(), al["down"].to_numpy(), p)
    for e in eps.itertuples():
        assert (e.end - e.start) >= p.min_duration
        for t in (e.start, e.end):   # each end meets the contrast (aligned) or the backstop (downstream alone)
            aligned = t in al.index and bool(exceeds(al.loc[[t], "up"].to_numpy(), al.loc[[t], "down"].to_numpy(), p)[0])
            assert aligned or down[t] > p.backstop_ntu
        inside = (al.index >= e.start) & (al.index <= e.end)
        if e.basis == "contrast":
            assert ok[inside].mean() > 0.5
        if not np.isnan(e.max_delta_ntu):
            assert e.max_delta_ntu == pytest.approx((al["down"] - al["up"])[inside & ok].max())
        else:
            assert e.basis == "backstop"
    # the mid-July 2023 storms in the Catskills give a strong contrast (> 100 NTU)
    july = eps[(eps["start"] >= pd.Timestamp("2023-07-15", tz="UTC")) & (eps["start"] < pd.Timestamp("2023-07-18", tz="UTC"))]
    assert july["max_delta_ntu"].max() > 100


def test_a_spike_at_coldbrook_does_not_open_an_episode(esopus):
    up = esopus["little_beaver"]["2023-09-01":"2023-09-05"]
    down = up.copy() + 1.0
    down.index = down.index + pd.Timedelta(minutes=1)
    down.iloc[len(down) // 2] = 800.0
    eps, _ = turbidity_contrast(up, down, upstream_bad=qartod_fail(up), downstream_bad=qartod_fail(down))
    assert eps.empty
    assert np.isfinite(down.to_numpy()).all()
