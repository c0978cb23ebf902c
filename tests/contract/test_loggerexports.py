"""KorEXO, Win-Situ, VuSitu and Solinst exports: real files (``testdata/exports/README.md`` names
their sources) and variants of them — BOM, CRLF, decimal commas, separate date and time
columns, trailing rows, missing values, daylight saving, gaps, duplicates, truncation."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.contract.korexo import read_korexo
from ms4watch.contract.loggerfiles import looks_like
from ms4watch.contract.solinst import read_solinst
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.units import Quantity
from ms4watch.contract.vusitu import read_vusitu
from ms4watch.contract.winsitu import read_winsitu

EXPORTS = Path(__file__).parent / "testdata" / "exports"
EXO_DST = EXPORTS / "korexo_chalgrove_dst.csv"
EXO_FNU = EXPORTS / "korexo_via_sacra_fnu.csv"
TROLL_DST = EXPORTS / "winsitu_aquatroll100_dst.csv"
TROLL_TURB = EXPORTS / "winsitu_aquatroll600_turbidity.csv"
SOL_EDGE = EXPORTS / "solinst_edge_2010143.csv"
VU_LIVE = EXPORTS / "vusitu_aquatroll600_live.csv"
VU_EXCEL = EXPORTS / "vusitu_excel_resaved.csv"
VU_HTML = EXPORTS / "vusitu_aquatroll600_live.htm"


def utc(*a: int) -> int:
    return to_ns(datetime(*a, tzinfo=timezone.utc))


def column(lf, sensor: str):
    return next(c for c in lf.columns if c.sensor == sensor)


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return raw.decode("utf-16") if raw[:2] == b"\xff\xfe" else raw.decode("cp1252")


@pytest.mark.parametrize("name, fmt", [("korexo_chalgrove_dst.csv", "korexo"), ("korexo_via_sacra_fnu.csv", "korexo"),
                                       ("winsitu_aquatroll100_dst.csv", "winsitu"),
                                       ("winsitu_aquatroll600_turbidity.csv", "winsitu"),
                                       ("solinst_edge_2010143.csv", "solinst"), ("solinst_gold_1062280.csv", "solinst"),
                                       ("solinst_decimal_comma.csv", "solinst"),
                                       ("solinst_edge_2010143.xle", "solinst"),
                                       ("vusitu_aquatroll600_live.csv", "vusitu"),
                                       ("vusitu_excel_resaved.csv", "vusitu"),
                                       ("vusitu_aquatroll600_live.htm", "vusitu")])
def test_each_real_export_is_told_by_its_first_lines(name, fmt):
    assert looks_like(EXPORTS / name) == fmt


# -- YSI EXO, KorEXO ---------------------------------------------------------------------------

def test_korexo_turbidity_in_fnu_is_its_own_sensor_with_its_serial_number():
    lf = read_korexo(EXO_FNU, default_zone="America/New_York")
    turb = column(lf, "Turbidity FNU")
    assert (turb.quantity, turb.unit, turb.serial) == (Quantity.TURBIDITY, "FNU", "17A102374")
    t, v = turb.canonical()
    assert v[:3].tolist() == [2.12, 2.14, 2.03] and len(v) == 8
    assert t[0] == utc(2019, 11, 20, 18, 25)                   # 13:25 at New York's offset on 20 Nov (EST)
    assert column(lf, "SpCond").serial == "16M102831" and column(lf, "Temp").unit == "degC"
    skipped = dict(lf.skipped)
    assert skipped["ODO mg/L"] == "'ODO' is none of ms4watch's quantities (unit 'mg/L')"
    assert "TSS mg/L" in skipped and "fDOM QSU" in skipped
    assert lf.station is None                                  # "<site>": KorEXO's empty placeholder
    assert lf.serial == "17A101268"                            # the sonde's: the serial its battery column carries
    assert lf.date_order == "mdy" and lf.tz_source == "held"


def test_korexo_clock_keeps_its_offset_through_the_night_clocks_went_back():
    """The real export logs 01:00–01:55 once on 3 Nov 2019: the sonde's clock did not go back."""
    lf = read_korexo(EXO_DST, default_zone="America/New_York")
    temp = column(lf, "Temp")
    assert str(lf.tz) == "UTC-04:00" and lf.tz_source == "held"   # EDT, the offset at the first sample
    steps = np.diff(temp.times_ns[:19])
    assert (steps == 300 * 10**9).all()                            # 00:45 … 02:15 every 5 min, no hour lost or doubled
    assert temp.times_ns[0] == utc(2019, 11, 3, 4, 45)
    assert lf.notes == ["gap of 10 d 12 h 25 min before line 30 (logging every 5 min)"]
    given = read_korexo(EXO_DST, "America/New_York")                # told it followed daylight saving: it says what it did
    assert any("12 rows in the hour repeated on 2019-11-03" in n for n in given.notes)


