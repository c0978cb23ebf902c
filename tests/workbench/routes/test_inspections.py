"""Inspections: the items due with their countdown; recording a report (the six items of
Schenectady ch. 148, the certification, photos) closes the incident *and* the alert
engine's item; photos are checked by their bytes, kept by their hash, shown only through
their report; the API records a report and adds photos; CSV exports."""

from __future__ import annotations

import csv
import hashlib
import html
import io
import re
import socket
from datetime import timedelta

from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.incidents import State
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading
from ms4watch.workbench.records import ITEMS
from tests.support.notify_peers import utc

T0 = utc(2026, 6, 1, 16, 0)
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 200 + b"\xff\xd9"
FORM = {"site": "CS-7", "at": "2026-06-01T11:30", "inspector": "J. Rivera", "credential": "cpesc",
        "license_no": "CPESC 4711", "disturbed_areas": "north pad and the haul road; the east lot next week",
        "stabilized_areas": "west slope hydroseeded", "idle_areas": "stockpile B since May 18",
        "sediment_pct": "35", "sediment_note": "trap A 20 %, trap B 35 %",
        "maintenance": "silt fence undercut at the outlet; rill erosion on the north slope",
        "deficiencies": "inlet protection missing at Elm St", "certified": "on"}


def _storm_item(bench) -> int:
    """A 0.70 inch storm at RG-1 ending 09:58 UTC, confirmed by the engine 6 h later: CS-7
    is due for inspection by 09:58 the next day. Returns the item's incident id."""
    start = T0 - timedelta(hours=8, minutes=20)
    bench.feed([CanonicalReading(to_ns(start + timedelta(minutes=2 * i)), "RG-1", "LOG-RG-1", "rain", "rain", 0.01,
                                 "in", "", 0) for i in range(70)])
    bench.pipeline.advance(to_ns(T0))
    [inc] = [i for i in bench.alerting.store.list([State.OPEN]) if i.kind == "inspection_due"
             and i.event.get("reason") == "storm"]
    return inc.id


def _engine_item(bench, iid: int):
    eid = bench.alerting.store.get(iid).event["id"]
    return next(e for e in bench.pipeline.engine_events() if e.id == eid and e.kind is AlertKind.INSPECTION_DUE)


def test_recording_an_inspection_with_a_photo_closes_the_incident_and_the_engines_item(bench):
    iid = _storm_item(bench)
    assert _engine_item(bench, iid)["closed_at"] is None
    s = bench.login("inspector")
    page = s.get("/inspections").text
    assert f'id="due-{iid}"' in page and "after the storm at RG-1" in page
    assert re.search(r'class="countdown[^"]*" data-deadline="2026-06-02T09:58:00\+00:00" data-now="2026-06-01T16:00', page)
    assert re.search(r">in 17 h 58 min<", page)
    for _, number, label, law in ITEMS:                      # the law's six items, its own words beside each
        assert f"{number} {label}" in page and html.escape(law, quote=False) in page
    assert [n for _, n, _, _ in ITEMS] == ["(1)", "(2)", "(3)", "(4)", "(5)", "(6)"]
    assert "Certified Professional in Erosion and Sediment Control" in page and 'capture="environment"' in page

    r = s.client.post("/inspections", data={**FORM, "csrf": s.csrf()},
                      files=[("photos", ("fence.png", PNG, "image/png")), ("photos", ("outlet.jpg", JPEG, "image/jpeg"))])
    assert r.status_code == 303 and r.headers["location"] == "/inspections/1?recorded=1"
    inc = bench.alerting.store.get(iid)
    assert (inc.state, inc.resolution, inc.resolved_by) == (State.RESOLVED, "inspection", "Inspector User")
    assert "inspection report 1: J. Rivera, CPESC CPESC 4711" in bench.alerting.store.audit(iid)[-1].note
    assert _engine_item(bench, iid)["closed_at"] == to_ns(utc(2026, 6, 1, 15, 30))      # 11:30 New York
    report = s.get(r.headers["location"]).text
    assert "Recorded. It resolved" in report and f'id="closed-{iid}"' in report
    assert re.search(rf'id="closed-{iid}".*?class="engine">closed at 2026-06-01 11:30 EDT', report, re.S)
    assert "inlet protection missing at Elm St" in report and "35 % — trap A 20 %, trap B 35 %" in report
    sha = hashlib.sha256(PNG).hexdigest()
    assert f'src="/inspections/1/photos/{sha}"' in report
    photo = s.get(f"/inspections/1/photos/{sha}")
    assert photo.status_code == 200 and photo.content == PNG and photo.headers["content-type"] == "image/png"
    assert (bench.workbench.settings.data_dir / "photos" / sha[:2] / sha).read_bytes() == PNG   # by its hash
    assert s.get(f"/inspections/1/photos/{'0' * 64}").status_code == 404
    assert bench.login("viewer").get(f"/inspections/1/photos/{sha}").status_code == 200          # any role here
    with bench.api() as anonymous:
        assert anonymous.get(f"/inspections/1/photos/{sha}").status_code in (303, 401)
    # shown on the inspections page: the item closed in both places
    page = s.get("/inspections").text
    assert f'id="due-{iid}"' not in page
    assert re.search(rf'id="closed-{iid}".*?class="engine">closed at', page, re.S)
    audit = bench.workbench.audit.entries(target="site:CS-7")[0]
    assert audit.action == "inspection.record" and re.search(rf"closed incident\(s\) .*\b{iid}\b", audit.detail)


