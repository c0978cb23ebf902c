"""Is the logger's clock synchronised? And did it jump?

The kernel knows whether NTP (or chrony, or systemd-timesyncd) has disciplined the clock:
``adjtimex(2)`` returns ``TIME_ERROR`` while it has not — the same source ``timedatectl``
reads for "System clock synchronized". Readings taken while it is not are flagged
``clock_unsynced``; they are kept, never dropped.

A jump (an NTP step after boot, a technician setting the time) is seen by comparing the
wall clock with the monotonic clock. Sequence numbers never depend on the wall clock, so a
jump can neither reorder nor drop them; the agent re-aligns its sampling schedule.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import time

TIME_ERROR = 5


class _Timex(ctypes.Structure):
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time_sec", ctypes.c_long), ("time_usec", ctypes.c_long), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("_pad", ctypes.c_int * 11)]


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    """The C library, looked up once: ``find_library`` runs ``ldconfig -p`` in a subprocess,
    and the agent asks about the clock at every sample."""
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def kernel_clock_synced() -> bool | None:
    """True/False from adjtimex (read-only call), None where it cannot be asked."""
    try:
        libc = _libc()
        tx = _Timex()
        state = libc.adjtimex(ctypes.byref(tx))
    except (OSError, AttributeError):
        return None
    if state < 0:
        return None
    return state != TIME_ERROR


class JumpDetector:
    """Reports the size of a wall-clock jump since the previous call (0 when none)."""

    def __init__(self, threshold_s: float = 2.0, wall=time.time_ns, mono=time.monotonic_ns):
        self.threshold_ns = int(threshold_s * 1e9)
        self._wall, self._mono = wall, mono
        self._offset = wall() - mono()

    def check(self) -> int:
        offset = self._wall() - self._mono()
        delta = offset - self._offset
        self._offset = offset
        return delta if abs(delta) >= self.threshold_ns else 0
