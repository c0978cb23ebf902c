"""InfluxDB 1.x with ``auth-enabled``: the users and rights docs/operations.md ("InfluxDB
authentication") names are enough, less is refused with one line naming the token setting
and file, and no token at all means no login, said once in the log.

Against a real ``influxd`` 1.6 (Debian's), its first admin user made without a login as
InfluxDB allows on a server that has none yet."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Iterator

import pytest
import typer
from typer.testing import CliRunner

from ms4watch.commands import store
from ms4watch.contract.errors import Ms4Error
from ms4watch.ingest.stores import build_store
from tests.support.influx_fixtures import make_messages
from tests.support.servers import InfluxDB1, have

pytestmark = pytest.mark.influxdb

ADMIN = ("ms4admin", "admin-pw")
SERVER = ("ms4watch", "serve-pw")
WRITER = ("writer", "write-pw")       # WRITE alone: less than serve needs
READER = ("reader", "read-pw")        # READ alone


@pytest.fixture(scope="module")
def influxd_auth(tmp_path_factory) -> Iterator[InfluxDB1]:
    """The documented set-up: one admin user (for ``store init``), one user with ALL on the
    town's database (for ``serve``); and two with less, to see them refused."""
    if not have("influxd"):
        pytest.skip("influxd is not installed (apt-get install influxdb)")
    s = InfluxDB1(tmp_path_factory.mktemp("influx-auth"), auth=True).start()
    try:
        s.query(f"CREATE USER {ADMIN[0]} WITH PASSWORD '{ADMIN[1]}' WITH ALL PRIVILEGES")
        for user, pw in (SERVER, WRITER, READER):
            s.query(f"CREATE USER {user} WITH PASSWORD '{pw}'", login=ADMIN)
        yield s
    finally:
        s.stop()


def _token(tmp_path, login: tuple[str, str]) -> str:
    path = tmp_path / f"influx-token-{login[0]}"
    path.write_text(f"{login[0]}:{login[1]}\n")
    path.chmod(0o640)
    return str(path)


def _init(url: str):
    app = typer.Typer()
    store.register(app)

    @app.callback()
    def _root() -> None:
        pass
    return CliRunner().invoke(app, ["store", "init", "--store", url])


@pytest.fixture(autouse=True)
def _no_token_from_the_environment(monkeypatch):
    for name in ("MS4WATCH_INFLUX_TOKEN", "MS4WATCH_INFLUX_TOKEN_FILE", "CREDENTIALS_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)


def test_store_init_without_a_token_names_where_the_token_goes(influxd_auth):
    r = _init(influxd_auth.store_url("nologin"))
    assert r.exit_code == 2
    line = r.output.strip()
    assert "\n" not in line, r.output
    assert "HTTP 401" in line and "no InfluxDB token is set" in line
    assert "?token_file=" in line and "MS4WATCH_INFLUX_TOKEN_FILE" in line and "influx-token" in line


def test_store_init_as_the_serve_user_is_refused_naming_the_file(influxd_auth, tmp_path):
    """CREATE DATABASE needs an admin: the server's own user (ALL on one database) is not one."""
    token = _token(tmp_path, SERVER)
    r = _init(influxd_auth.store_url("town1", token_file=token))
    assert r.exit_code == 2
    line = r.output.strip()
    assert "\n" not in line, r.output
    assert "HTTP 403" in line and "requires admin privilege" in line
    assert f"user 'ms4watch' of the token file {token} (?token_file=)" in line
    assert "serve-pw" not in r.output


def test_the_documented_rights_suffice(influxd_auth, tmp_path):
    """``store init`` as the admin, then ``GRANT ALL ON "town2" TO "ms4watch"``: the server's
    user opens the store (database, retention), writes and reads back."""
    r = _init(influxd_auth.store_url("town2", token_file=_token(tmp_path, ADMIN)))
    assert r.exit_code == 0, r.output
    influxd_auth.query('GRANT ALL ON "town2" TO "ms4watch"', login=ADMIN)
    sink = build_store(influxd_auth.store_url("town2", token_file=_token(tmp_path, SERVER)))
    try:
        sink.open()
        msgs = make_messages(20, 2)
        assert sink.write(msgs).readings_written == 40
        assert sink.count_readings() == 40
        first = msgs[0].readings[0]
        got = sink.readings(first.station, first.quantity, datetime.fromtimestamp(0, timezone.utc),
                            datetime.now(timezone.utc) + timedelta(days=1))
        assert len(got) == 20
    finally:
        sink.close()


@pytest.mark.parametrize("login, grant, fails_at, needs", [
    (WRITER, "WRITE", "open", "requires READ"),      # SHOW RETENTION POLICIES reads
    (READER, "READ", "write", "not authorized to write"),
])
def test_less_than_all_is_refused_naming_the_file(influxd_auth, tmp_path, login, grant, fails_at, needs):
    db = f"town_{grant.lower()}"
    assert _init(influxd_auth.store_url(db, token_file=_token(tmp_path, ADMIN))).exit_code == 0
    influxd_auth.query(f'GRANT {grant} ON "{db}" TO "{login[0]}"', login=ADMIN)
    token = _token(tmp_path, login)
    sink = build_store(influxd_auth.store_url(db, token_file=token))
    try:
        with pytest.raises(Ms4Error) as e:
            sink.open()
            sink.write(make_messages(1, 1))
        text = str(e.value)
        assert "HTTP 403" in text and needs in text, text
        assert f"user '{login[0]}' of the token file {token} (?token_file=)" in text
        assert "docs/operations.md" in text and "\n" not in text
        assert login[1] not in text
    finally:
        sink.close()
    assert (fails_at == "open") == ("SHOW RETENTION POLICIES" in text)


def test_a_wrong_password_names_the_file(influxd_auth, tmp_path):
    token = _token(tmp_path, (SERVER[0], "not-the-password"))
    sink = build_store(influxd_auth.store_url("town2", token_file=token))
    try:
        with pytest.raises(Ms4Error) as e:
            sink.open()
    finally:
        sink.close()
    assert "HTTP 401" in str(e.value) and f"the token file {token} (?token_file=)" in str(e.value)
    assert "not-the-password" not in str(e.value)


def test_no_token_means_no_login_said_once(influxd, caplog):
    """Without a token (no file named, no credential), ms4watch does not log in: right for an
    InfluxDB without authentication, and the log says so once when the store is opened."""
    sink = build_store(influxd.store_url("town"))
    try:
        sink.ensure_store(timedelta(days=1096))
        with caplog.at_level(logging.INFO):
            sink.open()
            sink.write(make_messages(3, 1))
    finally:
        sink.close()
    said = [r.getMessage() for r in caplog.records if "without a login" in r.getMessage()]
    assert said == [f"store {sink.target.display}: no InfluxDB token is set (?token_file= in the store URL, "
                    "MS4WATCH_INFLUX_TOKEN_FILE or the systemd credential influx-token): connecting without a login"]


def test_a_named_token_file_that_is_missing_stops_the_start(influxd, tmp_path):
    """A file the settings name is never taken as 'no login': its absence is a mistake to fix."""
    sink = build_store(influxd.store_url("town", token_file=str(tmp_path / "missing")))
    try:
        with pytest.raises(ValueError, match=r"cannot read the InfluxDB token file .*missing: No such file"):
            sink.open()
    finally:
        sink.close()
