"""A seeded year: the demo pipeline (real loggers, broker, ingest, engine, incidents) over a
simulated stretch of permit year 2026, plus compliance records made as the workbench makes
them; ``ms4watch report annual --year 2026`` writes a CSV per section, the HTML and the PDF,
and every count is checked against the records themselves, one by one: the registry's
inventory, the incident database's storms, dry-weather flows and inspection items, the
inspections recorded, the notices, the store's calibration records and readings."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ms4watch.cli import build_app
from ms4watch.compliance.store import ComplianceStore
from ms4watch.contract.registry import load_registry
from ms4watch.demo import Demo, DemoOptions, demo_configs
from ms4watch.ingest.sinks import SqliteSink

DAYS = 6.0


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("year")
    wd = tmp / "demo"
    Demo(DemoOptions(days=DAYS, speed=0, workdir=wd, http="off"), report=lambda line: None).run()
    store = ComplianceStore(wd / "compliance.db")
    t = datetime(2026, 6, 2, 14, tzinfo=timezone.utc)
    a = store.open_case(origin="complaint", incident_id=None, outfall="OF-1", location="Mill St", description="suds",
                        reporter="a neighbour", reporter_contact=None, observed_at=t, by="smo")
    store.add_entry(a.id, kind="screening", at=t + timedelta(hours=1), by="J. Rivera", notes="grey water",
                    dry_weather=True, flow_observed=True, recorded_by="smo")
    store.add_entry(a.id, kind="tracing", at=t + timedelta(days=1), by="J. Rivera", notes="traced to a laundromat",
                    finding="illicit_discharge", recorded_by="smo")
    store.add_entry(a.id, kind="closure", at=t + timedelta(days=4), by="J. Rivera", notes="disconnected",
                    outcome="eliminated", verification="dry-weather screening: no flow", recorded_by="smo")
    b = store.open_case(origin="screening", incident_id=None, outfall="OF-2", location="Elm Ave", description="routine",
                        reporter=None, reporter_contact=None, observed_at=t, by="smo")
    store.add_entry(b.id, kind="screening", at=t + timedelta(hours=3), by="J. Rivera", notes="dry, no flow",
                    dry_weather=True, flow_observed=False, recorded_by="smo")
    store.add_entry(b.id, kind="screening", at=t - timedelta(days=200), by="J. Rivera", notes="last year's",
                    dry_weather=True, flow_observed=False, recorded_by="smo")          # permit year 2025: not counted
    p = store.add_party(name="Mill St Laundromat", address="1 Mill St", phone=None, email=None, by="smo")
    for kind, law in (("nov", "schenectady-148-II"), ("stop_work", "schenectady-148-I")):
        store.issue_notice(kind=kind, law=law, case_id=a.id, site=None, outfall="OF-1", party_id=p.id, place="1 Mill St",
                           violation="floor drain to the storm sewer", requirements=["eliminate"], remedy="disconnect",
                           remediation_days=10, violation_since=t.date(), prior=[], issued_at=t + timedelta(days=1),
                           by="smo", signatory="Dana Ortiz")
    store.close()
    (tmp / "ms4watch.toml").write_text(f'registry = "{demo_configs() / "sites.yaml"}"\ndata_dir = "{wd}"\n')
    out = tmp / "report"
    r = CliRunner().invoke(build_app(), ["report", "annual", "--year", "2026", "--out", str(out),
                                         "--config", str(tmp / "ms4watch.toml")])
    assert r.exit_code == 0, r.output
    return wd, out, r.output


def rows(out: Path, section: str) -> list[dict[str, str]]:
    with open(out / f"{section}.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_every_count_is_its_records(seeded):
    wd, out, printed = seeded
    reg = load_registry(demo_configs() / "sites.yaml")
    db = sqlite3.connect(wd / "incidents.db")
    start = "2026-03-10T04:00:00"        # 10 March 2026, 00:00 EST, in UTC

    assert [r["outfall"] for r in rows(out, "outfalls")] == sorted(o.id for o in reg.outfalls)
    assert [(r["outfall"], r["screenings"], r["flow_observed"]) for r in rows(out, "screened")] == \
        [("OF-1", "1", "True"), ("OF-2", "1", "False")]
    dwf = {s for (s,) in db.execute("SELECT subject FROM incidents WHERE kind = 'dry_weather_flow' AND "
                                    "suppressed IS NULL AND start >= ?", (start,))}
    assert {r["outfall"] for r in rows(out, "flagged")} == dwf | {"OF-1"}      # + the screening that found flow
    for r in rows(out, "flagged"):
        n = db.execute("SELECT COUNT(*) FROM incidents WHERE kind = 'dry_weather_flow' AND subject = ? AND "
                       "suppressed IS NULL AND start >= ?", (r["outfall"], start)).fetchone()[0]
        assert int(r["incidents"]) == n
    assert [r["case"] for r in rows(out, "illicit_found")] == ["IDDE-2026-001"]
    assert [r["case"] for r in rows(out, "illicit_eliminated")] == ["IDDE-2026-001"]
    assert [r["site"] for r in rows(out, "construction_sites")] == sorted(s.id for s in reg.construction_sites)
    storms = [i for (i,) in db.execute("SELECT id FROM incidents WHERE kind = 'storm' AND start >= ? ORDER BY start, id",
                                       (start,))]
    assert storms and [int(r["incident"]) for r in rows(out, "storms")] == storms
    items = db.execute("SELECT id, subject, deadline, event FROM incidents WHERE kind = 'inspection_due' AND "
                       "(resolution IS NULL OR resolution != 'retracted') ORDER BY deadline, id").fetchall()
    report = {int(r["incident"]): r for r in rows(out, "inspections")}
    assert sorted(report) == sorted(i for i, *_ in items) and items
    end = datetime.fromisoformat(max(at for (at,) in db.execute("SELECT updated_at FROM incidents")))
    for iid, site, deadline, event in items:
        # the engine's own record of the inspection that closed the item (after it opened)
        closed = json.loads(event)["closed_at"]
        closed = datetime.fromisoformat(closed) if closed else None
        due = datetime.fromisoformat(deadline)
        expected = ("on_time" if closed <= due else "late") if closed else ("missed" if end > due else "not_yet_due")
        assert report[iid]["status"] == expected, (iid, site, closed, deadline)
        assert (datetime.fromisoformat(report[iid]["inspected_at"]) if report[iid]["inspected_at"] else None) == closed
    statuses = {r["status"] for r in report.values()}
    assert {"on_time", "not_yet_due"} <= statuses          # the demo's inspector visits CS-1 in time; a cycle runs
    assert [(r["notice"], r["kind"]) for r in rows(out, "enforcement")] == [
        ("NOV-2026-001", "notice of violation"), ("SWO-2026-001", "stop-work order")]
    sink = SqliteSink(wd / "store.db")
    try:
        recs = sink.calibration_history(start=datetime(2026, 3, 10, 5, tzinfo=timezone.utc))
        assert [r["record"] for r in rows(out, "calibrations_done")] == [x.id for x in sorted(recs, key=lambda x: (x.performed, x.id))]
        up = {r["station"]: r for r in rows(out, "uptime")}
        assert set(up) >= {o.id for o in reg.outfalls} | {g.id for g in reg.rain_gauges}
        of1 = sink.readings("OF-1", "flow", datetime(2026, 3, 10, 4, tzinfo=timezone.utc), datetime.now(timezone.utc))
        assert int(up["OF-1"]["hours_with_readings"]) == len({r.time_ns // 3_600_000_000_000 for r in of1
                                                              if r.value is not None}) > 0
    finally:
        sink.close()
    for label, n in (("Outfalls in the inventory", len(reg.outfalls)), ("Qualifying storms (>= 0.5 in)", len(storms)),
                     ("Enforcement actions", 2), ("Illicit discharges eliminated", 1)):
        assert f"  {label}: {n}\n" in printed


def test_the_html_links_every_count_and_the_pdf_reads_back(seeded):
    _, out, _ = seeded
    html = (out / "report.html").read_text()
    for name in ("outfalls", "screened", "flagged", "illicit_found", "illicit_eliminated", "construction_sites",
                 "storms", "inspections", "enforcement", "calibrations_done", "calibrations_overdue", "uptime"):
        assert f'href="{name}.csv"' in html and (out / f"{name}.csv").exists()
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext is missing: apt-get install poppler-utils")
    text = subprocess.run(["pdftotext", str(out / "report.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "Permit year 2026" in text and "Illicit discharges eliminated" in text and "IDDE-2026-001" in text


@pytest.mark.parametrize("make", [False, True], ids=["missing", "empty"])
def test_the_command_refuses_a_data_directory_without_the_towns_records(tmp_path, make):
    wd = tmp_path / "nowhere"
    if make:
        wd.mkdir()
    (tmp_path / "ms4watch.toml").write_text(f'registry = "{demo_configs() / "sites.yaml"}"\ndata_dir = "{wd}"\n')
    r = CliRunner().invoke(build_app(), ["report", "annual", "--year", "2026", "--out", str(tmp_path / "out"),
                                         "--config", str(tmp_path / "ms4watch.toml")])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(wd) in lines[0] and "incidents.db" in lines[0], r.output
    assert not (wd / "compliance.db").exists() and not (wd / "incidents.db").exists()
    assert not (tmp_path / "out").exists()
