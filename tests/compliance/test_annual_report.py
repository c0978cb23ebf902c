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

from ms4watch.compliance.store import ComplianceStore
from ms4watch.contract.registry import load_registry
from ms4watch.demo import Demo, DemoOptions, demo_configs
from ms4watch.ingest.stores import SqliteStore
from tests.support.cli import run_cli
from tests.support.servers import have, mosquitto

DAYS = 6.0


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """The demo through a real Mosquitto: the embedded broker (amqtt, in this process) cost a
    third of the simulation's CPU, and tests/test_demo.py is where it is tested."""
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    tmp = tmp_path_factory.mktemp("year")
    wd = tmp / "demo"
    with mosquitto(tmp / "mosquitto") as broker:
        Demo(DemoOptions(days=DAYS, speed=0, workdir=wd, http="off", broker_url=broker.url),
             report=lambda line: None).run()
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
    gone = store.issue_notice(kind="nov", law="schenectady-148-II", case_id=a.id, site=None, outfall="OF-1",
                              party_id=p.id, place="3 Mill St", violation="wrong address", requirements=["eliminate"],
                              remedy="disconnect", remediation_days=10, violation_since=t.date(), prior=[],
                              issued_at=t + timedelta(days=2), by="smo", signatory="Dana Ortiz")
    store.notice_event(gone.id, kind="withdrawn", at=t + timedelta(days=3), by="smo",
                       note="issued to the wrong property")
    # a notice withdrawn: listed with its status, not counted
    w = store.issue_notice(kind="nov", law="schenectady-148-I", case_id=None, site="CS-2", outfall=None,
                           party_id=p.id, place="Quarry Road", violation="no silt fence", requirements=["install"],
                           remedy="install silt fence", remediation_days=5, violation_since=t.date(), prior=[],
                           issued_at=t + timedelta(days=2), by="smo", signatory="Dana Ortiz")
    store.notice_event(w.id, kind="withdrawn", at=t + timedelta(days=3), by="smo", note="wrong site")
    plan = store.add_swppp(site="CS-2", title="Quarry Road Plaza SWPPP rev 2", party_id=p.id, received_at=t,
                           deviates=False, by="smo")
    store.swppp_event(plan.id, kind="complete", at=t + timedelta(days=2), by="smo")
    store.swppp_event(plan.id, kind="decided", at=t + timedelta(days=9), by="smo", outcome="approved_with_conditions")
    store.close()
    (tmp / "ms4watch.toml").write_text(f'registry = "{demo_configs() / "sites.yaml"}"\ndata_dir = "{wd}"\n')
    out = tmp / "report"
    r = run_cli("report", "annual", "--year", "2026", "--out", str(out),
                "--config", str(tmp / "ms4watch.toml"))
    assert r.returncode == 0, r.output
    return wd, out, r.output


