"""Who may do what, over real HTTP: every write is refused without a session or a token,
and with too small a role; refusals of a known user are in the audit log too.

The writes are found in the routers the application is made of (``routes.ROUTERS``), so a
route added later fails here until someone says which role it needs."""

from __future__ import annotations

import re

import pytest

from ms4watch.alerts.incidents import State
from ms4watch.workbench.routes import ROUTERS
from ms4watch.workbench.roles import NEEDS, Permission, Role
from tests.support.notify_peers import Clock, dwf, utc
from tests.support.workbench import start_bench

# Writes that are not a user's: their own authority is checked elsewhere (and tested there).
NOT_A_USERS = {"/login": "the password itself", "/ack/{token}": "the signed link (test_ack.py)",
               "/sms/inbound": "the provider's signature and a contact's number (test_sms.py)"}
# The least role each write needs; a write missing here fails the test below.
LEAST_ROLE = {
    "/logout": Role.VIEWER,
    "/account/password": Role.VIEWER,                     # one's own (test_account.py)
    "/account/tokens/{tid}/revoke": Role.VIEWER,          # one's own; another's: admin (test_account.py)
    "/api/v1/tokens/{tid}/revoke": Role.VIEWER,
    "/users/{username}/remove": NEEDS[Permission.MANAGE_USERS],
    "/incidents/{iid}/acknowledge": NEEDS[Permission.ACKNOWLEDGE],
    "/incidents/{iid}/resolve": NEEDS[Permission.RESOLVE],
    "/api/v1/incidents/{iid}/acknowledge": NEEDS[Permission.ACKNOWLEDGE],
    "/api/v1/incidents/{iid}/resolve": NEEDS[Permission.RESOLVE],
    "/inspections": NEEDS[Permission.RECORD_INSPECTION],
    "/api/v1/inspections": NEEDS[Permission.RECORD_INSPECTION],
    "/api/v1/inspections/{rid}/photos": NEEDS[Permission.RECORD_INSPECTION],
    "/approvals": NEEDS[Permission.RECORD_APPROVAL],
    "/approvals/{sid}/withdraw": NEEDS[Permission.RECORD_APPROVAL],
    "/api/v1/approvals": NEEDS[Permission.RECORD_APPROVAL],
    "/api/v1/approvals/{sid}/withdraw": NEEDS[Permission.RECORD_APPROVAL],
    "/stations/{sid}/corrections/{cid}/revert": NEEDS[Permission.CORRECT_DATA],
    "/api/v1/corrections/{cid}/revert": NEEDS[Permission.CORRECT_DATA],
    # compliance records (issue 12)
    "/cases": NEEDS[Permission.RECORD_CASE],
    "/cases/{cid}/entries": NEEDS[Permission.RECORD_CASE],
    "/cases/{cid}/close": NEEDS[Permission.RECORD_CASE],
    "/cases/{cid}/samples": NEEDS[Permission.RECORD_CASE],
    "/cases/{cid}/labs": NEEDS[Permission.RECORD_CASE],
    "/cases/{cid}/trace-visits": NEEDS[Permission.RECORD_CASE],      # issue 24 (test_tracing.py)
    "/samples/{smp}/custody": NEEDS[Permission.RECORD_CASE],
    "/releases": NEEDS[Permission.RECORD_CASE],
    "/releases/{rel}/events": NEEDS[Permission.RECORD_CASE],
    "/parties": NEEDS[Permission.ENFORCE],
    "/notices": NEEDS[Permission.ENFORCE],
    "/notices/{nid}/events": NEEDS[Permission.ENFORCE],
    "/notices/{nid}/withdraw": NEEDS[Permission.ENFORCE],
    "/swppp": NEEDS[Permission.ENFORCE],
    "/swppp/{sw}/events": NEEDS[Permission.ENFORCE],
    "/api/v1/cases": NEEDS[Permission.RECORD_CASE],
    "/api/v1/cases/{cid}/entries": NEEDS[Permission.RECORD_CASE],
    "/api/v1/cases/{cid}/labs": NEEDS[Permission.RECORD_CASE],
    "/api/v1/cases/{cid}/trace-visits": NEEDS[Permission.RECORD_CASE],
    "/api/v1/releases": NEEDS[Permission.RECORD_CASE],
    "/api/v1/parties": NEEDS[Permission.ENFORCE],
    "/api/v1/notices": NEEDS[Permission.ENFORCE],
    "/api/v1/notices/{nid}/events": NEEDS[Permission.ENFORCE],
    "/reports/annual/{year}/overrides": NEEDS[Permission.ENFORCE],   # a count stated by hand (test_reports.py)
    "/api/v1/field/sends": NEEDS[Permission.RECORD_INSPECTION],     # the field form's queue (routes/test_field.py)
}
# A valid body for each compliance write (so the refusal is the role's, not the body's)
AT = "2026-06-01T15:00:00Z"
COMPLIANCE_BODIES = {
    "/cases": {"origin": "complaint", "location": "Main St", "description": "grey water", "reporter": "a neighbour",
               "observed_at": AT},
    "/cases/{cid}/entries": {"kind": "screening", "at": AT, "by": "J. Rivera", "notes": "flow seen"},
    "/cases/{cid}/close": {"at": AT, "by": "J. Rivera", "outcome": "eliminated", "verification": "no flow on follow-up",
                           "notes": "connection plugged", "confirm": "yes"},
    "/cases/{cid}/samples": {"station": "OF-12", "taken_at": AT, "collected_by": "J. Rivera"},
    "/samples/{smp}/custody": {"at": AT, "relinquished_by": "J. Rivera", "received_by": "A. Chen"},
    "/releases": {"law": "schenectady-148-II", "kind": "non_hazardous", "material": "paint", "location": "Elm St",
                  "known_at": AT, "reported_by": "caller"},
    "/releases/{rel}/events": {"kind": "called", "at": AT},
    "/parties": {"name": "Main St Laundromat", "address": "4 Main St"},
    "/notices": {"law": "schenectady-148-II", "party_id": 1, "place": "4 Main St", "violation": "washer discharge",
                 "requirements": ["eliminate"], "remedy": "plug the drain", "remediation_days": 10,
                 "violation_since": "2026-06-01", "issued_at": AT, "signatory": "Dana Ortiz"},
    "/notices/{nid}/events": {"kind": "mailed", "at": AT, "reference": "9407"},
    "/notices/{nid}/withdraw": {"reason": "issued to the wrong property", "confirm": "yes"},
    "/swppp": {"site": "CS-7", "title": "Phase 2", "received_at": AT},
    "/swppp/{sw}/events": {"kind": "complete", "at": AT},
    "/cases/{cid}/labs": {},
    "/cases/{cid}/trace-visits": {"structure": "MH-2", "at": AT, "by": "J. Rivera", "flow": "present"},
    "/reports/annual/{year}/overrides": {"line": "fines_construction", "value": 2, "reason": "the court's records"},
}
COMPLIANCE_TARGETS = {"/cases": "cases", "/cases/{cid}/entries": "case:1", "/cases/{cid}/close": "case:1", "/cases/{cid}/samples": "case:1",
                      "/cases/{cid}/labs": "case:1", "/cases/{cid}/trace-visits": "case:1",
                      "/samples/{smp}/custody": "sample:1", "/releases": "releases",
                      "/releases/{rel}/events": "release:1", "/parties": "parties", "/notices": "notices",
                      "/notices/{nid}/events": "notice:1", "/notices/{nid}/withdraw": "notice:1", "/swppp": "swppp", "/swppp/{sw}/events": "swppp:1",
                      "/reports/annual/{year}/overrides": "report:2026"}


