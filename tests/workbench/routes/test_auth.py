"""Logging in and out: passwords, CSRF on the login form too, rate-limited attempts, no
open redirects, a login that lasts ``web.session_max_age``."""

from __future__ import annotations

from datetime import timedelta

import httpx

from tests.support.workbench import PASSWORD, csrf_of, start_bench


def _login(c: httpx.Client, username: str, password: str, next_url: str = "/") -> httpx.Response:
    csrf = csrf_of(c.get("/login").text)
    return c.post("/login", data={"username": username, "password": password, "csrf": csrf, "next": next_url})


def test_log_in_see_the_pages_log_out(bench):
    with bench.client() as c:
        r = c.get("/incidents?state=all")
        assert r.status_code == 303 and r.headers["location"] == "/login?next=/incidents"
        r = _login(c, "smo", PASSWORD, "/incidents")
        assert r.status_code == 303 and r.headers["location"] == "/incidents"
        assert "ms4watch_session" in r.headers["set-cookie"] and "httponly" in r.headers["set-cookie"].lower()
        page = c.get("/incidents")
        assert page.status_code == 200 and "Smo User · smo" in page.text
        csrf = csrf_of(page.text)
        r = c.post("/logout", data={"csrf": csrf})
        assert r.status_code == 303 and r.headers["location"] == "/login"
        assert c.get("/incidents").status_code == 303
    entries = [(e.action, e.who) for e in bench.workbench.audit.entries()]
    assert entries[:2] == [("session.logout", "smo"), ("session.login", "smo")]


def test_wrong_password_unknown_user_and_a_login_without_csrf_are_refused(bench):
    with bench.client() as c:
        wrong = _login(c, "smo", "not the password")
        unknown = _login(c, "nobody", PASSWORD)
        assert wrong.status_code == unknown.status_code == 401
        assert "wrong user name or password" in wrong.text and "wrong user name or password" in unknown.text
        r = c.post("/login", data={"username": "smo", "password": PASSWORD})
        assert r.status_code == 403 and "CSRF" in r.text
        assert c.get("/incidents").status_code == 303


def test_login_attempts_are_rate_limited_per_user_name(bench):
    limit = bench.workbench.settings.web.login_attempts
    with bench.client() as c:
        for _ in range(limit):
            assert _login(c, "inspector", "guess").status_code == 401
        r = _login(c, "inspector", PASSWORD)                 # even the right password waits now
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0 and "too many failed logins" in r.text
        assert _login(c, "smo", PASSWORD).status_code == 429   # and so does every name from this address
    rows = bench.workbench.conn.execute("SELECT COUNT(*) FROM login_attempts WHERE ok = 0").fetchone()[0]
    assert rows == limit


def test_the_limit_lifts_after_the_window(tmp_path, clock):
    bench = start_bench(tmp_path, clock, web={"login_attempts": 2, "login_window": "15min"})
    try:
        users = bench.workbench.users
        now = users.clock()
        users.clock = lambda: now
        with bench.client() as c:
            assert [_login(c, "smo", "x").status_code for _ in range(3)] == [401, 401, 429]
            users.clock = lambda: now + timedelta(minutes=16)
            assert _login(c, "smo", PASSWORD).status_code == 303
    finally:
        bench.close()


def test_next_is_a_path_of_ours_only(bench):
    with bench.client() as c:
        for evil in ("https://evil.test/", "//evil.test/x", "/\\evil.test"):
            r = _login(c, "viewer", PASSWORD, evil)
            assert r.status_code == 303 and r.headers["location"] == "/", evil


def test_a_login_lasts_session_max_age(tmp_path, clock):
    bench = start_bench(tmp_path, clock, web={"session_max_age": "1h"})
    try:
        s = bench.login("viewer")
        assert s.get("/").status_code == 200
        users = bench.workbench.users
        now = users.clock()
        users.clock = lambda: now + timedelta(hours=1, minutes=1)
        r = s.get("/")
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
    finally:
        bench.close()


def _copy(session) -> httpx.Client:
    """Another client holding the same cookies (a cookie copied out of the browser)."""
    return session.copy()


