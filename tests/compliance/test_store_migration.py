"""A compliance.db written by the version before notices had provisions, recipients and
frozen letters opens, keeps its notices readable (as issued to their one party, citing the
law's default provision), and takes the new records."""

from __future__ import annotations

import sqlite3
from datetime import date, datetime, timezone

import pytest

from ms4watch.compliance.store import ComplianceStore, Recipient

# The notice tables as main created them on 2026-12-01 (compliance/store.py before this change).
OLD = """
CREATE TABLE parties (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL, phone TEXT, email TEXT,
    recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE cases (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE,
    origin TEXT NOT NULL CHECK (origin IN ('incident', 'complaint', 'screening')),
    incident_id INTEGER, outfall TEXT, location TEXT NOT NULL, description TEXT NOT NULL,
    reporter TEXT, reporter_contact TEXT, observed_at TEXT NOT NULL,
    opened_by TEXT NOT NULL, opened_at TEXT NOT NULL);
CREATE TABLE notices (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, kind TEXT NOT NULL CHECK (kind IN ('nov', 'stop_work')),
    law TEXT NOT NULL, case_id INTEGER REFERENCES cases (id), site TEXT, outfall TEXT,
    party_id INTEGER NOT NULL REFERENCES parties (id), place TEXT NOT NULL, violation TEXT NOT NULL,
    requirements TEXT NOT NULL, remedy TEXT NOT NULL, remediation_days INTEGER,
    violation_since TEXT NOT NULL, prior TEXT NOT NULL, issued_at TEXT NOT NULL, issued_by TEXT NOT NULL,
    signatory TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TABLE notice_events (
    id INTEGER PRIMARY KEY, notice_id INTEGER NOT NULL REFERENCES notices (id),
    kind TEXT NOT NULL CHECK (kind IN ('mailed', 'posted', 'delivered', 'appeal_filed', 'hearing_held', 'decided',
                                       'decision_filed', 'complied', 'lifted', 'withdrawn')),
    at TEXT NOT NULL, reference TEXT, outcome TEXT, note TEXT, recorded_by TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE TRIGGER notices_no_update BEFORE UPDATE ON notices
    BEGIN SELECT RAISE(ABORT, 'compliance records are never changed (notices)'); END;
INSERT INTO parties VALUES (1, 'Elm St Builders', '9 Elm St', NULL, NULL, 'smo', '2026-05-01T12:00:00+00:00');
INSERT INTO notices VALUES (1, 'NOV-2026-001', 'nov', 'schenectady-148-I', NULL, 'CS-7', NULL, 1, 'Elm St site',
    'silt fence down', '[]', 'reinstall it', NULL, '2026-05-20', '[]', '2026-06-01T14:00:00+00:00', 'smo',
    'Dana Ortiz', '2026-06-01T14:00:00+00:00');
INSERT INTO notice_events VALUES (1, 1, 'delivered', '2026-06-03T15:00:00+00:00', 'green card', NULL, NULL, 'smo',
    '2026-06-03T15:00:00+00:00');
"""


@pytest.fixture
def old_db(tmp_path):
    path = tmp_path / "compliance.db"
    conn = sqlite3.connect(path)
    conn.executescript(OLD)
    conn.close()
    return path


def test_an_older_compliance_db_is_migrated_on_open_and_its_notices_read_as_issued(old_db):
    store = ComplianceStore(old_db, clock=lambda: datetime(2026, 6, 5, tzinfo=timezone.utc))
    try:
        cols = {r[1] for r in store.conn.execute("PRAGMA table_info(notices)")}
        assert {"provisions", "remedies", "corrects"} <= cols
        assert "recipient_id" in {r[1] for r in store.conn.execute("PRAGMA table_info(notice_events)")}
        old = store.notice(1)
        assert (old.provisions, old.remedies, old.corrects) == ((), (), None)
        assert [(r.id, r.party_id, r.role) for r in old.recipients] == [(0, 1, "responsible person")]
        assert old.delivered_to(old.recipients[0]).reference == "green card"   # its delivery is the addressee's
        assert store.notice_letter(1) is None
        other = store.add_party(name="Dig-It Excavating", address="1 Yard Rd", phone=None, email=None, by="smo")
        fixed = store.issue_notice(kind="nov", law="schenectady-148-I", case_id=None, site="CS-7", outfall=None,
                                   party_id=1, place="Elm St site", violation="silt fence down", requirements=[],
                                   remedy="", remediation_days=None, violation_since=date(2026, 5, 20), prior=[],
                                   issued_at=datetime(2026, 6, 4, 14, tzinfo=timezone.utc), by="smo",
                                   signatory="Dana Ortiz", provisions=["swppp_compliance"], corrects=1,
                                   recipients=[Recipient(0, 1, "operator", "certified_mail"),
                                               Recipient(0, other.id, "contractor", "personal_service")],
                                   letter=lambda n: (b"%PDF-1.4 test", {"number": n.number}))
        assert fixed.corrects == 1 and store.notice(1).corrected_by == (fixed.id, fixed.number)
        assert store.notice_letter(fixed.id).facts == {"number": "NOV-2026-002"}
        for sql in ("UPDATE notice_letters SET pdf_sha256 = 'x'", "UPDATE notice_recipients SET role = 'x'",
                    "DELETE FROM notice_letters"):                # the new tables are append-only too
            with pytest.raises(sqlite3.IntegrityError, match="compliance records are"):
                store.conn.execute(sql)
        got = store.notice_event(fixed.id, kind="delivered", at=datetime(2026, 6, 5, tzinfo=timezone.utc), by="smo",
                                 recipient_id=fixed.recipients[1].id)
        assert got.delivered_to(got.recipients[1]) is not None and got.delivered_to(got.recipients[0]) is None
    finally:
        store.close()
    again = ComplianceStore(old_db)        # opening twice changes nothing
    try:
        assert again.notice(2).provisions == ("swppp_compliance",)
    finally:
        again.close()
