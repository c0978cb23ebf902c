"""The workbench behind Debian's nginx configured by the shipped example
(docs/examples/nginx-ms4watch.conf, ports and certificate substituted): TLS at the proxy,
the client's address from nginx believed (``http.trusted_proxies``), a client's own
X-Forwarded-For never, ``/metrics`` refused at the proxy to addresses it does not list,
photos larger than nginx's 1 MB default accepted.

The loopback network is all of 127.0.0.0/8: nginx reaches the workbench from 127.0.0.1 (the
trusted proxy) while each test client connects from an address of its own (127.0.0.3, …),
so "from the proxy" and "directly" are told apart on one machine."""

from __future__ import annotations

import ssl

import httpx
import pytest

from tests.support.nginx import EXAMPLE, Nginx, free_port, have_nginx, self_signed, site_for_test
from tests.support.workbench import PASSWORD, csrf_of, start_bench

pytestmark = pytest.mark.skipif(not have_nginx(), reason="nginx is not installed (apt-get install nginx)")

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
REPORT = {"site": "CS-7", "at": "2026-06-01T15:30:00Z", "inspector": "J. Rivera", "credential": "cpesc",
          "license_no": "CPESC 4711", "disturbed_areas": "north pad", "stabilized_areas": "west slope",
          "idle_areas": "none", "sediment_pct": 35, "sediment_note": "trap A 20 %", "maintenance": "none",
          "deficiencies": "none", "certified": True}


class Proxied:
    """nginx on ``https`` (and ``http``) in front of the workbench at ``upstream``."""

    def __init__(self, upstream: str, https: int, http: int, cert, bench=None):
        self.upstream, self.https, self.http, self.cert, self.bench = upstream, https, http, cert, bench

    def via_proxy(self, source: str, **kw) -> httpx.Client:
        """A client at ``source`` speaking TLS to nginx."""
        return httpx.Client(base_url=f"https://127.0.0.1:{self.https}", timeout=30,
                            transport=httpx.HTTPTransport(local_address=source, verify=ssl.create_default_context(cafile=self.cert)), **kw)

    def direct(self, source: str, **kw) -> httpx.Client:
        """A client at ``source`` reaching the workbench's own port, past nginx."""
        return httpx.Client(base_url=self.upstream, timeout=30, transport=httpx.HTTPTransport(local_address=source), **kw)

    def attempts(self) -> list[tuple[str, int]]:
        rows = self.bench.workbench.conn.execute("SELECT address, ok FROM login_attempts ORDER BY id").fetchall()
        return [tuple(r) for r in rows]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """The proxy's self-signed certificate and key, made once for the file (openssl's RSA key:
    ~0.2 s of CPU each, and nothing a test checks differs between two of them)."""
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def proxied(tmp_path, clock, certificate):
    https, http = free_port(), free_port()
    bench = start_bench(tmp_path, clock, http={"trusted_proxies": ["127.0.0.1"], "public_url": f"https://127.0.0.1:{https}"},
                        web={"metrics_networks": ["127.0.0.0/8"]})       # the app alone would let every local address read /metrics
    nginx = None
    try:
        cert, key = certificate
        site = site_for_test(EXAMPLE.read_text(), upstream=int(bench.url.rsplit(":", 1)[1]), https=https, http=http,
                             cert=cert, key=key)
        nginx = Nginx(tmp_path / "nginx", site).start(https)
        yield Proxied(bench.url, https, http, cert, bench)
    finally:
        if nginx is not None:
            nginx.stop()
        bench.close()


def _login(c: httpx.Client, password: str) -> httpx.Response:
    page = c.get("/login")
    form = {"username": "smo", "password": password, "csrf": csrf_of(page.text), "next": "/incidents"}
    # the session cookie is Secure (public_url is https): a client past the proxy, on plain
    # HTTP, hands it back itself
    cookie = {"Cookie": f"ms4watch_session={page.cookies['ms4watch_session']}"} if c.base_url.scheme == "http" else {}
    return c.post("/login", data=form, headers=cookie)


def test_a_login_through_the_proxy_over_tls(proxied):
    with proxied.via_proxy("127.0.0.3") as c:
        r = _login(c, PASSWORD)
        assert r.status_code == 303 and r.headers["location"] == "/incidents", r.text
        cookie = r.headers["set-cookie"].lower()
        assert "secure" in cookie and "httponly" in cookie                  # public_url is https
        page = c.get("/incidents")
        assert page.status_code == 200 and "Smo User" in page.text
        assert page.headers["strict-transport-security"].startswith("max-age=")       # nginx's
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]    # the workbench's, passed on
        assert "server" not in page.headers or "nginx/" not in page.headers["server"]  # no version
    with httpx.Client(base_url=f"http://127.0.0.1:{proxied.http}") as plain:
        r = plain.get("/login?next=/incidents")
        assert r.status_code == 301 and r.headers["location"] == "https://127.0.0.1/login?next=/incidents"
    assert proxied.attempts() == [("127.0.0.3", 1)]


def test_the_login_limit_counts_the_address_nginx_saw_never_a_header_a_client_sent(proxied):
    limit = proxied.bench.workbench.settings.web.login_attempts
    spoof = {"X-Forwarded-For": "198.51.100.7"}
    with proxied.via_proxy("127.0.0.3", headers=spoof) as attacker:    # nginx replaces the header with its peer
        assert [_login(attacker, "a guess").status_code for _ in range(limit + 1)] == [401] * limit + [429]
    with proxied.via_proxy("127.0.0.4") as smo:                           # another address: not locked out
        assert _login(smo, PASSWORD).status_code == 303
    with proxied.direct("127.0.0.5", headers={"X-Forwarded-For": "203.0.113.9"}) as local:  # past the proxy
        assert _login(local, "a guess").status_code == 401
    assert proxied.attempts() == [("127.0.0.3", 0)] * limit + [("127.0.0.4", 1), ("127.0.0.5", 0)]


