"""A separate process for the kill -9 test: ``enqueue`` queues notifications while SMTP is
down, says READY and waits to be killed; ``deliver`` ticks until the queue is drained."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone

from tests.support.alerting import Alerting
from tests.support.notify_peers import dwf, inspection, registry


def main(mode: str, db: str, url: str) -> None:
    offset = timedelta(hours=1) if mode == "deliver" else timedelta(0)  # past any backoff
    n = Alerting(registry(), db, [url], clock=lambda: datetime.now(timezone.utc) + offset)
    if mode == "enqueue":
        for o in ("OF-12", "OF-14", "OF-20"):
            n.handle(dwf("2026-06-01T15:30:00Z", outfall=o))
        n.handle(inspection(due="2030-06-02T18:00:00Z", storm_end="2030-06-01T18:00:00Z"))
        n.tick()  # SMTP is down: every row stays pending
        print("READY", len(n.queue.all("pending")), flush=True)
        time.sleep(120)
    else:
        deadline = time.monotonic() + 30
        while n.queue.all("pending") and time.monotonic() < deadline:
            n.tick()
            time.sleep(0.05)
        print("DONE", n.queue.counts(), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
