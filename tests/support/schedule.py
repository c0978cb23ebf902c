"""The order in which ``make test`` hands test files to its workers (pytest-xdist, ``--dist
loadfile``: a file runs whole on one worker, and the workers take files in order).

A two-worker run lasts at least as long as its longest file, and a long file that starts
last adds its whole length to the end of the run. xdist's default hands out the files with
the most tests first, which put tests/test_deb.py (three tests, ~4 min: build, lintian,
install) at the very end: ~7.8 min on a quiet 2-core machine, where the work of the suite
divided by two is ~5. So: the files known to be long first, longest first (LONGEST_FIRST, as
measured), then the others as xdist orders them (most tests first), and xdist told not to
reorder them again (``tests/conftest.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

# Measured alone (-n 0, `pytest --durations`, s of wall; this machine was busy, load 4-10, so
# the figures are 1.5-3x a quiet machine's), longest first.
LONGEST_FIRST: tuple[str, ...] = (
    "tests/test_deb.py",                       # ~240 s quiet: make deb, lintian, apt install/upgrade/purge
    "tests/faults/test_pipeline_faults.py",    # 170 s busy: processes killed, links cut, a store down
    "tests/test_demo.py",                      # 125 s busy: `ms4watch demo` a dozen times
    "tests/test_types.py",                     # 97 s busy: mypy over the package, from cold
    "tests/faults/test_backlog_crash.py",      # 79 s busy
    "tests/workbench/test_every_page.py",      # 41 s quiet: Chromium, 25 pages x 3 sizes
    "tests/workbench/test_api_schema.py",      # 34 s quiet: schemathesis
)


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def order(nodeids: Sequence[str], longest_first: Sequence[str] = LONGEST_FIRST) -> list[int]:
    """The positions of ``nodeids`` in the order to run them: files of ``longest_first`` in
    that order, then the rest by their number of tests (most first, then by name); a file's
    tests together and in their own order."""
    files = [file_of(n) for n in nodeids]
    count = Counter(files)
    rank = {f: i for i, f in enumerate(longest_first)}

    def key(i: int) -> tuple[int, int, str]:
        f = files[i]
        return (rank.get(f, len(rank)), -count[f] if f not in rank else 0, f)

    return sorted(range(len(nodeids)), key=key)