def test_korexo_variants_bom_utf8_semicolons_decimal_commas_missing_values(tmp_path):
    text = _text(EXO_FNU).replace("\r\n", "\n")
    lines = text.split("\n")
    semi = [lines[0].replace("sep=,", "sep=;")] + [ln.replace(",", ";") for ln in lines[1:]]
    semi = [ln if not ln[:1].isdigit() else ";".join(c.replace(".", ",") for c in ln.split(";")) for ln in semi]
    semi[10] = semi[10].replace("2,12", "")                         # a missing turbidity value
    f = tmp_path / "eu.csv"
    f.write_bytes("\n".join(semi).encode("utf-8-sig"))
    lf = read_korexo(f, "UTC")
    turb = column(lf, "Turbidity FNU")
    assert turb.values[:2].tolist() == [2.14, 2.03] and len(turb.values) == 7
    assert column(lf, "Temp").values[0] == 7.66


def test_korexo_a_cut_last_line_is_left_out_and_a_bad_cell_names_line_and_column(tmp_path):
    text = _text(EXO_FNU)
    cut = tmp_path / "cut.csv"
    cut.write_bytes(text.rstrip("\r\n")[:-30].encode("utf-16"))
    lf = read_korexo(cut, "UTC")
    assert len(column(lf, "Temp").values) == 7
    assert lf.notes[0] == "line 18: the last line is cut short (a download interrupted?): left out"
    bad = tmp_path / "bad.csv"
    bad.write_bytes(text.replace(",2.14,", ",2.1x,").encode("utf-16"))
    with pytest.raises(ConfigError, match=r"bad.csv:12: Turbidity FNU: not a number: '2.1x'"):
        read_korexo(bad, "UTC")
    with pytest.raises(ConfigError, match="a KorEXO export does not say its clock's time zone: give it"):
        read_korexo(EXO_FNU)


def test_korexo_repeated_rows_and_trailing_rows_are_reported(tmp_path):
    lines = _text(EXO_FNU).split("\r\n")
    f = tmp_path / "dup.csv"
    f.write_bytes("\r\n".join(lines[:13] + lines[12:13] + lines[13:-1] + ["", "END OF FILE", ""]).encode("utf-16"))
    lf = read_korexo(f, "UTC")
    assert "line 14: the time repeats" in lf.notes
    assert "line 21: not a record (after the data): left out" in lf.notes


# -- In-Situ, Win-Situ 5 ----------------------------------------------------------------------

def test_winsitu_times_follow_the_computers_daylight_saving_checked_by_elapsed_seconds():
    lf = read_winsitu(TROLL_DST, "Europe/Berlin")
    temp = column(lf, "Temperature")
    assert (lf.station, lf.serial, lf.date_order) == ("Panke Messstelle Bürgerpark", "192791", "dmy")
    # 30.03.2014 01:50:22 CET then 03:05:22 CEST: 15 minutes apart, as the elapsed seconds say
    k = int(np.flatnonzero(temp.times_ns == utc(2014, 3, 30, 0, 50, 22))[0])
    assert temp.times_ns[k + 1] == utc(2014, 3, 30, 1, 5, 22)
    assert temp.values[k:k + 2].tolist() == [8.45, 8.412]
    assert dict(lf.skipped)["Actual Conductivity µS"] == "unit 'µS' does not fit conductivity"


def test_winsitu_a_zone_the_elapsed_seconds_contradict_is_refused_naming_the_line():
    with pytest.raises(ConfigError, match=r"winsitu_aquatroll100_dst.csv:80: Date and Time: read in UTC\+01:00, the "
                                          r"time steps \+4500 s here but the elapsed seconds step \+900 s"):
        read_winsitu(TROLL_DST, "+01:00")


def test_winsitu_a_windows_zone_name_it_does_not_know_asks_for_tz_and_one_it_knows_is_used(tmp_path):
    with pytest.raises(ConfigError, match=r":67: Time Zone: the file's zone 'Westeuropäische Normalzeit/Westeuropäische "
                                          r"Sommerzeit' is not one ms4watch knows: give its IANA name"):
        read_winsitu(TROLL_DST)
    f = tmp_path / "us.csv"
    f.write_bytes(TROLL_TURB.read_bytes().replace("Time Zone: Mitteleuropäische Zeit".encode("cp1252"),
                                                  b"Time Zone: Eastern Standard Time/Eastern Daylight Time"))
    lf = read_winsitu(f)
    assert (str(lf.tz), lf.tz_source) == ("America/New_York", "header")
    assert column(lf, "Temperature").times_ns[0] == utc(2016, 5, 23, 19, 31, 50)      # 15:31:50 EDT