def test_a_cookie_copied_before_logout_is_refused_after_it(bench):
    s = bench.login("smo")
    with _copy(s) as thief:
        assert thief.get("/incidents").status_code == 200
        csrf = csrf_of(s.get("/incidents").text)
        assert s.client.post("/logout", data={"csrf": csrf}).status_code == 303
        r = thief.get("/incidents")
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
        assert thief.get("/api/v1/me").status_code == 401
        r = thief.post("/incidents/1/acknowledge", data={"csrf": csrf})
        assert r.status_code == 401                        # and no write either
    why = bench.workbench.conn.execute("SELECT ended_why FROM sessions").fetchall()
    assert [w[0] for w in why] == ["logout"]


def test_a_password_change_or_disabling_ends_every_session_of_the_user(bench):
    users = bench.workbench.users
    inspector, smo = bench.login("inspector"), bench.login("smo")
    with _copy(inspector) as copied, _copy(smo) as other:
        assert copied.get("/api/v1/me").status_code == other.get("/api/v1/me").status_code == 200
        users.set_password("inspector", "another good password")
        assert copied.get("/api/v1/me").status_code == 401
        assert inspector.get("/api/v1/me").status_code == 401
        assert other.get("/api/v1/me").status_code == 200      # another user's session goes on
        users.disable("smo")
        assert other.get("/api/v1/me").status_code == 401
        assert smo.get("/incidents").status_code == 303
        users.conn.execute("UPDATE users SET disabled_at = NULL WHERE username = 'smo'")
        assert other.get("/api/v1/me").status_code == 401      # enabled again: the old session stays ended


def test_parallel_wrong_passwords_get_at_most_the_limit_of_full_checks(bench):
    """60 wrong passwords at once, with argon2's real cost (the limit used to be read before
    the hash and written after it: 28 of 150 got through a limit of 5)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ms4watch.workbench.auth.passwords import Passwords
    bench.workbench.users.passwords = Passwords()
    limit = bench.workbench.settings.web.login_attempts
    # 60 browsers (each its own cookies and CSRF token) through one pool of connections: a
    # client of its own transport loads the CA certificates, ~22 ms of CPU each (1.3 s here)
    connections = httpx.HTTPTransport(limits=httpx.Limits(max_connections=60))
    clients = [httpx.Client(base_url=bench.url, timeout=120, transport=connections) for _ in range(60)]
    forms = [{"username": "smo", "password": f"guess {i}", "csrf": csrf_of(c.get("/login").text)}
             for i, c in enumerate(clients)]
    together = threading.Barrier(60)

    def post(client: httpx.Client, form: dict[str, str]) -> int:
        together.wait()
        return client.post("/login", data=form).status_code

    try:
        with ThreadPoolExecutor(60) as pool:
            codes = list(pool.map(post, clients, forms))
    finally:
        for c in clients:
            c.close()
    assert codes.count(401) == limit and codes.count(429) == 60 - limit
    checked = bench.workbench.conn.execute("SELECT COUNT(*) FROM login_attempts").fetchone()[0]
    assert checked == limit


def test_an_attackers_failures_do_not_lock_the_smo_out_from_another_address(tmp_path, clock):
    bench = start_bench(tmp_path, clock, http={"trusted_proxies": ["127.0.0.1"]})   # behind the town's proxy
    try:
        limit = bench.workbench.settings.web.login_attempts
        with httpx.Client(base_url=bench.url, headers={"X-Forwarded-For": "203.0.113.66"}) as attacker:
            assert [_login(attacker, "smo", "guess").status_code for _ in range(limit + 3)] == \
                [401] * limit + [429] * 3
        with httpx.Client(base_url=bench.url, headers={"X-Forwarded-For": "198.51.100.7"}) as smo:
            r = _login(smo, "smo", PASSWORD, "/incidents")
            assert r.status_code == 303 and smo.get("/incidents").status_code == 200
        addresses = bench.workbench.conn.execute("SELECT DISTINCT address FROM login_attempts ORDER BY 1").fetchall()
        assert [a[0] for a in addresses] == ["198.51.100.7", "203.0.113.66"]
    finally:
        bench.close()
