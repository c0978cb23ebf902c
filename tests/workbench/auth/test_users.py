"""Users, roles per municipality, passwords (argon2id), API tokens (only their hash kept),
the signing secret (a 0600 file made on first start)."""

from __future__ import annotations

import stat
import threading

import pytest

from ms4watch.alerts.incidents import connect
from ms4watch.settings import Settings, SettingsError
from ms4watch.workbench.auth import UserStore, load_secret
from ms4watch.workbench.auth.users import token_hash
from ms4watch.workbench.errors import UserError
from ms4watch.workbench.roles import Role
from tests.support.workbench import cheap_passwords


@pytest.fixture
def users(tmp_path):
    conn = connect(tmp_path / "workbench.db")
    yield UserStore(conn, threading.RLock(), passwords=cheap_passwords())
    conn.close()


def test_passwords_are_argon2id_hashes_and_tokens_are_kept_hashed(users):
    users.add("pat", "correct horse", municipality="schenectady", role=Role.SMO, display_name="Pat Doe")
    stored = users.conn.execute("SELECT password_hash FROM users").fetchone()[0]
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    _, secret = users.create_token("pat", "nightly export")
    assert users.conn.execute("SELECT token_hash FROM api_tokens").fetchone()[0] == token_hash(secret)
    assert secret not in str(users.conn.execute("SELECT * FROM api_tokens").fetchall()[0][:])
    assert users.user_for_token(secret).username == "pat"
    assert users.user_for_token(secret[:-1] + "x") is None
    token_id = users.tokens("pat")[0].id
    users.revoke_token(token_id)
    assert users.user_for_token(secret) is None


def test_roles_are_per_municipality(users):
    users.add("ian", "correct horse", municipality="schenectady", role=Role.INSPECTOR)
    user = users.grant("ian", municipality="ramapo", role=Role.VIEWER)
    assert user.roles == {"schenectady": Role.INSPECTOR, "ramapo": Role.VIEWER}
    assert user.role_in("colonie") is None


@pytest.mark.parametrize("name, password, message", [
    ("pat", "short", "at least 8 characters"),
    ("has space", "correct horse", "letters, digits"),
    ("", "correct horse", "letters, digits"),
])
def test_bad_users_are_refused_with_the_reason(users, name, password, message):
    with pytest.raises(UserError, match=message):
        users.add(name, password, municipality="schenectady", role=Role.VIEWER)


def test_a_user_name_is_taken_once_whatever_its_case(users):
    users.add("Pat", "correct horse", municipality="schenectady", role=Role.SMO)
    with pytest.raises(UserError, match="exists already"):
        users.add("pat", "correct horse", municipality="schenectady", role=Role.SMO)


def test_the_secret_is_made_once_readable_by_its_owner_only(tmp_path):
    settings = Settings.model_validate({"data_dir": tmp_path / "data"})
    first = load_secret(settings)
    path = tmp_path / "data" / "web-secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(first) >= 32
    assert load_secret(settings) == first
    path.chmod(0o644)
    with pytest.raises(SettingsError, match=r"web.secret_file: .* readable by others; chmod 600"):
        load_secret(settings)
    env = Settings.model_validate({"data_dir": tmp_path / "other", "web": {"secret": "s" * 40}})
    assert load_secret(env) == "s" * 40 and not (tmp_path / "other" / "web-secret").exists()


# -- the login limit: reserved before hashing, per user and address, growing delays -----------

from datetime import datetime, timedelta, timezone  # noqa: E402

from ms4watch.workbench.errors import RateLimited  # noqa: E402

LIMIT, WINDOW, DELAY = 3, timedelta(minutes=15), timedelta(seconds=30)


def _try(users, name, password, address):
    """'ok', 'wrong' or the seconds RateLimited asked to wait."""
    try:
        return "ok" if users.check_login(name, password, address=address, limit=LIMIT, window=WINDOW,
                                         delay=DELAY) else "wrong"
    except RateLimited as e:
        return e.retry_after_s


@pytest.fixture
def pat(users):
    users.add("pat", "correct horse", municipality="schenectady", role=Role.SMO)
    now = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
    users.clock = lambda: now
    return users


def test_failures_elsewhere_never_lock_out_the_right_password_from_an_address_that_has_not_failed(pat):
    assert [_try(pat, "pat", "guess", "203.0.113.66") for _ in range(LIMIT)] == ["wrong"] * LIMIT
    assert isinstance(_try(pat, "pat", "correct horse", "203.0.113.66"), int)   # a failed address waits, even right
    assert _try(pat, "pat", "guess", "203.0.113.67") == "wrong"                # another gets one look, then waits
    assert isinstance(_try(pat, "pat", "correct horse", "203.0.113.67"), int)
    assert _try(pat, "pat", "correct horse", "198.51.100.7") == "ok"          # the SMO's own address does not


def test_an_address_that_failed_for_a_user_waits_once_the_user_is_under_attack(pat):
    for i in range(LIMIT):
        assert _try(pat, "pat", "guess", f"203.0.113.{i}") == "wrong"   # one guess each, from many addresses
    assert _try(pat, "pat", "guess", "198.51.100.7") == "wrong"          # its first failure is looked at
    assert isinstance(_try(pat, "pat", "guess", "198.51.100.7"), int)    # then it waits with the attackers'
    assert _try(pat, "pat", "correct horse", "192.0.2.1") == "ok"        # a fresh address: never


def test_the_delay_doubles_with_each_failure_past_the_limit(pat):
    now = pat.clock()
    waits = []
    for _ in range(LIMIT):
        assert _try(pat, "pat", "guess", "203.0.113.66") == "wrong"
    for _ in range(4):
        wait = _try(pat, "pat", "guess", "203.0.113.66")
        assert isinstance(wait, int)
        waits.append(wait)
        now += timedelta(seconds=wait)
        pat.clock = lambda now=now: now
        assert _try(pat, "pat", "guess", "203.0.113.66") == "wrong"     # after the wait: one more look
    assert waits == [31, 61, 121, 241]                                   # 30 s, doubling (+1: whole seconds)
    rows = pat.conn.execute("SELECT COUNT(*) FROM login_attempts WHERE ok = 0").fetchone()[0]
    assert rows == LIMIT + 4


def test_parallel_attempts_reserve_their_place_before_the_password_is_hashed(pat):
    """The count is taken and the attempt recorded in one transaction, before argon2: of 40
    threads started together, exactly LIMIT get a full check."""
    checks = []
    verify = pat.passwords.verify
    gate = threading.Barrier(40)

    def counted(stored, password):
        checks.append(password)
        return verify(stored, password)

    pat.passwords.verify = counted
    results = []

    def attempt():
        gate.wait()
        results.append(_try(pat, "pat", "guess", "203.0.113.66"))

    threads = [threading.Thread(target=attempt) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(checks) == LIMIT and results.count("wrong") == LIMIT
