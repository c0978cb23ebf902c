"""Users, their role in each municipality, API tokens and login attempts, in
``DATA_DIR/workbench.db`` (SQLite, WAL: ``ms4watch users`` writes it beside a running server).

Passwords are argon2id hashes; API tokens are shown once and stored as SHA-256 hashes
(a token is 256 random bits: a fast hash is enough, and each API call checks one).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

from ...sqlite import columns, create_schema, inserted_id, transaction
from ..errors import RateLimited, UserError
from ..roles import Role
from .passwords import Passwords, check_strength
from .sessions import SessionStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    display_name TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    disabled_at TEXT
);
CREATE TABLE IF NOT EXISTS memberships (
    user_id INTEGER NOT NULL REFERENCES users (id),
    municipality TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'inspector', 'smo', 'admin')),
    PRIMARY KEY (user_id, municipality)
);
CREATE TABLE IF NOT EXISTS api_tokens (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    label TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT,
    expires_at TEXT
);
CREATE TABLE IF NOT EXISTS login_attempts (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL COLLATE NOCASE,
    address TEXT NOT NULL,
    at TEXT NOT NULL,
    ok INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS login_attempts_user ON login_attempts (username, at);
CREATE INDEX IF NOT EXISTS login_attempts_address ON login_attempts (address, at);
"""

USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
TOKEN_PREFIX = "ms4w_"
TOKEN_LIFETIME = timedelta(days=90)       # web.token_lifetime's default
LEGACY_TOKEN_GRACE = timedelta(days=90)   # a token made before tokens expired: this long from the upgrade
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class User:
    id: int
    username: str
    display_name: str
    created_at: datetime
    disabled_at: datetime | None
    roles: dict[str, Role]      # municipality -> role

    @property
    def disabled(self) -> bool:
        return self.disabled_at is not None

    def role_in(self, municipality: str) -> Role | None:
        return self.roles.get(municipality)


