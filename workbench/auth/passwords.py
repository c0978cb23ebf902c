"""Password hashing with argon2id (argon2-cffi, its default parameters: RFC 9106's
second recommended option, re-hashed on login when they change)."""

from __future__ import annotations

import threading

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 8   # NIST SP 800-63B 5.1.1.2: at least 8 characters, no composition rules


class Passwords:
    def __init__(self, hasher: PasswordHasher | None = None):
        self._hasher = hasher or PasswordHasher()
        self._dummy: str | None = None     # the stand-in for an unknown user, made at the first check
        self._dummy_lock = threading.Lock()

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        """True when ``password`` matches; an unknown user (``stored`` None) costs the same
        time, so response times do not tell which user names exist. The first check in a
        process (whoever asks) makes the stand-in it uses for unknown users: a process that
        checks no password (``ms4watch users add``, a server nobody logs in to) hashes none."""
        dummy = self._stand_in()
        try:
            return self._hasher.verify(stored or dummy, password) and stored is not None
        except (VerificationError, InvalidHashError):
            return False

    def _stand_in(self) -> str:
        with self._dummy_lock:
            if self._dummy is None:
                self._dummy = self._hasher.hash("not a password of anyone's")
            return self._dummy

    def needs_rehash(self, stored: str) -> bool:
        return self._hasher.check_needs_rehash(stored)


def check_strength(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise ValueError(f"a password needs at least {MIN_LENGTH} characters")


__all__ = ["Passwords", "check_strength", "MIN_LENGTH"]