def test_winsitu_turbidity_in_ntu_and_each_sensors_serial_number():
    lf = read_winsitu(TROLL_TURB, "Europe/Berlin")
    turb = column(lf, "Turbidity NTU")
    assert (turb.quantity, turb.unit, turb.serial) == (Quantity.TURBIDITY, "NTU", "446637")
    assert turb.values[:2].tolist() == [2.28, 27.35]
    assert column(lf, "Specific Conductivity").serial == "442678"
    assert "'Dissolved Oxygen (concentration)' is none of ms4watch's quantities (unit 'mg/L')" in dict(lf.skipped).values()


def test_winsitu_decimal_commas_and_a_truncated_line(tmp_path):
    text = TROLL_TURB.read_bytes().decode("cp1252")
    body_start = text.index("23.05.2016 15:31:50")
    comma = text[:body_start] + re.sub(r"(;[ ]*-?\d+)\.(\d)", r"\1,\2", text[body_start:])
    f = tmp_path / "comma.csv"
    f.write_bytes(comma.encode("cp1252"))
    assert column(read_winsitu(f, "Europe/Berlin"), "Turbidity NTU").values[:2].tolist() == [2.28, 27.35]
    cut = tmp_path / "cut.csv"
    cut.write_bytes(text.rstrip("\r\n")[:-200].encode("cp1252"))
    lf = read_winsitu(cut, "Europe/Berlin")
    assert any(n.startswith("line 90: the last line is cut short") for n in lf.notes)
    assert len(column(lf, "Turbidity NTU").values) == 7


# -- Solinst Levelogger -----------------------------------------------------------------------

def test_solinst_csv_level_in_cm_and_temperature_with_serial_and_location():
    lf = read_solinst(SOL_EDGE, default_zone="America/Toronto")
    level = column(lf, "Level")
    assert (lf.station, lf.serial, str(lf.tz)) == ("Sutton_PO22B", "2010143", "UTC-04:00")
    t, v = level.canonical()
    assert t[0] == utc(2017, 5, 3, 17) and v[0] == pytest.approx(1919.32 / 30.48)      # cm → ft
    assert column(lf, "Temperature").values[0] == 7.849
    assert lf.notes == ["gap of 2 d 30 min before line 19 (logging every 15 min)"]


def test_solinst_xle_reads_as_its_csv_export():
    x = read_solinst(EXPORTS / "solinst_edge_2010143.xle", "-04:00")
    c = read_solinst(SOL_EDGE, "-04:00")
    for sensor in ("Level", "Temperature"):
        assert column(x, sensor).times_ns[:3].tolist() == column(c, sensor).times_ns[:3].tolist()
        assert column(x, sensor).values[:3].tolist() == column(c, sensor).values[:3].tolist()
    assert column(x, "Level").times_ns[-1] == column(c, "Level").times_ns[-1]


def test_solinst_older_layout_tabs_numbered_rows_and_100_ms():
    lf = read_solinst(EXPORTS / "solinst_gold_1062280.csv", "-05:00")
    assert (lf.station, lf.serial) == ("Saint-Guillaume_P14A", "1062280")
    assert column(lf, "Level").values[:2].tolist() == [923.561, 923.618]
    assert column(lf, "Level").times_ns[0] == utc(2017, 5, 2, 18)


def test_solinst_decimal_commas_and_missing_values():
    lf = read_solinst(EXPORTS / "solinst_decimal_comma.csv", "UTC")
    assert column(lf, "Level").values[:2].tolist() == [1813.03, 1812.96]
    miss = read_solinst(EXPORTS / "solinst_missing_data.csv", "UTC")
    assert len(column(miss, "Level").values) == 9 and len(column(miss, "Temperature").values) == 8
    assert "1 row with fewer fields than the header (line 19): the missing fields read as missing values" in miss.notes


def test_solinst_a_level_in_kpa_is_a_pressure_and_is_skipped_with_the_reason(tmp_path):
    f = tmp_path / "baro.csv"
    f.write_bytes(SOL_EDGE.read_bytes().replace(b"UNIT: cm\nOffset: 0.000000 cm", b"UNIT: kPa\nOffset: 0.000000 kPa"))
    lf = read_solinst(f, "UTC")
    assert [c.sensor for c in lf.columns] == ["Temperature"]
    assert lf.skipped == [("LEVEL", "LEVEL in kPa is a pressure (a Barologger, or a logger set to pressure units), "
                                    "not a water level: export it in m, cm or ft after barometric compensation")]


