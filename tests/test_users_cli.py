"""``ms4watch users add|list|disable|token`` on the settings the server reads."""

from __future__ import annotations

import os

import pytest

from ms4watch.settings import Settings
from ms4watch.workbench.roles import Role
from ms4watch.workbench.services import open_users
from tests.support.cli import run_cli
from tests.support.workbench import cheap_passwords


def run(tmp_path, *args, stdin: str | None = None, env: dict[str, str | None] | None = None):
    """``ms4watch users *args`` in process (tests/support/cli.py); ``env`` over this process's
    environment, None removing a variable."""
    over = {"MS4WATCH_DATA_DIR": str(tmp_path / "data"), "MS4WATCH_REGISTRY": str(tmp_path / "sites.yaml"),
            "MS4WATCH_CONFIG": str(tmp_path / "ms4watch.toml"), "COLUMNS": "200", **(env or {})}
    (tmp_path / "ms4watch.toml").touch()
    (tmp_path / "data").mkdir(exist_ok=True)    # the server's data_dir, as an install makes it
    environ = {k: v for k, v in (dict(os.environ) | over).items() if v is not None}
    return run_cli("users", *args, input=stdin, env=environ)


@pytest.fixture(autouse=True)
def _cheap_hashes(monkeypatch):
    """argon2id at its smallest cost (each command's user store hashed a dummy password at
    argon2's default cost, ~0.4 s, before doing anything): what these tests check is the
    command, not the hash's cost (tests/workbench/auth/test_users.py checks the hashes)."""
    monkeypatch.setattr("ms4watch.workbench.auth.users.Passwords", cheap_passwords)


@pytest.fixture
def town(tmp_path):
    (tmp_path / "sites.yaml").write_text("municipality: colonie\n")
    (tmp_path / "pw").write_text("correct horse battery\n")
    return tmp_path


def _users(tmp_path):
    return open_users(Settings.model_validate({"data_dir": tmp_path / "data"}))


def test_add_list_grant_token_disable(town):
    r = run(town, "add", "pat", "--role", "smo", "--name", "Pat Doe", "--password-file", str(town / "pw"))
    assert r.returncode == 0 and "added pat (smo in colonie)" in r.stdout, r.stderr
    users, audit, conn = _users(town)
    try:
        user = users.find("pat")
        assert user.roles == {"colonie": Role.SMO} and user.display_name == "Pat Doe"
        assert users.check_login("pat", "correct horse battery", address="t", limit=5, window=__import__(
            "datetime").timedelta(minutes=1)) is not None
    finally:
        conn.close()
    r = run(town, "add", "pat", "--role", "admin", "--municipality", "ramapo")
    assert r.returncode == 0 and "now admin in ramapo" in r.stdout
    r = run(town, "token", "pat", "--label", "nightly csv")
    token = r.stdout.strip()
    assert r.returncode == 0 and token.startswith("ms4w_") and "shown only now" in r.stderr
    listing = run(town, "list").stdout
    assert "pat" in listing and "admin in ramapo" in listing and "smo in colonie" in listing
    assert run(town, "disable", "pat").returncode == 0
    users, audit, conn = _users(town)
    try:
        assert users.find("pat").disabled and users.user_for_token(token) is None
        assert [e.action for e in reversed(audit.entries())] == ["user.add", "user.grant", "token.create",
                                                                 "token.create", "user.disable", "user.disable"]
        assert {e.via for e in audit.entries()} == {"terminal"}
    finally:
        conn.close()


def test_the_password_comes_from_a_hidden_prompt_typed_twice(town):
    r = run(town, "add", "ian", "--role", "inspector", stdin="correct horse battery\ncorrect horse battery\n")
    assert r.returncode == 0, r.stderr
    assert "correct horse battery" not in r.stdout
    r = run(town, "add", "dee", "--role", "viewer", stdin="correct horse battery\nsomething else\n")
    assert r.returncode != 0


@pytest.mark.parametrize("args, message", [
    (["add", "x", "--role", "boss"], "expected viewer, inspector, smo or admin"),
    (["add", "x", "--role", "smo", "--password", "hunter22"], "No such option: --password"),
    (["disable", "nobody"], "error: no user 'nobody'"),
])
def test_mistakes_are_one_line(town, args, message):
    r = run(town, *args)
    assert r.returncode != 0 and message in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)        # no traceback


