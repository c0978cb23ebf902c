"""Write tests/support/file-seconds.txt, the seconds each test file took, from a JUnit XML
report of a whole run: ``make test`` hands the files to its workers longest first
(tests/support/schedule.py), so refresh it when files are added or change length::

    pytest -n 3 --dist loadfile -p no:cacheprovider --junitxml=/tmp/run.xml
    python tools/file_seconds.py /tmp/run.xml
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tests" / "support" / "file-seconds.txt"
HEADER = ("# Seconds each test file took in a whole run (3 workers, 2 cores; setup, call and teardown),\n"
          "# longest first: tools/file_seconds.py writes it from a JUnit report. Files not listed run last.\n")


def file_seconds(report: Path) -> Counter[str]:
    """Seconds per test file (``tests/x/test_y.py``) of a JUnit XML report (pytest's
    classnames: ``tests.x.test_y`` or ``tests.x.test_y.TestClass``)."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(report).iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        while parts and not parts[-1].startswith("test_"):
            parts.pop()
        if parts:
            seconds["/".join(parts) + ".py"] += float(case.get("time") or 0.0)
    return seconds


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    seconds = file_seconds(Path(argv[0]))
    lines = [f"{s:.1f}\t{f}\n" for f, s in sorted(seconds.items(), key=lambda fs: (-fs[1], fs[0]))]
    TABLE.write_text(HEADER + "".join(lines))
    print(f"{TABLE}: {len(lines)} files, {sum(seconds.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