def test_solinst_refusals_name_the_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(SOL_EDGE.read_bytes().replace(b"1919.68", b"19l9.68"))
    with pytest.raises(ConfigError, match=r"bad.csv:14: LEVEL cm: not a number: '19l9.68'"):
        read_solinst(bad, "UTC")
    with pytest.raises(ConfigError, match="a Solinst export does not say its clock's time zone"):
        read_solinst(SOL_EDGE)
    cut = tmp_path / "cut.xle"
    cut.write_bytes((EXPORTS / "solinst_edge_2010143.xle").read_bytes()[:-60])
    with pytest.raises(ConfigError, match="not well-formed XML"):
        read_solinst(cut, "UTC")


def test_solinst_app_xle_with_underscore_dates():
    lf = read_solinst(EXPORTS / "solinst_edge_app_underscore_dates.xle", "UTC")
    level = column(lf, "Level")
    assert level.times_ns.tolist()[:2] == [utc(2020, 1, 4, 18), utc(2020, 4, 5, 6)]
    assert (level.unit, lf.serial, lf.station) == ("m", "1234567", "12345")


def test_solinst_xle_with_decimal_commas_reads_as_its_csv():
    x = read_solinst(EXPORTS / "solinst_decimal_comma.xle", "UTC")
    c = read_solinst(EXPORTS / "solinst_decimal_comma.csv", "UTC")
    assert column(x, "Level").values.tolist() == column(c, "Level").values.tolist()


def test_a_barologger_is_air_pressure_not_a_water_level():
    lf = read_solinst(EXPORTS / "solinst_gold_barologger.xle", "UTC")
    assert [c.sensor for c in lf.columns] == ["Temperature"]
    assert lf.skipped == [("LEVEL", "a Barologger (model M1.5) measures air pressure, not a water level: use it to "
                                    "compensate a Levelogger, then export the compensated level")]


def test_solinst_older_export_without_a_unit_line_takes_the_unit_of_its_range():
    lf = read_solinst(EXPORTS / "solinst_m5_range_unit.csv", "UTC")
    level = column(lf, "Level")
    assert (level.unit, level.values[:2].tolist(), lf.serial) == ("cm", [314.0, 314.0], "5741")


@pytest.mark.parametrize("name", ["solinst_edge_2041929.lev", "solinst_m5_5741.lev"])
def test_a_lev_file_is_told_by_its_first_line(name):
    assert looks_like(EXPORTS / name) == "solinst"


def test_solinst_lev_file_channels_units_and_its_closing_line():
    lf = read_solinst(EXPORTS / "solinst_edge_2041929.lev", "-05:00")
    level = column(lf, "Level")
    assert (lf.serial, lf.station, level.unit) == ("2041929", "PO-06_XM20170307", "m")
    assert level.values[:2].tolist() == [14.6861, 14.6851] and column(lf, "Temperature").values[-1] == 7.61
    assert level.times_ns[0] == utc(2017, 3, 8, 0) and level.times_ns[-1] == utc(2017, 3, 10, 1, 45)
    assert "line 52: not a record (after the data): left out" in lf.notes        # END OF DATA FILE OF DATALOGGER …
    assert "the file says 200 records; 8 read" in lf.notes
    m5 = read_solinst(EXPORTS / "solinst_m5_5741.lev", "-05:00")
    assert (m5.serial, column(m5, "Level").unit, column(m5, "Level").values[0]) == ("5741", "cm", 314.0)


def _us_winsitu(tmp_path: Path, stamps: list[str]) -> Path:
    """The real Aqua TROLL 600 export as Win-Situ writes it on a US computer: commas, m/d/yyyy
    h:mm:ss AM/PM, an Eastern zone; its first len(stamps) rows at ``stamps``, 600 s apart."""
    text = TROLL_TURB.read_bytes().decode("cp1252").replace(";", ",")
    text = text.replace("Time Zone: Mitteleuropäische Zeit", "Time Zone: Eastern Standard Time/Eastern Daylight Time")
    lines = text.split("\r\n")
    first = next(k for k, ln in enumerate(lines) if ln.startswith("23.05.2016 15:31:50"))
    for k, stamp in enumerate(stamps):
        cells = lines[first + k].split(",")
        cells[0], cells[1] = stamp, f"{600 * k:12.3f}"
        lines[first + k] = ",".join(cells)
    del lines[first + len(stamps):first + len(stamps) + 3]       # the rest of the rows keep their own dates
    out = tmp_path / "us.csv"
    out.write_bytes("\r\n".join(lines[:first + len(stamps)] + ["", ""]).encode("cp1252"))
    return out