def test_tokens_expire_and_one_can_be_revoked(town):
    from datetime import timedelta
    assert run(town, "add", "pat", "--role", "smo", "--password-file", str(town / "pw")).returncode == 0
    default = run(town, "token", "pat", "--label", "nightly csv")
    short = run(town, "token", "pat", "--label", "one-off", "--expires", "2d")
    assert default.returncode == short.returncode == 0, short.output
    users, audit, conn = _users(town)
    try:
        kept, one_off = users.tokens("pat")
        assert kept.expires_at - kept.created_at == timedelta(days=90)        # web.token_lifetime
        assert one_off.expires_at - one_off.created_at == timedelta(days=2)
        later = kept.created_at + timedelta(days=3)
        users.clock = lambda: later
        assert users.user_for_token(short.stdout.strip()) is None              # expired
        assert users.user_for_token(default.stdout.strip()).username == "pat"
    finally:
        conn.close()
    listing = run(town, "tokens", "pat").stdout
    assert "nightly csv" in listing and "one-off" in listing
    r = run(town, "revoke", str(kept.id))
    assert r.returncode == 0 and f"revoked token {kept.id} of pat" in r.stdout
    users, audit, conn = _users(town)
    try:
        assert users.user_for_token(default.stdout.strip()) is None
        assert (audit.entries()[0].action, audit.entries()[0].detail) == ("token.revoke", f"token {kept.id}")
    finally:
        conn.close()
    assert run(town, "token", "pat", "--expires", "soon").returncode != 0
    assert "error: no token 999" in run(town, "revoke", "999").output


def test_passwd_sets_the_password_and_ends_the_sessions(town):
    from datetime import timedelta
    assert run(town, "add", "pat", "--role", "smo", "--password-file", str(town / "pw")).returncode == 0
    users, audit, conn = _users(town)
    try:
        session = users.sessions.start(users.find("pat").id)
    finally:
        conn.close()
    (town / "pw2").write_text("a new long password\n")
    r = run(town, "passwd", "pat", "--password-file", str(town / "pw2"))
    assert r.returncode == 0 and "password changed" in r.stdout
    users, audit, conn = _users(town)
    try:
        assert users.sessions.user_id(session, timedelta(hours=1)) is None
        assert users.check_password("pat", "a new long password") and not users.check_password("pat", "correct horse battery")
        assert audit.entries()[0].action == "user.password" and audit.entries()[0].via == "terminal"
    finally:
        conn.close()
    (town / "short").write_text("short\n")
    assert "at least 8 characters" in run(town, "passwd", "pat", "--password-file", str(town / "short")).output


def test_remove_takes_one_towns_role_away(town):
    assert run(town, "add", "pat", "--role", "smo", "--password-file", str(town / "pw")).returncode == 0
    assert run(town, "add", "pat", "--role", "admin", "--municipality", "ramapo").returncode == 0
    r = run(town, "remove", "pat", "--municipality", "colonie")
    assert r.returncode == 0 and "no longer a member of colonie (admin in ramapo)" in r.stdout
    users, audit, conn = _users(town)
    try:
        assert users.find("pat").roles == {"ramapo": Role.ADMIN}
        e = audit.entries()[0]
        assert (e.action, e.municipality, e.target, e.detail) == ("user.remove", "colonie", "user:pat", "smo")
    finally:
        conn.close()
    assert "has no role in colonie" in run(town, "remove", "pat").output


def test_the_audit_names_who_ran_sudo_not_root(town):
    """``sudo ms4watch users add …``: getpass says root (or ms4watch under ``sudo -u``);
    the person is SUDO_USER."""
    r = run(town, "add", "pat", "--role", "smo", "--password-file", str(town / "pw"),
            env={"SUDO_USER": "jlee", "USER": "root", "LOGNAME": "root"})
    assert r.returncode == 0, r.output
    r = run(town, "disable", "pat", env={"SUDO_USER": None})   # without sudo: the account running it
    assert r.returncode == 0
    users, audit, conn = _users(town)
    try:
        import getpass
        assert [(e.action, e.who) for e in reversed(audit.entries())] == [
            ("user.add", "jlee"), ("user.disable", getpass.getuser())]
    finally:
        conn.close()


def test_a_user_is_never_added_without_its_audit_row(town, monkeypatch):
    """``users add`` committed the user, then wrote the audit row in a transaction of its
    own: an audit write that failed (a full disk) left a user nobody recorded adding."""
    import sqlite3

    from ms4watch.workbench.audit import AuditLog

    def disk_full(self, **kw):
        self.conn.execute("INSERT INTO audit (at) VALUES (NULL)")     # the write fails inside SQLite
    monkeypatch.setattr(AuditLog, "write", disk_full)
    r = run(town, "add", "pat", "--role", "smo", "--password-file", str(town / "pw"))
    assert r.returncode != 0 and isinstance(r.exception, sqlite3.IntegrityError)
    monkeypatch.undo()
    users, audit, conn = _users(town)
    try:
        assert users.all() == [] and audit.entries() == []
    finally:
        conn.close()
