"""One lock for the tests that touch this machine's own install paths.

``tests/test_deb.py`` installs the package for real (``/etc/ms4watch``, ``/var/lib/ms4watch``,
the ``ms4watch`` user) and purges it; ``tests/test_docs_shell.py`` refuses to run where an
install exists. Under xdist (``make test``: files side by side) they would meet; each holds
this lock while it depends on the machine's state, so one waits for the other."""

from __future__ import annotations

import fcntl
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

LOCK = Path(tempfile.gettempdir()) / "ms4watch-tests-system-install.lock"
BUILD_LOCK = Path(tempfile.gettempdir()) / "ms4watch-tests-source-build.lock"


@contextmanager
def _held(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def system_install_lock():
    return _held(LOCK)


def source_build_lock():
    """A build from this checkout (setuptools' ``build/``, ``*.egg-info``): the wheel tests of
    tests/test_packaging.py and ``make deb`` in tests/test_deb.py, one at a time."""
    return _held(BUILD_LOCK)
