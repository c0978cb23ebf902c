"""A coalition's server (``registries = [...]``): one ``ms4watch serve`` for several
municipalities, on real Mosquitto. Each town has its own ingest, store and alert engine
(the two towns here even use the same station ids); one workbench serves both, each town
under ``/t/<town>``; a user of one town sees and changes nothing of the other's —
incidents, stations, inspections and their photos, approvals, acknowledge links, the API.
"""

from __future__ import annotations

import hashlib
import re
import time
from datetime import datetime, timezone

import httpx
from prometheus_client.parser import text_string_to_metric_families
import paho.mqtt.client as mqtt
import pytest

from ms4watch.alerts.incidents import State
from ms4watch.contract.wire import encode_readings
from ms4watch.server import build_server
from ms4watch.settings import Settings, SettingsError
from ms4watch.workbench.records import ReportIn, SuppressionKind
from ms4watch.workbench.roles import Actor, Role, Via
from tests.support.notify_peers import dwf
from tests.support.waiting import wait_for
from tests.support.workbench import PASSWORD, cheap_passwords, csrf_of
from tests.support.mqtt_clients import stop_client

pytestmark = pytest.mark.mosquitto
MIN = 60 * 10**9
H = 60 * MIN
# The servers here speak plain HTTP, yet httpx builds an SSL context (loading the CA bundle,
# ~40 ms of CPU) for every client and every httpx.get: one context, made once, serves them all.
TLS = httpx.create_ssl_context()


def get(url: str, **kw) -> httpx.Response:
    return httpx.get(url, verify=TLS, **kw)


def client(**kw) -> httpx.Client:
    return httpx.Client(verify=TLS, **kw)


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
SITES = """\
municipality: {town}
timezone: America/New_York
rain_gauges: [{{id: RG-1, tip_in: 0.01}}]
outfalls: [{{id: OF-12, name: {outfall}, rain_gauges: [RG-1], flow_floor_gpm: 0.5, lat: 42.8, lon: -73.9}}]
construction_sites: [{{id: CS-7, name: Hillcrest, rain_gauges: [RG-1], active_from: 2026-01-01}}]
contacts: [{{name: Pat Doe, role: smo, email: smo@{town}.test}}]
"""
REPORT = {"site": "CS-7", "at": datetime(2026, 1, 5, 15, tzinfo=timezone.utc), "inspector": "Q. Inspector",
          "credential": "pe", "license_no": "PE 77", "disturbed_areas": "a", "stabilized_areas": "b", "idle_areas": "c",
          "sediment_pct": 5, "maintenance": "none", "deficiencies": "none", "certified": True}


class Browserish:
    """A logged-in client of the coalition's server (cookies; the CSRF token its pages carry)."""

    def __init__(self, url: str, username: str):
        self.c = client(base_url=url, follow_redirects=False, timeout=30)
        page = self.c.get("/login")
        self.login = self.c.post("/login", data={"username": username, "password": PASSWORD, "next": "/",
                                                 "csrf": csrf_of(page.text)})

    def csrf(self, town: str) -> str:
        return csrf_of(self.c.get(f"/t/{town}/incidents").text)


def _settings(tmp_path, broker_url: str) -> Settings:
    for town, outfall in (("glenville", "Freemans Bridge"), ("rotterdam", "Main St")):
        (tmp_path / f"{town}.yaml").write_text(SITES.format(town=town, outfall=outfall))
    return Settings.model_validate({
        "registries": [tmp_path / "glenville.yaml", tmp_path / "rotterdam.yaml"], "data_dir": tmp_path / "data",
        "broker": {"url": broker_url}, "http": {"listen": "127.0.0.1:0"}, "engine": {"tick": "1s"},
        "web": {"metrics_token": METRICS_TOKEN}})


METRICS_TOKEN = "prometheus-" + "m" * 32


