"""The type check is part of `make test`: mypy over what [tool.mypy] lists, failing with its report."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_mypy_is_clean():
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "typecheck.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "mypy (make types) found errors:\n" + proc.stdout + proc.stderr
