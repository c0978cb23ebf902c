"""One deadline, one day, in every channel.

NOV-2026-001 was issued on Sunday 7 June 2026 with 10 days: under General Construction Law
§ 20 the day of issuance is not counted and the 10th day is Wednesday 17 June, due by its
end. The letter said "Wednesday, June 17", while the notice page and the deadline board
said "Thu 2026-06-18", the incident "2026-06-18 00:00 EDT", the SMS "Jun 18 00:00 EDT".

Here every kind of deadline the compliance records run (remediation, appeal, hearing,
decision filing, corrective work, the § 148-18B remedy from notification, hazardous and
nonhazardous release notices, the written confirmation, SWPPP completeness of a plan and of
its revision, the SWPPP decision) and the alert pipeline's own (post-storm and routine
inspections, calibrations) is read back through each channel that shows it — the deadline
board, the notice page's letter, the API and its CSV, the incident list and page, the
acknowledge page, the SMS, the email, the evidence packet — and each must name the day (or
instant) worked out by hand below from the laws' words, never the day after, and carry the
same end instant.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from ms4watch.alerts.evaluate import site_inspections
from ms4watch.alerts.notifiers.base import Notification, Recipient
from ms4watch.alerts.notifiers.sms.format import sms_text
from ms4watch.alerts.notifiers.text import plain_text
from ms4watch.alerts.notifiers.webhook.notifier import WebhookNotifier
from ms4watch.alerts.rules.calibration import calibration_events
from ms4watch.contract.timeutil import to_ns
from tests.support.notify_peers import Clock
from tests.support.workbench import start_bench

NY = ZoneInfo("America/New_York")
NOW = datetime(2026, 7, 6, 12, 0, tzinfo=NY)


def t(*args: int) -> datetime:
    return datetime(*args, tzinfo=NY)


# (record number, the key's tail) -> the last day, worked out by hand from the laws' words
EXPECTED: dict[tuple[str, str], date] = {
    # Ramapo § 218-44A(2): issued Sunday 7 June, 10 days -> Wednesday 17 June
    ("NOV-2026-001", "remediation"): date(2026, 6, 17),
    # § 218-45: appeal within 15 days of issuance -> Monday 22 June
    ("NOV-2026-001", "appeal"): date(2026, 6, 22),
    # issued Monday 1 June: 30 days -> Wednesday 1 July (closed by the appeal)
    ("NOV-2026-002", "remediation"): date(2026, 7, 1),
    ("NOV-2026-002", "appeal"): date(2026, 6, 16),
    # § 218-45: hearing within 30 days after the appeal (Friday 5 June) -> Sunday 5 July, the
    # Town Board's own clock, not extended by § 25-a
    ("NOV-2026-002", "hearing"): date(2026, 7, 5),
    # decision filed within five days of the decision (Thursday 25 June) -> Tuesday 30 June
    ("NOV-2026-002", "decision_filing"): date(2026, 6, 30),
    # § 218-46A: five business days after Thursday 25 June: 26, 29, 30 June, 1, 2 July
    ("NOV-2026-002", "corrective_work"): date(2026, 7, 2),
    # Schenectady § 148-18B: 15 days of notification (delivered Wednesday 10 June) -> Thursday 25 June
    ("NOV-2026-003", "remediation"): date(2026, 6, 25),
    # § 218-43: a nonhazardous release known Thursday 2 July: by the next business day,
    # Friday 3 July (Independence Day falls on Saturday 4 July and is not moved, GCL § 24)
    ("REL-2026-002", "notice"): date(2026, 7, 3),
    # confirmed in writing within three business days of the call (Friday 3 July): 6, 7, 8 July
    ("REL-2026-002", "written"): date(2026, 7, 8),
    # § 148-6B: completeness within 30 days of receipt (Monday 1 June) -> Wednesday 1 July
    ("SWPPP-2026-001", "completeness"): date(2026, 7, 1),
    # ... and of the revised plan received Wednesday 1 July -> Friday 31 July
    ("SWPPP-2026-001", "completeness/revised-2"): date(2026, 7, 31),
    ("SWPPP-2026-002", "completeness"): date(2026, 7, 1),
    # § 148-6B, C: decided within 30 days after receiving the complete plan (received 1 June)
    ("SWPPP-2026-002", "decision"): date(2026, 7, 1),
}
# § 218-43: a hazardous release is notified immediately: due the instant it was known
IMMEDIATE = {("REL-2026-001", "notice"): t(2026, 7, 6, 8, 30)}


def long_day(d: date) -> str:
    return f"{d:%A}, {d:%B} {d.day}, {d.year}"


def short_day(d: date) -> str:
    return f"{d:%a %Y-%m-%d} (end of day)"


def sms_day(d: date) -> str:
    return f"{d:%b %d} end of day"


def end_of(d: date) -> datetime:
    """The instant a last day ends in the town's zone: the local midnight after it."""
    return datetime.combine(d + timedelta(days=1), datetime.min.time(), tzinfo=NY)


