"""Ctrl-C and SIGTERM as a request to stop (ms4watch/signals.py), in this process's main
thread with real signals."""

import signal
import threading

import pytest

from ms4watch.signals import StopSignals
from tests.support.waiting import wait_for


@pytest.fixture
def forced():
    reasons: list[str] = []
    return reasons


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_is_a_request_not_an_exception(sig, forced):
    woken: list[bool] = []
    with StopSignals(lambda: woken.append(True), force_exit=forced.append) as stop:
        signal.raise_signal(sig)          # handled before this returns: nothing is raised here
        assert stop.requested.is_set()
    assert woken == [True] and forced == []


def test_a_second_signal_while_stopping_exits_at_once(forced):
    with StopSignals(force_exit=forced.append) as stop:
        signal.raise_signal(signal.SIGINT)
        assert forced == []
        signal.raise_signal(signal.SIGTERM)
    assert stop.requested.is_set()
    assert forced == ["SIGTERM again while stopping"]


def test_a_stop_still_running_after_its_bound_exits_naming_the_busy_threads(forced):
    stuck = threading.Event()
    busy = threading.Thread(target=stuck.wait, name="stuck-writer", daemon=True)
    busy.start()
    try:
        with StopSignals(force_after_s=0.2, force_exit=forced.append):
            signal.raise_signal(signal.SIGINT)
            assert wait_for(lambda: forced, 10)
    finally:
        stuck.set()
    assert forced[0].startswith("still stopping 0 s after SIGINT")
    assert "stuck-writer" in forced[0]


def test_leaving_restores_the_handlers_and_cancels_the_watchdog(forced):
    before = signal.getsignal(signal.SIGINT)
    with StopSignals(force_after_s=0.3, force_exit=forced.append):
        assert signal.getsignal(signal.SIGINT) is not before
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before
    done = threading.Event()
    assert not done.wait(0.6)             # past the watchdog's 0.3 s: it was cancelled
    assert forced == []


def test_outside_the_main_thread_nothing_is_installed(forced):
    before = signal.getsignal(signal.SIGINT)
    seen = []

    def other() -> None:
        with StopSignals(force_exit=forced.append):
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert seen == [before]
