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
    with httpx.Client(base_url=bench.url) as c:
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
    with httpx.Client(base_url=bench.url) as c:
        wrong = _login(c, "smo", "not the password")
        unknown = _login(c, "nobody", PASSWORD)
        assert wrong.status_code == unknown.status_code == 401
        assert "wrong user name or password" in wrong.text and "wrong user name or password" in unknown.text
        r = c.post("/login", data={"username": "smo", "password": PASSWORD})
        assert r.status_code == 403 and "CSRF" in r.text
        assert c.get("/incidents").status_code == 303


def test_login_attempts_are_rate_limited_per_user_name(bench):
    limit = bench.workbench.settings.web.login_attempts
    with httpx.Client(base_url=bench.url) as c:
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
        with httpx.Client(base_url=bench.url) as c:
            assert [_login(c, "smo", "x").status_code for _ in range(3)] == [401, 401, 429]
            users.clock = lambda: now + timedelta(minutes=16)
            assert _login(c, "smo", PASSWORD).status_code == 303
    finally:
        bench.close()


def test_next_is_a_path_of_ours_only(bench):
    with httpx.Client(base_url=bench.url) as c:
        for evil in ("https://evil.test/", "//evil.test/x", "/\\evil.test"):
            r = _login(c, "viewer", PASSWORD, evil)
            assert r.status_code == 303 and r.headers["location"] == "/", evil


def test_a_login_lasts_session_max_age(tmp_path, clock, monkeypatch):
    bench = start_bench(tmp_path, clock, web={"session_max_age": "1h"})
    try:
        s = bench.login("viewer")
        assert s.get("/").status_code == 200
        import ms4watch.workbench.deps as deps
        real = deps.datetime

        class Later(real):
            @classmethod
            def now(cls, tz=None):
                return real.now(tz) + timedelta(hours=1, minutes=1)

        monkeypatch.setattr(deps, "datetime", Later)
        r = s.get("/")
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
    finally:
        bench.close()
