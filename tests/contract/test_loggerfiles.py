"""HOBOware CSV exports and Campbell TOA5 files, written to their published layouts
(``testdata/``), read with the units and time zones their headers state."""

from __future__ import annotations

import csv
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.contract.loggerfiles import looks_like, quantity_of, read_hoboware, read_toa5
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.units import Quantity

DATA = Path(__file__).parent / "testdata"


def utc(*a: int) -> int:
    return to_ns(datetime(*a, tzinfo=timezone.utc))


def test_toa5_units_from_the_header_zone_given():
    lf = read_toa5(DATA / "RG-1_Rain15.dat", "America/New_York")
    assert (lf.format, lf.station, lf.serial) == ("toa5", "RG-1", "1031")
    rain = lf.column(Quantity.RAIN)
    t, v = rain.canonical()
    assert rain.unit == "mm" and rain.kind == "interval"
    assert t[1] == utc(2026, 6, 1, 12, 15)                                # 08:15 EDT
    assert v.tolist() == pytest.approx([0, 0.1, 0.2, 0.15, 0.05, 0, 0])   # mm → in
    level = lf.column(Quantity.LEVEL)
    assert len(level.times_ns) == 6                                       # "NAN" is missing, not zero
    assert lf.column(Quantity.BATTERY).unit == "V"
    assert lf.skipped == [("PTemp_C", "the logger's panel temperature, not a measurement of the station")]


def test_toa5_needs_a_zone_and_names_a_bad_line(tmp_path):
    with pytest.raises(ConfigError, match="does not say its time zone"):
        read_toa5(DATA / "RG-1_Rain15.dat", None)
    bad = tmp_path / "bad.dat"
    bad.write_text((DATA / "RG-1_Rain15.dat").read_text().replace('"2026-06-01 08:30:00"', '"2026-06-31 08:30:00"'))
    with pytest.raises(ConfigError, match=r"bad.dat:7: TIMESTAMP: not a time"):
        read_toa5(bad, "UTC")


def test_hoboware_event_logger_zone_from_the_header():
    lf = read_hoboware(DATA / "RG-2_hoboware.csv")
    assert (lf.format, lf.station, lf.serial, lf.tz_source) == ("hoboware", "RG-2", "10241568", "header")
    ev = lf.column(Quantity.RAIN)
    assert (ev.unit, ev.kind) == ("tips", "cumulative")
    t, v = ev.canonical(tip=0.01)
    assert t[0] == utc(2026, 6, 1, 12, 0) and t[-1] == utc(2026, 6, 1, 13, 2, 55)   # GMT-04:00
    assert v.tolist() == pytest.approx([0, 0.01, 0.01, 0.01, 0.01, 0.01])
    assert [name for name, _ in lf.skipped] == ["Coupler Detached", "Coupler Attached", "Stopped", "End Of File"]
    with pytest.raises(ValueError, match="counts tips"):
        ev.canonical()


def test_hoboware_water_level_logger_24_hour_times():
    lf = read_hoboware(DATA / "OF-1_u20_hoboware.csv")
    level, temp = lf.column(Quantity.LEVEL), lf.column(Quantity.TEMPERATURE)
    assert level.unit == "ft" and level.times_ns[0] == utc(2026, 1, 15, 18, 0)       # 13:00 GMT-05:00
    assert temp.canonical()[1][0] == pytest.approx((46.22 - 32) * 5 / 9)
    assert ("Abs Pres", "'Abs Pres' is none of ms4watch's quantities (unit 'psi')") in lf.skipped


def test_a_cumulative_series_that_goes_down_is_refused(tmp_path):
    f = tmp_path / "relaunched.csv"
    f.write_text((DATA / "RG-2_hoboware.csv").read_text().replace("08:44:10 AM,4", "08:44:10 AM,0"))
    with pytest.raises(ConfigError, match=r"relaunched.csv:7: Event: a cumulative rain series goes down"):
        read_hoboware(f)


def test_formats_are_told_from_their_first_lines(tmp_path):
    assert looks_like(DATA / "RG-1_Rain15.dat") == "toa5"
    assert looks_like(DATA / "RG-2_hoboware.csv") == "hoboware"
    (tmp_path / "x.csv").write_text("DateTime,Depth_mm\n")
    assert looks_like(tmp_path / "x.csv") is None