def test_winsitu_us_export_across_the_hour_clocks_go_back(tmp_path):
    stamps = ["11/6/2016 1:30:00 AM", "11/6/2016 1:40:00 AM", "11/6/2016 1:50:00 AM",
              "11/6/2016 1:00:00 AM", "11/6/2016 1:10:00 AM", "11/6/2016 1:20:00 AM"]
    with pytest.raises(ConfigError, match=r"us.csv:83: Date and Time: .* give --date-order mdy or dmy"):
        read_winsitu(_us_winsitu(tmp_path, stamps))                     # one day, every field <= 12
    lf = read_winsitu(_us_winsitu(tmp_path, stamps), date_order="mdy")
    t = column(lf, "Turbidity NTU").times_ns
    assert (str(lf.tz), lf.date_order) == ("America/New_York", "mdy")
    assert t.tolist() == [utc(2016, 11, 6, 5, 30) + 600 * 10**9 * k for k in range(6)]     # EDT, then EST: even steps
    assert "6 rows in the hour repeated on 2016-11-06 (clocks went back): 3 read as daylight time, 3 as standard time, " \
           "by their order" in lf.notes
    with pytest.raises(ConfigError, match=r"us.csv:86: Date and Time: read in UTC-05:00, the time steps -3000 s here but "
                                          r"the elapsed seconds step \+600 s"):
        read_winsitu(_us_winsitu(tmp_path, stamps), "-05:00", date_order="mdy")


def test_korexo_newer_software_capitals_am_pm_milliseconds_and_newest_row_first(tmp_path):
    """Kor software after KorEXO writes upper-case headers, ``TIME (HH:MM:SS.TTT)`` with AM/PM
    and the newest row first (as USGS stglib's EXO reader describes); here the real export
    rewritten so."""
    lines = _text(EXO_FNU).split("\r\n")
    h = next(k for k, ln in enumerate(lines) if ln.startswith("Date (MM/DD/YYYY)"))
    header = lines[h].upper().replace("TIME (HH:MM:SS)", "TIME (HH:MM:SS.TTT)")
    rows = []
    for ln in lines[h + 1:-1]:
        cells = ln.split(",")
        t = datetime.strptime(cells[1], "%H:%M:%S")
        cells[1] = t.strftime("%I:%M:%S.000 %p")
        rows.append(",".join(cells))
    f = tmp_path / "kor.csv"
    f.write_bytes("\r\n".join(lines[:h] + [header] + rows[::-1] + [""]).encode("utf-16"))
    lf = read_korexo(f, "UTC")
    turb = column(lf, "TURBIDITY FNU")
    assert (turb.unit, turb.serial) == ("FNU", "17A102374")
    assert turb.times_ns[0] == utc(2019, 11, 20, 13, 25) and turb.values[:2].tolist() == [2.12, 2.14]
    assert column(lf, "TEMP").unit == "degC" and column(lf, "SPCOND").unit == "uS/cm"
    assert "the rows run from the newest to the oldest: read in time order" in lf.notes


def test_units_as_written_are_converted_and_fnu_and_ntu_stay_apart(tmp_path):
    """The real Aqua TROLL 600 export with its columns renamed to other parameters and units."""
    text = TROLL_TURB.read_bytes().decode("cp1252")
    for old, new in (("Temperature (C)", "Temperature (F)"), ("Actual Conductivity (µS/cm)", "Actual Conductivity (mS/cm)"),
                     ("Water Density (g/cm3)", "Depth (ft)"), ("Resistivity (ohm-cm)", "Level Depth To Water (in)"),
                     ("Total Dissolved Solids (ppt)", "Pressure (PSI)"), ("Salinity (PSU)", "Level (mm)"),
                     ("Dissolved Oxygen (concentration) (mg/L)", "Turbidity (FNU)")):
        text = text.replace(old, new)
    f = tmp_path / "units.csv"
    f.write_bytes(text.encode("cp1252"))
    lf = read_winsitu(f, "Europe/Berlin")
    first = {c.sensor: round(float(c.canonical()[1][0]), 4) for c in lf.columns}
    assert first == {"Temperature": round((21.989 - 32) * 5 / 9, 4),          # °F → °C
                     "Actual Conductivity": 850124.0,                          # mS/cm → µS/cm
                     "Specific Conductivity": 901.993,
                     "Depth": 0.998,                                           # ft
                     "Level Depth To Water": round(1176.299 / 12, 4),          # in → ft
                     "Level": round(0.449 / 304.8, 4),                         # mm → ft
                     "Turbidity FNU": 7.625, "Turbidity NTU": 2.28}            # two methods, two sensors
    assert dict(lf.skipped)["Pressure PSI"] == "'Pressure' is none of ms4watch's quantities (unit 'PSI')"


