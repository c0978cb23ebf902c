"""The order ``make test`` hands test files to its workers (tests/support/schedule.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.schedule import LONGEST_FIRST, measured, order

REPO = Path(__file__).resolve().parents[1]


def test_the_long_files_first_then_most_tests_first_each_file_whole_and_in_order():
    ids = ["tests/a.py::t1", "tests/b.py::t1", "tests/b.py::t2", "tests/long.py::x",
           "tests/c.py::t1", "tests/c.py::t2", "tests/c.py::t3", "tests/a.py::t2", "tests/longer.py::y"]
    ordered = [ids[i] for i in order(ids, longest_first=("tests/longer.py", "tests/long.py"))]
    assert ordered == ["tests/longer.py::y", "tests/long.py::x",
                       "tests/c.py::t1", "tests/c.py::t2", "tests/c.py::t3",
                       "tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/b.py::t2"]


def test_the_long_files_named_exist():
    for name in LONGEST_FIRST:
        assert (REPO / name).is_file(), name


def test_a_collection_starts_with_the_package_build_and_xdist_keeps_that_order(pytestconfig):
    """What a worker collects is the order xdist hands files out in, as tests/conftest.py tells
    it (with xdist's default, most tests first, the three tests of test_deb.py went last)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "tests/test_schedule.py", "tests/test_types.py", "tests/test_deb.py"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    files = [line.split("::", 1)[0] for line in out.stdout.splitlines() if "::" in line]
    assert files[0] == "tests/test_deb.py", out.stdout + out.stderr
    # the other two in the table's order (measured: which is longer depends on the run it came from)
    rank = {f: i for i, f in enumerate(LONGEST_FIRST)}
    assert sorted(set(files), key=files.index) == sorted(set(files), key=lambda f: rank[f]), out.stdout
    assert pytestconfig.option.loadscopereorder is False


def test_the_table_written_from_a_junit_report_orders_the_files_longest_first(tmp_path, monkeypatch):
    """tools/file_seconds.py sums each file's tests (classes included) and schedule.measured
    reads them back longest first."""
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import file_seconds as tool
    finally:
        sys.path.remove(str(REPO / "tools"))
    report = tmp_path / "run.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.a.test_x" name="t1" time="2.0"/>'
        '<testcase classname="tests.a.test_x.TestGroup" name="t2" time="3.5"/>'
        '<testcase classname="tests.test_y" name="t" time="4.0"/>'
        '<testcase classname="tests.test_z" name="t" time="0.25"/>'
        "</testsuite></testsuites>")
    table = tmp_path / "file-seconds.txt"
    monkeypatch.setattr(tool, "TABLE", table)
    assert tool.main([str(report)]) == 0
    assert measured(table) == ("tests/a/test_x.py", "tests/test_y.py", "tests/test_z.py")
    assert "5.5\ttests/a/test_x.py" in table.read_text()
