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

from ...alerts.incidents.db import transaction
from ..errors import RateLimited, UserError
from ..roles import Role
from .passwords import Passwords, check_strength

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
    revoked_at TEXT
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
            conn.executescript(SCHEMA)

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
            return self._get(int(cur.lastrowid))

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

    def disable(self, username: str) -> User:
        """The user can no longer log in, its sessions stop working, its tokens are refused."""
        with self._lock, transaction(self.conn):
            user = self.find(username)
            if user.disabled_at is None:
                self.conn.execute("UPDATE users SET disabled_at = ? WHERE id = ?", (_iso(self.clock()), user.id))
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
    def check_login(self, username: str, password: str, *, address: str, limit: int, window: timedelta) -> User | None:
        """The user if the password is right and the user enabled, else None. Refuses
        (RateLimited) once ``limit`` logins failed in ``window`` for the user name (since its
        last success) or from the address, before looking at the password."""
        now = self.clock()
        since = _iso(now - window)
        with self._lock:
            last_ok = self.conn.execute("SELECT MAX(at) FROM login_attempts WHERE username = ? AND ok = 1",
                                        (username,)).fetchone()[0] or ""
            by_user = self.conn.execute(
                "SELECT COUNT(*), MIN(at) FROM login_attempts WHERE username = ? AND ok = 0 AND at > ? AND at > ?",
                (username, since, last_ok)).fetchone()
            by_addr = self.conn.execute(
                "SELECT COUNT(*), MIN(at) FROM login_attempts WHERE address = ? AND ok = 0 AND at > ?",
                (address, since)).fetchone()
            row = self.conn.execute("SELECT id, password_hash, disabled_at FROM users WHERE username = ?",
                                    (username,)).fetchone()
        for count, first in (by_user, by_addr):
            if count >= limit:
                wait = int((datetime.fromisoformat(first) + window - now).total_seconds()) + 1
                raise RateLimited(f"too many failed logins; try again in {max(wait, 1)} s", max(wait, 1))
        ok = self.passwords.verify(row["password_hash"] if row else None, password) and not (row and row["disabled_at"])
        with self._lock, transaction(self.conn):
            self.conn.execute("INSERT INTO login_attempts (username, address, at, ok) VALUES (?,?,?,?)",
                              (username[:64], address, _iso(now), int(ok)))
            self.conn.execute("DELETE FROM login_attempts WHERE at < ?", (_iso(now - max(window, timedelta(days=1))),))
            if ok and self.passwords.needs_rehash(row["password_hash"]):
                self.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                                  (self.passwords.hash(password), row["id"]))
        return self._get(int(row["id"])) if ok else None

    # -- API tokens ---------------------------------------------------------------------------
    def create_token(self, username: str, label: str) -> tuple[ApiToken, str]:
        """A new token for the user; the secret is returned once and only its hash kept."""
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._lock, transaction(self.conn):
            user = self.find(username)
            cur = self.conn.execute("INSERT INTO api_tokens (user_id, label, token_hash, created_at) VALUES (?,?,?,?)",
                                    (user.id, label.strip() or "token", token_hash(secret), _iso(self.clock())))
            return self._token(int(cur.lastrowid)), secret

    def revoke_token(self, token_id: int) -> None:
        with self._lock, transaction(self.conn):
            self.conn.execute("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
                              (_iso(self.clock()), token_id))

    def tokens(self, username: str) -> list[ApiToken]:
        with self._lock:
            user = self.find(username)
            return [self._token(int(r["id"])) for r in
                    self.conn.execute("SELECT id FROM api_tokens WHERE user_id = ? ORDER BY id", (user.id,))]

    def user_for_token(self, secret: str) -> User | None:
        """The enabled user a valid, unrevoked token belongs to."""
        if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
            return None
        with self._lock:
            row = self.conn.execute(
                "SELECT t.id, t.user_id, t.last_used_at FROM api_tokens t JOIN users u ON u.id = t.user_id"
                " WHERE t.token_hash = ? AND t.revoked_at IS NULL AND u.disabled_at IS NULL",
                (token_hash(secret),)).fetchone()
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
                        _dt(r["revoked_at"]))


__all__ = ["User", "ApiToken", "UserStore", "token_hash", "TOKEN_PREFIX", "USERNAME"]
