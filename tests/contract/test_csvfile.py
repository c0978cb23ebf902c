"""The one CSV writer: a cell a spreadsheet would run as a formula is written as text (a
leading ``'``, OWASP "CSV Injection"), numbers stay numbers; every CSV the project writes
goes through it."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ms4watch.alerts.notifiers.email.chart import csv_excerpt
from ms4watch.alerts.storm_table import write_storm_table
from ms4watch.contract.csvfile import csv_text, safe_cell
from ms4watch.contract.readings_csv import read_readings_csv, write_readings_csv

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = ['=HYPERLINK("http://evil.test","x")', "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd",
            "\t=1+1", "\r=1+1", "-", "=", "-inf", "+5"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_formula_is_written_as_text(payload):
    [row] = list(csv.reader(io.StringIO(csv_text(["a"], [[payload]]), newline="")))[1:]
    assert row == ["'" + payload]


@pytest.mark.parametrize("value, written", [(-3, "-3"), (-2.5, "-2.5"), (np.float64(-1e-7), "-1e-07"),
                                            ("-3.25", "-3.25"), ("-1e-3", "-1e-3"), (0, "0"), (None, ""), (True, "True"),
                                            ("Main St", "Main St"), ("a=b", "a=b"), ("O'Brien", "O'Brien")])
def test_numbers_stay_numbers_and_plain_text_stays_as_it_is(value, written):
    assert csv_text(["a", "b"], [[value, 1]]).splitlines()[1] == f"{written},1"


def test_safe_cell_keeps_the_type_of_a_number():
    assert safe_cell(-4) == -4 and safe_cell(-0.5) == -0.5 and safe_cell("-x") == "'-x"


def test_the_storm_table_readings_csv_and_chart_excerpt_go_through_it(tmp_path):
    out = io.StringIO()
    write_readings_csv([("2026-06-01T00:00:00Z", "=cmd", "rain", -1.5, "@in")], out)
    assert out.getvalue().splitlines()[1] == "2026-06-01T00:00:00Z,'=cmd,rain,-1.5,'@in"
    df = pd.DataFrame({"=HYPERLINK(1)": [-1.5, np.nan]}, index=pd.date_range("2026-06-01", periods=2, freq="5min",
                                                                               tz="UTC"))
    assert csv_excerpt(df).decode().splitlines() == ["time,'=HYPERLINK(1)", "2026-06-01T00:00:00Z,-1.5",
                                                     "2026-06-01T00:05:00Z,"]
    t = pd.Timestamp("2026-06-01", tz="UTC")
    storms = pd.DataFrame({"start": [t], "end": [t], "depth_uin": [510_000], "duration_h": [2.0],
                           "peak_i5_in_h": [np.nan], "peak_i15_in_h": [0.5], "peak_i60_in_h": [0.25],
                           "qualifying": [True]})
    table = io.StringIO()
    write_storm_table(storms, table, naive=False)
    assert table.getvalue().splitlines()[1] == ("2026-06-01T00:00:00+00:00,2026-06-01T00:00:00+00:00,0.51,12.95,"
                                                "2.0000,,0.500,0.250,true")


def test_a_readings_csv_written_reads_back(tmp_path):
    path = tmp_path / "r.csv"
    with open(path, "w", newline="") as f:
        write_readings_csv([("2026-06-01T00:00:00Z", "OF-1", "flow", -0.25, "gpm")], f)
    res = read_readings_csv(path, strict=True)
    assert res.frame[["station", "value", "unit"]].values.tolist() == [["OF-1", -0.25, "gpm"]]


def test_no_csv_is_written_but_through_the_one_writer():
    """``csv.writer``, ``DictWriter`` and pandas' ``to_csv`` appear only in contract/csvfile.py."""
    found = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".venv/", "tests/", "build/")) or rel == "contract/csvfile.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bcsv\.writer\(|DictWriter\(|\.to_csv\(|write\(f\"[^\"]*,\{", line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []
