"""The delivery worker runs ticks on its own thread: woken by a commit, never blocking the
caller, outliving a failing tick, and stoppable while a tick hangs."""

from __future__ import annotations

import threading

from ms4watch.alerts.delivery import DeliveryWorker
from tests.support.waiting import wait_for


def test_wake_runs_a_tick_on_the_worker_thread_and_returns_at_once():
    seen: list[str] = []
    release = threading.Event()

    def tick():
        seen.append(threading.current_thread().name)
        release.wait(10)            # a tick that hangs like a silent SMTP server

    w = DeliveryWorker(tick, idle_s=60).start()
    try:
        w.wake()                    # returns although the tick will hang
        assert wait_for(lambda: seen, 5)
        assert seen == ["ms4watch-delivery"]
        w.wake()
        w.wake()                    # wakes while busy fold into one more tick
        release.set()
        assert w.flush(5)
        assert 2 <= len(seen) <= 4
    finally:
        release.set()
        w.stop()


def test_a_failing_tick_does_not_kill_the_worker():
    calls = []

    def tick():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a notifier bug")

    w = DeliveryWorker(tick, idle_s=60).start()
    try:
        assert w.flush(5)
        assert w.flush(5)
        assert len(calls) >= 2
    finally:
        w.stop()


def test_idle_ticks_come_without_a_wake():
    calls = []
    w = DeliveryWorker(lambda: calls.append(1), idle_s=0.05).start()
    try:
        assert wait_for(lambda: len(calls) >= 3, 5)
    finally:
        w.stop()


def test_stop_does_not_wait_for_a_hung_tick_longer_than_asked():
    release = threading.Event()
    w = DeliveryWorker(lambda: release.wait(30), idle_s=60).start()
    w.wake()
    w.stop(timeout_s=0.2)           # returns; the hung send is left to its own timeout
    release.set()
    assert not w.flush(0.1)         # not running any more


def test_prepare_runs_on_the_worker_thread_before_its_first_tick():
    """The channels' one-time costs (the first chart's fonts and caches) are paid as the
    worker starts, not by the first alert; a prepare that fails costs nothing else."""
    seen: list[tuple[str, str]] = []

    def prepare():
        seen.append(("prepare", threading.current_thread().name))
        raise RuntimeError("no fonts")

    w = DeliveryWorker(lambda: seen.append(("tick", threading.current_thread().name)), idle_s=60,
                       prepare=prepare).start()
    try:
        w.wake()
        assert w.flush(5)
        assert seen[0] == ("prepare", "ms4watch-delivery")
        assert ("tick", "ms4watch-delivery") in seen[1:] and seen.count(("prepare", "ms4watch-delivery")) == 1
    finally:
        w.stop()


def test_the_worker_is_ready_once_its_channels_are_prepared():
    """``ready`` is set when ``prepare`` (the first chart's fonts and caches) has returned, so
    the server can take readings only once an alert's email will not wait for it (issue 22:
    the first alert of bench_alert_latency waited ~0.9 s behind the warm-up chart)."""
    gate, entered = threading.Event(), threading.Event()

    def prepare():
        entered.set()
        gate.wait(10)

    w = DeliveryWorker(lambda: None, idle_s=60, prepare=prepare).start()
    try:
        assert entered.wait(5)
        assert not w.ready.is_set()          # prepare has not returned
        gate.set()
        assert w.ready.wait(5)
    finally:
        gate.set()
        w.stop()
    plain = DeliveryWorker(lambda: None, idle_s=60).start()
    try:
        assert plain.ready.wait(5)           # nothing to prepare: ready as it starts
    finally:
        plain.stop()


def test_a_failing_prepare_still_makes_the_worker_ready():
    def prepare():
        raise RuntimeError("no fonts")

    w = DeliveryWorker(lambda: None, idle_s=60, prepare=prepare).start()
    try:
        assert w.ready.wait(5)
        assert w.flush(5)
    finally:
        w.stop()
