"""Polling for a condition in tests that talk to real servers in other threads or processes."""

from __future__ import annotations

import time
from typing import Any, Callable


def wait_for(predicate: Callable[[], Any], timeout_s: float = 20.0, poll_s: float = 0.02) -> bool:
    """True as soon as ``predicate()`` is truthy; after ``timeout_s`` its last answer, as a bool."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll_s)
    return bool(predicate())
