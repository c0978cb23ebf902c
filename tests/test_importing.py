"""``ms4watch import`` and ``ms4watch storms`` on logger files written to their published
layouts: units and zones from the headers, stations the registry does not know named, a
misfit ``--format`` refused with the reason. In process (tests/support/cli.py); each command
once as a separate process through the console script (``process=True``)."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.cli import run_cli, run_process

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "contract" / "testdata"
SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01}, {id: RG-2, tip_in: 0.01}]
outfalls: [{id: OF-1, name: Mill St, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
"""


def ms4(*args: str, process: bool = False) -> subprocess.CompletedProcess:
    return (run_process if process else run_cli)(*args, cwd=REPO)


def test_import_into_the_store_and_a_readings_csv_for_replay(tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    stray = tmp_path / "RG-9.dat"
    stray.write_text((DATA / "RG-1_Rain15.dat").read_text().replace('"RG-1"', '"RG-9"', 1))
    args = ["import", str(DATA / "RG-1_Rain15.dat"), str(DATA / "RG-2_hoboware.csv"), str(stray),
            "--registry", str(tmp_path / "sites.yaml"), "--store", store, "--tip", "0.01in",
            "--out", str(tmp_path / "readings.csv")]
    out = ms4(*args, process=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == (f"{DATA / 'RG-1_Rain15.dat'}: toa5, times in UTC-05:00 (standard time of the registry's "
                        "America/New_York: Campbell loggers keep standard time; give --tz if this one kept daylight "
                        "time): 20 readings (RG-1 battery 7, RG-1 level 6, RG-1 rain 7)")
    assert "  column 'PTemp_C' not imported: the logger's panel temperature, not a measurement of the station" in lines
    assert any(line.startswith(f"{DATA / 'RG-2_hoboware.csv'}: hoboware, times in UTC-04:00 (the file's header): "
                               "6 readings (RG-2 rain 6)") for line in lines)
    assert "  20 readings of stations the registry does not know, left out: RG-9 (20)" in lines
    assert lines[-1] == f"26 readings stored in {store}"
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    t0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
    rain = sink.readings("RG-1", "rain", t0, t0 + timedelta(days=1))
    assert [round(r.value, 6) for r in rain][:5] == [0.0, 0.1, 0.2, 0.15, 0.05]      # mm → in
    assert rain[1].time_ns == int(datetime(2026, 6, 1, 13, 15, tzinfo=timezone.utc).timestamp()) * 10**9  # 08:15 EST
    sink.close()
    again = ms4(*args)                                   # the same files again: stored once
    assert again.stdout.splitlines()[-1] == f"0 readings stored in {store}"
    assert again.stdout.count("already stored with the same value: skipped") == 2     # 20 and 6
    replay = ms4("replay", "--registry", str(tmp_path / "sites.yaml"), "--readings", str(tmp_path / "readings.csv"),
                 "--out", str(tmp_path / "events.jsonl"), "--no-progress", process=True)
    assert replay.returncode == 0, replay.stderr
    assert '"kind":"storm","gauge":"RG-1"' in (tmp_path / "events.jsonl").read_text()


def test_import_refuses_what_it_cannot_read(tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    junk = tmp_path / "notes.csv"
    junk.write_text("when,what\nmonday,cleaned the funnel\n")
    out = ms4("import", str(junk), "--registry", str(tmp_path / "sites.yaml"), "--no-store")
    assert out.returncode == 2 and "notes.csv:1: not a file `ms4watch import` reads (first line 'when,what')" in out.stderr
    out = ms4("import", str(DATA / "RG-1_Rain15.dat"), "--format", "hoboware", "--registry",
              str(tmp_path / "sites.yaml"), "--no-store")
    assert out.returncode == 2 and "--format hoboware does not fit this file: its header says it is toa5" in out.stderr


def test_storms_reads_logger_files_and_refuses_a_misfit_format(tmp_path, shared_data):
    out = ms4("storms", str(DATA / "RG-1_Rain15.dat"), "--tz", "America/New_York")
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()
    # 2.54 + 5.08 + 3.81 + 1.27 mm = 12.70 mm = 0.50 in, from 08:15 to 09:00 EDT: qualifying
    assert rows[1].startswith("2026-06-01T12:15:00+00:00,2026-06-01T13:00:00+00:00,0.5,12.70,0.7500,")
    assert rows[1].endswith(",true")
    hobo = ms4("storms", str(DATA / "RG-2_hoboware.csv"), "--tip", "0.01in")
    assert hobo.returncode == 0 and len(hobo.stdout.splitlines()) == 2
    no_tip = ms4("storms", str(DATA / "RG-2_hoboware.csv"))
    assert no_tip.returncode == 2 and "counts tips: give the depth of one tip (--tip)" in no_tip.stderr
    tips = shared_data / "separate_tbrg_cumulative_tips_2024.csv"
    wrong = ms4("storms", str(tips), "--format", "fixed")            # gave storms of its tip counts before
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert "--format fixed does not fit this file: its header says it is a tips file" in wrong.stderr
    toa5 = ms4("storms", str(DATA / "RG-1_Rain15.dat"), "--format", "rdb")
    assert toa5.returncode == 2 and "its header says it is a toa5 file" in toa5.stderr


EXPORTS = DATA / "exports"
UK = """\
municipality: town
timezone: Europe/London
rain_gauges: [{id: RG-2, tip_in: 0.01}]
outfalls: [{id: OF-3, name: Mill St, rain_gauges: [RG-2], flow_floor_gpm: 0.5},
           {id: OF-1, name: Profile, rain_gauges: [RG-2], flow_floor_gpm: 0.5}]
"""


def test_import_day_month_year_dates_right_or_asks_for_the_order(tmp_path):
    (tmp_path / "sites.yaml").write_text(UK)
    out = ms4("import", str(EXPORTS / "dmy_uk.csv"), "--station", "OF-3", "--registry", str(tmp_path / "sites.yaml"),
              "--no-store", "--out", str(tmp_path / "r.csv"))
    assert out.returncode == 0, out.stderr
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[1].startswith("2026-06-01T00:00:00") and rows[-1].startswith("2026-06-19T18:00:00")
    assert "dates day/month/year" in out.stdout
    amb = ms4("import", str(EXPORTS / "one_day_ambiguous.csv"), "--station", "OF-3", "--registry",
              str(tmp_path / "sites.yaml"), "--no-store")
    assert amb.returncode == 2 and "give --date-order mdy or dmy" in amb.stderr
    given = ms4("import", str(EXPORTS / "one_day_ambiguous.csv"), "--date-order", "dmy", "--station", "OF-3",
                "--registry", str(tmp_path / "sites.yaml"), "--no-store", "--out", str(tmp_path / "r2.csv"))
    assert given.returncode == 0, given.stderr
    assert (tmp_path / "r2.csv").read_text().splitlines()[1].startswith("2026-06-05T10:00:00")   # GMT+00:00


def test_import_stores_each_channel_as_its_own_sensor(tmp_path):
    (tmp_path / "sites.yaml").write_text(UK)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    out = ms4("import", str(EXPORTS / "u12_four_channels.csv"), "--station", "OF-1", "--registry",
              str(tmp_path / "sites.yaml"), "--store", store)
    assert out.returncode == 0, out.stderr
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    got = sink.readings("OF-1", "temperature", datetime(2026, 1, 1, tzinfo=timezone.utc),
                        datetime(2026, 2, 1, tzinfo=timezone.utc))
    sink.close()
    assert sorted({r.sensor for r in got}) == ["Temp_Air_Temp", "Temp_Canopy_Temp", "Temp_Ground_Temp",
                                               "Temp_Soil_Temp"]
    assert len(got) == 24


def _toa5(path: Path, records: list[tuple[int, float]], *, start=datetime(2026, 6, 1, 0, 0)) -> Path:
    """A Campbell rain table (RECORD k at start + 5 min * k) as a CR1000 writes it."""
    head = ['"TOA5","RG-1","CR1000","1031","CR1000.Std.32","CPU:rain.CR1","4062","Rain5"',
            '"TIMESTAMP","RECORD","Rain_mm_Tot"', '"TS","RN","mm"', '"","","Tot"']
    body = [f'"{start + timedelta(minutes=5 * k):%Y-%m-%d %H:%M:%S}",{k},{v}' for k, v in records]
    path.write_text("\r\n".join(head + body) + "\r\n")
    return path


def test_overlapping_downloads_are_stored_once_and_a_different_value_is_a_conflict(tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    rain = [(k, round(0.254 * (k % 7 == 0), 3)) for k in range(693)]             # 99 tips of 0.254 mm
    first = _toa5(tmp_path / "first.dat", rain[:400])
    second = _toa5(tmp_path / "second.dat", rain[300:])                            # 100 rows overlap
    base = ["--registry", str(tmp_path / "sites.yaml"), "--store", store, "--tz", "UTC"]
    assert ms4("import", str(first), *base).returncode == 0
    out = ms4("import", str(second), *base)
    assert out.returncode == 0, out.stderr
    assert "  100 readings already stored with the same value: skipped" in out.stdout
    assert out.stdout.splitlines()[-1] == f"293 readings stored in {store}"
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    t0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
    got = sink.readings("RG-1", "rain", t0, t0 + timedelta(days=7))
    assert len(got) == 693 and sum(r.value for r in got) == pytest.approx(99 * 0.254 / 25.4)
    edited = list(rain[600:])
    edited[10] = (610, 9.9)                                                        # a different value at a stored time
    out = ms4("import", str(_toa5(tmp_path / "edited.dat", edited)), *base)
    assert out.returncode == 0, out.stderr
    assert ("  1 reading conflicts with the store (a different value at a stored time), not stored: RG-1 "
            "Rain_mm_Tot 2026-06-03T02:50:00+00:00 stored 0 mm, file 9.9 mm") in out.stdout.replace("0.0 mm", "0 mm")
    assert out.stdout.splitlines()[-1] == f"0 readings stored in {store}"
    assert [r.value for r in sink.readings("RG-1", "rain", t0, t0 + timedelta(days=7))][610] == 0.0
    sink.close()


def test_duplicate_rows_inside_one_file_are_stored_once(tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    rows = [(k, 0.254) for k in range(10)]
    f = _toa5(tmp_path / "dup.dat", rows[:6] + rows[3:6] + rows[6:])             # records 3..5 written twice
    out = ms4("import", str(f), "--registry", str(tmp_path / "sites.yaml"), "--tz", "UTC", "--no-store",
              "--out", str(tmp_path / "r.csv"))
    assert out.returncode == 0, out.stderr
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 11
    assert "  3 rows repeat a time with the same value: stored once" in out.stdout


def test_dry_run_prints_per_column_what_it_would_store_and_stores_nothing(tmp_path):
    (tmp_path / "sites.yaml").write_text(UK)
    store = tmp_path / "store.db"
    out = ms4("import", str(EXPORTS / "u12_four_channels.csv"), "--station", "OF-1", "--dry-run", "--registry",
              str(tmp_path / "sites.yaml"), "--store", f"sqlite:///{store}")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert ("  would store OF-1 Temp_Soil_Temp temperature [degC]: 6 readings, 2026-01-15T15:00:00Z … "
            "2026-01-15T20:00:00Z, min 4, max 9") in lines
    assert sum(line.startswith("  would store OF-1 Temp_") for line in lines) == 4
    assert lines[-1] == "dry run: nothing stored" and not store.exists()


def test_storms_reads_an_rg3_export_in_mm_with_year_month_day_dates():
    out = ms4("storms", str(EXPORTS / "rg3_event_mm_ymd.csv"), "--tip", "0.01in",   # --tip is for counts only
              process=True)
    assert out.returncode == 0, out.stderr
    row = out.stdout.splitlines()[1].split(",")
    # ten tips of 1.27 mm = 12.70 mm = 0.50 in, 08:14:35 to 13:15:30 GMT-04:00: a qualifying storm
    assert row[0] == "2026-06-01T12:14:35+00:00" and row[2:4] == ["0.5", "12.70"] and row[-1] == "true"
    wrong = ms4("storms", str(EXPORTS / "rg3_event_mm_ymd.csv"), "--date-order", "mdy")
    assert wrong.returncode == 2 and "not a date read as month/day/year" in wrong.stderr


def test_a_real_export_with_two_values_at_one_time_keeps_the_first_and_names_the_other(tmp_path):
    (tmp_path / "sites.yaml").write_text(UK)
    out = ms4("import", str(EXPORTS / "20827226.csv"), "--station", "OF-1", "--dry-run", "--registry",
              str(tmp_path / "sites.yaml"))
    assert out.returncode == 0, out.stderr
    assert ("  1 row repeats a time with another value, not stored (the first kept): OF-1 Temp "
            "2019-10-20T14:48:00+00:00 kept 10.32 degC, file 10.78 degC") in out.stdout.splitlines()
    assert ("  would store OF-1 Temp temperature [degC]: 22 readings, 2019-05-27T16:00:00Z … 2022-05-13T12:22:00Z, "
            "min 1.4, max 18.48") in out.stdout.splitlines()
    assert "  column 'DO conc' not imported: 'DO conc' is none of ms4watch's quantities (unit 'mg/L')" in out.stdout


def test_dry_run_of_a_korexo_export_names_fnu_turbidity_the_held_zone_and_serial_numbers(tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    out = ms4("import", str(EXPORTS / "korexo_via_sacra_fnu.csv"), "--station", "OF-1", "--dry-run", "--registry",
              str(tmp_path / "sites.yaml"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"{EXPORTS / 'korexo_via_sacra_fnu.csv'}: korexo, times in UTC-05:00 (the registry's "
                               "America/New_York offset at the file's first time, held")
    assert ("  would store OF-1 Turbidity_FNU turbidity [NTU, the file's FNU] S/N 17A102374: 8 readings, "
            "2019-11-20T18:25:00Z … 2019-12-04T17:45:00Z, min 1.9, max 15.22") in lines
    assert any(line.startswith("  would store OF-1 Temp temperature [degC] S/N 16M102831: 8 readings") for line in lines)
    assert any(line.startswith("  sensor serial numbers: Cond 16M102831") and "Turbidity FNU 17A102374" in line
               for line in lines)
    assert "  column 'ODO mg/L' not imported: 'ODO' is none of ms4watch's quantities (unit 'mg/L')" in lines
    assert lines[-1] == "dry run: nothing stored"


def test_dry_run_of_a_vusitu_export_reads_the_files_offset_and_names_each_temperature_by_its_serial(tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    f = EXPORTS / "vusitu_aquatroll600_live.csv"
    out = ms4("import", str(f), "--station", "OF-1", "--dry-run", "--registry", str(tmp_path / "sites.yaml"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"{f}: vusitu, times in UTC-05:00 (the file's header)")
    assert ("  would store OF-1 Depth level [ft] S/N 671053: 14 readings, 2020-01-24T20:05:14Z … "
            "2020-01-24T20:06:04Z, min 0.541098, max 29.3271") in lines
    assert any(line.startswith("  would store OF-1 Temperature_674484 temperature [degC] S/N 674484: 14 readings")
               for line in lines)
    assert "  instruments: Aqua TROLL 600 Vented S/N 676038, In-Situ Bluetooth Device S/N 674484" in lines
    assert "  column 'Pressure psi' not imported: 'Pressure' is none of ms4watch's quantities (unit 'psi')" in lines
    nameless = ms4("import", str(f), "--dry-run", "--registry", str(tmp_path / "sites.yaml"))
    assert nameless.returncode == 2 and "the file names no station: give --station" in nameless.stderr


def test_a_solinst_export_imports_once_in_the_zone_given_and_a_winsitu_export_without_a_known_zone_is_refused(
        tmp_path):
    (tmp_path / "sites.yaml").write_text(SITES)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    args = ["import", str(EXPORTS / "solinst_edge_2010143.csv"), "--station", "OF-1", "--tz", "-04:00",
            "--registry", str(tmp_path / "sites.yaml"), "--store", store]
    first = ms4(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1] == f"14 readings stored in {store}"
    again = ms4(*args)
    assert "14 readings already stored with the same value: skipped" in again.stdout
    assert again.stdout.splitlines()[-1] == f"0 readings stored in {store}"
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    t0 = datetime(2017, 5, 3, 17, tzinfo=timezone.utc)                       # 13:00 at -04:00
    level = sink.readings("OF-1", "level", t0, t0 + timedelta(days=3))
    assert level[0].time_ns == int(t0.timestamp()) * 10**9 and level[0].value == pytest.approx(1919.32 / 30.48)
    sink.close()
    refused = ms4("import", str(EXPORTS / "winsitu_aquatroll100_dst.csv"), "--station", "OF-1", "--dry-run",
                  "--registry", str(tmp_path / "sites.yaml"))
    assert refused.returncode == 2
    assert ("winsitu_aquatroll100_dst.csv:67: Time Zone: the file's zone 'Westeuropäische Normalzeit/Westeuropäische "
            "Sommerzeit' is not one ms4watch knows") in refused.stderr


def test_a_hoboconnect_export_imports_and_a_file_import_cannot_read_is_refused_naming_what_it_reads(tmp_path):
    """HOBOconnect (the app of Onset's MX loggers) names its time column "Date-Time (EDT)", not
    HOBOware's "Date Time, GMT-04:00": read in that offset, not refused as an unknown rain record."""
    (tmp_path / "sites.yaml").write_text(SITES)
    hc = tmp_path / "MX2001 2026-06-02 09_00_00 EDT (Data EDT).csv"
    hc.write_text('"#","Date-Time (EDT)","Ch: 1 - Water Level   (ft)"\n1,06/01/2026 08:00:00,0.42\n', encoding="utf-8")
    out = ms4("import", str(hc), "--station", "OF-1", "--dry-run", "--date-order", "mdy", "--registry",
              str(tmp_path / "sites.yaml"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith(f"{hc}: hoboware, times in UTC-04:00 (the file's header)")
    assert ("  would store OF-1 Water_Level level [ft]: 1 readings, 2026-06-01T12:00:00Z … 2026-06-01T12:00:00Z, "
            "min 0.42, max 0.42") in out.stdout.splitlines()
    odd = tmp_path / "odd.csv"
    odd.write_text("Zeit;Pegel\n01.06.2026 08:00;0,42\n", encoding="utf-8")
    out = ms4("import", str(odd), "--station", "OF-1", "--dry-run", "--registry", str(tmp_path / "sites.yaml"))
    assert out.returncode == 2
    assert (f"{odd}:1: not a file `ms4watch import` reads (first line 'Zeit;Pegel'): it reads logger exports (hoboware, "
            "toa5, korexo, winsitu, vusitu, solinst) and readings, tips, fixed and rdb records") in out.stderr


def test_storms_refuses_a_sonde_or_level_logger_export_naming_what_it_is():
    out = ms4("storms", str(EXPORTS / "korexo_via_sacra_fnu.csv"))
    assert out.returncode == 2
    assert "korexo_via_sacra_fnu.csv: a KorEXO export holds no rain series" in out.stderr
    vu = ms4("storms", str(EXPORTS / "vusitu_aquatroll600_live.csv"))
    assert vu.returncode == 2 and "vusitu_aquatroll600_live.csv: a VuSitu export holds no rain series" in vu.stderr

