"""A workbench on a real uvicorn on a loopback port, over the town's real alert pipeline
(engine, incident database, delivery queue: the delivery worker not started, ``tick`` by
hand) and a real SQLite store, with a user (and an API token) for each role; HTTP through
httpx."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from argon2 import PasswordHasher

from ms4watch.compliance.clocks import BusinessCalendar
from ms4watch.compliance.deadlines import all_deadlines
from ms4watch.compliance.store import ComplianceStore
from ms4watch.contract.timeutil import to_ns
from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.sinks.base import StoredMessage
from ms4watch.pipeline import AlertPipeline, PipelineParts
from ms4watch.settings import Settings
from ms4watch.workbench import Workbench, create_app
from ms4watch.workbench.auth import AckLinks
from ms4watch.workbench.auth.passwords import Passwords
from ms4watch.workbench.roles import Role
from ms4watch.workbench.serving import WebServer
from ms4watch.workbench.services.health import Health
from ms4watch.workbench.services.metrics import Metrics

from .notify_peers import REGISTRY_YAML, registry

# The notification tests' town, with what the workbench's pages show besides: coordinates,
# the outfall inventory, a site active from a few days before the tests' clock.
WORKBENCH_YAML = (REGISTRY_YAML
                  .replace("rain_gauges: [{id: RG-1}]", "rain_gauges: [{id: RG-1, name: DPW yard, lat: 42.8142, lon: -73.9396}]")
                  .replace('{id: OF-12, name: "Main St outfall", rain_gauges: [RG-1], flow_floor_gpm: 0.5}',
                           '{id: OF-12, name: "Main St outfall", rain_gauges: [RG-1], flow_floor_gpm: 0.5, lat: 42.8161, '
                           'lon: -73.9452, receiving_water: Mohawk River, pipe_diameter_in: 36, pipe_material: rcp}')
                  .replace('name: "Elm St creek", construction_site: CS-7}',
                           'name: "Elm St creek", construction_site: CS-7, lat: 42.8105, lon: -73.9320}')
                  .replace("active_from: 2026-01-01", "active_from: 2026-05-29"))

SECRET = "test-secret-" + "x" * 40
PASSWORD = "correct horse battery"
ROLES = [r.value for r in Role]


def cheap_passwords() -> Passwords:
    """argon2id at its smallest cost: the tests hash dozens of passwords (production keeps
    argon2-cffi's defaults, ~0.3 s a hash on this machine)."""
    return Passwords(PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


class PipelineAlerting:
    """The pipeline's incident service with the names the tests drive it by (``handle`` an
    engine event directly, ``tick`` the dispatcher); ``pipeline`` feeds the engine."""

    def __init__(self, pipeline: AlertPipeline):
        self.pipeline = pipeline
        self.incidents = pipeline.incidents
        self.store = pipeline.incidents.store
        self.handle = pipeline.incidents.handle
        self.acknowledge = pipeline.incidents.acknowledge
        self.resolve = pipeline.incidents.resolve
        self.tick = pipeline.dispatcher.tick
        self.queue = pipeline.dispatcher.queue

    def close(self) -> None:
        self.pipeline.close()


@dataclass
class Bench:
    url: str
    alerting: PipelineAlerting
    workbench: Workbench
    server: WebServer
    store: Any = None                                        # the SQLite store (the readings port)
    tokens: dict[str, str] = field(default_factory=dict)   # role -> API token of the user of that role

    @property
    def pipeline(self) -> AlertPipeline:
        return self.alerting.pipeline

    def feed(self, readings: list[CanonicalReading]) -> None:
        """As ingest does: into the store, then to the alert pipeline."""
        msgs = []
        for r in readings:
            self._seq += 1
            msgs.append(StoredMessage(r.device, self._seq, (r,)))
        for i in range(0, len(msgs), 20_000):
            self.store.write(msgs[i:i + 20_000])
        self.pipeline.feed(readings)

    _seq: int = 0

    @property
    def municipality(self) -> str:
        return self.workbench.municipality

    def api(self, role: str | None = None, **kw: Any) -> httpx.Client:
        """A client with the API token of the user whose role is ``role`` (None: no token)."""
        headers = {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}
        return httpx.Client(base_url=self.url, headers=headers, follow_redirects=False, timeout=30, **kw)

    def login(self, role: str) -> "Session":
        c = httpx.Client(base_url=self.url, follow_redirects=False, timeout=30)
        page = c.get("/login")
        r = c.post("/login", data={"username": role, "password": PASSWORD, "csrf": csrf_of(page.text), "next": "/"})
        assert r.status_code == 303, r.text
        return Session(c)

    def close(self) -> None:
        self.server.stop()
        self.workbench.close()
        self.alerting.close()
        if self.store is not None:
            self.store.close()


class Session:
    """A logged-in browser-like client: cookies, and the CSRF token its pages carry."""

    def __init__(self, client: httpx.Client):
        self.client = client

    def csrf(self) -> str:
        return csrf_of(self.client.get("/incidents").text)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.client.get(path, **kw)

    def post_form(self, path: str, data: dict[str, str] | None = None, *, csrf: bool = True) -> httpx.Response:
        data = dict(data or {})
        if csrf:
            data["csrf"] = self.csrf()
        return self.client.post(path, data=data)


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def start_bench(tmp_path: Path, clock: Any, *, urls: list[str] | None = None, web: dict | None = None,
                sms: dict | None = None, reg: Any = None, http: dict | None = None) -> Bench:
    """The readings port is a SQLite store at ``data/store.db`` (opened, empty until a test
    writes it); the SMS webhook takes unsigned posts unless ``sms`` says otherwise; the
    pipeline's clock is ``clock``."""
    from ms4watch.ingest.sinks import SqliteSink
    readings = SqliteSink(tmp_path / "data" / "store.db")
    readings.open()
    settings = Settings.model_validate({"data_dir": tmp_path / "data", "http": {"listen": "127.0.0.1:0", **(http or {})},
                                        "web": {"secret": SECRET, **(web or {})}, "sms": sms or {"inbound": "none"}})
    reg = reg or registry(WORKBENCH_YAML)
    links = AckLinks(SECRET, settings.web.ack_link_lifetime)
    compliance = ComplianceStore(tmp_path / "data" / "compliance.db", clock, tz=reg.tz)
    calendar = BusinessCalendar(reg.tz, reg.office_closures)
    pipeline = AlertPipeline(reg, tmp_path / "data", PipelineParts(
        notify_urls=urls or [], readings=readings, now_ns=lambda: to_ns(clock()), ack_link=links.url,
        eval_interval=timedelta(0), compliance=lambda now: all_deadlines(compliance, calendar)))
    alerting = PipelineAlerting(pipeline)
    incidents = alerting.incidents
    metrics = Metrics()
    metrics.watch(ingest=None, spool_depth=None, queue=lambda: incidents.delivery_backlog()[0])
    health = Health(broker_connected=None, store=None, backlog=incidents.delivery_backlog, clock=clock,
                    backlog_max=settings.web.ready_backlog_max)
    wb = Workbench.open(settings, registry=reg, incidents=incidents, secret=SECRET, links=links, health=health,
                        metrics=metrics, readings=readings, clock=clock, passwords=cheap_passwords(),
                        sms_verifier=settings.sms.verifier(), alert_side=pipeline, compliance=compliance)
    server = WebServer("127.0.0.1", 0, trusted_proxies=settings.http.trusted_proxies)
    links.base_url = server.url
    server.start(create_app(settings, wb))
    bench = Bench(server.url, alerting, wb, server, readings)
    for role in ROLES:
        wb.users.add(role, PASSWORD, municipality=reg.municipality, role=Role(role), display_name=f"{role.title()} User")
        bench.tokens[role] = wb.users.create_token(role, "tests")[1]
    return bench