def rows(out: Path, section: str) -> list[dict[str, str]]:
    with open(out / f"{section}.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.mosquitto
def test_every_count_is_its_records(seeded):
    wd, out, printed = seeded
    reg = load_registry(demo_configs() / "sites.yaml")
    db = sqlite3.connect(wd / "incidents.db")
    start = "2026-01-03T05:00:00"        # 3 January 2026, 00:00 EST, in UTC (GP-0-24-001's year)

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
        expected = ("on time" if closed <= due else "late") if closed else ("missed" if end > due else "not yet due")
        assert report[iid]["status"] == expected, (iid, site, closed, deadline)
        assert (datetime.fromisoformat(report[iid]["inspected_at"]) if report[iid]["inspected_at"] else None) == closed
    statuses = {r["status"] for r in report.values()}
    assert {"on time", "not yet due"} <= statuses          # the demo's inspector visits CS-1 in time; a cycle runs
    assert [(r["notice"], r["kind"], r["status"], r["counted"]) for r in rows(out, "enforcement")] == [
        ("NOV-2026-001", "notice of violation", "in force", "True"),
        ("SWO-2026-001", "stop-work order", "in force", "True")]
    assert [(r["notice"], r["status"], r["reason"], r["counted"]) for r in rows(out, "notices_withdrawn")] == [
        ("NOV-2026-002", "withdrawn", "issued to the wrong property", "False"),
        ("NOV-2026-003", "withdrawn", "wrong site", "False")]              # listed, not enforcement actions
    assert [r["notice"] for r in rows(out, "idde_enforcement")] == ["NOV-2026-001"]           # § 148 Art. II: MCM 3
    assert [r["notice"] for r in rows(out, "construction_enforcement")] == ["SWO-2026-001"]   # Art. I
    assert [(r["case"], r["status"]) for r in rows(out, "complaints")] == [("IDDE-2026-001", "closed")]
    assert {r["outfall"]: r["monitored"] for r in rows(out, "outfalls")} == {o.id: "True" for o in reg.outfalls}
    assert [(r["swppp"], r["status"], r["outcome"]) for r in rows(out, "swppp_reviews")] == [
        ("SWPPP-2026-001", "decided", "approved_with_conditions")]
    assert printed.splitlines()[0].startswith("brookhollow, reporting year 2026 (2026-01-03 to 2027-01-03, exclusive)")
    for label, n in (("Enforcement under the illicit-discharge law", 1), ("Enforcement under the construction law", 1),
                     ("Complaints received", 1), ("SWPPP reviews", 1), ("Fines and penalties assessed (construction)",
                                                                         "—"),
                     ("Town oversight inspections of construction sites", "—")):
        assert f"  {label}: {n}\n" in printed, label
    sink = SqliteStore(wd / "store.db")
    try:
        recs = sink.calibration_history(start=datetime(2026, 1, 3, 5, tzinfo=timezone.utc))
        assert [r["record"] for r in rows(out, "calibrations_done")] == [x.id for x in sorted(recs, key=lambda x: (x.performed, x.id))]
        up = {r["station"]: r for r in rows(out, "uptime")}
        assert set(up) >= {o.id for o in reg.outfalls} | {g.id for g in reg.rain_gauges}
        of1 = sink.readings("OF-1", "flow", datetime(2026, 1, 3, 5, tzinfo=timezone.utc), datetime.now(timezone.utc))
        assert int(up["OF-1"]["hours_with_readings"]) == len({r.time_ns // 3_600_000_000_000 for r in of1
                                                              if r.value is not None}) > 0
    finally:
        sink.close()
    for label, n in (("Outfalls in the inventory", len(reg.outfalls)), ("Qualifying storms (>= 0.50 in)", len(storms)),
                     ("Enforcement actions", 2), ("Illicit discharges eliminated", 1)):
        assert f"  {label}: {n}\n" in printed


@pytest.mark.mosquitto
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
    assert "GP-0-24-001 annual report, reporting year 2026" in text and "Illicit discharges eliminated" in text
    assert "IDDE-2026-001" in text and "January 3, 2026 to January 2, 2027" in text
    for words in ("NYR20A999", "Town of Brookhollow", "Pat Doe", "I certify under penalty of law", "40 CFR 122.22(d)",
                  "Signature", "MCM 3", "MCM 4", "Fines and penalties assessed"):
        assert words in text, words


@pytest.mark.mosquitto
def test_the_period_and_continuous_monitoring_are_the_towns_choice(seeded):
    """The registry's annual_report: another first day (GP-0-15-003's 10 March) moves the year;
    continuous monitoring counts an outfall as screened when the town says so."""
    from ms4watch.compliance import report as rp
    from ms4watch.server import open_town
    from ms4watch.settings import load_settings
    from ms4watch.workbench.services.stations import stations_of
    wd, _, _ = seeded
    base = load_registry(demo_configs() / "sites.yaml")
    reg = base.model_copy(update={"annual_report": base.annual_report.model_copy(
        update={"year_starts": "03-10", "continuous_monitoring_screens": True})})
    town = open_town(load_settings(None, registry=demo_configs() / "sites.yaml", data_dir=wd))
    store, sink = town.open_compliance(), town.open_store()
    try:
        r = rp.build(registry=reg, store=store, incidents=town.incidents, year=2026,
                     now=datetime(2026, 6, 8, tzinfo=timezone.utc), calibrations=sink, readings=sink,
                     stations=lambda: stations_of(reg))
    finally:
        sink.close()
        town.close()
        store.close()
    assert (r.start.isoformat(), r.end.isoformat()) == ("2026-03-10T00:00:00-04:00", "2027-03-10T00:00:00-05:00")
    screened = {x["outfall"]: x["method"] for x in r.sections["screened"].rows}
    assert screened == {"OF-1": "field screening + continuous monitoring", "OF-2": "field screening + continuous monitoring",
                        "OF-3": "continuous monitoring"}
    assert r.permit.id == "GP-0-24-001" and r.permittee.spdes_id == "NYR20A999"


@pytest.mark.parametrize("make", [False, True], ids=["missing", "empty"])
def test_the_command_refuses_a_data_directory_without_the_towns_records(tmp_path, make):
    wd = tmp_path / "nowhere"
    if make:
        wd.mkdir()
    (tmp_path / "ms4watch.toml").write_text(f'registry = "{demo_configs() / "sites.yaml"}"\ndata_dir = "{wd}"\n')
    r = run_cli("report", "annual", "--year", "2026", "--out", str(tmp_path / "out"),
                "--config", str(tmp_path / "ms4watch.toml"))
    assert r.returncode == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(wd) in lines[0] and "incidents.db" in lines[0], r.output
    assert not (wd / "compliance.db").exists() and not (wd / "incidents.db").exists()
    assert not (tmp_path / "out").exists()