def _compliance_key(path: str) -> str | None:
    key = path.removeprefix("/api/v1")
    return key if key in COMPLIANCE_BODIES else None
REPORT = {"site": "CS-7", "at": "2026-06-01T15:00:00Z", "inspector": "J. Rivera", "credential": "cpesc",
          "license_no": "CPESC 4711", "disturbed_areas": "north pad", "stabilized_areas": "west slope seeded",
          "idle_areas": "none", "sediment_pct": 30, "maintenance": "silt fence sagging at the outlet",
          "deficiencies": "none"}
APPROVAL = {"kind": "approved_discharge", "outfall": "OF-12", "start": "2026-06-02T08:00:00-04:00",
            "end": "2026-06-02T12:00:00-04:00", "reason": "hydrant flushing"}
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def writes() -> list[tuple[str, str]]:
    out = []
    for router in ROUTERS:
        for route in router.routes:
            for method in sorted(getattr(route, "methods", None) or ()):
                if method not in ("GET", "HEAD", "OPTIONS"):
                    out.append((method, route.path))
    return out


def test_every_write_is_known_here():
    found = {path for _, path in writes()}
    assert found - set(NOT_A_USERS) - set(LEAST_ROLE) == set(), "a new write: say which role it needs"
    assert set(LEAST_ROLE) - found == set()


