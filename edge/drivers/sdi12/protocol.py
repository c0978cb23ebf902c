"""SDI-12 replies, parsed without I/O.

References
----------
SDI-12 Support Group, *SDI-12: A Serial-Digital Interface Standard for
Microprocessor-Based Sensors*, version 1.4 (2017): §4.4.2 (acknowledge), §4.4.3 (send
identification ``aI!``), §4.4.6 (start measurement ``aM!`` → ``atttn``), §4.4.8 (concurrent
``aC!`` → ``atttnn``), §4.4.7 (send data ``aD0!`` … ``aD9!``), §4.4.12 (continuous
``aR0!``), §4.4.5.1 (the ``<values>`` format: a sign, up to seven digits, an optional
decimal point).

CRC-checked variants (``aMC!``) are not used: replies are parsed as plain value lists.
"""

from __future__ import annotations

import re
import string
from typing import NamedTuple

from ...errors import DriverError

__all__ = ["ADDRESS_CHARS", "COMMAND_PATTERN", "Identification", "check_address", "parse_start",
           "parse_values", "parse_identification"]

#: Valid sensor addresses: ``0``–``9`` (standard), ``a``–``z`` and ``A``–``Z`` (extended).
ADDRESS_CHARS = string.digits + string.ascii_lowercase + string.ascii_uppercase

#: Measurement commands this driver speaks, without address and ``!``.
COMMAND_PATTERN = r"^(M[1-9]?|C[1-9]?|R[0-9])$"

_VALUE = r"[+-](?:\d+(?:\.\d*)?|\.\d+)"
_VALUES = re.compile(rf"^(?:{_VALUE})*$")
_ONE_VALUE = re.compile(_VALUE)


class Identification(NamedTuple):
    """The reply to ``aI!``: ``allccccccccmmmmmmvvvxxx…``."""

    address: str
    sdi12_version: str   # "14" for 1.4
    vendor: str          # 8 characters, padded with spaces
    model: str           # 6 characters
    version: str         # 3 characters
    serial: str          # up to 13 characters, optional

    def describe(self) -> str:
        v = f"{self.sdi12_version[:1]}.{self.sdi12_version[1:]}"
        extra = f" serial {self.serial}" if self.serial else ""
        return f"{self.vendor.strip()} {self.model.strip()} v{self.version.strip()}{extra} (SDI-12 {v})"


def check_address(address: str) -> str:
    if len(address) != 1 or address not in ADDRESS_CHARS:
        raise ValueError(f"SDI-12 address must be one character 0-9, a-z or A-Z, got {address!r}")
    return address


def _from(reply: str, address: str, what: str) -> str:
    """The reply without its leading address; refuses a reply from another address."""
    if not reply:
        raise DriverError(f"empty reply to {what}")
    if reply[0] != address:
        raise DriverError(f"reply to {what} came from address {reply[0]!r}, expected {address!r} "
                          f"(reply {reply!r}; another sensor on this address, or the wrong address configured?)")
    return reply[1:]


def parse_start(reply: str, address: str, command: str) -> tuple[int, int]:
    """``atttn`` (``aM!``) or ``atttnn`` (``aC!``) → (seconds until ready, number of values)."""
    body = _from(reply, address, command)
    concurrent = command.startswith(f"{address}C")
    if len(body) != (5 if concurrent else 4) or not body.isdigit():
        want = "atttnn" if concurrent else "atttn"
        raise DriverError(f"malformed reply to {command}: {reply!r} (expected {want})")
    return int(body[:3]), int(body[3:])


def parse_values(reply: str, address: str, command: str) -> list[float]:
    """``a+1.23-4.5+.7`` → ``[1.23, -4.5, 0.7]``; ``a`` alone → ``[]``."""
    body = _from(reply, address, command)
    if not _VALUES.match(body):
        raise DriverError(f"malformed values in reply to {command}: {reply!r}")
    return [float(v) for v in _ONE_VALUE.findall(body)]


def parse_identification(reply: str, address: str) -> Identification:
    """``013CAMPBELLCLARV10100 SN12345`` → :class:`Identification`."""
    body = _from(reply, address, f"{address}I!")
    if len(body) < 19 or not body[:2].isdigit():
        raise DriverError(f"malformed reply to {address}I!: {reply!r} (expected allccccccccmmmmmmvvv…)")
    return Identification(address, body[:2], body[2:10], body[10:16], body[16:19], body[19:32].strip())
