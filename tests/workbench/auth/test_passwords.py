"""Password checks: argon2id; an unknown user's check costs what a known user's does (a
full check against a hash of nobody's password), and nothing is hashed before a first check."""

from __future__ import annotations

from argon2 import PasswordHasher

from ms4watch.workbench.auth.passwords import Passwords


class Counted(PasswordHasher):
    """argon2id at its smallest cost, counting its hashes and checks."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.hashes = 0
        self.checks = 0

    def hash(self, password, *, salt=None):
        self.hashes += 1
        return super().hash(password, salt=salt)

    def verify(self, hash, password):
        self.checks += 1
        return super().verify(hash, password)


def test_nothing_is_hashed_until_a_first_check():
    """A server that starts, or a command that lists users, pays no hash (argon2-cffi's
    default cost: ~0.23 s of CPU on a small server) for a login nobody made."""
    hasher = Counted()
    Passwords(hasher)
    assert hasher.hashes == 0


def test_an_unknown_user_costs_a_full_check_as_a_known_user_does():
    for first in ("known", "unknown"):
        hasher = Counted()
        passwords = Passwords(hasher)
        stored = passwords.hash("correct horse")
        for who in (first, "unknown" if first == "known" else "known"):
            hashes, checks = hasher.hashes, hasher.checks
            if who == "known":
                assert passwords.verify(stored, "correct horse") and not passwords.verify(stored, "wrong horse")
            else:
                assert not passwords.verify(None, "correct horse") and not passwords.verify(None, "wrong horse")
            assert hasher.checks - checks == 2
            # the hash of nobody's password is made at the first check of either kind, once
            assert hasher.hashes - hashes == (1 if who == first else 0), (first, who)