def _body(path: str) -> dict:
    if _compliance_key(path):
        return COMPLIANCE_BODIES[_compliance_key(path)]
    if path == "/api/v1/inspections":
        return {**REPORT, "certified": True}
    if path == "/api/v1/approvals":
        return APPROVAL
    if path.endswith("/corrections/{cid}/revert"):
        return {"why": "the standard was expired"}
    return {"note": "checked on site"}


def _form(path: str) -> dict:
    if _compliance_key(path):
        return {k: (v[:16] if k.endswith("at") and isinstance(v, str) else v)
                for k, v in COMPLIANCE_BODIES[_compliance_key(path)].items()}
    if path == "/inspections":
        return {**REPORT, "at": "2026-06-01T11:00", "certified": "on"}
    if path == "/approvals":
        return {**APPROVAL, "start": "2026-06-02T08:00", "end": "2026-06-02T12:00"}
    if path.endswith("/corrections/{cid}/revert"):
        return {"why": "the standard was expired"}
    return {"note": "checked on site", "confirm": "yes"}


def _call(client, method: str, path: str, *, form: bool, csrf: str | None = None):
    url = path.replace("{iid}", "1").replace("{rid}", "1").replace("{sid}", "1").replace("{username}", "viewer")
    url = url.replace("{year}", "2026")
    for k in ("{cid}", "{smp}", "{rel}", "{nid}", "{sw}", "{tid}"):
        url = url.replace(k, "1")
    if path.endswith("/labs"):
        return client.request(method, url, files={"file": ("results.csv", b"sample,parameter\n", "text/csv")},
                              data={"csrf": csrf} if csrf else None)
    if path.endswith("/photos"):
        return client.request(method, url, files={"photo": ("site.png", PNG, "image/png")},
                              data={"csrf": csrf} if csrf else None)
    if form:
        return client.request(method, url, data={**_form(path), **({"csrf": csrf} if csrf else {})})
    return client.request(method, url, json=_body(path))


def _nothing_written(bench) -> None:
    """The incident still open, no report, no approval recorded, the recorded one still there."""
    assert bench.alerting.store.get(1).state is State.OPEN
    wb = bench.workbench
    assert [r.id for r in wb.inspections.reports.list(bench.municipality)] == [1]
    assert [(r.id, r.active) for r in wb.inventory.store.list(bench.municipality)] == [(1, True)]
    assert wb.inspections.reports.get(bench.municipality, 1).photos == ()
    assert [(c.id, c.active) for c in wb.corrections.store.list()] == [(1, True)]
    conn = wb.compliance.store.conn
    from ms4watch.compliance.store import TABLES
    assert {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES} == {t: 0 for t in TABLES}


