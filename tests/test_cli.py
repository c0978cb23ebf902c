"""The root command: --version, log lines as text or JSON, a bad option is one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# the tests' empty settings (tests/conftest.py), not a package's /etc/ms4watch installed beside (test_deb.py)
ENV = {"PATH": "/usr/bin:/bin", "MS4WATCH_CONFIG": os.environ["MS4WATCH_CONFIG"]}


def ms4watch(*args: str, **kw):
    return subprocess.run([sys.executable, "-m", "ms4watch", *args], capture_output=True, text=True, timeout=60, **kw)


def test_version():
    out = ms4watch("--version")
    assert out.returncode == 0 and out.stdout.startswith("ms4watch 0.")


def test_json_log_lines_are_one_object_each(tmp_path):
    script = ("import logging; from ms4watch.cli import setup_logging; setup_logging(logging.INFO, 'json');"
              "logging.getLogger('ms4watch.serve').warning('store %s unavailable', 'influx')")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    [line] = out.stderr.strip().splitlines()
    rec = json.loads(line)
    assert rec["level"] == "WARNING" and rec["logger"] == "ms4watch.serve"
    assert rec["message"] == "store influx unavailable" and rec["time"]


def test_log_format_from_the_environment_and_a_bad_one_refused(tmp_path):
    out = ms4watch("incidents", "list", "--db", str(tmp_path / "none.db"),
                   env={**ENV, "MS4WATCH_LOG_FORMAT": "xml", "HOME": str(tmp_path)})
    assert out.returncode == 2 and "expected text or json, got 'xml'" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_command_list_imports_no_numpy():
    """``ms4watch --help`` builds every command (its options, their choices) without numpy
    (~0.2 s of CPU): a command's choices are plain enums, the work it does imports the rest."""
    script = ("import sys; from ms4watch.cli import COMMANDS, build_app; from typer.main import get_command; "
              "names = sorted(get_command(build_app()).commands); "
              "print(names == sorted(COMMANDS), 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"], out.stdout


BLAS_AFTER_A_COMMAND = """\
import os, sys
sys.argv = ["ms4watch", "--version"]
from ms4watch.cli import main
try:
    main()
except SystemExit:
    pass
import numpy
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
"""


def test_a_command_runs_numpy_on_one_blas_thread_unless_told_otherwise():
    """No ms4watch array is a matrix product, and OpenBLAS's pool (one thread a core, made at
    numpy's import) spun 15-70 ms of CPU at each start of ``serve`` (the backlog bench, two
    cores): a command runs BLAS on its own thread; a setting of the user's is kept."""
    env = {**os.environ}
    env.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", BLAS_AFTER_A_COMMAND], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["1", "1"], out.stdout     # the setting, and no thread beside the main one
    out = subprocess.run([sys.executable, "-c", BLAS_AFTER_A_COMMAND], capture_output=True, text=True, timeout=60,
                         env={**env, "OPENBLAS_NUM_THREADS": "2"})
    assert out.stdout.split()[-2] == "2", out.stdout
