"""The records made on the workbench: photos recognised by their bytes and kept by their
hash; reports and approvals never changed or deleted (an approval only withdrawn, once);
records read back by the server at start and by replay."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timezone

import pytest

from ms4watch.workbench.records.table import connect_workbench_db
from ms4watch.workbench.records import (InspectionReports, PhotoStore, ReportIn, SuppressionKind, SuppressionStore,
                                        load_suppressions, with_recorded)
from ms4watch.workbench.records.photos import PhotoRefused, PhotoTooLarge, media_type
from tests.support.notify_peers import registry

T = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize("head, kind", [
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
    (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    (b"\x00\x00\x00\x18ftypheic\x00\x00", "image/heic"),
    (b"\x00\x00\x00\x18ftypmif1\x00\x00", "image/heic"),
    (b"<svg xmlns='http://www.w3.org/2000/svg'>", None),
    (b"GIF89a\x01\x00", None),
    (b"%PDF-1.7", None),
    (b"\x00\x00\x00\x18ftypmp42", None),          # a video
])
def test_an_image_is_known_by_its_first_bytes(head, kind):
    assert media_type(head + b"\x00" * 20) == kind


def test_photos_are_kept_by_their_hash_once_and_limited_in_size(tmp_path):
    store = PhotoStore(tmp_path / "photos", max_bytes=1000)
    data = b"\xff\xd8\xff" + b"x" * 100
    a = store.put(data, "C:\\phone\\DCIM\\IMG 0001.JPG")
    b = store.put(data, "again.jpg")
    assert a.sha256 == b.sha256 and a.name == "IMG 0001.JPG" and a.media_type == "image/jpeg"
    assert store.read(a.sha256) == data and [p.name for p in (tmp_path / "photos").rglob("*")] == [a.sha256[:2], a.sha256]
    with pytest.raises(PhotoTooLarge):
        store.put(b"\xff\xd8\xff" + b"x" * 2000)
    with pytest.raises(PhotoRefused, match="is empty"):
        store.put(b"")
    with pytest.raises(Exception, match="no such photo"):
        store.read("../../etc/passwd")


def _db(tmp_path):
    return connect_workbench_db(tmp_path / "workbench.db"), threading.RLock()


def test_a_report_is_never_changed_nor_deleted(tmp_path):
    conn, lock = _db(tmp_path)
    reports = InspectionReports(conn, lock)
    r = reports.add("schenectady", ReportIn.model_validate({
        "site": "CS-7", "at": T, "inspector": "J. Rivera", "credential": "pe", "license_no": "PE 1", "disturbed_areas": "a",
        "stabilized_areas": "b", "idle_areas": "c", "sediment_pct": 10, "maintenance": "d", "deficiencies": "none",
        "certified": True}), by="pat", photos=[])
    assert reports.get("schenectady", r.id).certification.startswith("I certify")
    assert reports.get("ramapo", r.id) is None                           # another town's view: nothing
    for sql in ("UPDATE inspection_reports SET deficiencies = 'fixed'", "DELETE FROM inspection_reports"):
        with pytest.raises(sqlite3.IntegrityError, match="never changed|is kept"):
            conn.execute(sql)


def test_an_approval_is_only_withdrawn_once_and_the_engine_sees_the_rest(tmp_path):
    conn, lock = _db(tmp_path)
    store = SuppressionStore(conn, lock)
    a = store.add(municipality="schenectady", kind=SuppressionKind.APPROVED_DISCHARGE, outfall="OF-12", start=T,
                  end=T.replace(hour=18), reason="dye test", by="Pat")
    b = store.add(municipality="schenectady", kind=SuppressionKind.EXEMPT_FLOW, outfall="OF-14", start=T,
                  end=T.replace(day=3), reason="new lawn", flow="lawn watering", by="Pat")
    store.add(municipality="ramapo", kind=SuppressionKind.APPROVED_DISCHARGE, outfall="OF-12", start=T,
              end=T.replace(hour=18), reason="another town's", by="Quinn")
    for sql in ("UPDATE suppressions SET reason = 'x' WHERE id = 1", "DELETE FROM suppressions WHERE id = 1",
                "UPDATE suppressions SET \"end\" = '2030-01-01' WHERE id = 1"):
        with pytest.raises(sqlite3.IntegrityError, match="only ever withdrawn|are kept"):
            conn.execute(sql)
    store.withdraw(b.id, by="Pat", note="lawn done")
    with pytest.raises(sqlite3.IntegrityError):
        store.withdraw(b.id, by="Pat", note="again")
    reg = registry()
    judged = with_recorded(reg, load_suppressions(tmp_path / "workbench.db", "schenectady"))
    assert [d.reason for d in judged.approved_discharges] == ["dye test"]          # ramapo's and the withdrawn left out
    assert judged.outfall("OF-14").exempt_flows == []
    assert load_suppressions(tmp_path / "missing.db", "schenectady") == []
    assert a.active and not store.get("schenectady", b.id).active


def test_each_store_of_workbench_db_makes_its_tables_in_one_transaction(tmp_path):
    """A new workbench.db's tables, indexes and triggers: one commit a store (with
    ``synchronous=FULL``, one fsync) instead of one a statement, and never half a schema."""
    from ms4watch.workbench.audit import AuditLog
    from ms4watch.workbench.auth.users import UserStore
    from ms4watch.workbench.records.field_sends import FieldSends
    from ms4watch.workbench.records.sms_received import ReceivedSms
    from tests.support.workbench import cheap_passwords

    conn = connect_workbench_db(tmp_path / "workbench.db")
    lock = threading.RLock()
    for stores, make in ((2, lambda: UserStore(conn, lock, passwords=cheap_passwords())),   # and its sessions
                         (1, lambda: AuditLog(conn, lock)), (1, lambda: InspectionReports(conn, lock)),
                         (1, lambda: SuppressionStore(conn, lock)), (1, lambda: FieldSends(conn, lock)),
                         (1, lambda: ReceivedSms(conn, lock))):
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        make()
        conn.set_trace_callback(None)
        inside, commits, outside = False, 0, []
        for s in (s.strip().rstrip(";").strip().upper() for s in statements):
            if s.startswith("BEGIN"):
                inside = True
            elif s in ("COMMIT", "END"):
                inside, commits = False, commits + 1
            elif s.startswith("CREATE") and not inside:
                outside.append(s)
        assert not outside and commits == stores, statements
    conn.close()