def _records(bench) -> None:
    """A report (1) and a recorded approval (1), made by the smo, for the writes to refuse to touch."""
    from datetime import datetime, timezone

    from ms4watch.workbench.records import ReportIn, SuppressionKind
    from ms4watch.workbench.roles import Actor, Via
    smo = Actor("smo", "Smo User", Role.SMO, bench.municipality, Via.TERMINAL)
    bench.workbench.inspections.record(smo, ReportIn.model_validate({**REPORT, "at": "2026-05-30T12:00:00Z",
                                                                      "certified": True}))
    t = datetime(2026, 6, 3, 12, tzinfo=timezone.utc)
    bench.workbench.inventory.record(smo, kind=SuppressionKind.EXEMPT_FLOW, outfall="OF-12", start=t,
                                     end=t.replace(hour=18), reason="pool drained", flow="dechlorinated swimming "
                                                                                        "pool discharges")
    from ms4watch.contract.drift import DriftCorrection
    bench.workbench.corrections.store.add("OF-12", "flow", DriftCorrection(1_780_000_000 * 10**9,
                                                                           1_780_600_000 * 10**9, 0.0, 3.0),
                                          by="Tech", why="service visit")


def _target(path: str) -> str:
    if _compliance_key(path):
        return COMPLIANCE_TARGETS[_compliance_key(path)]
    for part, target in (("/field/", "field"), ("/users/", "user:viewer"), ("/corrections/", "correction:1"),
                         ("/incidents/", "incident:1"), ("/photos", "inspection:1"), ("/inspections", "site:CS-7"),
                         ("/withdraw", "suppression:1"), ("/approvals", "outfall:OF-12")):
        if part in path:
            return target
    raise AssertionError(path)


@pytest.fixture(scope="module")
def refusing(tmp_path_factory):
    """One bench for the refused writes of the two tests below (80 cases; a bench costs ~40 ms
    of CPU to build): an incident (1) and the records of :func:`_records`, made once. A write
    refused leaves it as it was, which every case checks (``_nothing_written``) before its
    writes too, so a write let through fails where it was let through."""
    b = start_bench(tmp_path_factory.mktemp("refusing"), Clock(utc(2026, 6, 1, 16, 0)))
    b.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    _records(b)
    yield b
    b.close()


@pytest.mark.parametrize("path", sorted(LEAST_ROLE))
def test_a_write_without_a_session_or_token_is_refused(refusing, path):
    bench = refusing
    _nothing_written(bench)
    with bench.api() as anonymous:
        r = _call(anonymous, "POST", path, form=not path.startswith("/api/"))
    assert r.status_code in (401, 303), r.text
    if path.startswith("/api/"):
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    else:   # a page's form: refused the same, shown as the login page's question
        assert r.status_code == 401 or r.headers["location"].startswith("/login")
    with bench.api() as forged:
        forged.headers["Authorization"] = "Bearer ms4w_not-a-token"
        assert _call(forged, "POST", path, form=False).status_code == 401
    _nothing_written(bench)


@pytest.mark.parametrize("path", sorted(p for p, role in LEAST_ROLE.items() if role is not Role.VIEWER))
def test_a_write_with_too_small_a_role_is_refused_and_audited(refusing, path):
    bench = refusing
    _nothing_written(bench)
    need = LEAST_ROLE[path]
    for role in Role:
        if role.at_least(need):
            continue
        if path.startswith("/api/"):
            with bench.api(role.value) as c:
                r = _call(c, "POST", path, form=False)
        else:
            s = bench.login(role.value)
            r = _call(s.client, "POST", path, form=True, csrf=s.csrf())
        assert r.status_code == 403, (role, r.text)
        assert f"needs the role {need.value}" in r.text
        _nothing_written(bench)
        refused = bench.workbench.audit.entries(target=_target(path))[0]
        assert (refused.who, refused.role, refused.outcome[:8]) == (role.value, role.value, "refused:")


