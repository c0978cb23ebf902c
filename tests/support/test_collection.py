"""Garbage collection around pytest's collection (tests/support/collection.py)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_what_collection_built_is_frozen_out_of_the_collector():
    """Each worker imports every test module (and ms4watch, FastAPI, pandas ...) at collection:
    those objects live as long as the process, and a full collection scanning them again and
    again cost ~1 s of a worker's ~8 s of collection CPU, and more through the run. Checked in
    a fresh interpreter (a test of the serve command unfreezes this process's objects, so the
    count here depends on which files ran before on this worker), then the root conftest's
    wiring: the collector is on again in the tests."""
    code = textwrap.dedent("""
        import gc
        from tests.support import collection
        collection.pause()
        assert not gc.isenabled()
        built = [[i] for i in range(100_000)]            # what imports leave behind (lists: tracked)
        collection.resume()
        assert gc.isenabled() and gc.get_freeze_count() >= 100_000, gc.get_freeze_count()
        collection.resume()                              # once: a second call changes nothing
        print("frozen", gc.get_freeze_count() >= 100_000)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "frozen True" in out.stdout, out.stderr
    assert gc.isenabled()


def test_schemathesis_pytest_plugin_is_not_loaded(pytestconfig):
    """Its import cost each process (the controller and each worker) 0.65 s of CPU, and nothing
    uses it: tests/workbench/test_api_schema.py walks the operations with hypothesis itself
    (the plugin's loader does not run under pytest 9)."""
    assert not pytestconfig.pluginmanager.has_plugin("schemathesis")