def when(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Sensor:      # what alerts.rules.calibration reads of a sensor's calibration
    device: str
    station: str
    sensor: str
    performed: date
    due: date


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    clock = Clock(NOW)
    b = start_bench(tmp_path_factory.mktemp("channels"), clock)
    store = b.workbench.compliance.store   # records written as the desk would, straight to the store
    p = store.add_party(name="Main St Laundromat", address="4 Main St\nRamapo, NY", phone=None, email=None, by="smo")
    common = dict(kind="nov", case_id=None, outfall="OF-12", party_id=p.id, place="4 Main St",
                  violation="washer discharge to the storm drain", requirements=["eliminate"],
                  remedy="plug the floor drain", violation_since=date(2026, 6, 1), prior=[], by="smo",
                  signatory="Dana Ortiz")
    store.issue_notice(law="ramapo-218", site=None, remediation_days=10, issued_at=t(2026, 6, 7, 11), **common)
    n2 = store.issue_notice(law="ramapo-218", site=None, remediation_days=30, issued_at=t(2026, 6, 1, 10), **common)
    store.notice_event(n2.id, kind="appeal_filed", at=t(2026, 6, 5, 10), by="smo")
    store.notice_event(n2.id, kind="decided", at=t(2026, 6, 25, 15), by="smo", outcome="upheld")
    n3 = store.issue_notice(law="schenectady-148-I", site="CS-7", remediation_days=None,
                            issued_at=t(2026, 6, 8, 10), **{**common, "outfall": None})
    store.notice_event(n3.id, kind="delivered", at=t(2026, 6, 10, 9), by="smo")
    rel = dict(law="ramapo-218", material="diesel", location="Elm St", outfall="OF-12", party_id=None, case_id=None,
               reported_by="caller", commercial=False, note=None, by="inspector")
    store.add_release(kind="hazardous", known_at=t(2026, 7, 6, 8, 30), **rel)
    r2 = store.add_release(kind="non_hazardous", known_at=t(2026, 7, 2, 16), **rel)
    store.release_event(r2.id, kind="called", at=t(2026, 7, 3, 9), note=None, by="inspector")
    s1 = store.add_swppp(site="CS-7", title="Hillcrest phase 2", party_id=None, received_at=t(2026, 6, 1, 10),
                         deviates=False, by="smo")
    store.swppp_event(s1.id, kind="incomplete", at=t(2026, 6, 15, 10), by="smo")
    store.swppp_event(s1.id, kind="revised", at=t(2026, 7, 1, 10), by="smo")
    s2 = store.add_swppp(site="CS-7", title="Hillcrest phase 3", party_id=None, received_at=t(2026, 6, 1, 10),
                         deviates=False, by="smo")
    store.swppp_event(s2.id, kind="complete", at=t(2026, 6, 10, 10), by="smo")
    b.pipeline.advance(to_ns(NOW))                       # the compliance watch: running clocks become incidents
    # the pipeline's own deadline kinds, from their rules: an inspection after a storm, a
    # routine one, a calibration falling due
    reg = b.workbench.registry
    for ev in site_inspections(reg, "CS-7", {"RG-1": [to_ns(t(2026, 7, 5, 18))]}, [], to_ns(NOW)):
        b.alerting.handle(ev)
    for ev in calibration_events([Sensor("LG-1", "OF-12", "flow", date(2026, 1, 10), date(2026, 7, 10))],
                                 to_ns(NOW), timedelta(days=14)):
        b.alerting.handle(ev)
    yield b
    b.close()


def test_every_compliance_deadline_kind_is_covered(bench):
    got = {(d["number"], d["key"].split("/", 2)[2]) for d in api_json(bench, "/api/v1/deadlines")}
    assert got == set(EXPECTED) | set(IMMEDIATE)


def test_the_api_and_its_csv_name_the_day_and_the_end_instant(bench):
    for d in api_json(bench, "/api/v1/deadlines"):
        k = (d["number"], d["key"].split("/", 2)[2])
        if k in IMMEDIATE:
            assert when(d["due"]) == IMMEDIATE[k] and d["when"]["form"] == "instant"
            continue
        last = EXPECTED[k]
        assert d["due_day"] == d["when"]["last_day"] == last.isoformat(), k
        assert when(d["due"]) == when(d["when"]["ends_at"]) == end_of(last), k
        assert d["when"]["text"] == short_day(last)
    rows = list(csv.DictReader(io.StringIO(api_text(bench, "/api/v1/deadlines.csv"))))
    board = api_json(bench, "/api/v1/deadlines")                  # the CSV is the board, row for row
    assert len(rows) == len(board)
    for r, d in zip(rows, board):
        k = (d["number"], d["key"].split("/", 2)[2])
        assert (r["number"], r["label"]) == (d["number"], d["label"])
        if k in EXPECTED:
            assert r["due_day"] == EXPECTED[k].isoformat() and when(r["due"]) == end_of(EXPECTED[k]), r


def test_the_board_names_the_last_day(bench):
    page = page_of(bench, "/deadlines")
    for (number, tail), last in EXPECTED.items():
        d = next(x for x in api_json(bench, "/api/v1/deadlines") if x["number"] == number and x["key"].endswith(tail))
        item = _item(page, d["key"])
        assert _due_span(item) == short_day(last), (number, tail, item)
        assert f"{last + timedelta(days=1):%Y-%m-%d}" not in _due_span(item)
    hazardous = next(x for x in api_json(bench, "/api/v1/deadlines") if x["number"] == "REL-2026-001")
    assert "due immediately (known 2026-07-06 08:30 EDT)" in html.unescape(_item(page, hazardous["key"]))


def test_the_letter_names_the_same_day_as_the_board(bench):
    # An Art. I letter is made before it is delivered: it states the § 148-18B period from its
    # receipt, and the board names the day once the delivery is recorded (the letter is frozen
    # at issue, so it never gains a day that a later delivery would set).
    for nid, lines in ((1, ["Complete the remediation or restoration by Wednesday, June 17, 2026",
                            "file your appeal by Monday, June 22, 2026"]),
                       (3, ["Take the remedial measures within 15 days of receipt of this notice."])):
        text = html.unescape(page_of(bench, f"/notices/{nid}"))
        for line in lines:
            assert line in text, line
        board = [_due_span(_item(text, f"notice/{nid}/{tail}")) for tail in ("remediation",)]
        assert board == [short_day(EXPECTED[(f"NOV-2026-00{nid}", "remediation")])]
    assert long_day(EXPECTED[("NOV-2026-001", "remediation")]) == "Wednesday, June 17, 2026"


def _incidents(bench) -> list[dict]:
    return [i for kind in ("compliance_deadline", "inspection_due", "calibration_due", "calibration_overdue")
            for i in api_json(bench, f"/api/v1/incidents?kind={kind}&limit=500")]


def _expected_of(full, inc: dict) -> tuple[str, date | datetime]:
    """("day", the last day) or ("instant", the instant), from the hand table or the rules' own numbers."""
    ev = full.event
    if inc["kind"] == "compliance_deadline":
        k = (ev["number"], full.key.split("|id:compliance/", 1)[1].split("/", 2)[2])
        return ("instant", IMMEDIATE[k]) if k in IMMEDIATE else ("day", EXPECTED[k])
    if inc["kind"] == "inspection_due":
        if ev["reason"] == "storm":         # 24 h after the storm's end (Sunday 5 July 18:00)
            return "instant", t(2026, 7, 6, 18)
        return "instant", when(inc["deadline"])   # routine: at the instant the rule gives, shown as that instant
    return "day_utc", date(2026, 7, 10)    # a calibration due Friday 10 July (a UTC day)


def test_every_deadline_incident_names_the_same_day_in_every_channel(bench):
    incs = _incidents(bench)
    kinds = {i["kind"] for i in incs}
    assert {"compliance_deadline", "inspection_due", "calibration_due"} <= kinds, kinds
    reasons = {bench.alerting.incidents.get(i["id"]).event.get("reason") for i in incs
               if i["kind"] == "inspection_due"}
    assert {"storm", "routine"} <= reasons
    seen_compliance = set()
    for inc in incs:
        full = bench.alerting.incidents.get(inc["id"])
        form, expected = _expected_of(full, inc)
        snap = full.snapshot()
        email = plain_text(_note(snap, "email"))
        sms = sms_text(_note(snap, "sms"))
        page = html.unescape(page_of(bench, f"/incidents/{inc['id']}"))
        listing = html.unescape(page_of(bench, f"/incidents?kind={inc['kind']}"))
        records = _packet_record(bench, inc["id"])
        hook = WebhookNotifier("http://127.0.0.1:9/hook").payload(_note(snap, "webhook"))["due"]
        assert (hook["last_day"], hook["ends_at"] and when(hook["ends_at"])) == \
            (inc["due"]["last_day"], when(inc["due"]["ends_at"]))
        due = inc["due"]
        if form == "day":
            last = expected
            seen_compliance.add(full.key)
            assert when(inc["deadline"]) == end_of(last) == when(due["ends_at"]) == when(records["due"]["ends_at"])
            assert due["last_day"] == records["due"]["last_day"] == last.isoformat()
            assert f"<dd class=\"due\">{short_day(last)}" in page
            assert short_day(last) in listing
            assert f"by {short_day(last)}" in email.splitlines()[0]            # the headline
            assert f"by {long_day(last)}" in email                              # the Deadline row
            assert f"by {sms_day(last)}" in sms
            after = last + timedelta(days=1)
            for text in (email, sms, _between(page, "<dt>Deadline</dt>", "</dd>")):
                assert long_day(after) not in text and f"{after:%Y-%m-%d}" not in text and \
                    f"{after:%b %d}" not in text, (inc["key"], text)
        elif form == "day_utc":          # a calibration: due by the end of a UTC day
            last = expected
            assert due["last_day"] == last.isoformat() and when(due["ends_at"]) == datetime(2026, 7, 11,
                                                                                             tzinfo=timezone.utc)
            assert when(inc["deadline"] or due["ends_at"]) == when(due["ends_at"])
            assert short_day(last) in page and records["due"]["last_day"] == last.isoformat()
        else:                             # an instant: the same instant, to the minute, in its local day
            at = expected.astimezone(NY)
            assert when(inc["deadline"]) == at == when(due["ends_at"]) == when(records["due"]["ends_at"])
            assert f"{at:%a %Y-%m-%d %H:%M %Z}" in page
            assert f"{at:%b %d %H:%M %Z}" in sms
            assert f"{at:%a %Y-%m-%d %H:%M %Z}" in email
    # every running, actionable compliance clock is an incident
    running = {("NOV-2026-001", "remediation"), ("NOV-2026-002", "hearing"), ("NOV-2026-002", "decision_filing"),
               ("NOV-2026-002", "corrective_work"), ("NOV-2026-003", "remediation"), ("REL-2026-002", "written"),
               ("SWPPP-2026-001", "completeness/revised-2"), ("SWPPP-2026-002", "decision")}
    assert len(seen_compliance) == len(running)


def test_the_acknowledge_page_names_the_day(bench):
    inc = next(i for i in api_json(bench, "/api/v1/incidents?kind=compliance_deadline&limit=500")
               if i["due"]["last_day"] == "2026-06-17")
    full = bench.alerting.incidents.get(inc["id"])
    text = html.unescape(page_of(bench, bench.workbench.links.url(full).removeprefix(bench.base_url)))
    assert "due Wed 2026-06-17 (end of day)" in text and "2026-06-18" not in text


# -- helpers --------------------------------------------------------------------------------------
def api_json(bench, path: str):
    with bench.api("viewer") as c:
        r = c.get(path)
    assert r.status_code == 200, (path, r.text)
    return r.json()


def api_text(bench, path: str) -> str:
    with bench.api("viewer") as c:
        r = c.get(path)
    assert r.status_code == 200, (path, r.text)
    return r.text


_SESSIONS: dict[str, object] = {}


def _session(bench):
    if bench.base_url not in _SESSIONS:
        _SESSIONS[bench.base_url] = bench.login("viewer")
    return _SESSIONS[bench.base_url]


def page_of(bench, path: str) -> str:
    r = _session(bench).get(path)
    assert r.status_code == 200, (path, r.status_code)
    return r.text


def bytes_of(bench, path: str) -> bytes:
    r = _session(bench).get(path)
    assert r.status_code == 200, (path, r.status_code)
    return r.content


def _note(snapshot: dict, channel: str) -> Notification:
    return Notification(1, f"x|{channel}", channel, "open", Recipient("Pat SMO", "smo", "smo@example.org"),
                        snapshot, NOW.isoformat(), station_name="", timezone="America/New_York")


def _item(page: str, key: str) -> str:
    m = re.search(rf'<li[^>]*id="deadline-{re.escape(key.replace("/", "-"))}">(.*?)</li>', page, re.S)
    assert m, key
    return m.group(1)


def _due_span(item: str) -> str:
    m = re.search(r'<span class="due">([^<]*)</span>', item)
    return html.unescape(m.group(1)) if m else ""


def _between(text: str, a: str, b: str) -> str:
    i = text.find(a)
    return "" if i < 0 else text[i:text.find(b, i)]


def _packet_record(bench, iid: int) -> dict:
    data = bytes_of(bench, f"/incidents/{iid}/packet.zip")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        name = next(n for n in z.namelist() if n.endswith("records.json"))
        record = json.loads(z.read(name))
    return next(i for i in record["incidents"] if i["id"] == iid)


def test_the_board_names_the_towns_office_closure(tmp_path):
    """A call on Friday 3 July is confirmed in writing within three business days; the town's
    offices were closed on Monday 6 July (its registry): Tuesday 7, Wednesday 8, Thursday 9."""
    from ms4watch.compliance.calendar import BusinessCalendar
    from ms4watch.compliance.deadlines import release_deadlines
    from ms4watch.compliance.store import ClockEvent, Release
    from ms4watch.contract.registry import OfficeClosure
    from ms4watch.settings import Settings
    from ms4watch.workbench.app import templates
    from tests.support.workbench import SECRET

    cal = BusinessCalendar(NY, [OfficeClosure(day=date(2026, 7, 6), name="Town Hall closed (flood)")])
    r = Release(1, "REL-2026-001", "ramapo-218", "non_hazardous", "diesel", "Elm St", None, None, None,
                t(2026, 7, 2, 16), "caller", False, None, "insp", (ClockEvent(1, "called", t(2026, 7, 3, 9)),))
    settings = Settings.model_validate({"data_dir": tmp_path, "http": {"listen": "127.0.0.1:0"},
                                        "web": {"secret": SECRET}, "sms": {"inbound": "none"}})
    env = templates(NY, settings).env
    out = html.unescape(env.from_string('{% from "_deadlines.html" import deadline_list %}'
                                        '{{ deadline_list(items, now, "") }}').render(items=release_deadlines(r, cal),
                                                                                     now=NOW))
    written = _item(out, "release/1/written")
    assert _due_span(written) == "Thu 2026-07-09 (end of day)"
    assert "not counted: Monday, July 6, 2026 (office closure: Town Hall closed (flood))" in written


def test_a_clock_whose_event_is_not_yet_recorded_reads_the_same_everywhere(tmp_path):
    """§ 148-18B: remedial measures within 15 days of notification. Before delivery is
    recorded there is no day to name: the board, the API and the letter line say the period
    and its event, and no deadline incident opens."""
    from ms4watch.compliance import clocks
    from ms4watch.compliance.calendar import BusinessCalendar
    from ms4watch.compliance.deadlines import Deadline
    from ms4watch.compliance.laws import LAWS
    from ms4watch.compliance.letters import due_text
    from ms4watch.compliance.watch import ComplianceWatch
    from ms4watch.settings import Settings
    from ms4watch.workbench.app import templates
    from ms4watch.workbench.routes.api.compliance import DeadlineOut
    from tests.support.workbench import SECRET

    rule = LAWS["schenectady-148-I"].remediation
    d = Deadline("notice/7/remediation", "notice:7", "NOV-2026-007", "remedial measures (NOV-2026-007)",
                 "the violator", None, clocks.pending(rule, BusinessCalendar(NY), runs_from="receipt of this notice"),
                 rule)
    words = "within 15 days of receipt of this notice"
    assert d.state(NOW + timedelta(days=400)) == "awaiting delivery" and d.running and d.due is None
    assert d.awaiting == "within 15 days of receipt of this notice"
    assert due_text(d.when) == words
    api = DeadlineOut.of(d, NOW).model_dump(mode="json")
    assert (api["due"], api["due_day"], api["when"]["form"], api["when"]["ends_at"]) == (None, None, "pending", None)
    assert (api["awaiting"], api["state"]) == (words, "awaiting delivery")
    assert api["when"]["text"].startswith(words)
    settings = Settings.model_validate({"data_dir": tmp_path, "http": {"listen": "127.0.0.1:0"},
                                        "web": {"secret": SECRET}, "sms": {"inbound": "none"}})
    out = html.unescape(templates(NY, settings).env.from_string(
        '{% from "_deadlines.html" import deadline_list %}{{ deadline_list(items, now, "") }}').render(items=[d],
                                                                                                       now=NOW))
    assert _due_span(_item(out, d.key)).startswith(words)
    assert ComplianceWatch().advance(to_ns(NOW), [d]) == []