def test_korexo_older_kor_export_file_layout(tmp_path):
    """Older KOR software opens with a ``KOR Export File`` block — ``Sonde ID`` and a row per
    sensor with its serial number — before the data's header (the layout USGS stglib's 2018
    EXO reader reads); here the real export's data under such a block, written here."""
    lines = _text(EXO_FNU).split("\r\n")
    h = next(k for k, ln in enumerate(lines) if ln.startswith("Date (MM/DD/YYYY)"))
    block = ["KOR Export File,,,", "Sonde ID,EXO2 17A101268,,", "Turbidity,17A102374,,19", "Wiped CT,16M102831,,6;9;14"]
    f = tmp_path / "kor_old.csv"
    f.write_bytes("\r\n".join(block + [""] * 3 + lines[h:]).encode("utf-8"))
    assert looks_like(f) == "korexo"
    lf = read_korexo(f, "UTC")
    assert lf.serial == "17A101268"
    assert column(lf, "Turbidity FNU").values[:2].tolist() == [2.12, 2.14]


def test_a_line_that_is_not_a_record_between_records_refuses_the_file(tmp_path):
    lines = SOL_EDGE.read_bytes().split(b"\n")
    f = tmp_path / "mid.csv"
    f.write_bytes(b"\n".join(lines[:15] + [b"Logger restarted"] + lines[15:]))
    with pytest.raises(ConfigError, match=r"mid.csv:16: not a record .*'Logger restarted'.*records follow"):
        read_solinst(f, "UTC")


def test_an_export_with_a_header_and_no_records_reads_as_empty(tmp_path):
    lines = SOL_EDGE.read_bytes().split(b"\n")
    f = tmp_path / "empty.csv"
    f.write_bytes(b"\n".join(lines[:12]) + b"\n")
    lf = read_solinst(f, default_zone="America/New_York")
    assert [len(c.values) for c in lf.columns] == [0, 0]


# -- In-Situ, VuSitu (and HydroVu) --------------------------------------------------------------

def _vu_lines() -> list[str]:
    return VU_LIVE.read_bytes().decode("utf-8").split("\r\n")


def _vu_write(tmp_path: Path, lines: list[str], name: str = "vu.csv", end: str = "\r\n") -> Path:
    f = tmp_path / name
    f.write_bytes(("\r\n".join(lines) + end).encode("utf-8"))
    return f


def test_vusitu_times_at_the_files_offset_each_sensors_serial_and_the_instruments():
    lf = read_vusitu(VU_LIVE)
    assert (str(lf.tz), lf.tz_source, lf.date_order) == ("UTC-05:00", "header", "ymd")
    depth = column(lf, "Depth")
    assert (depth.quantity, depth.unit, depth.serial) == (Quantity.LEVEL, "ft", "671053")
    assert depth.times_ns[0] == utc(2020, 1, 24, 20, 5, 14)              # 15:05:14 at -05:00
    assert depth.values[:2].tolist() == [0.5642365, 0.5410975] and len(depth.values) == 14
    assert depth.times_ns[-1] == utc(2020, 1, 24, 20, 6, 4)
    spc = column(lf, "Specific Conductivity")
    assert (spc.quantity, spc.unit, spc.serial, spc.values[0]) == (Quantity.CONDUCTIVITY, "uS/cm", "673392", 36324.39)
    assert column(lf, "Actual Conductivity").values[0] == 33400.79
    # two temperatures: the sonde's in the water and the Bluetooth device's in the air, each its own sensor
    water, air = column(lf, "Temperature_676038"), column(lf, "Temperature_674484")
    assert (water.values[0], air.values[0]) == (20.85243, 22.15088)
    skipped = dict(lf.skipped)
    assert skipped["RDO Concentration mg/L"] == "'RDO Concentration' is none of ms4watch's quantities (unit 'mg/L')"
    assert {"Pressure psi", "Barometric Pressure mm Hg", "Barometric Pressure mbar", "Latitude °", "Marked"} <= set(skipped)
    assert (lf.station, lf.serial) == (None, "676038")      # "Device Location": VuSitu's name for no location
    assert "instruments: Aqua TROLL 600 Vented S/N 676038, In-Situ Bluetooth Device S/N 674484" in lf.notes
    # the clip keeps 14 of the report's 26 rows: the report's own count tells a cut file
    assert "the report says 26 readings, the file holds 14 (cut short or edited?)" in lf.notes


def test_vusitu_a_report_holding_the_readings_it_says_has_no_such_note(tmp_path):
    said = [ln.replace('"Readings = 26"', '"Readings = 14"') for ln in _vu_lines()]
    assert said != _vu_lines()
    assert not any("the report says" in n for n in read_vusitu(_vu_write(tmp_path, said[:-1])).notes)


