"""Drift corrections stored apart from the readings: audited, reversible, applied on reading
back (raw kept); the rules run on corrected values when asked and say so."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.replay import replay_files
from ms4watch.contract.drift import Basis, DriftCorrection
from ms4watch.contract.timeutil import iso_utc, to_ns
from ms4watch.contract.wire import CanonicalReading
from ms4watch.evidence import StoreReadings
from ms4watch.ingest.corrections import CorrectedReadings, CorrectionError, CorrectionStore
from ms4watch.ingest.stores.base import StoredMessage
from ms4watch.ingest.stores.sqlite import SqliteStore
from tests.support.cli import run_cli, run_process

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
MIN = 60 * 10**9
REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


def ns(minutes: float) -> int:
    return to_ns(T0) + int(minutes * MIN)


def test_audited_reversible_never_deleted(tmp_path):
    store = CorrectionStore(tmp_path / "corrections.db")
    c = store.add("DS-1", "turbidity", DriftCorrection(ns(0), ns(100), drift=-8.0), by="Lee Tech",
                  why="visit of June 1: sonde read 8 % high in 20 NTU StablCal", sensor="turb", now_ns=ns(200))
    assert c.active and c.correction.max_allowable_pct == 30.0          # turbidity's limit by default
    with pytest.raises(CorrectionError, match=f"correction {c.id} of DS-1 turbidity covers part"):
        store.add("DS-1", "turbidity", DriftCorrection(ns(50), ns(150)), by="x", why="y")
    with pytest.raises(CorrectionError, match="who"):
        store.add("DS-1", "turbidity", DriftCorrection(ns(200), ns(300)), by=" ", why="y")
    r = store.revert(c.id, by="Pat Doe", why="wrong standard lot", now_ns=ns(300))
    assert not r.active and (r.reverted_by, r.reverted_why) == ("Pat Doe", "wrong standard lot")
    assert [(a.action, a.who, a.why) for a in store.audit(c.id)] == [
        ("added", "Lee Tech", "visit of June 1: sonde read 8 % high in 20 NTU StablCal"),
        ("reverted", "Pat Doe", "wrong standard lot")]
    with pytest.raises(CorrectionError, match="reverted already"):
        store.revert(c.id, by="Pat Doe", why="again")
    assert store.in_force("DS-1", "turbidity", ns(0), ns(100)) == []
    store.add("DS-1", "turbidity", DriftCorrection(ns(50), ns(150)), by="x", why="the right lot")   # no clash now
    store.close()
    db = sqlite3.connect(tmp_path / "corrections.db")
    for sql in ("DELETE FROM corrections", "UPDATE correction_audit SET who = 'x'", "DELETE FROM correction_audit",
                "UPDATE corrections SET drift = 5 WHERE id = 2"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only|never deleted|only changes"):
            db.execute(sql)


def test_corrected_readings_keep_the_raw_ones_and_say_which(tmp_path):
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    rows = tuple(CanonicalReading(ns(m), "DS-1", "LOG-DS1", "turb", "turbidity", 10.0, "NTU", "", 1)
                 for m in (70, 75, 80))
    sink.write([StoredMessage("LOG-DS1", 1, rows)])
    store = CorrectionStore(tmp_path / "corrections.db")
    store.add("DS-1", "turbidity", DriftCorrection(ns(0), ns(100), drift=40.0), by="Lee", why="visit",
              sensor="turb")
    start, end = T0, T0 + timedelta(hours=2)
    corrected = CorrectedReadings(sink, store)
    got = corrected.readings("DS-1", "turbidity", start, end)
    assert [(r.value, r.flags) for r in got] == [(pytest.approx(12.8), "drift_corrected"),
                                                 (pytest.approx(13.0), "drift_corrected"),
                                                 (pytest.approx(13.2), "drift_corrected,not_reportable")]
    assert [r.value for r in sink.readings("DS-1", "turbidity", start, end)] == [10.0, 10.0, 10.0]   # raw kept
    assert corrected.basis is Basis.CORRECTED


def test_replay_on_corrected_values_says_so(tmp_path):
    """The downstream sonde read 25 % high by the visit: raw, the pair shows a contrast;
    corrected, it does not — and every event says which values it used."""
    (tmp_path / "sites.yaml").write_text(
        "municipality: t\ntimezone: America/New_York\n"
        "rain_gauges: [{id: RG-1}]\nturbidity_pairs: [{id: TP-1, upstream: US-1, downstream: DS-1}]\n")
    lines = ["time,station,quantity,value,unit"] + [f"{iso_utc(ns(m))},RG-1,rain,0.01,in" for m in range(0, 30, 5)]
    for m in range(0, 60, 5):
        lines += [f"{iso_utc(ns(600 + m))},US-1,turbidity,{10.0 + 0.1 * (m % 2)},NTU",
                  f"{iso_utc(ns(600 + m))},DS-1,turbidity,{17.0 + 0.1 * (m % 2)},NTU"]
    (tmp_path / "readings.csv").write_text("\n".join(lines) + "\n")
    store = CorrectionStore(tmp_path / "corrections.db")
    store.add("DS-1", "turbidity", DriftCorrection(ns(-10_000), ns(700), drift=-25.0), by="Lee", why="visit")
    store.close()
    raw_n, *_ = replay_files(tmp_path / "sites.yaml", tmp_path / "readings.csv", tmp_path / "raw.jsonl",
                            show_progress=False)
    cor_n, *_ = replay_files(tmp_path / "sites.yaml", tmp_path / "readings.csv", tmp_path / "cor.jsonl",
                            show_progress=False, corrections=tmp_path / "corrections.db")
    raw = [json.loads(x) for x in (tmp_path / "raw.jsonl").read_text().splitlines()]
    cor = [json.loads(x) for x in (tmp_path / "cor.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in raw].count(AlertKind.TURBIDITY_CONTRAST.value) == 1
    assert AlertKind.TURBIDITY_CONTRAST.value not in [e["kind"] for e in cor]
    assert [e["kind"] for e in cor].count(AlertKind.STORM.value) == 1
    assert all("values" not in e for e in raw) and all(e["values"] == "corrected" for e in cor)


def test_evidence_says_corrected(tmp_path):
    from ms4watch.alerts.notifiers.email.chart import csv_excerpt
    from ms4watch.contract.registry import parse_registry
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    sink.write([StoredMessage("LOG-RG1", 1, (CanonicalReading(ns(5), "RG-1", "LOG-RG1", "rain", "rain", 0.01, "in",
                                                              "", 1),))])
    reg = parse_registry("municipality: t\ntimezone: UTC\nrain_gauges: [{id: RG-1}]\n")
    inc = {"kind": "storm", "subject": "RG-1", "event": {"gauge": "RG-1"}}
    store = CorrectionStore(tmp_path / "corrections.db")
    raw = StoreReadings(sink, reg)(inc, T0, T0 + timedelta(hours=1))
    none_in_force = StoreReadings(CorrectedReadings(sink, store), reg)(inc, T0, T0 + timedelta(hours=1))
    assert none_in_force.attrs["values"] == "raw"             # asked for corrected; nothing to correct: says raw
    store.add("RG-1", "rain", DriftCorrection(ns(0), ns(10), drift=5.0), by="Lee Tech", why="funnel check")
    cor = StoreReadings(CorrectedReadings(sink, store), reg)(inc, T0, T0 + timedelta(hours=1))
    assert raw.attrs["values"] == "raw" and not csv_excerpt(raw).startswith(b"#")
    assert csv_excerpt(cor).startswith(b"# values: corrected for fouling and drift")


def test_the_command_line(tmp_path):
    def run(*a, process=False):
        return (run_process if process else run_cli)("corrections", *a, "--db", str(tmp_path / "c.db"), cwd=REPO)

    out = run("add", "--station", "DS-1", "--quantity", "turbidity", "--from", "2026-05-01T00:00:00Z", "--to",
              "2026-06-01T00:00:00Z", "--fouling", "-1.5", "--drift", "6", "--by", "Lee", "--why", "June visit", process=True)   # the real entry point
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("1: DS-1 turbidity 2026-05-01T00:00:00Z → 2026-06-01T00:00:00Z: fouling -1.5, "
                                  "drift +6 %, not reportable past ±30 % — added")
    assert run("revert", "1", "--by", "Pat", "--why", "typo").returncode == 0
    listed = run("list").stdout
    assert "— reverted" in listed and "added by Lee: June visit" in listed and "reverted by Pat: typo" in listed
    bad = run("revert", "7", "--by", "Pat", "--why", "x")
    assert bad.returncode == 2 and bad.stderr.strip() == "error: no correction 7"


def test_a_coalitions_old_shared_file_is_split_among_the_towns(tmp_path):
    """Before corrections were a town's, a coalition kept them all in DATA_DIR/corrections.db:
    each goes to the one town whose registry has its station, with its audit log and id; one
    whose station both towns have stays behind, said so."""
    from ms4watch.ingest.corrections import split_shared
    shared = CorrectionStore(tmp_path / "corrections.db")
    a = shared.add("OF-1", "flow", DriftCorrection(ns(0), ns(100), drift=-5.0), by="Ann", why="glen only")
    b = shared.add("OF-12", "flow", DriftCorrection(ns(0), ns(100), drift=3.0), by="Bo", why="both have OF-12")
    c = shared.add("RG-7", "rain", DriftCorrection(ns(0), ns(100), drift=1.0), by="Cy", why="rott only")
    shared.revert(c.id, by="Cy", why="wrong gauge")
    shared.close()
    towns = {"glenville": (tmp_path / "glenville", {"OF-1", "OF-12"}),
             "rotterdam": (tmp_path / "rotterdam", {"OF-12", "RG-7"})}
    report = split_shared(tmp_path / "corrections.db", towns)
    assert report[0].endswith("2 of 3 corrections moved to their towns' folders")
    assert len(report) == 2 and f"correction {b.id} of OF-12 flow left in" in report[1]
    assert "glenville, rotterdam" in report[1]
    assert not (tmp_path / "corrections.db").exists() and (tmp_path / "corrections.shared.db").exists()
    glen = CorrectionStore(tmp_path / "glenville" / "corrections.db")
    rott = CorrectionStore(tmp_path / "rotterdam" / "corrections.db")
    assert [(x.id, x.station, x.why, x.active) for x in glen.list()] == [(a.id, "OF-1", "glen only", True)]
    assert [(x.id, x.station, x.reverted_why) for x in rott.list()] == [(c.id, "RG-7", "wrong gauge")]
    assert [e.action for e in rott.audit(c.id)] == ["added", "reverted"]
    assert rott.add("RG-7", "rain", DriftCorrection(ns(200), ns(300)), by="x", why="y").id == c.id + 1


def test_the_command_line_of_a_coalition_names_the_town(tmp_path):
    for town in ("glenville", "rotterdam"):
        (tmp_path / f"{town}.yaml").write_text(f"municipality: {town}\ntimezone: America/New_York\n"
                                               "rain_gauges: [{id: RG-1, tip_in: 0.01}]\n"
                                               "outfalls: [{id: OF-12, name: x, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]\n")
    (tmp_path / "ms4watch.toml").write_text(f'registries = ["{tmp_path}/glenville.yaml", "{tmp_path}/rotterdam.yaml"]\n'
                                            f'data_dir = "{tmp_path}/data"\n')

    def run(*a):
        return run_cli("corrections", *a, "--config", str(tmp_path / "ms4watch.toml"), cwd=REPO)

    add = ("add", "--station", "OF-12", "--quantity", "flow", "--from", "2026-05-01T00:00:00Z", "--to",
           "2026-06-01T00:00:00Z", "--drift", "6", "--by", "Lee", "--why", "June visit")
    out = run(*add)
    assert out.returncode == 2 and "--town glenville | --town rotterdam" in out.stderr
    assert run(*add, "--town", "rotterdam").returncode == 0
    assert "June visit" in run("list", "--town", "rotterdam").stdout
    assert run("list", "--town", "glenville").stdout == ""
    assert (tmp_path / "data" / "rotterdam" / "corrections.db").exists()
    assert not (tmp_path / "data" / "corrections.db").exists()
