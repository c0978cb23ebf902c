"""The order in which ``make test`` hands test files to its workers (pytest-xdist, ``--dist
loadfile``: a file runs whole on one worker, and the workers take files in order).

A run lasts at least as long as its longest file, and a long file that starts last adds its
whole length to the end of the run. xdist's default hands out the files with the most tests
first, which put tests/test_deb.py (three tests, the longest file: build, lintian, install)
at the very end: ~7.8 min on a quiet 2-core machine, where the work of the suite divided by
two was ~5. So: longest first, as measured in a whole run (``file-seconds.txt`` beside this
module, written by tools/file_seconds.py from a JUnit report: the classic "longest
processing time first" rule, which keeps the workers ending together), then files not
measured yet by their number of tests (most first), and xdist told not to reorder them
again (``tests/conftest.py``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

TABLE = Path(__file__).with_name("file-seconds.txt")


def measured(table: Path = TABLE) -> tuple[str, ...]:
    """The files of the table, longest first (lines ``seconds<TAB>path``; ``#`` comments)."""
    rows = []
    for line in table.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, path = line.split("\t")
            rows.append((-float(seconds), path))
    return tuple(path for _, path in sorted(rows))


LONGEST_FIRST: tuple[str, ...] = measured()


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