def test_a_report_needs_the_certification_every_item_and_real_photos(bench):
    s = bench.login("inspector")
    r = s.client.post("/inspections", data={**FORM, "certified": "", "csrf": s.csrf()})
    assert r.status_code == 400 and "certification is required" in r.text
    assert 'value="J. Rivera"' in r.text                                                  # the form comes back filled
    r = s.client.post("/inspections", data={**FORM, "deficiencies": "  ", "csrf": s.csrf()})
    assert r.status_code == 400 and "deficiencies" in r.text
    r = s.client.post("/inspections", data={**FORM, "sediment_pct": "140", "csrf": s.csrf()})
    assert r.status_code == 400 and "sediment_pct" in r.text
    r = s.client.post("/inspections", data={**FORM, "csrf": s.csrf()},
                      files=[("photos", ("site.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>',
                                         "image/png"))])
    assert r.status_code == 400 and "'site.svg' is not a JPEG, PNG, WebP or HEIC image" in html.unescape(r.text)
    r = s.client.post("/inspections", data={**FORM, "at": "2026-06-03T09:00", "csrf": s.csrf()})
    assert r.status_code == 409 and "in the future" in r.text
    r = s.client.post("/inspections", data={**FORM, "site": "CS-99", "csrf": s.csrf()})
    assert r.status_code == 404
    assert bench.workbench.inspections.reports.list(bench.municipality) == []
    assert not (bench.workbench.settings.data_dir / "photos").exists()                 # nothing kept
    refused = bench.workbench.audit.entries(target="site:CS-7")
    assert refused and all(a.outcome.startswith("refused:") for a in refused)


def test_a_photo_too_large_is_refused(tmp_path, clock):
    from tests.support.workbench import start_bench
    b = start_bench(tmp_path, clock, web={"photo_max_bytes": 100_000, "upload_max_bytes": 1_000_000})
    try:
        s = b.login("inspector")
        big = PNG + b"\x00" * 150_000
        r = s.client.post("/inspections", data={**FORM, "csrf": s.csrf()}, files=[("photos", ("big.png", big, "image/png"))])
        assert r.status_code == 413 and "more than the 0.1 MB a photo may be" in r.text
        # a request over upload_max_bytes is refused by its Content-Length, before its body is read
        host, port = b.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(b"POST /inspections HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=z\r\n"
                        b"Content-Length: 5000000000\r\n\r\n")
            assert raw.recv(200).startswith(b"HTTP/1.1 413 ")
        # and one without a Content-Length (chunked) when the bytes read pass it

        def chunks():
            yield (b'--z\r\nContent-Disposition: form-data; name="photos"; filename="a.png"\r\n'
                   b"Content-Type: image/png\r\n\r\n")
            for _ in range(11):
                yield b"\x00" * 100_000
            yield b"\r\n--z--\r\n"
        r = s.client.post("/inspections", content=chunks(), headers={"content-type": "multipart/form-data; boundary=z"})
        assert r.status_code == 413 and "larger than 1000000 bytes" in r.text
        assert b.workbench.inspections.reports.list(b.municipality) == []
    finally:
        b.close()


