"""A notice of violation's PDF, read back with pdftotext (poppler-utils), holds every element
the law it is issued under requires: Ramapo § 218-44A and § 218-45, Schenectady § 148-18A
and B (construction), § 148-32A (illicit discharges); a stop-work order § 148-18C. It cites
the provisions the notice names, from its law's catalogue, with their remedial measures;
it is the notice as served (offences to the day of issue; the § 148-18B period from its
receipt). Built twice from the same records, the PDF is byte-identical (reportlab's
invariant mode)."""

from __future__ import annotations

import shutil
import subprocess
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from ms4watch.compliance.clocks import BusinessCalendar
from ms4watch.compliance.laws import LAWS
from ms4watch.compliance.letters import notice_facts, notice_pdf, notice_sections
from ms4watch.compliance.store import ComplianceStore, Recipient

NY = ZoneInfo("America/New_York")
CAL = BusinessCalendar(NY)


def pdftotext(data: bytes, tmp_path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext is missing: apt-get install poppler-utils (make test installs it)")
    p = tmp_path / "letter.pdf"
    p.write_bytes(data)
    out = subprocess.run(["pdftotext", "-layout", str(p), "-"], check=True, capture_output=True, text=True).stdout
    return " ".join(out.split())


@pytest.fixture
def store(tmp_path):
    s = ComplianceStore(tmp_path / "compliance.db", clock=lambda: datetime(2026, 6, 1, 14, tzinfo=timezone.utc))
    yield s
    s.close()


def _notice(store, law: str, kind: str = "nov", days: int | None = 21, provisions=("illicit_discharge",)):
    party = store.add_party(name="Hollow Creek Car Wash & Detailing LLC", address="12 Mill Street\nBrookhollow, NY 12309",
                            phone=None, email=None, by="smo")
    n = store.issue_notice(kind=kind, law=law, case_id=None, site=None, outfall="OF-1", provisions=provisions,
                           recipients=[Recipient(0, party.id, "operator", "certified_mail",
                                                 "9407 1118 9876 5432 1001 23")],
                           party_id=party.id, place="12 Mill Street (tax parcel 41.12-3-7), draining to outfall OF-1",
                           violation="Wash water from the car wash bay floor drain discharges to the storm sewer.",
                           requirements=["eliminate", "cease", "monitor"],
                           remedy="Disconnect the floor drain from the storm sewer and connect it to the sanitary sewer "
                                  "under a plumbing permit.",
                           remediation_days=days, violation_since=date(2026, 5, 20), prior=[date(2023, 4, 2)],
                           issued_at=datetime(2026, 6, 1, 14, tzinfo=timezone.utc), by="smo", signatory="Dana Ortiz")
    store.notice_event(n.id, kind="mailed", at=datetime(2026, 6, 1, 16, tzinfo=timezone.utc), by="smo",
                       reference="9407 1118 9876 5432 1001 23")
    return store.notice(n.id), {party.id: party}


COMMON = ["Hollow Creek Car Wash & Detailing LLC", "12 Mill Street Brookhollow, NY 12309",
          "12 Mill Street (tax parcel 41.12-3-7), draining to outfall OF-1",
          "Wash water from the car wash bay floor drain discharges to the storm sewer.",
          "Disconnect the floor drain from the storm sewer"]


def test_a_ramapo_notice_holds_every_element_of_218_44_and_the_appeal_clock(store, tmp_path):
    n, party = _notice(store, "ramapo-218")
    text = pdftotext(notice_pdf(n, party, cal=CAL, tz=NY, town="Town of Ramapo"), tmp_path)
    for s in COMMON:
        assert s in text, s
    expected = {
        "delivery": ["Hollow Creek Car Wash & Detailing LLC (operator): by certified mail, article number "
                     "9407 1118 9876 5432 1001 23"],
        "recipient": ["To the responsible person (Ramapo ch. 218 § 218-44A)"],
        "site": ["Property (Ramapo ch. 218 § 218-44A)"],
        "violation": ["Nature of the violation (Ramapo ch. 218 § 218-44A)",
                      "This violates Ramapo ch. 218 § 218-36A (Prohibition of illegal discharges)"],
        "requirements": ["(a) The elimination of illicit connections or discharges;",
                         "(b) That violating discharges, practices, or operations shall cease and desist;",
                         "(d) The performance of monitoring, analyses, and reporting;",
                         "Ramapo ch. 218 § 218-36A: Stop the discharge at once."],
        "deadline": ["Deadline for remediation or restoration (Ramapo ch. 218 § 218-44A(2))",
                     "by Monday, June 22, 2026 (21 days from issuance)"],
        "expense": ["the work will be done by a designated governmental agency or a contractor and the expense "
                    "thereof shall be charged to the violator"],
        "penalties": ["Penalties (Ramapo ch. 218 § 218-44B)", "fine not exceeding $1,000",
                      "Each week of continued violation is a separate offense; to June 1, 2026 that makes 2 offense(s)",
                      "this would be a second offense: a fine of $1,000 to $2,500"],
        "appeal": ["appeal this determination to the Town Board within 15 days of its issuance on June 1, 2026",
                   "file your appeal by Tuesday, June 16, 2026", "within 30 days after it is filed",
                   "within five business days of its decision"],
    }
    assert {e.key for e in LAWS["ramapo-218"].elements} == set(expected)
    for key, phrases in expected.items():
        for p in phrases:
            assert p in text, (key, p)
    assert "(c) The abatement" not in text                     # only what this notice requires


def test_a_schenectady_construction_notice_holds_148_18a_items_1_to_5(store, tmp_path):
    n, party = _notice(store, "schenectady-148-I", days=None, provisions=("site_inspections", "stabilization"))
    store.notice_event(n.id, kind="delivered", at=datetime(2026, 6, 3, 15, tzinfo=timezone.utc), by="smo",
                       reference="signed green card")
    n = store.notice(n.id)
    text = pdftotext(notice_pdf(n, party, cal=CAL, tz=NY, town="City of Schenectady"), tmp_path)
    for s in COMMON:
        assert s in text, s
    expected = {
        "recipient": ["(Schenectady ch. 148 § 148-18A(1))"],
        "site": ["(Schenectady ch. 148 § 148-18A(2))"],
        "violation": ["Nature of the violation (Schenectady ch. 148 § 148-18A(3))"],
        "remedy": ["Remedial measures and time schedule (Schenectady ch. 148 § 148-18A(4))"],
        "penalties": ["Penalties (Schenectady ch. 148 § 148-18D)", "not more than $250 for each offense",
                      "Each day of continued violation is a separate offense; to June 1, 2026 that makes 13 offense(s)"],
        "deadline": ["Deadline (Schenectady ch. 148 § 148-18B)",
                     "Take the remedial measures within 15 days of receipt of this notice."],
    }
    assert {e.key for e in LAWS["schenectady-148-I"].elements} == set(expected)
    for key, phrases in expected.items():
        for p in phrases:
            assert p in text, (key, p)
    assert "appeal" not in text.lower()                        # no appeal in ch. 148's text
    assert "June 16" not in text and "June 18" not in text     # no day counted from issuance or delivery


def test_an_article_i_notice_for_missed_inspections_cites_the_inspection_section_not_turbidity(store, tmp_path):
    n, party = _notice(store, "schenectady-148-I", days=None, provisions=("site_inspections", "stockpiles"))
    text = pdftotext(notice_pdf(n, party, cal=CAL, tz=NY, town="City of Schenectady"), tmp_path)
    assert ("This violates Schenectady ch. 148 § 148-13B (Site inspections every seven days and after storms): "
            "\u201cFollowing the commencement of construction, site inspections shall be conducted by a "
            "licensed/certified professional at least every seven calendar days") in text
    assert "This violates Schenectady ch. 148 § 148-11B(9)" in text
    assert "Schenectady ch. 148 § 148-13B: Have a licensed/certified professional inspect the site now" in text
    assert "148-12A" not in text and "turbidity" not in text.lower()
    facts = notice_facts(n, party, cal=CAL, tz=NY)
    assert [p["citation"] for p in facts["provisions"]] == ["Schenectady ch. 148 § 148-13B",
                                                            "Schenectady ch. 148 § 148-11B(9)"]
    assert facts["provisions"][0]["section_inferred"] is True
    assert facts["deadline"] == {"runs_from": "receipt", "days": 15, "last_day": None,
                                 "provision": "Schenectady ch. 148 § 148-18B",
                                 "text": "within 15 days of receipt of this notice"}


def test_a_notice_names_each_recipient_and_how_it_is_served(store, tmp_path):
    """§ 148-18A: "to the operator/landowner, applicant and all contractors/subcontractors"."""
    ps = [store.add_party(name=name, address=f"{i} Site Rd", phone=None, email=None, by="smo")
          for i, name in enumerate(("Ridge Homes LLC", "A. Applicant", "Dig-It Excavating Inc."), start=1)]
    n = store.issue_notice(kind="nov", law="schenectady-148-I", case_id=None, site="CS-7", outfall=None,
                           party_id=ps[0].id, place="Ridge Road subdivision", violation="no inspections since May 1",
                           requirements=[], remedy="", remediation_days=None, violation_since=date(2026, 5, 8),
                           prior=[], issued_at=datetime(2026, 6, 1, 14, tzinfo=timezone.utc), by="smo",
                           signatory="Dana Ortiz", provisions=["site_inspections"],
                           recipients=[Recipient(0, ps[0].id, "operator", "certified_mail", "9407 0001"),
                                       Recipient(0, ps[1].id, "applicant", "certified_mail", "9407 0002"),
                                       Recipient(0, ps[2].id, "contractor", "personal_service")])
    assert [(r.party_id, r.role) for r in n.recipients] == [(ps[0].id, "operator"), (ps[1].id, "applicant"),
                                                            (ps[2].id, "contractor")]
    text = pdftotext(notice_pdf(n, {p.id: p for p in ps}, cal=CAL, tz=NY, town="City of Schenectady"), tmp_path)
    for p in ("Ridge Homes LLC (operator): by certified mail, article number 9407 0001.",
              "A. Applicant (applicant): by certified mail, article number 9407 0002.",
              "Dig-It Excavating Inc. (contractor): by personal service.",
              "To the responsible persons (Schenectady ch. 148 § 148-18A(1))"):
        assert p in text, p
    assert [x.id for x in store.notices(party_id=ps[2].id)] == [n.id]     # a contractor's history holds it


def test_a_schenectady_idde_notice_holds_148_32a(store, tmp_path):
    n, party = _notice(store, "schenectady-148-II", days=30)
    text = pdftotext(notice_pdf(n, party, cal=CAL, tz=NY, town="City of Schenectady"), tmp_path)
    for p in ["To the responsible person (Schenectady ch. 148 § 148-32A)", "This violates Schenectady ch. 148 § 148-24A",
              "This notice requires (Schenectady ch. 148 § 148-32A(1))",
              "Deadline for remediation or restoration (Schenectady ch. 148 § 148-32A(2))",
              "by Wednesday, July 1, 2026 (30 days from issuance)", "expense thereof shall be charged to the violator",
              "Penalties (Schenectady ch. 148 § 148-32B)", "a fine of $350 to $700"]:
        assert p in text, p


def test_a_stop_work_order_and_byte_identical_rebuilds(store, tmp_path):
    n, party = _notice(store, "schenectady-148-I", kind="stop_work", days=None, provisions=("stop_work",))
    first = notice_pdf(n, party, cal=CAL, tz=NY, town="City of Schenectady")
    assert first == notice_pdf(n, party, cal=CAL, tz=NY, town="City of Schenectady")
    text = pdftotext(first, tmp_path)
    assert n.number.startswith("SWO-2026-") and f"STOP-WORK ORDER {n.number}" in text
    assert "Stop-work order (Schenectady ch. 148 § 148-18C)" in text
    assert "Halt all land development activity at the property at once" in text


def test_the_letter_lists_and_counts_only_the_earlier_violations_within_five_years(store, tmp_path):
    """§ 218-44B: a second offense "both of which were committed within a period of five years"."""
    party = store.add_party(name="Mill St Garage", address="3 Mill St", phone=None, email=None, by="smo")
    n = store.issue_notice(kind="nov", law="ramapo-218", case_id=None, site=None, outfall="OF-1", party_id=party.id,
                           place="3 Mill St", violation="oil to the storm drain", requirements=["cease"],
                           remedy="stop", remediation_days=10, violation_since=date(2026, 5, 20),
                           prior=[date(2019, 1, 10), date(2021, 5, 31), date(2023, 4, 2)],
                           issued_at=datetime(2026, 6, 1, 14, tzinfo=timezone.utc), by="smo", signatory="Dana Ortiz")
    pen = next(s for s in notice_sections(n, {party.id: party}, cal=CAL, tz=NY, town="Town of Ramapo")
               if s.key == "penalties")
    text = " ".join(pen.paragraphs)
    assert "within five years: 1 (April 2, 2023)" in text, text
    assert "2019" not in text and "May 31, 2021" not in text
    assert "this would be a second offense" in text


def test_the_letter_names_an_office_closure_and_the_gcl_25a_extension(store, tmp_path):
    """33 days from Monday 1 June end on Saturday 4 July (Independence Day); Sunday follows, and
    the town closed its offices on Monday 6 July: the remediation runs to Tuesday 7 July, and
    the letter says why."""
    from ms4watch.contract.registry import OfficeClosure
    cal = BusinessCalendar(NY, [OfficeClosure(day=date(2026, 7, 6), name="Town Hall closed (flood)")])
    n, party = _notice(store, "ramapo-218", days=33)
    text = pdftotext(notice_pdf(n, party, cal=cal, tz=NY, town="Town of Ramapo"), tmp_path)
    assert ("Complete the remediation or restoration by Tuesday, July 7, 2026 (the period ended on Saturday, "
            "July 4, 2026 (Saturday, Independence Day, Sunday, office closure: Town Hall closed (flood)); extended "
            "to the next business day (N.Y. General Construction Law § 25-a)) (33 days from issuance)") in text, text


def test_due_text_of_an_end_instant_names_the_day_it_ends():
    """``due_text`` of ``clocks.due``'s instant (the midnight ending the last day) and of the
    typed due date read the same."""
    from ms4watch.compliance import clocks
    from ms4watch.compliance.letters import due_text
    issued = datetime(2026, 6, 7, 15, tzinfo=timezone.utc)      # Sunday 7 June, 10 days: Wednesday 17 June
    law = LAWS["ramapo-218"]
    assert due_text(clocks.remediation_due(law, issued, CAL, days=10), NY) == "Wednesday, June 17, 2026"
    assert due_text(clocks.deadline(law.remediation, issued, CAL, days=10)) == "Wednesday, June 17, 2026"