def test_quantities_by_name_and_unit():
    assert quantity_of("Turb_NTU_Avg", "NTU") == (Quantity.TURBIDITY, "NTU")
    assert quantity_of("Flow_gpm", "gpm") == (Quantity.FLOW, "gpm")
    assert quantity_of("Rain_in_Tot", "inch") == (Quantity.RAIN, "in")
    assert quantity_of("Flow", "NTU") is None                 # a unit that does not fit: never guessed
    assert quantity_of("WS_ms", "meters/second") is None


# -- real exports and their variants (testdata/exports/README.md names each file's source) ------
EXPORTS = DATA / "exports"


def test_day_month_year_dates_are_told_by_a_day_over_12():
    lf = read_hoboware(EXPORTS / "dmy_uk.csv")                   # was read as yy/mm/dd: 2001…2031
    t = lf.column(Quantity.TEMPERATURE).times_ns
    assert lf.date_order == "dmy"
    assert t[0] == utc(2026, 6, 1, 0, 0) and t[-1] == utc(2026, 6, 19, 18, 0)


def test_day_month_year_dates_are_told_by_the_logging_interval():
    lf = read_hoboware(EXPORTS / "dmy_ambiguous_days.csv")       # every field <= 12: 01/06/26 … 02/06/26
    t = lf.column(Quantity.TEMPERATURE).times_ns
    assert lf.date_order == "dmy"
    assert t[0] == utc(2026, 6, 1, 0, 0) and t[-1] == utc(2026, 6, 2, 23, 30)


def test_an_order_the_file_cannot_settle_is_refused_with_a_request_for_date_order():
    with pytest.raises(ConfigError, match=r"one_day_ambiguous.csv:3: Date Time.*month/day/year or day/month/year.*"
                                          r"--date-order"):
        read_hoboware(EXPORTS / "one_day_ambiguous.csv")
    lf = read_hoboware(EXPORTS / "one_day_ambiguous.csv", date_order="dmy")
    assert lf.column(Quantity.TEMPERATURE).times_ns[0] == utc(2026, 6, 5, 10, 0)


def test_times_outside_the_plausible_window_are_refused(tmp_path):
    f = tmp_path / "future.csv"
    f.write_text((DATA / "RG-2_hoboware.csv").read_text().replace("06/01/26 09:02:55", "06/01/36 09:02:55"))
    with pytest.raises(ConfigError, match=r"future.csv:8: Date Time.*2036-06-01.*not a plausible time"):
        read_hoboware(f, date_order="mdy")


def test_a_real_export_with_year_month_day_dates_and_no_seconds():
    lf = read_hoboware(EXPORTS / "20827226.csv")                 # Excel-resaved: unquoted title, 24 h, no seconds
    temp = lf.column(Quantity.TEMPERATURE)
    assert (lf.station, lf.serial, lf.date_order) == ("20827226", "20827226", "ymd")
    assert temp.times_ns[0] == utc(2019, 5, 27, 16, 0) and temp.values[0] == 10.56
    assert ("DO conc", "'DO conc' is none of ms4watch's quantities (unit 'mg/L')") in lf.skipped


def test_rg3_event_in_mm_is_a_cumulative_depth_not_tips():
    lf = read_hoboware(EXPORTS / "rg3_event_mm_ymd.csv")         # year/month/day with AM/PM
    ev = lf.column(Quantity.RAIN)
    assert (ev.unit, ev.kind) == ("mm", "cumulative")
    t, v = ev.canonical(tip=0.01)                                # a --tip given for tips is not applied to mm
    assert float(v.sum()) == pytest.approx(12.70 / 25.4)
    assert t[-1] == utc(2026, 6, 1, 17, 15, 30)                  # 01:15:30 PM GMT-04:00


def test_each_channel_of_a_multi_channel_logger_is_its_own_sensor():
    lf = read_hoboware(EXPORTS / "u12_four_channels.csv")
    temps = [c for c in lf.columns if c.quantity is Quantity.TEMPERATURE]
    assert [c.sensor for c in temps] == ["Temp_Air_Temp", "Temp_Canopy_Temp", "Temp_Ground_Temp", "Temp_Soil_Temp"]
    assert [c.values.tolist()[0] for c in temps] == [1.0, 2.0, 3.0, 4.0]
    single = read_hoboware(DATA / "OF-1_u20_hoboware.csv")
    assert single.column(Quantity.LEVEL).sensor == "Water Level"    # one channel: its name alone