def test_vusitu_resaved_by_excel_bom_trailing_commas_slashed_dates_no_final_line_break():
    lf = read_vusitu(VU_EXCEL)
    assert (str(lf.tz), lf.tz_source) == ("UTC-04:00", "header")        # October: the phone's daylight time
    depth = column(lf, "Depth")
    assert depth.serial == "669389" and depth.times_ns[0] == utc(2019, 10, 12, 19, 16, 8)
    assert depth.values[0] == 2.963771 and len(depth.values) == 8       # the last row, complete, is kept
    assert depth.times_ns[-1] == utc(2019, 10, 12, 19, 19, 32)
    assert "gap of 3 min 12 s before line 26 (logging every 2 s)" in lf.notes
    assert "Salinity ppt" in dict(lf.skipped)


def test_vusitu_a_zone_given_overrides_the_offset_and_a_file_naming_none_asks_for_it(tmp_path):
    lf = read_vusitu(VU_LIVE, "UTC")
    assert lf.tz_source == "given" and column(lf, "Depth").times_ns[0] == utc(2020, 1, 24, 15, 5, 14)
    assert "the file's offset is -05:00:00; read in the zone given" in lf.notes
    lines = _vu_lines()
    none = _vu_write(tmp_path, lines[:5] + lines[6:], "none.csv")
    with pytest.raises(ConfigError, match=r"none.csv: the file says no time offset \(\"Time Offset = …\" or \"Time "
                                          r"shown in UTC\"\): give its zone \(--tz\)"):
        read_vusitu(none)
    odd = _vu_write(tmp_path, lines[:5] + ['"Time shown in telemetry device\'s time zone"'] + lines[6:], "odd.csv")
    with pytest.raises(ConfigError, match=r"odd.csv:6: \"Time shown in telemetry device's time zone\": not a zone "
                                          r"ms4watch can read: give it \(--tz\)"):
        read_vusitu(odd)
    assert read_vusitu(odd, "-05:00").columns
    named = _vu_write(tmp_path, lines[:5] + ['"Time Zone = Mountain Standard Time"'] + lines[6:], "named.csv")
    with pytest.raises(ConfigError, match=r"named.csv:6: \"Time Zone = Mountain Standard Time\": not a zone ms4watch "
                                          r"can read: give it \(--tz\)"):
        read_vusitu(named)


def test_hydrovu_layout_times_shown_in_utc_and_columns_without_serials(tmp_path):
    """HydroVu's export: a location block, "Time shown in UTC", then "Date Time" and
    "<parameter> (<unit>)" columns — the layout of a real HydroVu export (see the README)."""
    rows = ['"Location Properties"', '"Location Name = Outfall 7"', '"Location ID = 1234567890123456"',
            '"Latitude = 42.6526 °"', '"Longitude = -73.7562 °"', '"Time shown in UTC"', '""', '""',
            '"Date Time","Depth (m)","Pressure (cm H₂O)","Temperature (C)","Turbidity (NTU)"',
            '"2020-04-28 13:45:00.000","0.3048","998.35","10.1","4.2"',
            '"2020-04-28 14:00:00.000","0.6096","997.65","10.18",""',
            '"2020-04-28 14:15:00.000","0.9144","997.65","10.26","5.0"']
    f = _vu_write(tmp_path, rows, "HydroVu_OF7.csv")
    assert looks_like(f) == "vusitu"
    lf = read_vusitu(f)
    assert (lf.tz_source, lf.station, lf.tz.utcoffset(None)) == ("header", "Outfall 7", timezone.utc.utcoffset(None))
    t, v = column(lf, "Depth").canonical()
    assert t[0] == utc(2020, 4, 28, 13, 45) and v.tolist() == pytest.approx([1.0, 2.0, 3.0])       # m → ft
    turb = column(lf, "Turbidity NTU")
    assert turb.values.tolist() == [4.2, 5.0] and turb.serial == ""                  # a missing value left out
    assert column(lf, "Temperature").unit == "degC"
    assert dict(lf.skipped)["Pressure cm H₂O"] == "'Pressure' is none of ms4watch's quantities (unit 'cm H₂O')"


def test_vusitu_a_depth_to_water_or_an_elevation_is_not_a_level(tmp_path):
    rows = ['"Location Properties"', '"Location Name = MW-2"', '"Time shown in UTC"', '""',
            '"Date Time","Level: Depth to Water (ft) (812345)","Level: Elevation (ft) (812345)","Depth (ft) (812345)"',
            '"2021-06-01 00:00:00","7.5","1203.2","2.5"', '"2021-06-01 00:15:00","7.4","1203.3","2.6"']
    lf = read_vusitu(_vu_write(tmp_path, rows, "well.csv"))
    assert [c.sensor for c in lf.columns] == ["Depth"]
    skipped = dict(lf.skipped)
    assert skipped["Level: Depth to Water ft"].startswith("a depth to water, measured down from the top of a well")
    assert skipped["Level: Elevation ft"] == ("an elevation above a datum, not the depth of water at the station: "
                                              "export the depth")