def test_each_town_has_its_own_ingest_store_and_engine_and_sees_nothing_of_the_others(tmp_path, mosquitto_broker):
    settings = _settings(tmp_path, mosquitto_broker.url)
    server = build_server(settings, report=lambda line: None)
    for t in server.towns:
        t.workbench.users.passwords = cheap_passwords()
    server.start()
    try:
        g, r = server.town_named("glenville"), server.town_named("rotterdam")
        assert g.data_dir == tmp_path / "data" / "glenville" and (g.data_dir / "store.db").exists()
        assert r.pipeline.incidents.store.conn is not g.pipeline.incidents.store.conn
        assert wait_for(lambda: g.ingest.connected.is_set() and r.ingest.connected.is_set(), 10)

        # -- ingest and the engine, per town: a dry-weather flow in Glenville only ----------------
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="logger", protocol=mqtt.MQTTv311)
        pub.connect("127.0.0.1", mosquitto_broker.port)
        pub.loop_start()
        now = time.time_ns() // MIN * MIN
        rain = [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4 + 1)]
        flow = [(now - 35 * MIN + k * 5 * MIN, "flow", "flow", 4.0, "L/s", [], None) for k in range(8)]
        pub.publish("ms4/glenville/RG-1/LOG-RG1/readings", encode_readings("LOG-RG1", 1, rain), qos=1).wait_for_publish(5)
        pub.publish("ms4/glenville/OF-12/LOG-OF12/readings", encode_readings("LOG-OF12", 1, flow), qos=1).wait_for_publish(5)
        pub.publish("ms4/rotterdam/RG-1/LOG-RG1/readings", encode_readings("LOG-RG1", 1, rain[:3]), qos=1).wait_for_publish(5)
        stop_client(pub)
        assert wait_for(lambda: g.pipeline.incidents.list([State.OPEN], kind="dry_weather_flow"), 20)
        assert wait_for(lambda: r.ingest.stats.stored_readings == 3, 10)
        assert g.store.count_readings() == len(rain) + len(flow) and r.store.count_readings() == 3
        assert r.pipeline.incidents.list(kind="dry_weather_flow") == []
        [g_inc] = g.pipeline.incidents.list([State.OPEN], kind="dry_weather_flow")

        # Rotterdam's own records: an incident, an inspection report with a photo, an approval
        r_inc = r.pipeline.incidents.handle(dwf("2026-06-01T15:30:00Z")).incident
        quinn = Actor("quinn", "Quinn", Role.SMO, "rotterdam", Via.TERMINAL)
        report = r.workbench.inspections.record(quinn, ReportIn.model_validate(REPORT), [("p.png", PNG)]).report
        approval = r.workbench.inventory.record(quinn, kind=SuppressionKind.APPROVED_DISCHARGE, outfall="OF-12",
                                                start=datetime(2026, 6, 1, 12, tzinfo=timezone.utc),
                                                end=datetime(2026, 6, 1, 18, tzinfo=timezone.utc), reason="dye test")
        assert "dye test" in [d.reason for d in r.pipeline.engine.reg.approved_discharges]
        assert g.pipeline.engine.reg.approved_discharges == []             # Glenville's engine knows nothing of it

        users = g.workbench.users
        users.add("pat", PASSWORD, municipality="glenville", role=Role.ADMIN, display_name="Pat")
        users.add("quinn", PASSWORD, municipality="rotterdam", role=Role.SMO, display_name="Quinn")
        users.add("sam", PASSWORD, municipality="glenville", role=Role.VIEWER, display_name="Sam")
        users.grant("sam", municipality="rotterdam", role=Role.INSPECTOR)
        pat_token = users.create_token("pat", "t")[1]
        url = server.web_url

        # -- logging in: straight to one's town, or a choice of towns ------------------------------
        pat = Browserish(url, "pat")
        assert pat.login.status_code == 303 and pat.login.headers["location"] == "/t/glenville/"
        home = pat.c.get("/t/glenville/").text
        assert "Freemans Bridge" in home and 'href="/t/glenville/incidents"' in home and "Main St" not in home
        sam = Browserish(url, "sam")
        choose = sam.c.get("/")
        assert choose.status_code == 200 and 'href="/t/glenville/"' in choose.text and 'href="/t/rotterdam/"' in choose.text
        assert sam.c.get("/t/rotterdam/stations").status_code == 200

        # -- Pat of Glenville reads nothing of Rotterdam's ------------------------------------------
        sha = hashlib.sha256(PNG).hexdigest()
        for path in ("/", "/incidents", f"/incidents/{r_inc.id}", "/stations", "/stations/OF-12",
                     "/stations/OF-12/chart.svg", "/inspections", f"/inspections/{report.id}",
                     f"/inspections/{report.id}/photos/{sha}", "/outfalls", "/approvals", "/storms", "/calibrations",
                     "/api/v1/incidents", "/api/v1/stations", "/api/v1/approvals.csv", "/api/v1/inspections"):
            got = pat.c.get(f"/t/rotterdam{path}")
            assert got.status_code == 403 and "no role in rotterdam" in got.text, path
        with client(base_url=url, headers={"Authorization": f"Bearer {pat_token}"}, timeout=30) as api:
            assert api.get("/t/rotterdam/api/v1/incidents").status_code == 403
            assert api.get(f"/t/rotterdam/api/v1/inspections/{report.id}").status_code == 403
            assert api.post(f"/t/rotterdam/api/v1/incidents/{r_inc.id}/acknowledge", json={}).status_code == 403
            assert api.post("/t/rotterdam/api/v1/approvals", json={
                "kind": "approved_discharge", "outfall": "OF-12", "start": "2026-06-02T08:00:00Z",
                "end": "2026-06-02T10:00:00Z", "reason": "x"}).status_code == 403
            assert api.post(f"/t/rotterdam/api/v1/approvals/{approval.id}/withdraw", json={"note": "x"}).status_code == 403
            own = api.get("/t/glenville/api/v1/incidents", params={"kind": "dry_weather_flow"}).json()
            assert [(i["id"], i["station_name"]) for i in own] == [(g_inc.id, "Freemans Bridge")]
            # Rotterdam's report through Glenville's own URL: not there
            assert api.get(f"/t/glenville/api/v1/inspections/{report.id}").status_code == 404
        assert pat.c.get(f"/t/glenville/inspections/{report.id}/photos/{sha}").status_code == 404

        # -- ... and changes nothing of Rotterdam's --------------------------------------------------
        token = pat.csrf("glenville")
        writes = [(f"/t/rotterdam/incidents/{r_inc.id}/acknowledge", {"note": "x"}),
                  (f"/t/rotterdam/incidents/{r_inc.id}/resolve", {"note": "x"}),
                  ("/t/rotterdam/approvals", {"kind": "approved_discharge", "outfall": "OF-12",
                                              "start": "2026-06-02T08:00", "end": "2026-06-02T10:00", "reason": "x"}),
                  (f"/t/rotterdam/approvals/{approval.id}/withdraw", {"note": "x"}),
                  ("/t/rotterdam/inspections", {**{k: str(v) for k, v in REPORT.items()}, "at": "2026-01-06T10:00",
                                                "certified": "on"})]
        for path, data in writes:
            got = pat.c.post(path, data={**data, "csrf": token})
            assert got.status_code == 403, path
        assert r.pipeline.incidents.get(r_inc.id).state is State.OPEN
        assert [(x.id, x.active) for x in r.workbench.inventory.store.list("rotterdam")] == [(approval.id, True)]
        assert [x.id for x in r.workbench.inspections.reports.list("rotterdam")] == [report.id]
        assert r.workbench.inspections.reports.list("glenville") == []

        # Pat's own town: acknowledging Glenville's incident leaves Rotterdam's incident of the same id alone
        assert pat.c.post(f"/t/glenville/incidents/{g_inc.id}/acknowledge", data={"csrf": token}).status_code == 303
        assert g.pipeline.incidents.get(g_inc.id).state is State.ACKNOWLEDGED
        assert r.pipeline.incidents.get(r_inc.id).state is State.OPEN
        assert {a.municipality for a in g.workbench.audit.entries(limit=200) if a.who == "pat"} == {"glenville"}

        # -- an acknowledge link is one town's ------------------------------------------------------
        link = g.workbench.links.url(g.pipeline.incidents.get(g_inc.id))
        assert link.startswith(f"{url}/t/glenville/ack/")
        token_part = link.rsplit("/", 1)[1]
        assert get(f"{url}/t/glenville/ack/{token_part}").status_code == 200
        assert get(f"{url}/t/rotterdam/ack/{token_part}").status_code == 404

        # -- the server's health, across the towns: the details for its operators only ---------------
        assert get(f"{url}/health/ready").json() == {"status": "ready"}
        assert get(f"{url}/metrics").status_code == get(f"{url}/t/rotterdam/metrics").status_code == 401
        operator = {"Authorization": f"Bearer {METRICS_TOKEN}"}
        ready = get(f"{url}/health/ready", headers=operator).json()
        assert {"glenville: broker", "rotterdam: broker", "glenville: store", "rotterdam: store"} <= set(ready["checks"])
        assert get(f"{url}/t/rotterdam/metrics", headers=operator).status_code == 200
        pats = {"Authorization": f"Bearer {pat_token}"}                      # Glenville's admin: Glenville's only
        assert get(f"{url}/t/rotterdam/metrics", headers=pats).status_code == 403
        assert get(f"{url}/t/glenville/metrics", headers=pats).status_code == 200
        pats_view = list(text_string_to_metric_families(get(f"{url}/metrics", headers=pats).text))
        assert {x.labels["municipality"] for f in pats_view if f.name.startswith("ms4watch_") and f.name != "ms4watch_build_info"
                for x in f.samples} == {"glenville"}
        # the process's own metrics once, unlabelled: one process serves every town
        assert [x.labels for f in pats_view if f.name == "process_cpu_seconds" for x in f.samples] == [{}]
        assert {c.split(": ")[0] for c in get(f"{url}/health/ready", headers=pats).json()["checks"]} == {"glenville"}
        families = {f.name: f for f in text_string_to_metric_families(get(f"{url}/metrics", headers=operator).text)}
        stored = {x.labels["municipality"]: x.value for x in families["ms4watch_readings_stored"].samples}
        assert set(stored) == {"glenville", "rotterdam"} and all(v > 0 for v in stored.values()), stored
        assert {x.labels["municipality"] for x in families["ms4watch_alert_latency_seconds"].samples} == set(stored)

        # -- logging out at the root ends the session in every town, a copied cookie with it --------
        copied = client(base_url=url, follow_redirects=False, timeout=30, cookies=dict(sam.c.cookies))
        assert copied.get("/t/rotterdam/stations").status_code == 200
        towns_page = sam.c.get("/").text
        assert sam.c.post("/logout", data={"csrf": csrf_of(towns_page)}).status_code == 303
        for path in ("/t/rotterdam/stations", "/t/glenville/stations"):
            assert copied.get(path).status_code == 303, path
        assert copied.get("/").headers["location"].startswith("/login")
        copied.close()
    finally:
        server.stop()