def _toa5(path: Path, stamps: list[str], values: list[str] | None = None, *, end: str = "\r\n") -> Path:
    head = ['"TOA5","RG-1","CR1000","1031","CR1000.Std.32","CPU:rain.CR1","4062","Rain15"',
            '"TIMESTAMP","RECORD","Rain_mm_Tot","BattV_Min"', '"TS","RN","mm","Volts"', '"","","Tot","Min"']
    body = [f'"{s}",{k},{(values or ["0"] * len(stamps))[k]},12.8' for k, s in enumerate(stamps)]
    path.write_text("\r\n".join(head + body) + end)
    return path


def test_a_repeated_local_hour_is_reported_and_read_in_order(tmp_path):
    # a logger keeping daylight time through the fall-back: 01:00…01:45 written twice
    hours = [f"2026-11-01 {h:02d}:{m:02d}:00" for h, m in [(0, 45)] + [(1, m) for m in (0, 15, 30, 45)] * 2
             + [(2, 0)]]
    lf = read_toa5(_toa5(tmp_path / "fall.dat", hours), "America/New_York")
    t = lf.column(Quantity.BATTERY).times_ns
    assert len(set(t.tolist())) == 10 and list(t) == sorted(t)                # none collide
    assert t[1] == utc(2026, 11, 1, 5, 0) and t[5] == utc(2026, 11, 1, 6, 0)  # 01:00 EDT, then 01:00 EST
    assert any("8 rows in the hour repeated on 2026-11-01" in n and "4 read as daylight time, 4 as standard time" in n
               for n in lf.notes), lf.notes


def test_local_times_that_do_not_exist_are_reported(tmp_path):
    # a logger keeping standard time read as New York time: 02:00…02:45 on 8 March do not exist there
    stamps = [f"2026-03-08 {h:02d}:{m:02d}:00" for h in (1, 2, 3) for m in (0, 15, 30, 45)]
    lf = read_toa5(_toa5(tmp_path / "spring.dat", stamps), "America/New_York")
    assert any("4 rows at local times that do not exist in America/New_York" in n and "--tz" in n
               for n in lf.notes), lf.notes


def test_a_truncated_last_line_is_left_out_and_record_gaps_are_listed(tmp_path):
    stamps = [f"2026-06-01 08:{m:02d}:00" for m in range(0, 60, 5)]
    f = _toa5(tmp_path / "cut.dat", stamps)
    text = f.read_text().replace(',3,0,12.8', ',3,0,12.8\r\n"2026-06-01 08:15:00",3,0,12.8')   # record 3 twice
    text = re.sub(r'",(\d+),', lambda m: f'",{int(m.group(1)) + 3 * (int(m.group(1)) >= 6)},', text)   # 6… → 9…
    f.write_text(text.rstrip("\r\n")[:-6])                                                  # cut mid-line
    lf = read_toa5(f, "UTC")
    t = lf.column(Quantity.BATTERY).times_ns
    assert len(t) == 12                                 # 13 rows, the cut one left out
    assert any("line 17: the last line is cut short" in n for n in lf.notes), lf.notes
    assert any("RECORD 3 again at line 9" in n for n in lf.notes), lf.notes
    assert any("RECORD 5 to 9 at line 12: 3 records missing" in n for n in lf.notes), lf.notes


def test_a_semicolon_export_with_decimal_commas_is_read(tmp_path):
    # HOBOware on a computer set to a European locale: ";" between fields, "," in numbers, a BOM
    src = (DATA / "OF-1_u20_hoboware.csv").read_text(encoding="utf-8").splitlines()
    rows = [next(csv.reader([line])) for line in src]
    text = "\n".join(";".join(f'"{c}"' if i < 2 else c.replace(".", ",") for c in r) for i, r in enumerate(rows))
    f = tmp_path / "semicolon.csv"
    f.write_text("\ufeff" + text + "\n", encoding="utf-8")
    assert looks_like(f) == "hoboware"
    lf = read_hoboware(f)
    assert lf.column(Quantity.LEVEL).values.tolist() == [0.412, 0.418, 0.425]


def test_a_file_with_a_header_and_no_rows_reads_as_empty(tmp_path):
    f = tmp_path / "empty.csv"
    f.write_text("\n".join((DATA / "OF-1_u20_hoboware.csv").read_text().splitlines()[:2]) + "\n")
    assert read_hoboware(f).column(Quantity.LEVEL).times_ns.size == 0