def test_vusitu_variants_semicolons_decimal_commas_separate_date_and_time_lf(tmp_path):
    lines = _vu_lines()
    h = lines.index(next(ln for ln in lines if ln.startswith('"Date Time"')))
    eu = lines[:h] + [lines[h].replace('","', '";"').replace('"Date Time"', '"Date";"Time"')]
    for ln in lines[h + 1:]:
        if ln:
            cells = ln.split('","')
            d, t = cells[0].strip('"').split(" ")
            eu.append(";".join([f'"{d}"', f'"{t}"'] + [f'"{c.strip(chr(34)).replace(".", ",")}"' for c in cells[1:]]))
    f = tmp_path / "eu.csv"
    f.write_bytes(("\n".join(eu) + "\n").encode("utf-8"))
    lf = read_vusitu(f)
    depth = column(lf, "Depth")
    assert depth.values[:2].tolist() == [0.5642365, 0.5410975] and depth.times_ns[0] == utc(2020, 1, 24, 20, 5, 14)


def test_vusitu_truncation_trailing_rows_duplicates_gaps_missing_values_and_a_bad_cell(tmp_path):
    lines = _vu_lines()
    assert lines[-1] == ""
    cut = _vu_write(tmp_path, lines[:-2] + [lines[-2][:40]], "cut.csv", end="")
    lf = read_vusitu(cut)
    assert "line 33: the last line is cut short (a download interrupted?): left out" in lf.notes
    assert len(column(lf, "Depth").values) == 13
    dup = _vu_write(tmp_path, lines[:22] + lines[21:22] + lines[22:-1] + ["", '"Log Note","Battery low"'], "dup.csv")
    lf = read_vusitu(dup)
    assert "line 23: the time repeats" in lf.notes and "line 36: not a record (after the data): left out" in lf.notes
    assert "gap of 26 s before line 32 (logging every 2 s)" in read_vusitu(VU_LIVE).notes   # the clip's own gap
    miss = _vu_write(tmp_path, [ln.replace('"0.5410975"', '""') for ln in lines[:-1]], "miss.csv")
    assert len(column(read_vusitu(miss), "Depth").values) == 13
    bad = _vu_write(tmp_path, [ln.replace('"0.5410975"', '"0.54x"') for ln in lines[:-1]], "bad.csv")
    with pytest.raises(ConfigError, match=r"bad.csv:21: Depth ft: not a number: '0.54x'"):
        read_vusitu(bad)


def test_vusitu_daylight_saving_of_a_zone_given_is_reported(tmp_path):
    lines = _vu_lines()
    moved = [ln.replace('"2020-01-24 15:', '"2019-11-03 01:') for ln in lines]
    lf = read_vusitu(_vu_write(tmp_path, moved[:-1], "dst.csv"), "America/New_York")
    assert any("rows in the hour repeated on 2019-11-03" in n for n in lf.notes)


def test_vusitu_html_export_reads_as_its_csv():
    """VuSitu shares a report as HTML (its default) and CSV: the same table, the same readings."""
    h, c = read_vusitu(VU_HTML), read_vusitu(VU_LIVE)
    assert (str(h.tz), h.tz_source, h.serial, h.station) == (str(c.tz), c.tz_source, c.serial, c.station)
    assert [(x.sensor, x.quantity, x.unit, x.serial) for x in h.columns] == \
        [(x.sensor, x.quantity, x.unit, x.serial) for x in c.columns]
    for a, b in zip(h.columns, c.columns):
        assert a.times_ns.tolist() == b.times_ns.tolist() and a.values.tolist() == b.values.tolist()
    assert h.skipped == c.skipped
    assert "instruments: Aqua TROLL 600 Vented S/N 676038, In-Situ Bluetooth Device S/N 674484" in h.notes


def test_vusitu_html_a_bad_cell_names_its_line_and_a_cut_file_loses_its_last_row(tmp_path):
    text = VU_HTML.read_bytes().decode("utf-8")
    line = text[:text.index("<td>0.5410975</td>")].count("\n") + 1
    bad = tmp_path / "bad.htm"
    bad.write_bytes(text.replace("<td>0.5410975</td>", "<td>0.54x</td>").encode("utf-8"))
    with pytest.raises(ConfigError, match=rf"bad.htm:{line}: Depth ft: not a number: '0.54x'"):
        read_vusitu(bad)
    cut = tmp_path / "cut.htm"
    cut.write_bytes(text[:text.index("<td>48932.21</td>") + 40].encode("utf-8"))      # inside the last row
    lf = read_vusitu(cut)
    assert len(column(lf, "Depth").values) == 13
    assert any(n.endswith("the last line is cut short (a download interrupted?): left out") for n in lf.notes)
