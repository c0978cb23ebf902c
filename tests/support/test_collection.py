"""Garbage collection around pytest's collection (tests/support/collection.py)."""

from __future__ import annotations

import gc


def test_what_collection_built_is_frozen_out_of_the_collector():
    """Each worker imports every test module (and ms4watch, FastAPI, pandas ...) at collection:
    those objects live as long as the process, and a full collection scanning them again and
    again cost ~1 s of a worker's ~8 s of collection CPU, and more through the run."""
    assert gc.isenabled()
    assert gc.get_freeze_count() > 50_000


def test_schemathesis_pytest_plugin_is_not_loaded(pytestconfig):
    """Its import cost each process (the controller and each worker) 0.65 s of CPU, and nothing
    uses it: tests/workbench/test_api_schema.py walks the operations with hypothesis itself
    (the plugin's loader does not run under pytest 9)."""
    assert not pytestconfig.pluginmanager.has_plugin("schemathesis")