def test_separate_date_and_time_columns_and_a_windows_1252_degree_sign(tmp_path):
    # HOBOware's "separate date and time columns" export, saved in Windows' code page (° is byte 0xB0)
    src = (DATA / "OF-1_u20_hoboware.csv").read_text(encoding="utf-8").splitlines()
    rows = [next(csv.reader([line])) for line in src]
    out = [rows[0], ["#", "Date", "Time, GMT-05:00"] + rows[1][2:]]
    out += [[r[0], *r[1].split(" ", 1), *r[2:]] for r in rows[2:]]
    f = tmp_path / "split.csv"
    f.write_bytes("\r\n".join(",".join(f'"{c}"' if i < 2 else c for c in r) for i, r in enumerate(out))
                  .encode("cp1252") + b"\r\n")
    lf = read_hoboware(f)
    assert lf.column(Quantity.LEVEL).times_ns[0] == utc(2026, 1, 15, 18, 0)
    assert lf.column(Quantity.TEMPERATURE).unit == "degF"
    untitled = tmp_path / "untitled.csv"
    untitled.write_bytes(b"\r\n".join(f.read_bytes().split(b"\r\n")[1:]))
    assert looks_like(untitled) == "hoboware"


def test_a_u24_conductivity_loggers_ranges_are_conductivity(tmp_path):
    # header as in a real U24 export (LimpopoLab's Kruger Gate weir, quoted in its analysis script; Greek mu)
    f = tmp_path / "u24.csv"
    f.write_text('"Plot Title: 21362347"\n"#","Date Time, GMT+02:00","Full Range, \u03bcS/cm (LGR S/N: 21362347, SEN S/N: '
                 '21362347)","Temp, \u00b0C (LGR S/N: 21362347, SEN S/N: 21362347)","Coupler Detached (LGR S/N: '
                 '21362347)","Host Connected (LGR S/N: 21362347)","End Of File (LGR S/N: 21362347)"\n'
                 '1,03/14/26 10:00:00 AM,412.5,24.31,,,\n2,03/14/26 10:10:00 AM,415.0,24.35,,,\n')
    lf = read_hoboware(f)
    cond = lf.column(Quantity.CONDUCTIVITY)
    assert cond is not None and cond.name == "Full Range" and cond.values.tolist() == [412.5, 415.0]
    assert quantity_of("Low Range", "\u00b5S/cm") == (Quantity.CONDUCTIVITY, "uS/cm")


def test_a_toa5_time_outside_the_plausible_window_is_refused(tmp_path):
    f = _toa5(tmp_path / "clock.dat", ["2026-06-01 08:00:00", "2036-06-01 08:05:00"])   # a clock set wrong
    with pytest.raises(ConfigError, match=r"clock.dat:6: TIMESTAMP: .*2036-06-01 08:05:00.*not a plausible time"):
        read_toa5(f, "UTC")


def test_a_real_export_with_two_digit_years_first_is_read_as_year_month_day(tmp_path):
    """HOBOware can write ``20-03-27 12:00:00 AM`` (yy-mm-dd): read as day/month/year that is
    27 March 2020 → 20 March 2027, or, before the 27th, 20 March 2009 … 2026 without an error."""
    lf = read_hoboware(EXPORTS / "hobo_yy_mm_dd.csv")
    t = lf.column(Quantity.TEMPERATURE).times_ns
    assert lf.date_order == "ymd"
    assert t[0] == utc(2020, 3, 10, 3, 40) and t[-1] == utc(2020, 4, 10, 16, 10)     # GMT-04:00
    early = tmp_path / "early.csv"                                # 9 and 10 March only: 2009 and 2010 as d/m/y
    early.write_bytes(b"\n".join((EXPORTS / "hobo_yy_mm_dd.csv").read_bytes().split(b"\n")[:10]))
    assert read_hoboware(early).date_order == "ymd"
    with pytest.raises(ConfigError, match=r"hobo_yy_mm_dd_one_day.csv:3: Date Time: .*year/month/day.*--date-order"):
        read_hoboware(EXPORTS / "hobo_yy_mm_dd_one_day.csv")      # one day: 20 March 2009 or 9 March 2020


