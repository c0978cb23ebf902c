"""Mosquitto's password file: one ``user:hash`` line per client.

The hash is Mosquitto 2.0's ``$7$``: PBKDF2-HMAC-SHA512 over the password with a random
12-byte salt, ``$7$<iterations>$<salt, base64>$<64-byte digest, base64>`` — what
``mosquitto_passwd`` writes (mosquitto_passwd(1); Mosquitto ``src/password_mosq.c``). Written
here so ``ms4watch broker-config`` needs no Mosquitto on the machine that runs it; the
tests check real Mosquitto accepts it.
"""

from __future__ import annotations

import base64
import hashlib
import secrets

ITERATIONS = 101
"""``mosquitto_passwd``'s count. The passwords made here are 192 random bits, so the count
adds nothing against guessing; Mosquitto recomputes the hash at every connection."""
SALT_BYTES = 12


def new_password() -> str:
    """A random password: 192 bits, URL-safe base64 (32 characters)."""
    return secrets.token_urlsafe(24)


def password_hash(password: str, *, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """The ``$7$`` hash of ``password`` as Mosquitto's password file holds it."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    return f"$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def password_line(user: str, password: str, **kw) -> str:
    if ":" in user or "\n" in user:
        raise ValueError(f"user name {user!r}: ':' and line breaks cannot be in a Mosquitto password file")
    return f"{user}:{password_hash(password, **kw)}\n"
