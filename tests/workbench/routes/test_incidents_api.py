"""``/api/v1/incidents``, route by route, with an API token of each role where it matters."""

from __future__ import annotations

import csv
import io

from ms4watch.alerts.rules import dry_weather_flow
from tests.support.notify_peers import dwf, inspection, turbidity


def _three(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))                                  # 1: OF-12, open
    bench.alerting.handle(turbidity("2026-06-01T14:00:00Z"))                            # 2: TP-1, open
    bench.alerting.handle(dwf("2026-05-30T10:00:00Z", "2026-05-30T11:00:00Z", outfall="OF-14"))  # 3: resolved (auto)


def test_list_filters_by_state_kind_and_subject(bench):
    _three(bench)
    with bench.api("viewer") as c:
        r = c.get("/api/v1/incidents")
        assert r.status_code == 200
        assert [i["id"] for i in r.json()] == [2, 1]             # unresolved, newest first
        assert [i["id"] for i in c.get("/api/v1/incidents", params={"state": "resolved"}).json()] == [3]
        both = c.get("/api/v1/incidents", params=[("state", "open"), ("state", "resolved")]).json()
        assert [i["id"] for i in both] == [3, 2, 1]
        only = c.get("/api/v1/incidents", params={"kind": "dry_weather_flow", "state": ["open", "resolved"]}).json()
        assert [i["id"] for i in only] == [3, 1]
        assert [i["id"] for i in c.get("/api/v1/incidents", params={"subject": "TP-1"}).json()] == [2]
        assert c.get("/api/v1/incidents", params={"limit": 1, "offset": 1}).json()[0]["id"] == 1
        assert c.get("/api/v1/incidents", params={"state": "sleeping"}).status_code == 422
        assert c.get("/api/v1/incidents", params={"limit": 0}).status_code == 422


def test_get_one_with_its_rule_law_audit_and_notifications(bench):
    _three(bench)
    bench.alerting.tick()
    with bench.api("viewer") as c:
        d = c.get("/api/v1/incidents/1").json()
        assert c.get("/api/v1/incidents/99").status_code == 404
        assert c.get("/api/v1/incidents/99999999999999999999").status_code == 422
    inc = d["incident"]
    assert (inc["kind"], inc["subject"], inc["station_name"], inc["state"]) == (
        "dry_weather_flow", "OF-12", "Main St outfall", "open")
    assert inc["what"] == "dry-weather flow" and inc["threshold"]["value"] == 0.5
    assert inc["provision"] == dry_weather_flow.PROVISION and inc["params"] == d["event"]["params"]
    assert d["audit"][0]["action"] == "opened" and d["audit"][0]["who"] == "ms4watch"
    assert d["event"]["outfall"] == "OF-12"
    assert isinstance(d["notifications"], list)


def test_acknowledge_then_resolve_records_who_how_and_from_where(bench, clock):
    _three(bench)
    with bench.api("inspector") as c:
        r = c.post("/api/v1/incidents/1/acknowledge", json={"note": "on my way"})
        assert r.status_code == 200 and r.json()["state"] == "acknowledged"
        assert r.json()["acknowledged_by"] == "Inspector User"
        again = c.post("/api/v1/incidents/1/acknowledge")                       # harmless: the first one stands
        assert again.status_code == 200 and again.json()["acknowledged_by"] == "Inspector User"
    with bench.api("smo") as c:
        assert c.post("/api/v1/incidents/1/resolve", json={"note": "  "}).status_code == 422
        assert c.post("/api/v1/incidents/1/resolve", json={}).status_code == 422
        r = c.post("/api/v1/incidents/1/resolve", json={"note": "connection plugged"})
        assert r.status_code == 200 and r.json()["state"] == "resolved" and r.json()["resolution"] == "manual"
        r = c.post("/api/v1/incidents/1/acknowledge")
        assert r.status_code == 409 and "already resolved" in r.json()["detail"]
        assert c.post("/api/v1/incidents/42/resolve", json={"note": "x"}).status_code == 404
    log = bench.alerting.store.audit(1)
    assert [(a.action, a.who, a.how, a.note) for a in log[1:]] == [
        ("acknowledged", "Inspector User", "api (inspector)", "on my way"),
        ("resolved", "Smo User", "api (smo)", "connection plugged")]
    web = bench.workbench.audit.entries(target="incident:1")
    done = [(e.action, e.who, e.role, e.via, e.address, e.outcome) for e in reversed(web)]
    assert done[:3] == [("incident.acknowledge", "inspector", "inspector", "api", "127.0.0.1", "done"),
                        ("incident.acknowledge", "inspector", "inspector", "api", "127.0.0.1", "done"),
                        ("incident.resolve", "smo", "smo", "api", "127.0.0.1", "done")]
    assert done[3][0] == "incident.acknowledge" and done[3][5].startswith("refused: incident 1")
    assert all(e.at.tzinfo is not None for e in web)


def test_the_incidents_table_and_an_incidents_tables_as_csv(bench):
    _three(bench)
    bench.alerting.handle(inspection("2026-06-02T17:59:00Z", "2026-06-01T17:59:00Z"))
    with bench.api("viewer") as c:
        r = c.get("/api/v1/incidents.csv", params={"state": ["open", "acknowledged", "resolved"]})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
        assert "attachment" in r.headers["content-disposition"]
        rows = list(csv.DictReader(io.StringIO(r.text)))
        assert [int(x["id"]) for x in rows] == [4, 3, 2, 1]
        assert rows[3]["station_name"] == "Main St outfall" and rows[3]["state"] == "open"
        assert rows[3]["start"] == "2026-06-01T11:30:00-04:00"              # the town's zone, with its offset
        assert rows[0]["deadline"] == "2026-06-02T13:59:00-04:00"
        rows = list(csv.DictReader(io.StringIO(c.get("/api/v1/incidents.csv", params={"subject": "TP-1"}).text)))
        assert [x["id"] for x in rows] == ["2"]
        audit = list(csv.DictReader(io.StringIO(c.get("/api/v1/incidents/3/audit.csv").text)))
        assert [a["action"] for a in audit] == ["opened", "resolved"]
        assert c.get("/api/v1/incidents/1/notifications.csv").text.startswith("id,stage,recipient")


def test_a_formula_in_a_cell_is_not_run_by_a_spreadsheet(bench):
    bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
    with bench.api("smo") as c:
        c.post("/api/v1/incidents/1/acknowledge", json={"note": '=HYPERLINK("http://evil.test")'})
        audit = c.get("/api/v1/incidents/1/audit.csv").text
    assert "'=HYPERLINK" in audit


def test_me(bench):
    with bench.api("inspector") as c:
        assert c.get("/api/v1/me").json() == {"username": "inspector", "name": "Inspector User", "role": "inspector",
                                              "municipality": "schenectady"}


def test_the_openapi_schema_documents_the_api_and_nothing_else(bench):
    with bench.api() as c:
        schema = c.get("/api/v1/openapi.json").json()
    paths = set(schema["paths"])
    assert {"/api/v1/incidents", "/api/v1/incidents.csv", "/api/v1/incidents/{iid}",
            "/api/v1/incidents/{iid}/acknowledge", "/api/v1/incidents/{iid}/resolve", "/api/v1/me"} <= paths
    assert not any(p.startswith(("/login", "/ack", "/incidents")) for p in paths)
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
