"""Decoding readings messages: the ingest hot path against the pydantic model, same messages.

    python bench/bench_decode.py [--readings 200000] [--per-message 4,40] [--repeat 5]

The messages are ``bench_backlog.py``'s backlog (10 loggers, one sample cycle a message, or
a backlog batch of 40). Contenders, each this process's CPU time, the best of ``--repeat``:

* ``decode_canonical``: what ingest calls per message (orjson, then the fast path derived
  from the model, ``contract/wire_fast.py``);
* the model alone: ``decode_readings`` (pydantic-core's ``model_validate_json`` with the
  contract's validators) then ``canonicalize`` — what the fast path must accept alike.

Prints readings/s and the ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_backlog import backlog_payloads  # noqa: E402
from ms4watch.contract.bounds import DEFAULT_WINDOW  # noqa: E402
from ms4watch.contract.wire import canonicalize, decode_canonical, decode_readings  # noqa: E402

RECEIVED_NS = 1_790_000_000 * 10**9     # after the backlog's last sample


def best_cpu(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readings", type=int, default=200_000)
    ap.add_argument("--per-message", default="4,40")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    for pm in (int(x) for x in a.per_message.split(",")):
        msgs = [(topic, topic.split("/")[2], payload) for topic, payload in backlog_payloads(a.readings, pm)]
        n = len(msgs) * pm

        def fast() -> None:
            for topic, station, payload in msgs:
                decode_canonical(topic, station, payload, RECEIVED_NS, DEFAULT_WINDOW)

        def model() -> None:
            for topic, station, payload in msgs:
                canonicalize(decode_readings(topic, payload, RECEIVED_NS, DEFAULT_WINDOW), station)

        fast()                      # warm the caches and the model's validator, as a running ingest has
        model()
        t_fast = best_cpu(fast, a.repeat)
        t_model = best_cpu(model, max(1, a.repeat // 2))
        print(f"{pm:>3}/msg, {n} readings: decode_canonical {n / t_fast:>10,.0f} readings/s "
              f"({t_fast / n * 1e6:.2f} µs each); model {n / t_model:>9,.0f} readings/s "
              f"({t_model / n * 1e6:.2f} µs); fast/model {t_model / t_fast:.1f}×", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