def test_a_coalitions_settings_are_checked_before_anything_starts(tmp_path):
    settings = _settings(tmp_path, "mqtt://127.0.0.1:1")
    (tmp_path / "rotterdam.yaml").write_text(SITES.format(town="glenville", outfall="x"))
    with pytest.raises(SettingsError, match="registries: glenville named by more than one registry"):
        build_server(settings)
    with pytest.raises(SettingsError, match=re.escape("put {municipality} in the store URL")):
        from ms4watch.settings import load_settings
        load_settings(None, registries=[tmp_path / "glenville.yaml"], store="influxdb1://h:8086/ms4")
    with pytest.raises(SettingsError, match="not both"):
        load_settings(None, registries=[tmp_path / "glenville.yaml"], registry=tmp_path / "glenville.yaml")
    s = load_settings(None, registries=[tmp_path / "glenville.yaml"], store="influxdb1://h:8086/ms4_{municipality}",
                      data_dir=tmp_path / "d", broker={"client_id": "ingest"})
    assert s.town_store_url("glenville") == "influxdb1://h:8086/ms4_glenville"
    assert s.town_data_dir("glenville") == tmp_path / "d" / "glenville" and s.town_client_id("glenville") == "ingest-glenville"


# -- every per-town store, enumerated ---------------------------------------------------------
MARK = "ROTTERDAM-ONLY"
# Files of DATA_DIR every town shares: each of their tables holds a municipality column, belongs to
# a row of one that does (a report's photos), or is the server's own (who may log in, and how).
SHARED = {"workbench.db": {"users", "api_tokens", "login_attempts", "sessions", "sqlite_sequence"}}


