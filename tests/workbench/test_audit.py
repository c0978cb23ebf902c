"""The workbench's audit log is append-only: SQLite refuses to change or delete a row."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from ms4watch.workbench.records.suppressions import SuppressionKind
from ms4watch.workbench.roles import Actor, Role, Via


def test_rows_cannot_be_changed_or_deleted(bench):
    actor = Actor("smo", "Smo User", Role.SMO, "schenectady", Via.WEB, "10.0.0.7", 3)
    bench.workbench.audit.record(actor, "incident.acknowledge", target="incident:1", detail="on site")
    [row] = bench.workbench.audit.entries(target="incident:1")
    assert (row.who, row.role, row.via, row.address, row.detail) == ("smo", "smo", "web", "10.0.0.7", "on site")
    conn = bench.workbench.conn
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE audit SET who = 'someone else'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM audit")
    assert bench.workbench.audit.entries(target="incident:1")[0].who == "smo"


def test_the_workbench_records_take_its_clock(bench, clock):
    """The pipeline's clock (the demo's simulated day) stamps the audit log, inspection reports
    and approvals, as it stamps compliance records and incidents: one clock per town."""
    from ms4watch.workbench.records.inspections import ReportIn
    wb = bench.workbench
    assert clock() < datetime.now(timezone.utc) - timedelta(days=30)        # not today
    actor = Actor("smo", "Smo User", Role.SMO, "schenectady", Via.WEB, "10.0.0.7", 3)
    wb.audit.record(actor, "incident.acknowledge", target="incident:9", detail="on site")
    assert wb.audit.entries(target="incident:9")[0].at == clock()
    site = wb.registry.construction_sites[0].id
    r = wb.inspections.reports.add(wb.registry.municipality, ReportIn(
        site=site, at=clock() - timedelta(hours=1), inspector="J. Rivera", credential="pe",
        license_no="PE-1", disturbed_areas="a", stabilized_areas="b", idle_areas="c", sediment_pct=10,
        maintenance="none", deficiencies="none", certified=True), by="smo", photos=[])
    assert r.recorded_at == clock()
    s = wb.inventory.store.add(municipality=wb.registry.municipality, kind=next(iter(SuppressionKind)),
                                outfall=wb.registry.outfalls[0].id, start=clock(),
                                end=clock() + timedelta(hours=2), reason="hydrant flushing", by="smo")
    assert s.recorded_at == clock()