def test_a_session_write_without_its_csrf_token_is_refused(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    s = bench.login("smo")
    r = s.post_form("/incidents/1/acknowledge", {"note": "x"}, csrf=False)
    assert r.status_code == 403 and "CSRF" in r.text
    r = s.client.post("/incidents/1/acknowledge", data={"csrf": "forged", "note": "x"})
    assert r.status_code == 403
    r = s.client.post("/api/v1/incidents/1/acknowledge", json={})      # the API with a session cookie: the header
    assert r.status_code == 403
    assert bench.alerting.store.get(1).state is State.OPEN
    r = s.client.post("/api/v1/incidents/1/acknowledge", json={}, headers={"X-CSRF-Token": s.csrf()})
    assert r.status_code == 200 and r.json()["state"] == "acknowledged"


def test_a_disabled_user_loses_its_session_and_its_token_at_once(bench):
    s = bench.login("smo")
    assert s.get("/incidents").status_code == 200
    with bench.api("smo") as c:
        assert c.get("/api/v1/incidents").status_code == 200
        bench.workbench.users.disable("smo")
        assert c.get("/api/v1/incidents").status_code == 401
    r = s.get("/incidents")
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/incidents"


def test_a_member_of_another_municipality_only_is_refused(bench):
    bench.workbench.users.add("elsewhere", "correct horse battery", municipality="ramapo", role=Role.ADMIN)
    _, token = bench.workbench.users.create_token("elsewhere", "t")
    with bench.api() as c:
        r = c.get("/api/v1/incidents", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 403 and re.search(r"no role in schenectady", r.text)


# Reads anyone may make: their own authority, or none needed.
PUBLIC_READS = {"/health": "liveness", "/health/ready": "readiness (no data)", "/metrics": "operators only",
                "/login": "the login form", "/favicon.ico": "the icon",
                "/ack/{token}": "the signed link (test_ack.py)", "/api/v1/openapi.json": "the schema",
                "/field/sw.js": "the field form's service worker (code, no records)",
                "/field/manifest.webmanifest": "the field form's web app manifest (no records)"}
EXAMPLES = {"{iid}": "1", "{rid}": "1", "{sid}": "OF-12", "{oid}": "OF-12", "{sha}": "0" * 64, "{token}": "x",
            "{cid}": "1", "{nid}": "1", "{year}": "2026", "{section}": "outfalls", "{fmt}": "pdf"}


def reads() -> list[str]:
    out = []
    for router in ROUTERS:
        for route in router.routes:
            if "GET" in (getattr(route, "methods", None) or ()):
                out.append(route.path)
    return out


def test_every_read_but_the_public_ones_needs_a_user_of_this_town(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    _records(bench)
    bench.workbench.users.add("elsewhere", "correct horse battery", municipality="ramapo", role=Role.ADMIN)
    elsewhere = bench.workbench.users.create_token("elsewhere", "t")[1]
    paths = [p for p in reads() if p not in PUBLIC_READS]
    assert len(paths) >= 30
    with bench.api() as anonymous, bench.api() as other:
        other.headers["Authorization"] = f"Bearer {elsewhere}"
        for path in paths:
            url = path
            for k, v in EXAMPLES.items():
                url = url.replace(k, v)
            r = anonymous.get(url)
            if path.startswith("/api/"):
                assert r.status_code == 401, path
            else:
                assert r.status_code == 303 and r.headers["location"] == f"/login?next={url}", path
            assert other.get(url).status_code == 403, path       # a user of another town only
        with bench.api("viewer") as viewer:
            assert all(viewer.get(p.replace("{sha}", "0" * 64)).status_code in (200, 404)
                       for p in ("/api/v1/stations", "/inspections/1/photos/{sha}"))
