"""Lab-result import: pint conversions (µg/L, CFU and MPN per 100 mL, pH), detection-limit
qualifiers compared with the screening thresholds, and a file with bad rows refused whole,
each bad row named by its line and field."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from ms4watch.compliance.errors import ComplianceError, ImportRefused
from ms4watch.compliance.labs import DEFAULT_THRESHOLDS, convert, load_thresholds, parse_file
from ms4watch.compliance.store import ComplianceStore

NY = ZoneInfo("America/New_York")
HEADER = "sample,parameter,value,unit,method,detection_limit,qualifier,analysed_at,lab\n"


def _parse(body: str, known=("S-2026-001", "S-2026-002")):
    ids = {n: i for i, n in enumerate(known, 1)}
    return parse_file("results.csv", (HEADER + body).encode(), sample_id=ids.get, thresholds=DEFAULT_THRESHOLDS, tz=NY)


def test_units_convert_with_pint_including_count_units():
    assert convert(750, "µg/L", "mg/L") == pytest.approx(0.75)
    assert convert(750, "ug/L", "mg/L") == pytest.approx(0.75)
    assert convert(2.4, "CFU/mL", "CFU/100 mL") == pytest.approx(240)
    assert convert(240, "MPN/100mL", "CFU/100 mL") == pytest.approx(240)
    with pytest.raises(ValueError, match="cannot be converted"):
        convert(1, "mg/L", "CFU/100 mL")


def test_results_compared_in_the_thresholds_units_with_detection_limits():
    parsed = _parse(
        "S-2026-001,Ammonia-N,750,µg/L,EPA 350.1,50,,2026-06-03 10:00,Capital Lab\n"        # 0.75 mg/L >= 0.5
        "S-2026-001,Surfactants (MBAS),<0.05,mg/L,SM 5540 C,0.05,,,Capital Lab\n"            # not detected, DL < 0.25
        "S-2026-001,E. coli,2.4,CFU/mL,SM 9222 B,1,J,,Capital Lab\n"                         # 240 CFU/100 mL, estimated
        "S-2026-002,Ammonia-N,ND,mg/L,EPA 350.1,1.0,U,,Capital Lab\n"                        # DL 1.0 > 0.5: can't tell
        "S-2026-002,E. coli,>2419.6,MPN/100 mL,SM 9223 B,1,,,Capital Lab\n"                  # above the tray's range
        "S-2026-002,pH,9.1,s.u.,SM 4500-H+ B,,,,Capital Lab\n"
        "S-2026-002,Conductivity,412,uS/cm,SM 2510 B,,,,Capital Lab\n")
    got = [(r["parameter"], r["verdict"], r["censor"], r["qualifier"], r["value_std"] and round(r["value_std"], 3),
            r["threshold"]) for r in parsed.rows]
    assert got == [
        ("Ammonia-N", "exceeds", "", "", 0.75, "ammonia >= 0.5 mg/L"),
        ("Surfactants (MBAS)", "not_detected", "<", "", 0.05, "surfactants >= 0.25 mg/L"),
        ("E. coli", "exceeds", "", "J", 240.0, "E. coli >= 235 CFU/100 mL"),
        ("Ammonia-N", "indeterminate", "<", "U", None, "ammonia >= 0.5 mg/L"),
        ("E. coli", "exceeds", ">", "", 2419.6, "E. coli >= 235 CFU/100 mL"),
        ("pH", "exceeds", "", "", 9.1, "pH (high) >= 8.5 s.u."),
        ("Conductivity", "no_threshold", "", "", None, None),
    ]
    assert parsed.rows[0]["analysed_at"] == "2026-06-03T14:00:00+00:00"     # local time of the town
    assert parsed.rows[3]["dl_std"] == 1.0 and parsed.lab == "Capital Lab"


def test_a_file_with_bad_rows_is_refused_whole_naming_each_line(tmp_path):
    store = ComplianceStore(tmp_path / "c.db", clock=lambda: datetime(2026, 6, 3, tzinfo=timezone.utc))
    s = store.add_sample(station="OF-1", taken_at=datetime(2026, 6, 2, 12, tzinfo=timezone.utc), source="field",
                         collected_by="J. Rivera", by="smo")
    body = (f"{s.number},Ammonia-N,0.8,mg/L,EPA 350.1,0.05,,,\n"
            "S-2099-001,Ammonia-N,0.8,mg/L,EPA 350.1,0.05,,,\n"               # line 3: unknown sample
            f"{s.number},E. coli,lots,CFU/100 mL,SM 9223 B,1,,,\n"             # line 4: not a number
            f"{s.number},Ammonia-N,0.8,mg/LL,EPA 350.1,,,,\n"                  # line 5: unknown unit
            f"{s.number},Ammonia-N,0.8,CFU/100 mL,EPA 350.1,,,,\n"             # line 6: wrong dimension
            f"{s.number},Fluoride,0.1,mg/L,,,Q,,\n")                           # line 7: method, qualifier
    ids = {s.number: s.id}
    with pytest.raises(ImportRefused) as e:
        parse_file("batch-7.csv", (HEADER + body).encode(), sample_id=ids.get, thresholds=DEFAULT_THRESHOLDS, tz=NY)
    lines = str(e.value).splitlines()
    assert lines[0] == "batch-7.csv:3: sample: no sample 'S-2099-001' recorded"
    assert lines[1] == "batch-7.csv:4: value: 'lots' is not a number (or <DL, >bound, ND)"
    assert lines[2].startswith("batch-7.csv:5: unit: 'mg/LL' is not a unit")
    assert lines[3].startswith("batch-7.csv:6: unit: 'CFU/100 mL' cannot be converted to 'mg/L'")
    assert lines[4] == "batch-7.csv:7: method: empty (e.g. EPA 350.1, SM 9223 B)"
    assert lines[5].startswith("batch-7.csv:7: qualifier: 'Q' is not one of")
    assert store.sample(s.id).results == ()                                  # nothing half-imported


def test_a_header_without_the_columns_is_refused():
    with pytest.raises(ImportRefused, match=r"results.csv:1: the header names no unit, method column"):
        parse_file("results.csv", b"sample,parameter,value\nS-1,pH,7\n", sample_id=lambda n: 1,
                   thresholds=DEFAULT_THRESHOLDS, tz=NY)


def test_a_town_overrides_the_thresholds(tmp_path):
    p = tmp_path / "screening-thresholds.yaml"
    p.write_text("- {parameter: ammonia, aliases: [ammonia-n], limit: 1.0, unit: mg/L, source: county health}\n")
    mine = load_thresholds(p)
    parsed = parse_file("r.csv", (HEADER + "S-1,Ammonia-N,0.75,mg/L,EPA 350.1,,,,\n").encode(),
                        sample_id=lambda n: 1, thresholds=mine, tz=NY)
    assert parsed.rows[0]["verdict"] == "below"
    p.write_text("- {parameter: ammonia, limit: 1.0, unit: bogons/L, source: x}\n")
    with pytest.raises(Exception, match=r"screening-thresholds.yaml: \[0\]"):
        load_thresholds(p)
    # a scalar of a date's form that is no date (YAML reads 2026-02-30 as one): the file's error, not datetime's
    p.write_text("- {parameter: ammonia, limit: 1.0, unit: mg/L, source: 2026-02-30}\n")
    with pytest.raises(ComplianceError, match=r"screening-thresholds.yaml: cannot read the screening thresholds: "
                                              r".*2026-02-30 is not a date \(day is out of range for month\)"):
        load_thresholds(p)


@pytest.mark.timeout(20)
def test_a_unit_that_is_an_expression_is_refused_without_evaluating_it():
    # pint's expression parser would compute 10**10**7 (a ten-million-digit integer holding
    # the GIL for 10-25 s, every page, ingest and alerting stopped): the unit is matched, never evaluated
    with pytest.raises(ImportRefused) as e:
        _parse("S-2026-001,Ammonia-N,0.8,10**10**7 mg/L,EPA 350.1,0.05,,,\n"
               "S-2026-001,Fluoride,0.1,mg/L,EPA 300.0,0.05,,,\n")
    assert str(e.value).splitlines() == ["results.csv:2: unit: '10**10**7 mg/L' is not a unit the lab import "
                                         "knows (e.g. mg/L, ug/L, CFU/100 mL, MPN/100mL, NTU, FNU, s.u.)"]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("unit", ["mg/L*1e308", "(mg/L)**99", "(mg)/L", "mg/L**9", "mg**2/L", "2 mg/L", "mg/L/L",
                                  "mg/(100 mL)", "CFU/100000000000000000000 mL", "mg/L+1", "mg/L; 9**9**9",
                                  "mg/L 1e3", "mg/10**10**7L", "exp(mg)/L", "mg/L" + "/L" * 500])
def test_units_that_look_evaluated_are_refused(unit):
    with pytest.raises(ImportRefused, match=r"results.csv:2: unit: .* is not a unit the lab import knows"):
        _parse(f"S-2026-001,Ammonia-N,0.8,{unit},EPA 350.1,0.05,,,\n")


@pytest.mark.parametrize("unit, to, factor", [("mg/l", "mg/L", 1), ("ng/L", "mg/L", 1e-6), ("μg/L", "mg/L", 1e-3),
                                              ("cfu/100ml", "CFU/100 mL", 1), ("MPN / 100 mL", "CFU/100 mL", 1),
                                              ("CFU/mL", "CFU/100 mL", 100), ("ppm", "ppm", 1), ("pH units", "s.u.", 1),
                                              ("uS/cm", "mS/cm", 1e-3), ("umho/cm", "uS/cm", 1)])
def test_the_units_a_lab_writes_are_known(unit, to, factor):
    assert convert(1, unit, to) == pytest.approx(factor)


def test_turbidity_units_are_known_and_ntu_and_fnu_are_kept_apart():
    """Issue 23: "'NTU' is not a unit pint knows". NTU (EPA 180.1) and FNU (ISO 7027) both
    parse, and neither converts into the other: they are different methods."""
    import pytest as _pytest
    from ms4watch.compliance.labs import convert, parse_unit
    assert parse_unit("NTU") is not None and parse_unit("FNU") is not None
    assert convert(12, "NTU", "NTU") == 12
    with _pytest.raises(ValueError, match="cannot be converted"):
        convert(12, "NTU", "FNU")


def test_the_thresholds_written_in_the_code_are_valid_ones():
    """The defaults and the field tests' are built without validation (``Threshold.builtin``:
    no pint at import, below): each is what validating it gives, its unit one pint knows."""
    from ms4watch.compliance.labs import Threshold
    from ms4watch.compliance.traces import FIELD_THRESHOLDS
    assert len(DEFAULT_THRESHOLDS) == 8 and len(FIELD_THRESHOLDS) == 1
    for t in DEFAULT_THRESHOLDS + FIELD_THRESHOLDS:
        valid = Threshold.model_validate(t.model_dump())
        assert valid == t and type(valid.limit) is type(t.limit) is float


def test_importing_the_workbench_builds_no_unit_registry():
    """pint and its registry (~0.6 s of CPU) wait for the first unit a lab file or a town's
    table names: ``serve`` and every test process import this module through the workbench."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import sys, ms4watch.workbench.app; print('pint' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
