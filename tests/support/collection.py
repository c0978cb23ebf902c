"""The garbage collector paused while pytest collects, and what collection built frozen.

Every xdist worker imports every test module at collection (ms4watch, FastAPI, pandas,
hypothesis's strategies ...): ~330,000 objects that live as long as the process. Allocating
them set off ~860 collections, 7 of them full ones scanning all that was built so far, ~1.1 s
of a worker's ~7 s of collection CPU; afterwards every full collection of the run scanned them
again. So: no collection while pytest collects (imports make little garbage), then one full
collection and ``gc.freeze()``: what is left is moved out of the collector's sight for good
(the advice of the ``gc`` docs for long-lived start-up state), and the run's own garbage is
collected as usual."""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collection (from the root conftest's import, before the test modules)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """After collection: collect once, freeze the survivors, collect automatically again. Once."""
    global _paused
    if _paused:
        _paused = False
        gc.collect()
        gc.freeze()
        gc.enable()
