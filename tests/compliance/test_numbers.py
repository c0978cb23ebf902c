"""Record numbers run per kind and *local* year: the year in the municipality's zone."""

from __future__ import annotations

from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

from ms4watch.compliance.store import ComplianceStore

NY = ZoneInfo("America/New_York")


def test_a_case_opened_on_new_years_eve_evening_local_takes_that_years_number(tmp_path):
    now = datetime(2027, 1, 1, 3, 30, tzinfo=timezone.utc)            # 22:30 on 31 December 2026 in New York
    s = ComplianceStore(tmp_path / "compliance.db", lambda: now, tz=NY)
    try:
        case = s.open_case(origin="screening", incident_id=None, outfall=None, location="Mill St",
                           description="flow", reporter=None, reporter_contact=None, observed_at=now, by="insp")
        assert case.number == "IDDE-2026-001"
        party = s.add_party(name="A", address="B", phone=None, email=None, by="smo")
        n = s.issue_notice(kind="nov", law="ramapo-218", case_id=None, site=None, outfall=None, party_id=party.id,
                           place="x", violation="y", requirements=["cease"], remedy="z", remediation_days=5,
                           violation_since=date(2026, 12, 31), prior=[], issued_at=now, by="smo", signatory="D")
        assert n.number == "NOV-2026-001"
        r = s.add_release(law="ramapo-218", kind="non_hazardous", material="m", location="l", outfall=None,
                          party_id=None, case_id=None, known_at=datetime(2027, 1, 1, 5, tzinfo=timezone.utc),
                          reported_by="c", commercial=False, note=None, by="insp")
        assert r.number == "REL-2027-001"                              # midnight passed in New York: 2027
    finally:
        s.close()