@dataclass(frozen=True)
class ApiToken:
    id: int
    user_id: int
    label: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    expires_at: datetime | None

    def live(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def _dt(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class UserStore:
    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, *, passwords: Passwords | None = None,
                 clock: Clock = lambda: datetime.now(timezone.utc)):
        self.conn = conn
        self._lock = lock
        self.passwords = passwords or Passwords()
        self.clock = clock
        with lock:
            create_schema(conn, SCHEMA)
            self._migrate()
        self.sessions = SessionStore(conn, lock, clock=lambda: self.clock())

    def _migrate(self) -> None:
        """A database from before tokens expired: they expire LEGACY_TOKEN_GRACE from now."""
        if "expires_at" not in columns(self.conn, "api_tokens"):
            with transaction(self.conn):
                self.conn.execute("ALTER TABLE api_tokens ADD COLUMN expires_at TEXT")
                self.conn.execute("UPDATE api_tokens SET expires_at = ?", (_iso(self.clock() + LEGACY_TOKEN_GRACE),))

    # -- users ------------------------------------------------------------------------------
    def add(self, username: str, password: str, *, municipality: str, role: Role,
            display_name: str | None = None) -> User:
        if not USERNAME.match(username):
            raise UserError(f"user name {username!r}: letters, digits and . _ @ - only, at most 64, "
                            "starting with a letter or digit")
        try:
            check_strength(password)
        except ValueError as e:
            raise UserError(str(e)) from None
        hashed = self.passwords.hash(password)
        with self._lock, transaction(self.conn):
            try:
                cur = self.conn.execute(
                    "INSERT INTO users (username, display_name, password_hash, created_at) VALUES (?,?,?,?)",
                    (username, (display_name or username).strip() or username, hashed, _iso(self.clock())))
            except sqlite3.IntegrityError:
                raise UserError(f"user {username!r} exists already") from None
            self.conn.execute("INSERT INTO memberships (user_id, municipality, role) VALUES (?,?,?)",
                              (cur.lastrowid, municipality, role.value))
            return self._get(inserted_id(cur))

    def grant(self, username: str, *, municipality: str, role: Role) -> User:
        """Set the user's role in a municipality (adding the membership if new)."""
        with self._lock, transaction(self.conn):
            user = self.find(username)
            self.conn.execute("INSERT INTO memberships (user_id, municipality, role) VALUES (?,?,?)"
                              " ON CONFLICT (user_id, municipality) DO UPDATE SET role = excluded.role",
                              (user.id, municipality, role.value))
            return self._get(user.id)

    def set_password(self, username: str, password: str) -> None:
        try:
            check_strength(password)
        except ValueError as e:
            raise UserError(str(e)) from None
        hashed = self.passwords.hash(password)
        with self._lock, transaction(self.conn):
            user = self.find(username)
            self.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?", (hashed, user.id))
            self.sessions.end_all(user.id, "password changed")

    def check_password(self, username: str, password: str) -> bool:
        """Whether ``password`` is the user's (a password change asks for the current one)."""
        with self._lock:
            row = self.conn.execute("SELECT password_hash FROM users WHERE username = ?", (username,)).fetchone()
        return self.passwords.verify(row["password_hash"] if row else None, password)

    def disable(self, username: str) -> User:
        """The user can no longer log in, its sessions end, its tokens are refused."""
        with self._lock, transaction(self.conn):
            user = self.find(username)
            if user.disabled_at is None:
                self.conn.execute("UPDATE users SET disabled_at = ? WHERE id = ?", (_iso(self.clock()), user.id))
            self.sessions.end_all(user.id, "user disabled")
            return self._get(user.id)

    def remove(self, username: str, *, municipality: str) -> User:
        """Take the user's role in one municipality away (its roles elsewhere stay)."""
        with self._lock, transaction(self.conn):
            user = self.find(username)
            if municipality not in user.roles:
                raise UserError(f"user {username!r} has no role in {municipality}")
            self.conn.execute("DELETE FROM memberships WHERE user_id = ? AND municipality = ?", (user.id, municipality))
            return self._get(user.id)

    def find(self, username: str) -> User:
        with self._lock:
            row = self.conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
            if row is None:
                raise UserError(f"no user {username!r}")
            return self._get(int(row["id"]))

    def get(self, user_id: int) -> User | None:
        with self._lock:
            row = self.conn.execute("SELECT id FROM users WHERE id = ?", (user_id,)).fetchone()
            return self._get(int(row["id"])) if row else None

    def all(self) -> list[User]:
        with self._lock:
            return [self._get(int(r["id"])) for r in self.conn.execute("SELECT id FROM users ORDER BY username")]

    def _get(self, user_id: int) -> User:
        r = self.conn.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
        roles = {m["municipality"]: Role(m["role"]) for m in
                 self.conn.execute("SELECT municipality, role FROM memberships WHERE user_id = ?", (user_id,))}
        return User(r["id"], r["username"], r["display_name"], _dt(r["created_at"]), _dt(r["disabled_at"]),  # type: ignore[arg-type]
                    roles)

    # -- passwords and login attempts ---------------------------------------------------------
    def check_login(self, username: str, password: str, *, address: str, limit: int, window: timedelta,
                    delay: timedelta = timedelta(seconds=30)) -> User | None:
        """The user if the password is right and the user enabled, else None.

        Each attempt is reserved (a row counted as failed) before the password is hashed, in
        one transaction with the count, so parallel attempts cannot pass the limit. Failures
        in ``window`` are counted per user name and address, per address, and per user name
        (since the user's last success); once a count reaches ``limit``, the next attempt
        waits ``delay`` after the latest failure, doubling with each further failure (at most
        ``window``): RateLimited, before looking at the password. The user name's count
        applies only to an address that has itself failed for that name, so attempts from
        elsewhere never lock out the right password from an address that has not failed."""
        now = self.clock()
        name = username[:64]
        with self._lock, transaction(self.conn):
            wait = self._login_wait(name, address, now, limit, window, delay)
            if wait is not None:
                raise RateLimited(f"too many failed logins; try again in {wait} s", wait)
            row = self.conn.execute("SELECT id, password_hash, disabled_at FROM users WHERE username = ?",
                                    (username,)).fetchone()
            attempt = self.conn.execute("INSERT INTO login_attempts (username, address, at, ok) VALUES (?,?,?,0)",
                                        (name, address, _iso(now))).lastrowid
        ok = self.passwords.verify(row["password_hash"] if row else None, password) and not (row and row["disabled_at"])
        with self._lock, transaction(self.conn):
            if ok:
                self.conn.execute("UPDATE login_attempts SET ok = 1 WHERE id = ?", (attempt,))
            self.conn.execute("DELETE FROM login_attempts WHERE at < ?", (_iso(now - max(window, timedelta(days=1))),))
            if ok and self.passwords.needs_rehash(row["password_hash"]):
                self.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                                  (self.passwords.hash(password), row["id"]))
        return self._get(int(row["id"])) if ok else None

    def _login_wait(self, name: str, address: str, now: datetime, limit: int, window: timedelta,
                    delay: timedelta) -> int | None:
        """Seconds the attempt must wait, or None (see ``check_login``)."""
        since = _iso(now - window)
        q = self.conn.execute
        last_ok_here = q("SELECT MAX(at) FROM login_attempts WHERE username = ? AND address = ? AND ok = 1",
                         (name, address)).fetchone()[0] or ""
        last_ok = q("SELECT MAX(at) FROM login_attempts WHERE username = ? AND ok = 1", (name,)).fetchone()[0] or ""
        here = q("SELECT COUNT(*), MAX(at) FROM login_attempts WHERE username = ? AND address = ? AND ok = 0"
                 " AND at > ? AND at > ?", (name, address, since, last_ok_here)).fetchone()
        counts = [tuple(here),
                  tuple(q("SELECT COUNT(*), MAX(at) FROM login_attempts WHERE address = ? AND ok = 0 AND at > ?",
                          (address, since)).fetchone())]
        if here[0]:
            counts.append(tuple(q("SELECT COUNT(*), MAX(at) FROM login_attempts WHERE username = ? AND ok = 0"
                                  " AND at > ? AND at > ?", (name, since, last_ok)).fetchone()))
        waits = []
        for count, latest in counts:
            if count >= limit:
                pause = min(delay * 2 ** min(count - limit, 30), window)
                left = datetime.fromisoformat(latest) + pause - now
                if left > timedelta(0):
                    waits.append(int(left.total_seconds()) + 1)
        return max(waits) if waits else None

    # -- API tokens ---------------------------------------------------------------------------
    def create_token(self, username: str, label: str, lifetime: timedelta = TOKEN_LIFETIME) -> tuple[ApiToken, str]:
        """A new token for the user, valid for ``lifetime`` (the server's default:
        ``web.token_lifetime``); the secret is returned once and only its hash kept."""
        if lifetime <= timedelta(0):
            raise UserError(f"a token's lifetime must be positive, got {lifetime}")
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock, transaction(self.conn):
            user = self.find(username)
            cur = self.conn.execute(
                "INSERT INTO api_tokens (user_id, label, token_hash, created_at, expires_at) VALUES (?,?,?,?,?)",
                (user.id, label.strip() or "token", token_hash(secret), _iso(now), _iso(now + lifetime)))
            return self._token(inserted_id(cur)), secret

    def revoke_token(self, token_id: int, *, username: str | None = None) -> ApiToken:
        """Revoke one token (with ``username``: only if it is that user's)."""
        with self._lock, transaction(self.conn):
            row = self.conn.execute("SELECT t.id, u.username FROM api_tokens t JOIN users u ON u.id = t.user_id"
                                    " WHERE t.id = ?", (token_id,)).fetchone()
            if row is None or (username is not None and row["username"].lower() != username.lower()):
                raise UserError(f"no token {token_id}" + (f" of user {username!r}" if username else ""))
            self.conn.execute("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
                              (_iso(self.clock()), token_id))
            return self._token(token_id)

    def token_owner(self, token_id: int) -> str | None:
        with self._lock:
            row = self.conn.execute("SELECT u.username FROM api_tokens t JOIN users u ON u.id = t.user_id"
                                    " WHERE t.id = ?", (token_id,)).fetchone()
        return row["username"] if row else None

    def tokens(self, username: str) -> list[ApiToken]:
        with self._lock:
            user = self.find(username)
            return [self._token(int(r["id"])) for r in
                    self.conn.execute("SELECT id FROM api_tokens WHERE user_id = ? ORDER BY id", (user.id,))]

    def user_for_token(self, secret: str) -> User | None:
        """The enabled user a valid, unrevoked, unexpired token belongs to."""
        if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
            return None
        with self._lock:
            row = self.conn.execute(
                "SELECT t.id, t.user_id, t.last_used_at FROM api_tokens t JOIN users u ON u.id = t.user_id"
                " WHERE t.token_hash = ? AND t.revoked_at IS NULL AND u.disabled_at IS NULL"
                " AND (t.expires_at IS NULL OR t.expires_at > ?)",
                (token_hash(secret), _iso(self.clock()))).fetchone()
            if row is None:
                return None
            now = self.clock()
            last = _dt(row["last_used_at"])
            if last is None or now - last > timedelta(minutes=1):   # not a write per call
                with transaction(self.conn):
                    self.conn.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (_iso(now), row["id"]))
            return self._get(int(row["user_id"]))

    def _token(self, token_id: int) -> ApiToken:
        r = self.conn.execute("SELECT * FROM api_tokens WHERE id = ?", (token_id,)).fetchone()
        return ApiToken(r["id"], r["user_id"], r["label"], _dt(r["created_at"]), _dt(r["last_used_at"]),  # type: ignore[arg-type]
                        _dt(r["revoked_at"]), _dt(r["expires_at"]))


__all__ = ["User", "ApiToken", "UserStore", "token_hash", "TOKEN_PREFIX", "USERNAME"]
