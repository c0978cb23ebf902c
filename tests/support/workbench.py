"""A workbench over the town's real alert pipeline (engine, incident database, delivery
queue: the delivery worker not started, ``tick`` by hand) and a real SQLite store, with a
user (and an API token) for each role; HTTP through httpx.

The bench's clients (``client``, ``api``, ``login``) reach the app in process (no socket:
``tests/support/inprocess.py``), at ``base_url``, the address its acknowledge links carry.
``url`` serves the same app on a real uvicorn at that address, started on first use: for a
test that needs a socket (raw HTTP, proxy headers, a browser, a client of its own). Until
then the address refuses connections (it is bound, not listening): a client of one's own
that forgot ``url`` fails at once, not after a timeout.

Old style ``httpx.Client(base_url=bench.url)`` still works (on uvicorn, ~0.3 s slower a
test); in process it is ``bench.client()``, and a URL only compared or formatted is
``bench.base_url``."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from argon2 import PasswordHasher
from jinja2.bccache import BytecodeCache, Bucket

from ms4watch.contract.wire import CanonicalReading
from ms4watch.ingest.stores.base import StoredMessage
from ms4watch.pipeline import AlertPipeline
from ms4watch.server import ServerParts, build_server
from ms4watch.settings import Settings
from ms4watch.workbench import Workbench
from ms4watch.workbench.auth.passwords import Passwords
from ms4watch.workbench.roles import Role
from ms4watch.workbench.serving import WebServer

from .inprocess import InProcess
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


class CompiledTemplates(BytecodeCache):
    """Jinja's compiled templates kept in memory for this test process. Each test's app has
    an environment of its own (``workbench.app.templates``), which compiled every template
    it rendered again: a tenth of a workbench test's CPU. The code depends on the template's
    source only (Jinja checks its checksum); globals and filters are looked up at render."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = CompiledTemplates()


def cheap_passwords() -> Passwords:
    """argon2id at its smallest cost (8 KiB, argon2's least: 0.05 ms a hash; 1 MiB was
    0.6 ms, four users a bench and a check a login): the tests hash thousands of passwords.
    Production keeps argon2-cffi's defaults, ~0.23 s a hash on this machine; the same
    ``Passwords`` either way (test_auth's parallel logins check at the real cost)."""
    return Passwords(PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))


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


class _ReservedWebServer(WebServer):
    """uvicorn on a socket bound beforehand (so its address is known, and refuses
    connections, before anything serves)."""

    def __init__(self, reserved: socket.socket, **kw: Any):
        self._reserved = reserved
        super().__init__("127.0.0.1", reserved.getsockname()[1], **kw)

    def bind(self, host: str, port: int) -> socket.socket:  # type: ignore[override]
        sock = self._reserved
        sock.listen(128)
        sock.setblocking(False)
        return sock


class LazyWeb:
    """The bench's address on a loopback port; uvicorn serves it from the first ``serve()``."""

    def __init__(self, *, trusted_proxies: Any = ()):
        self.trusted_proxies = trusted_proxies
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # as WebServer.bind
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.app: Any = None
        self.server: WebServer | None = None

    def serve(self) -> str:
        if self.server is None:
            self.server = _ReservedWebServer(self._sock, trusted_proxies=self.trusted_proxies).start(self.app)
        return self.url

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        else:
            self._sock.close()


@dataclass
class Bench:
    base_url: str                                          # the address: of the in-process clients, the links, ``url``
    alerting: PipelineAlerting
    workbench: Workbench
    web: LazyWeb
    transport: InProcess
    store: Any = None                                        # the SQLite store (the readings port)
    root: Any = None                                         # the Server build_server made (not started)
    tokens: dict[str, str] = field(default_factory=dict)   # role -> API token of the user of that role

    @property
    def url(self) -> str:
        """The bench on a real uvicorn (started now if it was not): for tests that need a socket."""
        return self.web.serve()

    @property
    def server(self) -> WebServer:
        self.web.serve()
        assert self.web.server is not None
        return self.web.server

    @property
    def pipeline(self) -> AlertPipeline:
        return self.alerting.pipeline

    def subscribed(self) -> "Bench":
        """As when the server's ingest holds its broker subscription (the bench starts no
        broker, so until then ``/health/ready`` says, rightly, not ready)."""
        self.root.ingest.connected.set()
        return self

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

    def client(self, **kw: Any) -> httpx.Client:
        """A client of the app in process, at ``base_url`` (no redirects followed; ``kw`` as
        httpx.Client's: headers, cookies, …)."""
        return httpx.Client(**{"base_url": self.base_url, "follow_redirects": False, "timeout": 30, **kw},
                            transport=self.transport)

    def api(self, role: str | None = None, **kw: Any) -> httpx.Client:
        """A client with the API token of the user whose role is ``role`` (None: no token)."""
        headers = {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}
        return self.client(headers=headers, **kw)

    def login(self, role: str) -> "Session":
        c = self.client()
        page = c.get("/login")
        r = c.post("/login", data={"username": role, "password": PASSWORD, "csrf": csrf_of(page.text), "next": "/"})
        assert r.status_code == 303, r.text
        return Session(c, self.client)

    def close(self) -> None:
        self.web.stop()
        self.transport.shutdown()
        self.workbench.close()
        self.alerting.close()
        if self.store is not None:
            self.store.close()


class Session:
    """A logged-in browser-like client: cookies, and the CSRF token its pages carry."""

    def __init__(self, client: httpx.Client, new_client: Any = None):
        self.client = client
        self._new_client = new_client

    def copy(self) -> httpx.Client:
        """Another client holding the same cookies (a cookie copied out of the browser)."""
        c = self._new_client() if self._new_client else httpx.Client(base_url=str(self.client.base_url),
                                                                     follow_redirects=False, timeout=30)
        for cookie in self.client.cookies.jar:
            c.cookies.set(cookie.name, cookie.value)
        return c

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
    """The town's server as ``serve`` builds it (``build_server``), not started: its
    readings store is SQLite at ``data/store.db``, its clock is ``clock``, the registry is
    ``reg`` (the workbench town by default), the SMS webhook takes unsigned posts unless
    ``sms`` says otherwise; no broker (the ingest is built, never started), the delivery
    worker ticked by hand."""
    settings = Settings.model_validate({"data_dir": tmp_path / "data", "notify": urls or [],
                                        "http": {"listen": "127.0.0.1:0", **(http or {})},
                                        "web": {"secret": SECRET, **(web or {})}, "sms": sms or {"inbound": "none"}})
    reg = reg or registry(WORKBENCH_YAML)
    server = build_server(settings, parts=ServerParts(registries=[reg], clock=clock, passwords=cheap_passwords()))
    town = server.town
    town.store.open()          # as ingest opens it when it starts
    assert town.workbench is not None and server.app is not None
    server.app.state.templates.env.bytecode_cache = COMPILED_TEMPLATES
    web = LazyWeb(trusted_proxies=settings.http.trusted_proxies)
    town.workbench.links.base_url = web.url
    web.app = server.app
    bench = Bench(web.url, PipelineAlerting(town.pipeline), town.workbench, web, InProcess(web.app), town.store)
    bench.root = server
    wb = town.workbench
    for role in ROLES:
        wb.users.add(role, PASSWORD, municipality=reg.municipality, role=Role(role), display_name=f"{role.title()} User")
        bench.tokens[role] = wb.users.create_token(role, "tests")[1]
    return bench