# -- HOBOconnect (the app of Onset's MX loggers) ------------------------------------------------
# Written here to the layout of a real HOBOconnect export of an MX2501 pH logger
# (dempsey-CMAR/sensorstrings, inst/testdata/hobo_ph/22058687.csv, GPL-3: not copied): the header
# line as it is, "MM-DD-YYYY hh:mm:ss" times in the zone the header names with its daylight
# saving ("AST/ADT": the real file steps from 01:56:06 to 03:06:06 on 9 March 2025), event
# columns, and event rows after the readings; values ours.

_MX_HEADER = "#,Date-Time (EST/EDT),Temperature (°C) ,Millivolts (mv) ,pH (pH) ,Button Down,Button Up,Host Connected,Stopped,End of File"


def _mx(path: Path, header: str = _MX_HEADER, stamps: tuple[str, ...] = ("03-09-2025 01:36:06", "03-09-2025 01:46:06",
        "03-09-2025 01:56:06", "03-09-2025 03:06:06", "03-09-2025 03:16:06")) -> Path:
    rows = [f"{k + 1},{s},{4.5 + k / 10:.2f},-66.5,8.06,,,,," for k, s in enumerate(stamps)]
    rows += [f"{len(stamps) + 1},03-09-2025 03:17:00,,,,,,Logged,,", f"{len(stamps) + 2},03-09-2025 03:17:05,,,,,,,Logged,"]
    path.write_text("\n".join([header] + rows) + "\n", encoding="utf-8")
    return path


def test_a_hoboconnect_export_is_read_in_the_zone_its_header_names_with_its_daylight_saving(tmp_path):
    f = _mx(tmp_path / "MX2501.csv")
    assert looks_like(f) == "hoboware"
    lf = read_hoboware(f, date_order="mdy")          # one day, every field <= 12: the file cannot settle it
    assert (str(lf.tz), lf.tz_source, lf.date_order) == ("America/New_York", "header", "mdy")
    temp = lf.column(Quantity.TEMPERATURE)
    assert (temp.name, temp.unit) == ("Temperature", "degC")
    # 01:56:06 EST then 03:06:06 EDT: ten minutes apart, as logged
    assert temp.times_ns.tolist()[2:4] == [utc(2025, 3, 9, 6, 56, 6), utc(2025, 3, 9, 7, 6, 6)]
    assert temp.values.tolist() == pytest.approx([4.5, 4.6, 4.7, 4.8, 4.9])    # the event rows hold no reading
    skipped = dict(lf.skipped)
    assert skipped["pH"] == "'pH' is none of ms4watch's quantities (unit 'pH')"
    assert skipped["Host Connected"] == "a status column" and "Millivolts" in skipped


def test_a_hoboconnect_export_in_one_offset_and_channel_names(tmp_path):
    header = "#,Date-Time (EDT),Ch: 1 - Temperature   (°F ),Ch: 2 - Water Level   (ft)"
    f = tmp_path / "MX2001.csv"
    f.write_text(header + "\n1,06/01/2026 08:00:00,68.0,0.42\n2,06/01/2026 08:15:00,68.9,0.45\n", encoding="utf-8")
    lf = read_hoboware(f, date_order="mdy")
    assert (str(lf.tz), lf.tz_source) == ("UTC-04:00", "header")
    level = lf.column(Quantity.LEVEL)
    assert (level.name, level.unit, level.values.tolist()) == ("Water Level", "ft", [0.42, 0.45])
    assert level.times_ns[0] == utc(2026, 6, 1, 12, 0)
    assert lf.column(Quantity.TEMPERATURE).unit == "degF"
    unknown = tmp_path / "zone.csv"
    unknown.write_text(header.replace("(EDT)", "(XYZ)") + "\n1,06/01/2026 08:00:00,68.0,0.42\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"zone.csv:1: Date-Time \(XYZ\): 'XYZ' is not a zone ms4watch knows: give it "
                                          r"\(--tz\)"):
        read_hoboware(unknown, date_order="mdy")


def test_hobo_gaps_and_times_that_go_back_are_listed_event_rows_aside(tmp_path):
    """As the real MX2501 export's last rows do: a day missing, then readings stamped earlier."""
    f = _mx(tmp_path / "MX2501.csv", stamps=("03-07-2025 21:56:06", "03-07-2025 22:06:06", "03-08-2025 22:16:06",
                                             "03-08-2025 22:26:06", "03-08-2025 22:36:06", "03-08-2025 22:16:07"))
    lf = read_hoboware(f)
    assert lf.date_order == "mdy"
    assert "gap of 1 d 10 min before line 4 (logging every 10 min)" in lf.notes
    assert "line 7: the time goes back 19 min 59 s" in lf.notes
    assert not any("line 8" in n or "line 9" in n for n in lf.notes)          # event rows: no readings, no steps
    plain = read_hoboware(DATA / "OF-1_u20_hoboware.csv")
    assert not any(n.startswith(("gap", "line")) for n in plain.notes)


