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