def test_the_api_records_a_report_then_adds_photos(bench):
    iid = _storm_item(bench)
    body = {**{k: v for k, v in FORM.items() if k not in ("at", "certified", "sediment_pct")},
            "at": "2026-06-01T15:30:00Z", "sediment_pct": 35, "certified": True}
    with bench.api("viewer") as c:
        assert c.post("/api/v1/inspections", json=body).status_code == 403
    with bench.api("inspector") as c:
        assert c.post("/api/v1/inspections", json={**body, "certified": False}).status_code == 422
        r = c.post("/api/v1/inspections", json=body)
        assert r.status_code == 201, r.text
        got = r.json()
        closed = {i["id"]: i for i in got["closed"]}
        assert iid in closed and all(i["state"] == "resolved" for i in closed.values())
        assert got["report"]["certification"].startswith("I certify that I am a licensed/certified professional")
        rid = got["report"]["id"]
        r = c.post(f"/api/v1/inspections/{rid}/photos", files={"photo": ("map.jpg", JPEG, "image/jpeg")})
        assert r.status_code == 201 and r.json()["photos"][0]["media_type"] == "image/jpeg"
        assert r.json()["photos"][0]["url"] == f"/inspections/{rid}/photos/{hashlib.sha256(JPEG).hexdigest()}"
        assert c.post(f"/api/v1/inspections/{rid}/photos",
                      files={"photo": ("x.txt", b"hello", "image/png")}).status_code == 400
        assert c.post("/api/v1/inspections/99/photos", files={"photo": ("m.jpg", JPEG, "image/jpeg")}).status_code == 404
        assert c.get(f"/api/v1/inspections/{rid}").json()["photos"][0]["name"] == "map.jpg"
        assert [d["incident"] for d in c.get("/api/v1/inspections/due").json()] == \
            [d.incident.id for d in bench.workbench.inspections.due(_smo(bench))]
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/inspections.csv").text)))
        assert (rows[0]["site"], rows[0]["time"], rows[0]["inspector"]) == ("CS-7", "2026-06-01T11:30:00-04:00",
                                                                            "J. Rivera")
        due = list(csv.DictReader(io.StringIO(c.get("/api/v1/inspections/due.csv").text)))
        assert all(x["state"] != "resolved" for x in due)
        closed = c.get("/api/v1/inspections/due", params={"resolved": "true"}).json()
        mine = next(x for x in closed if x["incident"] == iid)
        assert mine["state"] == "resolved" and mine["engine_closed_at"] == "2026-06-01T15:30:00Z"
    assert _engine_item(bench, iid)["closed_at"] == to_ns(utc(2026, 6, 1, 15, 30))


def test_the_reports_csv_is_what_replay_reads_for_inspections(bench, tmp_path):
    from ms4watch.alerts.replay import read_inspections
    s = bench.login("inspector")
    s.client.post("/inspections", data={**FORM, "csrf": s.csrf()})
    with bench.api("viewer") as c:
        (tmp_path / "inspections.csv").write_text(c.get("/api/v1/inspections.csv").text)
    [insp] = read_inspections(tmp_path / "inspections.csv", bench.workbench.registry)
    assert (insp.site, insp.time_ns, insp.inspector) == ("CS-7", to_ns(utc(2026, 6, 1, 15, 30)), "J. Rivera")


def _smo(bench):
    from ms4watch.workbench.roles import Actor, Role, Via
    return Actor("smo", "Smo User", Role.SMO, bench.municipality, Via.TERMINAL)


def test_a_local_time_the_clocks_show_twice_or_never_is_refused_not_guessed(bench):
    """An inspection typed as 01:30 on the night the clocks go back happened at 01:30 EDT or
    an hour later at 01:30 EST: taking the first (as a naive time in the zone did) records an
    inspection done 50 min after a 01:30 EDT deadline as on time ("within 24 hours"). The
    form says why and how to give the offset; a time the spring change skips is refused too."""
    from ms4watch.workbench.deps import parse_when
    tz = bench.workbench.registry.tz
    s = bench.login("inspector")
    for at, why in (("2025-11-02T01:30", "happens twice"), ("2025-03-09T02:30", "does not exist")):
        r = s.client.post("/inspections", data={**FORM, "at": at, "csrf": s.csrf()})
        assert r.status_code == 400 and why in html.unescape(r.text), at
    assert bench.workbench.inspections.reports.list(bench.municipality) == []
    with_offset = parse_when("2025-11-02T01:30-05:00", tz)
    assert with_offset.utcoffset() == timedelta(hours=-5) and with_offset == utc(2025, 11, 2, 6, 30)
    assert parse_when("2025-11-02T00:59", tz) == utc(2025, 11, 2, 4, 59)    # the hour before: once
    assert parse_when("2025-11-02T02:00", tz) == utc(2025, 11, 2, 7, 0)     # after: once (EST)
    assert parse_when("2025-03-09T03:00", tz) == utc(2025, 3, 9, 7, 0)      # first EDT minute
    assert parse_when("2025-11-02", tz) == utc(2025, 11, 2, 4, 0)           # a day: its local midnight
