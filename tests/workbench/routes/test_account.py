"""``/account``: one's own password and API tokens; an admin's view of the town's users
(removing one from the town, revoking a token); ``POST /api/v1/tokens/{id}/revoke``. Every
change is in the audit log; tokens expire."""

from __future__ import annotations

from datetime import timedelta

import httpx

from ms4watch.workbench.roles import Role
from tests.support.workbench import PASSWORD

NEW = "a brand new passphrase"


def _copy(session) -> httpx.Client:
    return session.copy()


def test_changing_ones_password_ends_the_other_sessions_and_keeps_this_one(bench):
    s, elsewhere = bench.login("inspector"), bench.login("inspector")
    page = s.get("/account")
    assert page.status_code == 200 and "Change password" in page.text and 'href="/account"' in page.text
    form = {"current": PASSWORD, "new": NEW, "repeat": NEW}
    assert s.post_form("/account/password", {**form, "current": "not it"}).status_code == 403
    assert s.post_form("/account/password", {**form, "repeat": "something else"}).status_code == 400
    weak = s.post_form("/account/password", {**form, "new": "short", "repeat": "short"})
    assert weak.status_code == 400 and "at least 8 characters" in weak.text
    with _copy(s) as copied:
        r = s.post_form("/account/password", form)
        assert r.status_code == 303 and r.headers["location"] == "/account?done=password"
        assert "Password changed" in s.get("/account?done=password").text     # this browser goes on
        assert copied.get("/account").status_code == 303                       # a copy of its old cookie does not
        assert elsewhere.get("/incidents").status_code == 303                  # nor another browser
    assert bench.workbench.users.check_password("inspector", NEW)
    actions = [(e.action, e.outcome[:8]) for e in bench.workbench.audit.entries(target="user:inspector")]
    assert actions == [("user.password", "done"), ("user.password", "refused:")]


def test_a_token_is_revoked_by_its_owner_or_the_towns_admin_only(bench):
    users = bench.workbench.users
    viewer_token = users.tokens("viewer")[0]
    s = bench.login("viewer")
    assert f"/account/tokens/{viewer_token.id}/revoke" in s.get("/account").text
    smo_token = users.tokens("smo")[0]
    r = s.post_form(f"/account/tokens/{smo_token.id}/revoke")                # another's: no
    assert r.status_code == 403 and "needs the role admin" in r.text
    with bench.api("smo") as c:
        assert c.get("/api/v1/me").status_code == 200
    r = s.post_form(f"/account/tokens/{viewer_token.id}/revoke")               # one's own: yes
    assert r.status_code == 303
    with bench.api("viewer") as c:
        assert c.get("/api/v1/me").status_code == 401
    admin = bench.login("admin")
    page = admin.get("/account").text
    assert "Users of schenectady" in page and f"/account/tokens/{smo_token.id}/revoke" in page
    assert admin.post_form(f"/account/tokens/{smo_token.id}/revoke").status_code == 303
    with bench.api("smo") as c:
        assert c.get("/api/v1/me").status_code == 401
    audit = [(e.who, e.action, e.target, e.outcome[:8]) for e in bench.workbench.audit.entries()
             if e.action == "token.revoke"]
    assert audit == [("admin", "token.revoke", "user:smo", "done"), ("viewer", "token.revoke", "user:viewer", "done"),
                     ("viewer", "token.revoke", "user:smo", "refused:")]


def test_a_token_revokes_itself_over_the_api_and_tokens_expire(bench):
    users = bench.workbench.users
    made, secret = users.create_token("inspector", "ci", timedelta(days=1))
    with bench.client(headers={"Authorization": f"Bearer {secret}"}) as c:
        assert c.get("/api/v1/me").status_code == 200
        now = users.clock()
        users.clock = lambda: now + timedelta(days=1, seconds=1)
        assert c.get("/api/v1/me").status_code == 401                           # expired
    users.clock = lambda: now
    with bench.api("inspector") as c:
        kept = users.tokens("inspector")[0]
        assert c.post(f"/api/v1/tokens/{made.id}/revoke").status_code == 204
        assert c.post("/api/v1/tokens/999/revoke").status_code == 404
        assert c.get("/api/v1/me").status_code == 200                           # the other token goes on
    assert users.tokens("inspector")[1].revoked_at is not None and kept.revoked_at is None
    with bench.client(headers={"Authorization": f"Bearer {secret}"}) as c:
        users.clock = lambda: now
        assert c.get("/api/v1/me").status_code == 401


def test_the_admin_removes_a_user_from_this_town_only(bench):
    users = bench.workbench.users
    users.grant("smo", municipality="ramapo", role=Role.SMO)
    smo = bench.login("smo")
    r = smo.post_form("/users/viewer/remove")
    assert r.status_code == 403 and "needs the role admin" in r.text
    admin = bench.login("admin")
    assert admin.post_form("/users/smo/remove").status_code == 303
    assert users.find("smo").roles == {"ramapo": Role.SMO}
    assert smo.get("/incidents").status_code == 403                               # no role here any more
    with bench.api("smo") as c:
        assert c.get("/api/v1/me").status_code == 403
    assert admin.post_form("/users/smo/remove").status_code == 404
    assert admin.post_form("/users/admin/remove").status_code == 409
    audit = [(e.who, e.target, e.detail, e.outcome[:8]) for e in bench.workbench.audit.entries()
             if e.action == "user.remove"]
    assert audit == [("admin", "user:smo", "smo", "done"), ("smo", "user:viewer", None, "refused:")]
