"""`ms4watch storms` reproduces published storm tables of real rain records."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from ms4watch.alerts.rainfiles import MM_PER_IN, read_rain
from ms4watch.alerts.rules.storms import StormParams, storm_events
from ms4watch.commands import storms as storms_cmd

RAINMAKER = "usgs_rainmaker_rain_test_2013-2014.rdb"
RAINMAKER_REF = "usgs_rainmaker_rain_test_2013-2014_REFERENCE_storm_summary.rdb"
TIPS = "separate_tbrg_cumulative_tips_2024.csv"
TIPS_REF = "separate_tbrg_cumulative_tips_2024_REFERENCE_storms.csv"


def _cli(args: list[str]) -> list[dict[str, str]]:
    app = typer.Typer()
    storms_cmd.register(app)

    @app.callback()
    def _root() -> None:  # keeps "storms" a sub-command
        pass

    res = CliRunner().invoke(app, ["storms", *args])
    assert res.exit_code == 0, res.output
    return list(csv.DictReader(io.StringIO(res.stdout)))


def _rainmaker_reference(path) -> pd.DataFrame:
    lines = path.read_text().splitlines()[2:]
    rows = [ln.split("\t") for ln in lines if ln.strip()]
    return pd.DataFrame({
        "start": pd.to_datetime([r[0].strip() for r in rows], format="%m/%d/%y %H:%M"),
        "end": pd.to_datetime([r[1].strip() for r in rows], format="%m/%d/%y %H:%M"),
        "depth_in": [float(r[2]) for r in rows],
    })


def test_rainmaker_all_158_storms_by_cli(shared_data):
    ref = _rainmaker_reference(shared_data / RAINMAKER_REF)
    assert len(ref) == 158
    ours = _cli([str(shared_data / RAINMAKER), "--inter-event", "2h", "--rainmaker-start"])
    assert len(ours) == len(ref)
    starts = pd.to_datetime([r["start"] for r in ours])
    ends = pd.to_datetime([r["end"] for r in ours])
    depths = [float(r["depth_in"]) for r in ours]
    assert list(starts) == list(ref["start"])
    assert list(ends) == list(ref["end"])
    assert [round(d, 3) for d in depths] == [round(d, 3) for d in ref["depth_in"]]
    # the ones at or above 0.5 in are the qualifying storms (16 in the reference)
    assert sum(r["qualifying"] == "true" for r in ours) == int((ref["depth_in"] >= 0.5).sum()) == 16


def test_rainmaker_start_option_is_what_makes_starts_match(shared_data):
    rec = read_rain(shared_data / RAINMAKER)
    ref = _rainmaker_reference(shared_data / RAINMAKER_REF)
    plain = storm_events(rec.rain_in, StormParams(inter_event=timedelta(hours=2)))
    got = plain["start"].dt.tz_localize(None)
    assert (got - ref["start"] == pd.Timedelta(minutes=1)).all()


def _separate_reference(path) -> pd.DataFrame:
    text = path.read_text(encoding="utf-8-sig").splitlines()
    i = next(k for k, ln in enumerate(text) if ln.startswith("StormID,"))
    rows = list(csv.reader(text[i + 2:]))
    rows = [r for r in rows if r and r[0].startswith("Ex_")]
    return pd.DataFrame({"start": pd.to_datetime([r[1] for r in rows]), "end": pd.to_datetime([r[2] for r in rows]),
                         "duration_h": [float(r[3]) for r in rows], "depth_mm": [float(r[4]) for r in rows]})


def test_separate_tip_log_11_storms(shared_data):
    ref = _separate_reference(shared_data / TIPS_REF)
    assert len(ref) == 11
    ours = _cli([str(shared_data / TIPS), "--tip", "0.2mm", "--inter-event", "4.61h",
                 "--min-depth", "0.2mm", "--min-duration", "0.2h"])
    assert len(ours) == 11
    starts = pd.to_datetime([r["start"] for r in ours])
    ends = pd.to_datetime([r["end"] for r in ours])
    mm = [float(r["depth_mm"]) for r in ours]
    assert list(ends) == list(ref["end"])
    # storms 2..11: identical starts and depths
    assert list(starts[1:]) == list(ref["start"][1:])
    assert mm[1:] == pytest.approx(list(ref["depth_mm"][1:]), abs=0.005)
    # storm 1: SEPARATE counts the logger-start row (count 0, 13:59:36) as a tip (README quirk);
    # the tips themselves give 32 x 0.2 mm = 6.4 mm from the first tip at 14:04:20.
    assert starts[0] == pd.Timestamp("2024-06-26 14:04:20") and ref["start"][0] == pd.Timestamp("2024-06-26 13:59:36")
    assert mm[0] == pytest.approx(ref["depth_mm"][0] - 0.2, abs=0.005) == pytest.approx(6.4, abs=0.005)


def test_separate_suppressed_storms_are_the_short_ones(shared_data):
    rec = read_rain(shared_data / TIPS, tip_in=0.2 / MM_PER_IN)
    all_storms = storm_events(rec.rain_in, StormParams(inter_event=timedelta(hours=4.61)))
    kept = storm_events(rec.rain_in, StormParams(inter_event=timedelta(hours=4.61),
                                                 min_depth_in=Decimal("0.2") / Decimal("25.4"),
                                                 min_duration=timedelta(hours=0.2)))
    assert len(all_storms) == 15 and len(kept) == 11
    dropped = all_storms[~all_storms["start"].isin(kept["start"])]
    assert (dropped["duration_h"] < 0.2).all()


def test_storms_cli_names_a_bad_file(tmp_path):
    p = tmp_path / "tips.csv"
    p.write_text("DateTime,CumulativeTips\n06/26/24 13:59:36,0\nnot a time,1\n")
    app = typer.Typer()
    storms_cmd.register(app)

    @app.callback()
    def _root() -> None:
        pass

    res = CliRunner().invoke(app, ["storms", str(p)])
    assert res.exit_code == 2
    assert f"{p}:3: DateTime" in res.output


FIXED = "separate_tbrg_fixed_interval_2022-2023.csv"
FIXED_REF = "separate_tbrg_fixed_interval_2022-2023_REFERENCE_storms.csv"


def test_separate_fixed_interval_45_storms(shared_data):
    ref = _separate_reference(shared_data / FIXED_REF)
    assert len(ref) == 45
    ours = _cli([str(shared_data / FIXED), "--inter-event", "14.88h", "--min-depth", "0.2mm", "--min-duration", "0.2h"])
    assert len(ours) == 45
    assert list(pd.to_datetime([r["start"] for r in ours])) == list(ref["start"])
    assert list(pd.to_datetime([r["end"] for r in ours])) == list(ref["end"])
    assert [float(r["depth_mm"]) for r in ours] == pytest.approx(list(ref["depth_mm"]), abs=0.005)
    assert [round(float(r["duration_h"]), 2) for r in ours] == pytest.approx(list(ref["duration_h"]), abs=0.006)
    # four storms of 0.5 in (12.7 mm) or more, as the data README lists
    assert [r["start"][:10] for r in ours if r["qualifying"] == "true"] == [
        "2022-12-26", "2023-05-05", "2023-06-18", "2023-08-31"]


def test_fixed_interval_clock_jumps_are_ordered_by_time(shared_data):
    # the logger clock falls back at 2022-11-06 01:59:29 -> 01:00:29 and at a relaunch on
    # 2022-11-19; no rain falls within 6 h of either, so ordering rows by time changes no storm.
    rec = read_rain(shared_data / FIXED)
    assert rec.rain_in.index.is_monotonic_increasing
    for jump in ("2022-11-06 01:00", "2022-11-19 13:14"):
        t = pd.Timestamp(jump, tz="UTC")
        near = rec.rain_in[t - pd.Timedelta(hours=6):t + pd.Timedelta(hours=6)]
        assert len(near) > 100 and (near == 0).all()


def test_rainmaker_peak_intensities(shared_data):
    """p5/p15/p60max of Rainmaker's intensity table (in/h, 3 decimals); it leaves a peak
    blank (-9) exactly when the storm is shorter than the window."""
    rec = read_rain(shared_data / RAINMAKER)
    ours = storm_events(rec.rain_in, StormParams(inter_event=timedelta(hours=2), start_offset=timedelta(minutes=1)))
    lines = (shared_data / "usgs_rainmaker_rain_test_2013-2014_REFERENCE_intensity.rdb").read_text().splitlines()[2:]
    ref = [ln.split("\t") for ln in lines if ln.strip()]
    assert len(ref) == len(ours) == 158
    for col, window, name in ((3, 5, "peak_i5_in_h"), (5, 15, "peak_i15_in_h"), (7, 60, "peak_i60_in_h")):
        want = [float(r[col]) for r in ref]
        got = ours[name].tolist()
        short = (ours["duration_h"] * 60 < window).tolist()
        assert [w < 0 for w in want] == short
        assert [g for g, w in zip(got, want) if w >= 0] == pytest.approx([w for w in want if w >= 0], abs=0.0006)
