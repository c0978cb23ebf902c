"""Start-up work that would otherwise fall on the first request: importing matplotlib and
reportlab (about a second each on a small server) and drawing once (matplotlib's font cache,
reportlab's fonts). ``start()`` does it in a daemon thread while the server takes requests;
a request that needs a library meanwhile waits on Python's import lock, never imports twice."""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta, timezone

log = logging.getLogger(__name__)
done = threading.Event()          # set once the warm-up has run (tests wait on it)
_started = threading.Lock()


def start(stopping: threading.Event | None = None) -> threading.Thread | None:
    """The warm-up, once per process. ``stopping``: the server's stop; set, the warm-up draws
    nothing more (a step already drawing is finished: a process must not exit while
    matplotlib draws), so a server stopped in its first seconds does not wait for it."""
    if not _started.acquire(blocking=False):
        return None
    t = threading.Thread(target=run, args=(stopping,), name="ms4watch-warm-up", daemon=True)
    t.start()
    return t


def run(stopping: threading.Event | None = None) -> None:
    try:
        for step in (_chart, _pdf):
            if stopping is not None and stopping.is_set():
                break
            step()
    except Exception:   # a warm-up that fails costs the first request its time, nothing more
        log.exception("warming up the chart and PDF libraries failed")
    finally:
        done.set()


def _chart() -> None:
    import pandas as pd

    from ..alerts.notifiers.email.chart import chart_png
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    frame = pd.DataFrame({"flow_gpm": [0.0, 1.0], "rain_in": [0.0, 0.01]},
                         index=pd.DatetimeIndex([t, t + timedelta(hours=1)], name="time"))
    chart_png(frame, title="warm-up", start=t, end=t + timedelta(hours=1), threshold={"label": "floor", "value": 0.5},
              tz="UTC")


def _pdf() -> None:
    from ..compliance import pdf
    pdf.build([pdf.para("warm-up", pdf.styles()["p"])], title="warm-up", footer="warm-up")


__all__ = ["start", "run", "done"]