def test_a_semicolon_hoboconnect_export_with_decimal_commas_a_bom_and_crlf(tmp_path):
    header = "#;Date-Time (CET/CEST);Temperature (°C) ;Water Level (m) ;Host Connected;End of File"
    rows = ["1;29.03.2026 01:40:00;4,5;0,305;;", "2;29.03.2026 01:50:00;4,6;0,3048;;",
            "3;29.03.2026 03:00:00;4,7;0,61;;", "4;30.03.2026 03:10:00;;;Logged;"]
    f = tmp_path / "mx_de.csv"
    f.write_bytes(("\r\n".join([header] + rows) + "\r\n").encode("utf-8-sig"))
    assert looks_like(f) == "hoboware"
    lf = read_hoboware(f)
    assert (str(lf.tz), lf.tz_source, lf.date_order) == ("Europe/Berlin", "header", "dmy")
    t, v = lf.column(Quantity.LEVEL).canonical()
    assert v.tolist() == pytest.approx([0.305 / 0.3048, 1.0, 0.61 / 0.3048])
    assert t.tolist() == [utc(2026, 3, 29, 0, 40), utc(2026, 3, 29, 0, 50), utc(2026, 3, 29, 1, 0)]   # CET, then CEST
    odd = tmp_path / "odd.csv"
    odd.write_bytes(f.read_bytes().replace(b"(CET/CEST)", b"(MEZ/MESZ)"))
    with pytest.raises(ConfigError, match=r"'MEZ/MESZ' is not a zone ms4watch knows: give it \(--tz\)"):
        read_hoboware(odd)
    given = read_hoboware(odd, "Europe/Berlin")                 # a zone given stands in for one the header names
    assert given.tz_source == "given" and given.column(Quantity.LEVEL).times_ns.tolist() == t.tolist()


def test_a_10_hz_toa5_keeps_every_tenth_of_a_second(tmp_path):
    """Issue 25 found a 10 Hz TOA5 imported 0 readings without saying why."""
    stamps = [f"2026-06-01 08:00:{k // 10:02d}" + (f".{k % 10}" if k % 10 else "") for k in range(30)]
    lf = read_toa5(_toa5(tmp_path / "fast.dat", stamps, [f"{k / 10:.1f}" for k in range(30)]), "-05:00")
    rain = lf.column(Quantity.RAIN)
    assert len(rain.times_ns) == 30 and rain.times_ns[0] == utc(2026, 6, 1, 13, 0)
    assert set(np.diff(rain.times_ns).tolist()) == {100_000_000}                  # 0.1 s apart, none merged
    assert not [n for n in lf.notes if "RECORD" in n]


def test_turbidity_in_fnu_or_ntu_is_named_so_in_toa5_and_hoboware_as_in_the_other_readers(tmp_path):
    f = tmp_path / "turb.dat"
    f.write_text('"TOA5","OF-1","CR1000","1031","CR1000.Std.32","CPU:t.CR1","1","Turb"\r\n'
                 '"TIMESTAMP","RECORD","Turbidity","Turb_NTU"\r\n"TS","RN","FNU","NTU"\r\n"","","Smp","Smp"\r\n'
                 '"2026-06-01 08:00:00",0,4.1,4.3\r\n"2026-06-01 08:15:00",1,4.2,4.4\r\n')
    lf = read_toa5(f, "-05:00")
    assert sorted(c.sensor for c in lf.columns) == ["Turb_NTU", "Turbidity FNU"]
    h = tmp_path / "turb.csv"
    h.write_text('"#","Date Time, GMT-05:00","Turbidity, FNU (LGR S/N: 1, SEN S/N: 1)"\n'
                 '1,06/01/26 08:00:00 AM,4.1\n2,06/13/26 08:15:00 AM,4.2\n', encoding="utf-8")
    assert [c.sensor for c in read_hoboware(h).columns] == ["Turbidity FNU"]
