"""Garbage collection around pytest's collection (tests/support/collection.py)."""

from __future__ import annotations

import gc


def test_what_collection_built_is_frozen_out_of_the_collector():
    """Each worker imports every test module (and ms4watch, FastAPI, pandas ...) at collection:
    those objects live as long as the process, and a full collection scanning them again and
    again cost ~1 s of a worker's ~8 s of collection CPU, and more through the run."""
    assert gc.isenabled()
    assert gc.get_freeze_count() > 50_000