@pytest.mark.parametrize("path", ["/metrics", "//metrics", "/%6detrics", "/metrics?name=x", "/metrics/",
                                  "/t/town/metrics"])
def test_metrics_are_refused_at_the_proxy_to_an_address_it_does_not_list(proxied, path):
    with proxied.via_proxy("127.0.0.3") as outsider:
        r = outsider.get(f"https://127.0.0.1:{proxied.https}{path}")     # as written: httpx would resolve '//metrics'

        assert r.status_code == 403 and "nginx" in r.text, (r.status_code, r.text[:200])
    with proxied.direct("127.0.0.3") as c:           # the workbench alone would have answered it
        assert c.get("/metrics").status_code == 200
    with proxied.via_proxy("127.0.0.1") as prometheus:   # the example allows the machine itself
        r = prometheus.get("/metrics")
        assert r.status_code == 200 and "# TYPE" in r.text


def test_a_photo_larger_than_nginxs_default_body_reaches_the_workbench(proxied):
    photo = JPEG + b"\x00" * 6_000_000 + b"\xff\xd9"                 # nginx refuses bodies over 1 MB unless told
    with proxied.via_proxy("127.0.0.3", headers={"Authorization": f"Bearer {proxied.bench.tokens['inspector']}"}) as c:
        r = c.post("/api/v1/inspections", json=REPORT)
        assert r.status_code == 201, r.text
        rid = r.json()["report"]["id"]
        r = c.post(f"/api/v1/inspections/{rid}/photos", files={"photo": ("outlet.jpg", photo, "image/jpeg")})
        assert r.status_code == 201, r.text[:300]
        assert r.json()["photos"][0]["size"] == len(photo)


@pytest.mark.mosquitto
def test_ms4watch_serve_behind_nginx_believes_only_nginx(tmp_path, mosquitto_broker, certificate):
    """The composition root's way: ``ms4watch serve`` with the settings the example's header
    gives (``[http]`` listen, public_url, trusted_proxies), a user added with ``ms4watch users
    add``, nginx in front. ``serve`` runs in a process of its own; ``users add`` in this one
    (``run_cli``: a second interpreter and its imports cost ~1 s of CPU; the command itself
    is tests/test_users_cli.py's)."""
    import os
    import sqlite3
    import subprocess
    import sys

    from tests.support.cli import run_cli
    from tests.support.servers import wait_port
    from tests.support.waiting import wait_for
    listen, https, http = free_port(), free_port(), free_port()
    (tmp_path / "sites.yaml").write_text("municipality: town\ntimezone: America/New_York\n"
                                         "rain_gauges: [{id: RG-1, tip_in: 0.01}]\n"
                                         "contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]\n")
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'registry = "{tmp_path / "sites.yaml"}"\ndata_dir = "{tmp_path / "data"}"\n'
                   f'[broker]\nurl = "{mosquitto_broker.url}"\n'
                   f'[http]\nlisten = "127.0.0.1:{listen}"\npublic_url = "https://127.0.0.1:{https}"\n'
                   'trusted_proxies = ["127.0.0.1"]\n')
    (tmp_path / "pw").write_text(PASSWORD)
    (tmp_path / "data").mkdir()      # the data folder an install makes (users add refuses a missing one)
    ms4 = [sys.executable, "-m", "ms4watch"]
    added = run_cli("users", "add", "smo", "--role", "smo", "--password-file", str(tmp_path / "pw"),
                    "--config", str(cfg))
    assert added.returncode == 0, added.stderr
    log = tmp_path / "serve.log"
    server = subprocess.Popen([*ms4, "serve", "--config", str(cfg)], stdout=log.open("ab"), stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    nginx = None
    try:
        wait_port(listen, timeout_s=60, proc=server)
        cert, key = certificate
        site = site_for_test(EXAMPLE.read_text(), upstream=listen, https=https, http=http, cert=cert, key=key)
        nginx = Nginx(tmp_path / "nginx", site).start(https)
        proxied = Proxied(f"http://127.0.0.1:{listen}", https, http, cert)
        with proxied.via_proxy("127.0.0.3", headers={"X-Forwarded-For": "198.51.100.7"}) as c:
            assert _login(c, "a guess").status_code == 401
            assert _login(c, PASSWORD).status_code == 303
            assert c.get("/incidents").status_code == 200
            assert c.get("/metrics").status_code == 403
        with proxied.direct("127.0.0.5", headers={"X-Forwarded-For": "203.0.113.9"}) as local:
            assert _login(local, "a guess").status_code == 401
        with sqlite3.connect(f"file:{tmp_path / 'data' / 'workbench.db'}?mode=ro", uri=True) as db:
            rows = lambda: db.execute("SELECT address, ok FROM login_attempts ORDER BY id").fetchall()  # noqa: E731
            assert wait_for(lambda: len(rows()) == 3, 10)
            assert rows() == [("127.0.0.3", 0), ("127.0.0.3", 1), ("127.0.0.5", 0)]
    finally:
        if nginx is not None:
            nginx.stop()
        server.terminate()
        server.wait(60)