def _stores(data) -> dict[str, list[str]]:
    """Every SQLite file under DATA_DIR, relative, with its tables."""
    import sqlite3
    out = {}
    for p in sorted(data.rglob("*.db")):
        with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as db:
            out[p.relative_to(data).as_posix()] = [r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
    return out


def _town_routes(settings, services) -> list[str]:
    """The GET routes a town's application serves (pages and API), as path templates."""
    import fastapi.routing
    from fastapi.routing import APIRoute
    from ms4watch.workbench.app import town_app
    app = town_app(settings, services)
    contexts = getattr(fastapi.routing, "iter_route_contexts", None)
    found = [(rc.path, rc.methods, rc.original_route) for rc in contexts(app.routes)] if contexts else \
        [(r.path, r.methods, r) for r in app.routes]
    return sorted({p for p, methods, r in found if isinstance(r, APIRoute) and "GET" in (methods or ())})


def test_every_per_town_store_keeps_its_records_from_the_other_town(tmp_path, mosquitto_broker):
    """Rotterdam writes a record marked ROTTERDAM-ONLY into every store a town has — incidents
    and their audit, the delivery queue, compliance (a case, a party), drift corrections,
    inspection reports, approvals, the workbench audit — and its own pages show each; no
    page or API answer of Glenville (every GET route, with Rotterdam's ids) shows any, and
    Glenville's SMO reverts nothing of Rotterdam's. Every SQLite file under DATA_DIR is
    either a town's own (in its folder) or shared with a municipality column in each table."""
    from ms4watch.contract.drift import DriftCorrection
    settings = _settings(tmp_path, mosquitto_broker.url)
    server = build_server(settings, report=lambda line: None)
    for t in server.towns:
        t.workbench.users.passwords = cheap_passwords()
    server.start()
    try:
        g, r = server.town_named("glenville"), server.town_named("rotterdam")
        url = server.web_url
        users = g.workbench.users
        users.add("pat", PASSWORD, municipality="glenville", role=Role.ADMIN, display_name="Pat")
        users.add("quinn", PASSWORD, municipality="rotterdam", role=Role.ADMIN, display_name="Quinn")
        pat_token, quinn_token = users.create_token("pat", "t")[1], users.create_token("quinn", "t")[1]
        quinn = Actor("quinn", "Quinn", Role.SMO, "rotterdam", Via.TERMINAL)

        # -- Rotterdam's records, one in every store -------------------------------------------------
        r_inc = r.pipeline.incidents.handle(dwf("2026-06-01T15:30:00Z")).incident          # incidents.db, queue
        with client(base_url=f"{url}/t/rotterdam", headers={"Authorization": f"Bearer {quinn_token}"},
                          timeout=30) as api:
            assert api.post(f"/api/v1/incidents/{r_inc.id}/acknowledge", json={"note": f"{MARK} ack"}
                            ).status_code == 200                                        # incident + workbench audit
            case = api.post("/api/v1/cases", json={"origin": "complaint", "outfall": "OF-12", "location": f"{MARK} case",
                                                   "description": "suds", "reporter": "a neighbour",
                                                   "observed_at": "2026-06-01T15:30:00Z"})
            assert case.status_code == 201, case.text                                   # compliance.db
            party = api.post("/api/v1/parties", json={"name": f"{MARK} party", "address": "1 Main St",
                                                      "place": "outfall", "place_id": "OF-12", "role": "operator"})
            assert party.status_code == 201, party.text
        cid = case.json()["id"]
        report = r.workbench.inspections.record(quinn, ReportIn.model_validate({**REPORT, "deficiencies": f"{MARK} report"}),
                                                [("p.png", PNG)]).report                 # workbench.db, photos
        approval = r.workbench.inventory.record(quinn, kind=SuppressionKind.APPROVED_DISCHARGE, outfall="OF-12",
                                                start=datetime(2026, 6, 1, 12, tzinfo=timezone.utc),
                                                end=datetime(2026, 6, 1, 18, tzinfo=timezone.utc), reason=f"{MARK} dye")
        correction = r.workbench.corrections.store.add("OF-12", "flow", DriftCorrection(
            time.time_ns() - 48 * H, time.time_ns() - H, drift=-5.0), by="Quinn", why=f"{MARK} correction")

        # -- the stores, enumerated: each is a town's own, or shared with a municipality column ----------
        data = tmp_path / "data"
        stores = _stores(data)
        for name, tables in stores.items():
            town, _, rest = name.partition("/")
            if rest:
                assert town in ("glenville", "rotterdam") and f"{'rotterdam' if town == 'glenville' else 'glenville'}/{rest}" \
                    in stores, f"{name}: a town's store the other town lacks"
                continue
            assert name in SHARED, f"{name}: a store in DATA_DIR shared by every town (no town's folder)"
            import sqlite3
            with sqlite3.connect(f"file:{data / name}?mode=ro", uri=True) as db:
                def towns_own(table: str) -> bool:
                    cols = {c[1] for c in db.execute(f"PRAGMA table_info({table})")}
                    parents = {f[2] for f in db.execute(f"PRAGMA foreign_key_list({table})")}
                    return "municipality" in cols or any(towns_own(p) for p in parents)
                for table in tables:
                    assert towns_own(table) or table in SHARED[name], f"{name}: {table} has no municipality"
        own = {n.partition("/")[2] for n in stores if "/" in n}
        assert {"incidents.db", "compliance.db", "corrections.db", "store.db"} <= own, own

        # -- each record shows on Rotterdam's own pages (what Glenville must not see) -------------------
        sha = hashlib.sha256(PNG).hexdigest()
        quinn_s = Browserish(url, "quinn")
        for path in (f"/incidents/{r_inc.id}", f"/cases/{cid}", "/notices", f"/inspections/{report.id}", "/approvals",
                     "/stations/OF-12"):
            assert MARK in quinn_s.c.get(f"/t/rotterdam{path}").text, path

        # -- Glenville: every GET route, pages with a session and the API with a token, Rotterdam's ids ---
        ids = {"iid": r_inc.id, "cid": cid, "rid": report.id, "sid": "OF-12", "oid": "OF-12", "nid": 1, "smp": 1,
               "rel": 1, "sw": 1, "year": 2026, "section": "illicit_found", "fmt": "pdf", "sha": sha, "token": "x"}
        pat = Browserish(url, "pat")
        seen = []
        with client(base_url=f"{url}/t/glenville", headers={"Authorization": f"Bearer {pat_token}"},
                          timeout=30) as api:
            for template in _town_routes(settings, g.workbench):
                if template.startswith(("/logout", "/login")):
                    continue
                path = re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: str(ids.get(m.group(1), 1)), template)
                got = api.get(path) if path.startswith("/api/") else pat.c.get(f"/t/glenville{path}")
                assert got.status_code < 500, (path, got.status_code)
                seen.append(path)
                assert MARK.encode() not in got.content, f"Glenville's {path} shows Rotterdam's record"
            assert len(seen) > 40
            # ... and changes nothing of Rotterdam's: reverting Rotterdam's correction by its id
            assert api.post(f"/api/v1/corrections/{correction.id}/revert", json={"why": "x"}).status_code == 404
            assert api.post(f"/api/v1/approvals/{approval.id}/withdraw", json={"note": "x"}).status_code == 404
        got = pat.c.post(f"/t/glenville/stations/OF-12/corrections/{correction.id}/revert",
                         data={"why": "x", "csrf": pat.csrf("glenville")})
        assert got.status_code == 404, got.text
        assert r.workbench.corrections.store.get(correction.id).active
        assert g.workbench.corrections.store.list() == []
        assert [x.id for x in r.workbench.inventory.store.list("rotterdam")] == [approval.id]
    finally:
        server.stop()
