"""Passwords (argon2id): what a check costs, and when."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher

from ms4watch.workbench.auth.passwords import Passwords


class CountingHasher(PasswordHasher):
    """argon2id at a test's cost, counting the hashes and checks it makes."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.hashes = 0
        self.checks = 0
        self._lock = threading.Lock()

    def hash(self, password, *, salt=None):
        with self._lock:
            self.hashes += 1
        return super().hash(password, salt=salt)

    def verify(self, hash, password):
        with self._lock:
            self.checks += 1
        return super().verify(hash, password)


def test_a_process_that_checks_no_password_hashes_none():
    """``serve`` makes the workbench's users at start, and ``ms4watch users add`` hashes only the
    password it sets: the stand-in checked for an unknown user (argon2's full cost, ~0.2 s of
    CPU) is made when a password is first checked, not by every process at start."""
    hasher = CountingHasher()
    Passwords(hasher)
    assert hasher.hashes == 0


def test_an_unknown_user_costs_what_a_wrong_password_costs():
    hasher = CountingHasher()
    p = Passwords(hasher)
    stored = p.hash("correct horse")
    assert (hasher.hashes, hasher.checks) == (1, 0)
    assert p.verify(stored, "correct horse") is True          # the first check makes the stand-in, whoever asks
    assert (hasher.hashes, hasher.checks) == (2, 1)
    assert p.verify(stored, "wrong horse") is False
    assert p.verify(None, "correct horse") is False           # an unknown user: one full check as well
    assert p.verify(None, "not a password of anyone's") is False
    assert (hasher.hashes, hasher.checks) == (2, 4)


def test_the_stand_in_is_made_once_under_concurrent_logins():
    hasher = CountingHasher()
    p = Passwords(hasher)
    together = threading.Barrier(8)

    def check(i: int) -> bool:
        together.wait()
        return p.verify(None, f"guess {i}")

    with ThreadPoolExecutor(8) as pool:
        assert not any(pool.map(check, range(8)))
    assert (hasher.hashes, hasher.checks) == (1, 8)
